"""Background jobs: a registry of job kinds, enqueueing, running, live progress, and the
recovery of jobs whose worker died.

A job kind is a function ``handler(job, progress) -> dict`` registered with
``@job_handler("kind")``. ``job_create`` records the job and enqueues it on commit;
the Celery task ``collector.tasks.job_run_task`` passes only the id, and ``job_run``
re-reads the row, claims it with a conditional update (queued -> running, with a fresh
claim id) and runs the handler, so two deliveries of one job never run it twice.

While a job runs, a heartbeat thread stamps ``heartbeat_at`` on its row. The periodic
check ``jobs_recover`` (Celery beat, or the embedded ticker) finds running jobs whose
heartbeat stopped: the worker died (``kill -9``, out of memory, a lost host). A kind
registered with ``rerun_when_lost=True`` (its handler is idempotent: imports, index and
release builds, stage runs) is queued again, up to ``CROWDQA_JOB_MAX_ATTEMPTS`` runs;
any other job is marked failed with the reason "worker lost", and an admin can retry it
(``job_retry``). Only the run holding the current claim may record the job's outcome.

A queued job can wait for ever too: its message was lost (Redis restarted without
persistence, a flushed queue, a process that died between the commit and the send). The
periodic check looks at jobs still queued ``CROWDQA_JOB_QUEUED_LOST_AFTER_S`` after they were
sent and asks the broker whether it still holds their messages (``collector.broker``): a job
whose message is held is left to wait; one whose message is gone is sent again (it never
started, so any kind can be); one whose fate the broker cannot tell is marked stalled, with
the reason and a Retry on its page. A job is never sent again while its message is held.

Progress is written to the cache, not the database, so a job that keeps one long
transaction open (an all-or-nothing import) still shows its progress to other requests.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import cache
from django.db import OperationalError, close_old_connections, connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from collector.models import Job
from collector.stored_text import (
    StoredText,
    stored_text_english,
    stored_text_json,
    stored_text_render,
)

if TYPE_CHECKING:
    from collector.broker import BrokerHoldings

logger = logging.getLogger(__name__)

JobHandler = Callable[[Job, "Progress"], dict[str, Any] | None]
WORKER_LOST = "worker lost"


@dataclass(frozen=True)
class JobKind:
    """A registered job kind: its handler, queue, and what happens when it goes wrong.

    ``on_failed(job, reason)`` runs whenever the job ends failed (its handler raised, or
    its worker was lost for good); ``on_retry(job)`` runs in the transaction that queues
    a failed job again (a release build puts its release back to building).
    ``subject(job)`` names what the job works on, for its page (project, stage, corpus):
    (label, text, link) triples; ``summary(job)`` says in sentences what a finished job did.
    """

    name: str
    handler: JobHandler
    queue: str = "default"
    rerun_when_lost: bool = False
    on_failed: Callable[[Job, str], None] | None = None
    on_retry: Callable[[Job], None] | None = None
    subject: Callable[[Job], list[tuple[str, str, str]]] | None = None
    summary: Callable[[Job], list[str]] | None = None
    label: Any = None  # the kind's name for people (a lazy translation)
    #: Whether a failed job of this kind can run again (an import whose refused upload
    #: was discarded cannot); None: always.
    can_retry: Callable[[Job], bool] | None = None


_KINDS: dict[str, JobKind] = {}
_eager_pool: ThreadPoolExecutor | None = None
_eager_pool_lock = threading.Lock()
# Jobs this process runs or has queued on its embedded thread: the embedded ticker never
# takes them for lost, and re-submits queued jobs that are not here (after a restart).
_LOCAL: set[int] = set()


class JobError(Exception):
    """A job failed for a reason its user should read (bad input, missing corpus...).

    The reason is words, or a :class:`~collector.stored_text.StoredText` that the job keeps
    as it is (``Job.error_text``) to show in each reader's language; ``str()`` is the
    reason in the active language, ``Job.error`` keeps its English."""

    def __init__(self, reason: str | StoredText) -> None:
        self.reason = reason
        super().__init__(stored_text_english(reason))

    def __str__(self) -> str:
        return str(self.reason)


def job_handler(
    kind: str, *, queue: str = "default", rerun_when_lost: bool = False,
    on_failed: Callable[[Job, str], None] | None = None,
    on_retry: Callable[[Job], None] | None = None,
    subject: Callable[[Job], list[tuple[str, str, str]]] | None = None,
    summary: Callable[[Job], list[str]] | None = None,
    label: Any = None,
    can_retry: Callable[[Job], bool] | None = None,
) -> Callable[[JobHandler], JobHandler]:
    """Register ``handler`` as the code that runs jobs of ``kind``.

    Jobs that write the search index use ``queue="index"``: that queue is consumed by a
    single worker process with concurrency 1, so each index has one writer at a time.
    ``rerun_when_lost=True`` declares the handler idempotent: a run cut short by a dead
    worker is simply run again from the start. ``label`` names the kind on its pages
    (``gettext_lazy``); without one the kind's key is shown in words.
    """

    def register(handler: JobHandler) -> JobHandler:
        _KINDS[kind] = JobKind(kind, handler, queue, rerun_when_lost, on_failed, on_retry,
                               subject, summary, label, can_retry)
        return handler

    return register


def job_kinds() -> list[str]:
    return sorted(_KINDS)


def job_kind(kind: str) -> JobKind | None:
    return _KINDS.get(kind)


def job_kind_label(kind: str) -> str:
    """The name of a job kind in the interface language ("Corpus import")."""
    registered = _KINDS.get(kind)
    if registered is not None and registered.label is not None:
        return str(registered.label)
    return _words(kind)


def heartbeat_interval() -> float:
    return float(getattr(settings, "CROWDQA_JOB_HEARTBEAT_S", 10))


def lost_after() -> timedelta:
    """How long a running job's heartbeat may be silent before its worker counts as lost."""
    return timedelta(seconds=float(getattr(settings, "CROWDQA_JOB_LOST_AFTER_S", 60)))


