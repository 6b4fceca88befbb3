"""The Celery app, configured from Django settings (``CELERY_`` namespace), and the
embedded ticker that runs the beat schedule in the web process when there is no broker."""

from __future__ import annotations

import logging
import os
import sys
import threading

from celery import Celery
from celery.signals import worker_init, worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

logger = logging.getLogger(__name__)

app = Celery("crowdqa")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _die_with_parent(_: object) -> None:
    """In a child forked by ``multiprocessing`` (Whoosh's parallel index writer): ask
    Linux to kill it when the process that forked it dies. Otherwise a worker killed
    mid-job leaves orphans that keep the index's write lock, and the job's re-run waits
    for it in vain."""
    import ctypes
    import signal

    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return  # not Linux: no such guard
    if os.getppid() != parent:  # the parent died before the guard was set
        os._exit(1)


if sys.platform.startswith("linux"):
    import multiprocessing.util

    class _AfterFork:
        """The key of the after-fork hook (kept alive here: the registry holds it weakly)."""

    _AFTER_FORK_KEY = _AfterFork()
    multiprocessing.util.register_after_fork(_AFTER_FORK_KEY, _die_with_parent)

_ticker: threading.Thread | None = None
_ticker_lock = threading.Lock()


def beat_run_once() -> dict[str, object]:
    """Run every task of the beat schedule once, here (the embedded mode's periodic jobs:
    lease expiry, lost jobs, stalled stages). One failing task does not stop the others."""
    import importlib

    from django.conf import settings

    results: dict[str, object] = {}
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        try:
            # A web process has not imported every tasks module (a worker has).
            importlib.import_module(entry["task"].rpartition(".")[0])
            results[name] = app.tasks[entry["task"]]()
        except Exception:
            logger.exception("periodic job %s failed", name)
    return results


def embedded_beat_start() -> bool:
    """In the embedded mode (no broker, jobs on a thread of the web process), start a
    daemon thread that runs the beat schedule every ``CROWDQA_EMBEDDED_BEAT_S`` seconds,
    first at once: jobs a restart cut short are recovered without a beat process. Does
    nothing with a broker (run ``celery beat``) or when already started."""
    global _ticker
    from django.conf import settings

    if not (settings.CELERY_TASK_ALWAYS_EAGER
            and getattr(settings, "CROWDQA_JOBS_IN_THREAD", True)):
        return False
    interval = float(getattr(settings, "CROWDQA_EMBEDDED_BEAT_S", 30))
    with _ticker_lock:
        if _ticker is not None:
            return False
        stop = threading.Event()

        def tick() -> None:
            from django.db import close_old_connections, connection

            while True:
                close_old_connections()
                beat_run_once()
                connection.close()
                if stop.wait(interval):
                    return

        _ticker = threading.Thread(target=tick, name="crowdqa-embedded-beat", daemon=True)
        _ticker.start()
    return True


@worker_process_init.connect
def _preload_search_in_pool_process(**kwargs) -> None:
    """Each pool process (prefork, or the solo pool's worker itself) loads the search
    analyzers when it starts."""
    from collector.search.preload import preload_in_background

    preload_in_background()


@worker_init.connect
def _preload_search_in_thread_pool_worker(sender=None, **kwargs) -> None:
    """The thread pool has no pool process start: load them in the worker process."""
    pool = getattr(sender, "pool_cls", "")
    name = pool if isinstance(pool, str) else getattr(pool, "__module__", "")
    if "thread" in name:
        from collector.search.preload import preload_in_background

        preload_in_background()
