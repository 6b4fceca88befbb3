"""Load the search analyzers' dictionaries when a process starts, not on its first search.

jieba (the Chinese analyzer) reads its dictionary on first use: about a second of CPU on an
idle machine and 8-10 s on a busy one, which the first Chinese search of every web process
and worker used to pay. Web processes (``config/wsgi.py``, ``config/asgi.py``) and Celery
worker processes (``config/celery.py``) call :func:`preload_in_background` at start.

``CROWDQA_SEARCH_PRELOAD`` says which languages: ``auto`` (default) those of the corpora in
the database (so an English-only site does not keep jieba's dictionary, about 100 MB, in
every process), ``all``, or ``none``.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import connections

from collector.filters.text import LANGUAGES
from collector.search import search_backend

log = logging.getLogger(__name__)

MODES = ("auto", "all", "none")
_started: threading.Thread | None = None


def preload_languages() -> list[str]:
    """The languages to preload under ``CROWDQA_SEARCH_PRELOAD``."""
    mode = getattr(settings, "CROWDQA_SEARCH_PRELOAD", "auto")
    if mode not in MODES:
        raise ValueError(f"CROWDQA_SEARCH_PRELOAD must be one of {', '.join(MODES)}; "
                         f"got {mode!r}")
    if mode == "none":
        return []
    if mode == "all":
        return list(LANGUAGES)
    from collector.models import Corpus

    in_use = set(Corpus.objects.values_list("language", flat=True).distinct())
    return [language for language in LANGUAGES if language in in_use]


def preload() -> dict[str, float]:
    """Warm the search backend up for :func:`preload_languages`; seconds per language."""
    backend = search_backend()
    took = {}
    for language in preload_languages():
        start = time.perf_counter()
        backend.warm_up(language=language)
        took[language] = time.perf_counter() - start
    return took


def _run() -> None:
    try:
        took = preload()
        if took:
            log.info("search analyzers preloaded: %s",
                     ", ".join(f"{lang} {secs:.1f} s" for lang, secs in took.items()))
    except Exception:
        # A database not migrated yet, say: the first search loads what it needs instead.
        log.warning("search analyzers not preloaded", exc_info=True)
    finally:
        connections.close_all()


def preload_in_background() -> threading.Thread:
    """Start :func:`preload` on a daemon thread (once per process): the process starts
    serving at once, and a search that comes before the dictionary is loaded waits for
    that load (jieba loads under a lock) instead of starting a second one."""
    global _started
    if _started is None:
        _started = threading.Thread(target=_run, name="crowdqa-search-preload", daemon=True)
        _started.start()
    return _started