def queued_lost_after() -> timedelta:
    """How long a job may stay queued before the periodic check asks the broker whether it
    still holds its message."""
    return timedelta(seconds=float(getattr(settings, "CROWDQA_JOB_QUEUED_LOST_AFTER_S", 300)))


def max_attempts() -> int:
    return int(getattr(settings, "CROWDQA_JOB_MAX_ATTEMPTS", 3))


def worker_identity() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


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
        # A lazy translation (``collector.progress.said``) is put in the reader's language.
        message = str(live.get("message", ""))
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
    if kind not in _KINDS:
        raise JobError(f"unknown job kind {kind!r}; known: {', '.join(job_kinds())}")
    job = Job.objects.create(
        kind=kind, params=params or {}, created_by=user if user and user.pk else None
    )
    transaction.on_commit(lambda: job_enqueue(job_id=job.pk, queue=_KINDS[kind].queue))
    return job


def job_enqueue(*, job_id: int, queue: str = "default") -> None:
    """Send the job to the workers; in the embedded mode run it on a background thread."""
    from collector.tasks import job_run_task

    if not settings.CELERY_TASK_ALWAYS_EAGER:
        from kombu.exceptions import OperationalError as BrokerUnreachable

        try:
            job_run_task.apply_async((job_id,), queue=queue)
        except BrokerUnreachable as exc:
            # The job is recorded but no worker will hear of it: fail it, saying why, so
            # that its page offers Retry (the request that made it goes on, no 500).
            logger.error("job %s could not be sent to the broker: %s", job_id, exc)
            reason = StoredText(gettext_noop("the broker could not be reached (%(error)s); "
                                             "press Retry once it is back"), error=str(exc))
            message = stored_text_english(reason)
            if Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
                    status=Job.Status.FAILED, error=message, error_text=stored_text_json(reason),
                    finished_at=timezone.now()):
                _failed_hook(Job.objects.get(pk=job_id), message)
    elif getattr(settings, "CROWDQA_JOBS_IN_THREAD", True):
        with _eager_pool_lock:
            _LOCAL.add(job_id)
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
        with _eager_pool_lock:
            _LOCAL.discard(job_id)
        connection.close()


