"""The passage search index, behind a small interface (see ``collector.search.base``).

``search_backend()`` returns the configured backend: Whoosh on local disk under
``SEARCH_INDEX_DIR`` by default. A deployment that outgrows one machine sets
``CROWDQA_SEARCH_BACKEND=postgres`` (the index in the shared database, see
``collector.search.postgres_backend``) or the dotted path of another ``SearchBackend``
subclass, constructed with the same arguments.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from collector.search.base import (
    IndexBusy,
    IndexEntry,
    IndexHit,
    IndexResults,
    IndexWriter,
    SearchBackend,
)

DEFAULT_BACKEND = "collector.search.whoosh_backend.WhooshBackend"
BACKEND_NAMES = {
    "whoosh": DEFAULT_BACKEND,
    "postgres": "collector.search.postgres_backend.PostgresBackend",
}
_backends: dict[tuple, SearchBackend] = {}


def search_backend() -> SearchBackend:
    """The backend for the current settings (one instance per configuration)."""
    path = getattr(settings, "CROWDQA_SEARCH_BACKEND", None) or DEFAULT_BACKEND
    path = BACKEND_NAMES.get(path, path)
    if "." not in path:
        raise ImproperlyConfigured(
            f"CROWDQA_SEARCH_BACKEND={path!r}: use one of {', '.join(BACKEND_NAMES)} or the "
            "dotted path of a SearchBackend subclass")
    root = Path(settings.SEARCH_INDEX_DIR)
    procs = int(getattr(settings, "CROWDQA_INDEX_PROCS", min(2, os.cpu_count() or 1)))
    key = (path, root, procs)
    backend = _backends.get(key)
    if backend is None:
        backend = _backends[key] = import_string(path)(root, procs=procs)
    return backend


__all__ = ["IndexBusy", "IndexEntry", "IndexHit", "IndexResults", "IndexWriter",
           "SearchBackend", "search_backend"]
