"""System checks of what several processes share (``manage.py check``, run by ``migrate``
and ``check --deploy`` too; docs/deployment.md).

- The storages of ``STORAGES`` (``CROWDQA_STORAGE_BACKEND``, ...) can be imported, and
  made with their options (``CROWDQA_STORAGE_OPTIONS``, ...).
- With a broker, jobs run in worker processes and write their live progress to the cache
  (``collector.jobs.Progress``), which the web processes read; the cache of signed-in users
  (``annotation.auth``) is dropped there too. A per-process cache (local memory, dummy) is
  refused: the job pages would never see progress, and a changed user or token would stay
  valid in the other processes. A file cache is shared by the processes of one host only:
  a warning of ``check --deploy`` (on one host with a broker it is right, and every
  management command would print it).
- The search backend (``CROWDQA_SEARCH_BACKEND``) can be made, and
  ``CROWDQA_SEARCH_PRELOAD`` is one of its modes: either misspelt passed every check and
  then failed each search (or the preload at each process start).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string

from config.storage import BACKEND_VAR, OPTIONS_VAR, RELEASE_BACKEND_VAR, RELEASE_OPTIONS_VAR

PROCESS_LOCAL_CACHES = frozenset({
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
})
HOST_LOCAL_CACHES = frozenset({"django.core.cache.backends.filebased.FileBasedCache"})
_STORAGE_VARS = {"default": BACKEND_VAR, "releases": RELEASE_BACKEND_VAR}
_OPTIONS_VARS = {"default": OPTIONS_VAR, "releases": RELEASE_OPTIONS_VAR}


def broker_configured() -> bool:
    """Jobs go to worker processes (a broker other than Celery's in-process ``memory://``)."""
    broker = settings.CELERY_BROKER_URL or ""
    return bool(broker) and not broker.startswith("memory://") \
        and not settings.CELERY_TASK_ALWAYS_EAGER


@checks.register("crowdqa")
def storages_importable(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    errors = []
    for alias, variable in _STORAGE_VARS.items():
        entry = settings.STORAGES.get(alias)
        if entry is None:
            continue
        try:
            storage_class = import_string(entry["BACKEND"])
        except ImportError as exc:
            errors.append(checks.Error(
                f"STORAGES[{alias!r}]: cannot import {entry['BACKEND']!r} ({exc})",
                hint=f"Check {variable}; a django-storages backend needs "
                     "`pip install django-storages[...]` (docs/deployment.md).",
                id="crowdqa.E001",
            ))
            continue
        # Made as the first upload or download would make it (django-storages' classes
        # connect only when used): a misspelt option ("locaton") passed every check and
        # then failed each upload and download with a TypeError.
        try:
            storage_class(**entry.get("OPTIONS", {}))
        except Exception as exc:  # noqa: BLE001 (whatever the class refuses, named)
            errors.append(checks.Error(
                f"STORAGES[{alias!r}]: {entry['BACKEND']} refuses its options "
                f"({type(exc).__name__}: {exc})",
                hint=f"Check {_OPTIONS_VARS[alias]}: a JSON object of the keyword arguments "
                     f"of {entry['BACKEND']} (docs/deployment.md).",
                id="crowdqa.E003",
            ))
    return errors


def _progress_cache() -> str | None:
    """The cache backend job progress goes through, when jobs run in worker processes."""
    return settings.CACHES["default"]["BACKEND"] if broker_configured() else None


@checks.register("crowdqa")
def progress_cache_shared(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    backend = _progress_cache()
    if backend not in PROCESS_LOCAL_CACHES:
        return []
    return [checks.Error(
        f"CELERY_BROKER_URL is set (jobs run in worker processes) but the cache is "
        f"{backend}, private to each process: job progress written by a worker would "
        "never reach the web processes, nor would a changed user reach the others.",
        hint="Set CACHE_URL to a cache every web and worker process shares, e.g. "
             "redis://host:6379/1 (docs/deployment.md).",
        id="crowdqa.E002",
    )]


@checks.register("crowdqa", deploy=True)
def progress_cache_across_hosts(app_configs: Any = None,
                                **kwargs: Any) -> list[checks.CheckMessage]:
    backend = _progress_cache()
    if backend not in HOST_LOCAL_CACHES:
        return []
    return [checks.Warning(
        f"CELERY_BROKER_URL is set but the cache is {backend} "
        f"({settings.CACHES['default'].get('LOCATION')}): only processes on this host "
        "share it (job progress, signed-in users).",
        hint="With web or worker processes on more than one host, set CACHE_URL to "
             "redis://... (docs/deployment.md).",
        id="crowdqa.W003",
    )]


@checks.register("crowdqa")
def search_settings_valid(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from collector.search import search_backend
    from collector.search.preload import MODES

    errors = []
    try:
        search_backend()
    except Exception as exc:  # noqa: BLE001 (an unknown name, an import error: named)
        errors.append(checks.Error(
            f"the search backend cannot be made ({type(exc).__name__}: {exc})",
            hint="Set CROWDQA_SEARCH_BACKEND to whoosh, postgres or the dotted path of a "
                 "collector.search.base.SearchBackend subclass.",
            id="crowdqa.E004",
        ))
    preload = settings.CROWDQA_SEARCH_PRELOAD
    if preload not in MODES:
        errors.append(checks.Error(
            f"CROWDQA_SEARCH_PRELOAD={preload!r} is not one of {', '.join(MODES)}",
            hint="auto (the corpora's languages, the default), all or none.",
            id="crowdqa.E005",
        ))
    return errors