def database_locked(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's "database is locked" (another connection held the write
    lock for longer than the busy timeout)."""
    return isinstance(exc, OperationalError) and "database is locked" in str(exc)


def retry_when_locked(func: Callable[[], Any], *, attempts: int | None = None,
                      what: str = "transaction") -> Any:
    """Run ``func`` (a whole transaction, never a part of an open one) again when it met
    SQLite's "database is locked", with a growing pause; other errors pass through."""
    attempts = attempts or int(getattr(settings, "CROWDQA_LOCKED_RETRIES", 5))
    for attempt in range(1, attempts + 1):
        try:
            return func()
        except OperationalError as exc:
            if (not database_locked(exc) or attempt == attempts
                    or connection.in_atomic_block):
                raise
            pause = min(0.25 * 2 ** (attempt - 1), 5.0)
            logger.warning("%s met a locked database (attempt %s of %s); again in %.2f s",
                           what, attempt, attempts, pause)
            time.sleep(pause)
    raise AssertionError("unreachable")


class _Heartbeat:
    """Stamps the job row every ``heartbeat_interval()`` seconds from its own thread (and
    database connection) while the handler runs; stops when the claim is no longer ours."""

    def __init__(self, job_id: int, claim: uuid.UUID) -> None:
        self.job_id, self.claim = job_id, claim
        self.taken = False  # the periodic check gave the job to another run
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"crowdqa-heartbeat-{job_id}",
                                        daemon=True)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        try:
            while not self._stop.wait(heartbeat_interval()):
                try:
                    alive = Job.objects.filter(
                        pk=self.job_id, claim=self.claim, status=Job.Status.RUNNING,
                    ).update(heartbeat_at=timezone.now())
                except OperationalError as exc:  # SQLite busy: the next beat tries again
                    logger.info("heartbeat of job %s skipped: %s", self.job_id, exc)
                    continue
                if not alive:
                    self.taken = True
                    return
        finally:
            connection.close()


def job_run(*, job_id: int) -> Job:
    """Claim and run one job. Only a queued job is claimed: a finished job, or one another
    worker runs (its heartbeat is alive), is left alone, so a job delivered twice runs once.
    A running job whose heartbeat stopped is first recovered as the periodic check would."""
    job = Job.objects.filter(pk=job_id).first()
    if job is None:
        raise JobError(f"job {job_id} does not exist")
    if job.status == Job.Status.RUNNING:
        _recover(job, now=timezone.now())
    claim = uuid.uuid4()
    now = timezone.now()
    claimed = Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
        status=Job.Status.RUNNING, started_at=now, heartbeat_at=now, claim=claim,
        worker=worker_identity()[:200], attempts=F("attempts") + 1,
        stalled_at=None, error="", error_text={},  # a stalled job's message turned up
    )
    job.refresh_from_db()
    if not claimed:
        return job
    kind = _KINDS.get(job.kind)
    progress = Progress(job)
    ours = Job.objects.filter(pk=job_id, claim=claim, status=Job.Status.RUNNING)
    with _Heartbeat(job_id, claim):
        try:
            if kind is None:
                raise JobError(f"no handler for job kind {job.kind!r}")
            if kind.rerun_when_lost:
                result = retry_when_locked(lambda: kind.handler(job, progress),
                                           what=f"job {job_id} ({job.kind})")
            else:
                result = kind.handler(job, progress)
            result = result or {}
        except Exception as exc:
            if isinstance(exc, JobError):
                message, text = stored_text_english(exc.reason), stored_text_json(exc.reason)
                # bad input and the like: no traceback, but the worker's log says why
                logger.warning("job %s (%s) failed: %s", job_id, job.kind, message)
            else:
                message, text = f"{type(exc).__name__}: {exc}", {}
                logger.exception("job %s (%s) failed", job_id, job.kind)
            failed = ours.update(
                status=Job.Status.FAILED, error=message, error_text=text,
                finished_at=timezone.now(),
                progress_done=progress.done, progress_total=progress.total,
            )
            if failed:
                _failed_hook(job, message)
        else:
            ours.update(
                status=Job.Status.DONE, result=result, error="", error_text={},
                finished_at=timezone.now(),
                progress_done=progress.total if progress.total is not None else progress.done,
                progress_total=progress.total,
            )
            logger.info("job %s (%s) done", job_id, job.kind)
    progress.flush()
    job.refresh_from_db()
    return job


