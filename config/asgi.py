"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_asgi_application()

# A web process: load the search analyzers' dictionaries now, not on the first search.
from collector.search.preload import preload_in_background  # noqa: E402

preload_in_background()
