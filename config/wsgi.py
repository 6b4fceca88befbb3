"""WSGI entry point (gunicorn config.wsgi; runserver loads it too)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# The embedded mode has no beat process: its periodic jobs run on a thread of this one.
from config.celery import embedded_beat_start  # noqa: E402

embedded_beat_start()

# A web process: load the search analyzers' dictionaries now, not on the first search.
from collector.search.preload import preload_in_background  # noqa: E402

preload_in_background()