def _failed_hook(job: Job, reason: str) -> None:
    kind = _KINDS.get(job.kind)
    if kind is None or kind.on_failed is None:
        return
    try:
        kind.on_failed(job, reason)
    except Exception:
        logger.exception("the failure hook of job %s (%s) failed", job.pk, job.kind)


def _history(job: Job, event: str | StoredText, now: Any) -> list[dict[str, Any]]:
    """The job's history with ``event`` added: its English, and a stored text's msgid and
    parameters, for its page to show in the reader's language."""
    entry = {"at": now.isoformat(timespec="seconds"), "event": stored_text_english(event)}
    if isinstance(event, StoredText):
        entry["text"] = stored_text_json(event)
    return [*job.history, entry][-20:]


def _recover(job: Job, *, now: Any) -> str | None:
    """If ``job`` runs on a worker whose heartbeat stopped, queue it again (idempotent kind,
    attempts left) or fail it with the reason "worker lost". Returns "requeued", "failed"
    or None (alive, or another process recovered it first)."""
    stale = now - lost_after()
    if job.pk in _LOCAL and settings.CELERY_TASK_ALWAYS_EAGER:
        return None  # runs on this process's own job thread: alive by definition
    silent = Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, started_at__lt=stale)
    kind = _KINDS.get(job.kind)
    last = job.heartbeat_at or job.started_at
    seen = f"last heartbeat {last:%Y-%m-%d %H:%M:%S} UTC" if last else "no heartbeat"
    where = f" on {job.worker}" if job.worker else ""
    with transaction.atomic():
        if kind is not None and kind.rerun_when_lost and job.attempts < max_attempts():
            moved = Job.objects.filter(silent, pk=job.pk, status=Job.Status.RUNNING).update(
                status=Job.Status.QUEUED, claim=None, worker="", heartbeat_at=None,
                queued_at=now, stalled_at=None,
                history=_history(job, f"{WORKER_LOST}{where} ({seen}); queued again for "
                                      f"run {job.attempts + 1} of {max_attempts()}", now),
            )
            if moved:
                queue = kind.queue
                transaction.on_commit(lambda: job_enqueue(job_id=job.pk, queue=queue))
                logger.warning("job %s (%s): %s%s; queued again", job.pk, job.kind,
                               WORKER_LOST, where)
                return "requeued"
            return None
        tried = (f" after {job.attempts} runs" if kind is not None and kind.rerun_when_lost
                 else "")
        reason = (f"{WORKER_LOST}: the worker{where} stopped while running this job "
                  f"({seen}){tried}; an admin can retry it")
        moved = Job.objects.filter(silent, pk=job.pk, status=Job.Status.RUNNING).update(
            status=Job.Status.FAILED, error=reason, error_text={}, finished_at=now, claim=None,
            history=_history(job, reason, now),
        )
    if moved:
        logger.warning("job %s (%s): %s", job.pk, job.kind, reason)
        job.refresh_from_db()
        _failed_hook(job, reason)
        return "failed"
    return None


