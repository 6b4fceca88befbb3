"""Background jobs: a registry of job kinds, enqueueing, running, and live progress.

A job kind is a function ``handler(job, progress) -> dict`` registered with
``@job_handler("kind")``. ``job_create`` records the job and enqueues it on commit;
the Celery task ``collector.tasks.job_run_task`` passes only the id, and ``job_run``
re-reads the row, claims it with a conditional update and runs the handler. A handler
must be idempotent: a job re-delivered after a worker crash runs again from the start
and finishes the work without duplicating it.

Progress is written to the cache, not the database, so a job that keeps one long
transaction open (an all-or-nothing import) still shows its progress to other requests.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from collector.models import Job

logger = logging.getLogger(__name__)

JobHandler = Callable[[Job, "Progress"], dict[str, Any] | None]
_HANDLERS: dict[str, JobHandler] = {}
_QUEUES: dict[str, str] = {}
_eager_pool: ThreadPoolExecutor | None = None
_eager_pool_lock = threading.Lock()


class JobError(Exception):
    """A job failed for a reason its user should read (bad input, missing corpus...)."""


def job_handler(kind: str, *, queue: str = "default") -> Callable[[JobHandler], JobHandler]:
    """Register ``handler`` as the code that runs jobs of ``kind``.

    Jobs that write the search index use ``queue="index"``: that queue is consumed by a
    single worker process with concurrency 1, so each index has one writer at a time.
    """

    def register(handler: JobHandler) -> JobHandler:
        _HANDLERS[kind] = handler
        _QUEUES[kind] = queue
        return handler

    return register


def job_kinds() -> list[str]:
    return sorted(_HANDLERS)


class Progress:
    """Live progress of one job, throttled writes to the cache."""

    def __init__(self, job: Job, *, interval_s: float = 0.3) -> None:
        self.job = job
        self.key = progress_key(job)
        self.done = 0
        self.total: int | None = None
        self.message = ""
        self._interval = interval_s
        self._last = 0.0

    def start(self, *, total: int | None, message: str = "") -> None:
        self.total, self.done, self.message = total, 0, message
        self._write(force=True)

    def advance(self, n: int = 1, *, message: str | None = None) -> None:
        self.done += n
        if message is not None:
            self.message = message
        self._write()

    def set(self, done: int, *, total: int | None = None, message: str | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        if message is not None:
            self.message = message
        self._write()

    def _write(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self._interval:
            return
        self._last = now
        cache.set(
            self.key,
            {"done": self.done, "total": self.total, "message": self.message},
            timeout=7 * 24 * 3600,
        )

    def flush(self) -> None:
        self._write(force=True)


def progress_key(job: Job) -> str:
    return f"crowdqa:job-progress:{job.token}"


def job_progress(job: Job) -> dict[str, Any]:
    """Progress as the UI shows it: done, total, percent (None when unknown), message."""
    if job.finished:
        done, total, message = job.progress_done, job.progress_total, ""
    else:
        live = cache.get(progress_key(job)) or {}
        done = live.get("done", job.progress_done)
        total = live.get("total", job.progress_total)
        message = live.get("message", "")
    percent = None
    if total:
        percent = min(100, round(100 * done / total))
    elif job.status == Job.Status.DONE:
        percent = 100
    return {"done": done, "total": total, "percent": percent, "message": message}


def job_create(
    *, kind: str, params: dict[str, Any] | None = None, user: Any = None
) -> Job:
    """Record a job and enqueue it once the surrounding transaction commits."""
    if kind not in _HANDLERS:
        raise JobError(f"unknown job kind {kind!r}; known: {', '.join(job_kinds())}")
    job = Job.objects.create(
        kind=kind, params=params or {}, created_by=user if user and user.pk else None
    )
    transaction.on_commit(lambda: job_enqueue(job_id=job.pk, queue=_QUEUES[kind]))
    return job


def job_enqueue(*, job_id: int, queue: str = "default") -> None:
    """Send the job to the workers; in the embedded mode run it on a background thread."""
    from collector.tasks import job_run_task

    if not settings.CELERY_TASK_ALWAYS_EAGER:
        job_run_task.apply_async((job_id,), queue=queue)
    elif getattr(settings, "CROWDQA_JOBS_IN_THREAD", True):
        _eager_executor().submit(_run_in_thread, job_id)
    else:
        job_run(job_id=job_id)


def _eager_executor() -> ThreadPoolExecutor:
    # One thread: jobs run one after another, like a worker with concurrency 1, which
    # also keeps index writes to a single writer.
    global _eager_pool
    with _eager_pool_lock:
        if _eager_pool is None:
            _eager_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="crowdqa-job")
        return _eager_pool


def _run_in_thread(job_id: int) -> None:
    close_old_connections()
    try:
        job_run(job_id=job_id)
    except Exception:
        logger.exception("job %s crashed", job_id)
    finally:
        connection.close()


def job_run(*, job_id: int) -> Job:
    """Claim and run one job. Finished jobs are left alone (safe to deliver twice)."""
    claimed = Job.objects.filter(
        pk=job_id, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]
    ).update(status=Job.Status.RUNNING, started_at=timezone.now())
    job = Job.objects.get(pk=job_id)
    if not claimed:
        return job
    Job.objects.filter(pk=job_id).update(attempts=job.attempts + 1)
    handler = _HANDLERS.get(job.kind)
    progress = Progress(job)
    try:
        if handler is None:
            raise JobError(f"no handler for job kind {job.kind!r}")
        result = handler(job, progress) or {}
    except Exception as exc:
        message = str(exc) if isinstance(exc, JobError) else f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, JobError):
            logger.exception("job %s (%s) failed", job_id, job.kind)
        Job.objects.filter(pk=job_id).update(
            status=Job.Status.FAILED, error=message, finished_at=timezone.now(),
            progress_done=progress.done, progress_total=progress.total,
        )
    else:
        Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).update(
            status=Job.Status.DONE, result=result, error="", finished_at=timezone.now(),
            progress_done=progress.total if progress.total is not None else progress.done,
            progress_total=progress.total,
        )
    progress.flush()
    job.refresh_from_db()
    return job


@job_handler("selfcheck")
def selfcheck_job(job: Job, progress: Progress) -> dict[str, Any]:
    """A tiny job that proves the worker reaches the database: counts users."""
    from django.contrib.auth import get_user_model

    progress.start(total=1, message="counting users")
    users = get_user_model().objects.count()
    progress.advance()
    import socket

    return {"users": users, "host": socket.gethostname(), "echo": job.params.get("echo")}