def jobs_recover(*, now: Any = None) -> dict[str, int]:
    """The periodic check: recover running jobs whose heartbeat stopped (see ``_recover``).
    In the embedded mode also re-submit queued jobs this process does not hold (they were
    queued on a thread that a restart ended); with a broker, send again the queued jobs whose
    message it lost, and mark stalled those it cannot say about (see ``_queued_check``).
    Idempotent; safe to run from several places."""
    now = now or timezone.now()
    stale = now - lost_after()
    counts = {"requeued": 0, "failed": 0, "resubmitted": 0, "resent": 0, "stalled": 0}
    silent = Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, started_at__lt=stale)
    for job in Job.objects.filter(silent, status=Job.Status.RUNNING).order_by("id")[:500]:
        outcome = _recover(job, now=now)
        if outcome:
            counts[outcome] += 1
    if settings.CELERY_TASK_ALWAYS_EAGER and getattr(settings, "CROWDQA_JOBS_IN_THREAD", True):
        for job_id, kind in Job.objects.filter(
                status=Job.Status.QUEUED).order_by("id").values_list("pk", "kind")[:500]:
            with _eager_pool_lock:
                held = job_id in _LOCAL
            if not held:
                job_enqueue(job_id=job_id, queue=_KINDS[kind].queue if kind in _KINDS
                            else "default")
                counts["resubmitted"] += 1
    elif not settings.CELERY_TASK_ALWAYS_EAGER:
        for outcome in _queued_check(now=now).values():
            if outcome in counts:
                counts[outcome] += 1
    return counts


def _job_queue(kind: str) -> str:
    registered = _KINDS.get(kind)
    return registered.queue if registered is not None else "default"


def _queued_check(*, now: Any) -> dict[int, str | None]:
    """Jobs queued ``queued_lost_after()`` ago or longer that no worker took: ask the broker
    what it holds, once for all of them, and settle each (``_queued_settle``)."""
    from collector.broker import broker_holdings

    waiting = list(Job.objects.filter(
        status=Job.Status.QUEUED, queued_at__lt=now - queued_lost_after(),
    ).order_by("id")[:500])
    if not waiting:
        return {}
    holdings = broker_holdings(queues={_job_queue(job.kind) for job in waiting})
    return {job.pk: _queued_settle(job, holdings, now=now) for job in waiting}


def _queued_settle(job: Job, holdings: BrokerHoldings, *, now: Any) -> str | None:
    """One queued job that waited long, after the broker said what it holds: its message is
    held: it waits (no longer stalled); gone: it is sent again ("resent"); cannot be told:
    it is marked stalled, once ("stalled"). Each move is a conditional update, so a job a
    worker took meanwhile, or another check settled, is left alone."""
    queue = _job_queue(job.kind)
    still = Job.objects.filter(pk=job.pk, status=Job.Status.QUEUED)
    if holdings.held(job.pk):
        if job.stalled_at is not None:
            still.filter(stalled_at__isnull=False).update(stalled_at=None, error="",
                                                          error_text={})
        return None
    why = holdings.why_unknown(job.pk, queue)
    if why is not None:
        if job.stalled_at is not None:
            return None
        reason = StoredText(gettext_noop("no worker has taken it, and it cannot be told whether "
                                         "the broker still holds its message: %(why)s"), why=why)
        moved = still.filter(stalled_at__isnull=True, queued_at=job.queued_at).update(
            stalled_at=now, error=stored_text_english(reason),
            error_text=stored_text_json(reason), history=_history(job, reason, now))
        if moved:
            logger.warning("job %s (%s) is stalled: %s", job.pk, job.kind,
                           stored_text_english(reason))
        return "stalled" if moved else None
    event = StoredText(gettext_noop("the broker no longer held its message (lost in a broker "
                                    "restart or a flushed queue); sent to the workers again"))
    with transaction.atomic():
        moved = still.filter(queued_at=job.queued_at).update(
            queued_at=now, stalled_at=None, error="", error_text={},
            history=_history(job, event, now))
        if moved:
            transaction.on_commit(lambda: job_enqueue(job_id=job.pk, queue=queue))
    if moved:
        logger.warning("job %s (%s): its message was lost; sent again", job.pk, job.kind)
    return "resent" if moved else None


def job_retry(*, job: Job, user: Any = None) -> Job:
    """An admin's Retry. A failed job is queued again: same kind and parameters, fresh error
    and progress; the kind's ``on_retry`` hook runs in the same transaction. A stalled job
    (queued, its message's fate unknown) is sent to the workers again, unless the broker
    says it still holds its message. Refuses any other job (it ran, runs or waits already);
    a job is sent once however often Retry is pressed."""
    job.refresh_from_db()
    if job.status == Job.Status.QUEUED:
        return _stalled_retry(job=job, user=user)
    return _failed_retry(job=job, user=user)


def _stalled_retry(*, job: Job, user: Any = None) -> Job:
    from collector.broker import broker_holdings

    if job.stalled_at is None:
        raise JobError(_("job %(pk)s is not stalled: its message waits for a worker; only a "
                         "failed or stalled job can be retried") % {"pk": job.pk})
    queue = _job_queue(job.kind)
    now = timezone.now()
    holdings = broker_holdings(queues=[queue])
    if holdings.held(job.pk):
        _queued_settle(job, holdings, now=now)  # no longer stalled
        raise JobError(_("job %(pk)s was not sent again: the broker still holds its message, "
                         "and a worker will take it") % {"pk": job.pk})
    who = f" by {user.get_username()}" if getattr(user, "pk", None) else ""
    with transaction.atomic():
        moved = Job.objects.filter(
            pk=job.pk, status=Job.Status.QUEUED, stalled_at__isnull=False,
        ).update(queued_at=now, stalled_at=None, error="", error_text={},
                 history=_history(job, f"sent again{who} after: {job.error[:300]}", now))
        if not moved:
            raise JobError(_("job %(pk)s was not sent again: a worker took it, or it was "
                             "retried already") % {"pk": job.pk})
        transaction.on_commit(lambda: job_enqueue(job_id=job.pk, queue=queue))
    job.refresh_from_db()
    return job


@transaction.atomic
def _failed_retry(*, job: Job, user: Any = None) -> Job:
    registered = _KINDS.get(job.kind)
    if (job.status == Job.Status.FAILED and registered is not None
            and registered.can_retry is not None and not registered.can_retry(job)):
        raise JobError(_("job %(pk)s cannot run again: what it needs is gone (a refused upload "
                         "is not kept); start a new one") % {"pk": job.pk})
    now = timezone.now()
    who = f" by {user.get_username()}" if getattr(user, "pk", None) else ""
    event = f"retried{who} after: {job.error[:300]}"
    moved = Job.objects.filter(pk=job.pk, status=Job.Status.FAILED).update(
        status=Job.Status.QUEUED, error="", error_text={}, result={}, finished_at=None,
        claim=None, queued_at=now, stalled_at=None,
        worker="", heartbeat_at=None, progress_done=0, progress_total=None,
        attempts=0, history=_history(job, event, now),
    )
    if not moved:
        current = Job.objects.filter(pk=job.pk).values_list("status", flat=True).first()
        raise JobError(f"job {job.pk} is {current}, not failed: only a failed job can be "
                       "retried")
    job.refresh_from_db()
    kind = _KINDS.get(job.kind)
    if kind is not None and kind.on_retry is not None:
        kind.on_retry(job)
    cache.delete(progress_key(job))
    queue = kind.queue if kind is not None else "default"
    transaction.on_commit(lambda: job_enqueue(job_id=job.pk, queue=queue))
    return job


#: The names of the figures jobs report (stage runs' counts, a split's shares ...) in the
#: reader's language; a figure not named here is shown by its key, in words.
RESULT_LABELS: dict[str, Any] = {
    "agreed": gettext_lazy("Agreed"),
    "articles": gettext_lazy("Articles"),
    "batches": gettext_lazy("Batches"),
    "candidates": gettext_lazy("Candidates"),
    "checked": gettext_lazy("Checked"),
    "consolidated": gettext_lazy("Consolidated"),
    "count": gettext_lazy("Count"),
    "dev": gettext_lazy("Dev"),
    "documents_created": gettext_lazy("Documents created"),
    "documents_dropped": gettext_lazy("Documents dropped"),
    "documents_kept": gettext_lazy("Documents kept"),
    "files": gettext_lazy("Files"),
    "flagged": gettext_lazy("Flagged"),
    "kept": gettext_lazy("Kept"),
    "new": gettext_lazy("New"),
    "queries": gettext_lazy("Queries"),
    "queries_without": gettext_lazy("Queries left without documents"),
    "questions": gettext_lazy("Questions"),
    "records": gettext_lazy("Records"),
    "refused": gettext_lazy("Refused"),
    "report": gettext_lazy("Report"),
    "retrieved": gettext_lazy("Retrieved"),
    "sampled": gettext_lazy("Sampled"),
    "split": gettext_lazy("Split"),
    "splits": gettext_lazy("Splits"),
    "table2_overall": gettext_lazy("Table2 overall"),
    "test": gettext_lazy("Test"),
    "timings": gettext_lazy("Timings"),
    "to_review": gettext_lazy("To review"),
    "to_validation": gettext_lazy("To validation"),
    "total": gettext_lazy("Total"),
    "train": gettext_lazy("Train"),
    "waiting": gettext_lazy("Waiting"),
    "weighed": gettext_lazy("Weighed"),
    "without_documents": gettext_lazy("Without documents"),
    "without_passages": gettext_lazy("Without passages"),
}


def _words(key: str) -> str:
    return key.replace("_", " ").replace("-", " ").strip().capitalize()


def _value_words(value: Any) -> str:
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, int | float):
        return f"{value:,}"
    if isinstance(value, dict):
        return ", ".join(f"{_words(str(k)).lower()} {_value_words(v)}"
                         for k, v in value.items() if v is not None) or _("none")
    if isinstance(value, list | tuple):
        return ", ".join(_value_words(v) for v in value) or _("none")
    return str(value)


def result_in_words(result: dict[str, Any]) -> list[str]:
    """A result dict as sentences ("Documents created: 15."), leaving out empty values, in
    the reader's language (a figure's name from ``RESULT_LABELS``); the fallback for kinds
    without a ``summary``."""
    return [_("%(name)s: %(value)s.") % {"name": RESULT_LABELS.get(key) or _words(str(key)),
                                         "value": _value_words(value)}
            for key, value in result.items()
            if value is not None and value != {} and value != []]


def job_describe(job: Job) -> dict[str, Any]:
    """What the job page says about ``job``, in words: its title, what it works on, what
    it did (or why it failed), its runs and what happened to it."""
    kind = _KINDS.get(job.kind)
    subject: list[tuple[str, str, str]] = []
    summary: list[str] = []
    if kind is not None and kind.subject is not None:
        try:
            subject = kind.subject(job)
        except Exception:  # a page never fails because the job's subject is gone
            logger.exception("subject of job %s", job.pk)
    if job.status == Job.Status.DONE and job.result:
        try:
            summary = (kind.summary(job) if kind is not None and kind.summary is not None
                       else result_in_words(job.result))
        except Exception:
            logger.exception("summary of job %s", job.pk)
            summary = result_in_words(job.result)
    if kind is not None and kind.rerun_when_lost and job.attempts:
        runs = _("run %(run)s of at most %(most)s") % {"run": job.attempts,
                                                       "most": max_attempts()}
    elif job.attempts:
        runs = _("run %(run)s") % {"run": job.attempts}
    else:
        runs = _("not started yet")
    stalled = job.status == Job.Status.QUEUED and job.stalled_at is not None
    return {
        "title": f"{job_kind_label(job.kind)} #{job.pk}",
        "subject": [{"label": label, "text": text, "link": link}
                    for label, text, link in subject],
        "summary": summary,
        "lost": job.status == Job.Status.FAILED and job.error.startswith(WORKER_LOST),
        "stalled": stalled,
        "retryable": stalled or (job.status == Job.Status.FAILED and kind is not None
                                 and (kind.can_retry is None or kind.can_retry(job))),
        "runs": runs,
        "history": [{"at": entry.get("at", ""),
                     "event": stored_text_render(entry.get("text"), entry.get("event", ""))}
                    for entry in job.history],
    }


@job_handler("selfcheck", rerun_when_lost=True, label=gettext_lazy("Self-check"))
def selfcheck_job(job: Job, progress: Progress) -> dict[str, Any]:
    """A tiny job that proves the worker reaches the database: counts users."""
    from django.contrib.auth import get_user_model

    progress.start(total=1, message=gettext_lazy("counting users"))
    users = get_user_model().objects.count()
    progress.advance()
    import socket

    return {"users": users, "host": socket.gethostname(), "echo": job.params.get("echo")}
