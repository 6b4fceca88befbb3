"""The lost-message check against a real RabbitMQ (127.0.0.1:5672, guest/guest; another with
CROWDQA_TEST_RABBITMQ_URL), whichever broker the rest of the suite uses: RabbitMQ only counts
a queue's messages, so a queued job whose message waits there is not sent again, one whose
message was purged is, and one whose queue holds messages it cannot tell apart is marked
stalled. The jobs go to a queue of this module's own (a random name, deleted afterwards), so
nothing else on the broker is touched. Skips when RabbitMQ cannot be reached, unless
CROWDQA_REQUIRE_RABBITMQ is set (CI's PostgreSQL stage)."""

from __future__ import annotations

import functools
import os
import uuid
from datetime import timedelta

import pytest
from django.test import TestCase
from django.utils import timezone
from kombu import Connection, Exchange, Queue

from collector.broker import broker_holdings
from collector.jobs import Progress, job_create, job_handler, job_retry, jobs_recover
from collector.models import Job
from config.celery import app
from tests.conftest import skip_or_fail

RABBITMQ_URL = os.environ.get("CROWDQA_TEST_RABBITMQ_URL",
                              "amqp://guest:guest@127.0.0.1:5672//")
QUEUE = f"crowdqa-test-{uuid.uuid4().hex[:12]}"
QUIET = {"requeued": 0, "failed": 0, "resubmitted": 0, "resent": 0, "stalled": 0}
RUNS: list[int] = []


@job_handler("test-rabbitmq-once", queue=QUEUE)
def _once_job(job: Job, progress: Progress) -> dict:
    """Not idempotent: it must run once however often its message is sent."""
    RUNS.append(job.pk)
    return {"ran": True}


def _app_broker(url: str, environ: str | None) -> None:
    """Point the Celery app (sending and asking) at ``url``: its pools are looked up anew
    (kombu keeps one per broker, so the former broker's pools are found again after).
    Celery reads the ``CELERY_BROKER_URL`` of the environment before its configuration:
    ``environ`` is what that becomes (None: unset)."""
    if environ is None:
        os.environ.pop("CELERY_BROKER_URL", None)
    else:
        os.environ["CELERY_BROKER_URL"] = environ
    app.conf.broker_url = url
    app._pool = None
    app.amqp._producer_pool = None


@functools.cache
def _unreachable() -> str:
    """Why RabbitMQ cannot be reached ('' when it can), asked once a run."""
    try:
        with Connection(RABBITMQ_URL, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, timeout=2)
    except Exception as exc:
        return (f"RabbitMQ is not reachable at {RABBITMQ_URL.split('@')[-1]} "
                f"({type(exc).__name__}: {exc})")
    return ""


@pytest.fixture
def rabbitmq(db, settings):
    """Jobs go to the real RabbitMQ (no worker: the tests play it with ``_deliver``), into
    this module's own queue, which is deleted at the end."""
    if why := _unreachable():
        skip_or_fail(why, required_by="CROWDQA_REQUIRE_RABBITMQ")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CROWDQA_JOB_QUEUED_LOST_AFTER_S = 300
    before = app.conf.get("broker_url")
    environ = os.environ.get("CELERY_BROKER_URL")
    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    _app_broker(RABBITMQ_URL, RABBITMQ_URL)
    # Declared here, as Celery declares a missing queue: Celery declares it once per
    # connection, and the previous test deleted it.
    with app.connection_for_write() as conn:
        Queue(QUEUE, Exchange(QUEUE), routing_key=QUEUE)(conn.default_channel).declare()
    RUNS.clear()
    try:
        yield
    finally:
        try:
            with app.connection_for_write() as conn:
                channel = conn.channel()
                channel.queue_delete(QUEUE)
                channel.exchange_delete(QUEUE)
                channel.close()
        finally:
            app.conf.task_always_eager = eager
            _app_broker(before, environ)


def _waiting() -> int:
    with app.connection_for_write() as conn:
        channel = conn.channel()
        try:
            return channel.queue_declare(queue=QUEUE, passive=True).message_count
        finally:
            channel.close()


def _purge() -> None:
    """What a RabbitMQ restart loses (a queue's messages that were not persisted)."""
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge(QUEUE)


def _deliver() -> list[int]:
    """A worker's part: take every message waiting in the queue and run its job; returns the
    job ids of the messages."""
    from collector.tasks import job_run_task

    ids = []
    with app.connection_for_write() as conn:
        channel = conn.default_channel
        while (raw := channel.basic_get(QUEUE, no_ack=False)) is not None:
            message = channel.message_to_python(raw)
            args, _kwargs, _embed = message.decode()
            job_run_task(args[0])
            message.ack()
            ids.append(args[0])
    return ids


def _queued(*, minutes_ago: float) -> Job:
    """A job created and sent to RabbitMQ (its message waits in the queue), as long ago as
    ``minutes_ago``."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        job = job_create(kind="test-rabbitmq-once")
    Job.objects.filter(pk=job.pk).update(
        queued_at=timezone.now() - timedelta(minutes=minutes_ago))
    job.refresh_from_db()
    return job


def test_a_job_whose_message_waits_in_the_queue_is_not_sent_again(rabbitmq):
    job = _queued(minutes_ago=10)
    assert _waiting() == 1
    # RabbitMQ counts the message and cannot say whose it is: the job is not sent again
    # (it is its own message), it is marked stalled, once.
    assert jobs_recover() == {**QUIET, "stalled": 1}
    assert jobs_recover() == QUIET
    assert _waiting() == 1
    # The message was its own: a worker takes it, the job runs, no longer stalled.
    assert _deliver() == [job.pk]
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.stalled_at is None and [job.pk] == RUNS


def test_a_job_whose_message_was_purged_is_sent_again_and_runs_once(
    rabbitmq, django_capture_on_commit_callbacks
):
    job = _queued(minutes_ago=10)
    _purge()
    assert _waiting() == 0
    # An empty queue holds nothing, and no worker reports it reserved: it is gone.
    holdings = broker_holdings(queues=[QUEUE])
    assert not holdings.held(job.pk) and holdings.why_unknown(job.pk, QUEUE) is None
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_recover() == {**QUIET, "resent": 1}
    assert _waiting() == 1
    assert jobs_recover() == QUIET  # its new message is young
    job.refresh_from_db()
    assert job.history[-1]["event"].startswith("the broker no longer held its message")
    assert _deliver() == [job.pk]
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.attempts == 1 and [job.pk] == RUNS


def test_a_queue_it_cannot_tell_apart_marks_the_job_stalled_and_retry_sends_it_once(
    rabbitmq, admin_user, django_capture_on_commit_callbacks
):
    lost = _queued(minutes_ago=10)
    _purge()  # its message is lost ...
    other = _queued(minutes_ago=0)  # ... but the queue holds another job's
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_recover() == {**QUIET, "stalled": 1}
    lost.refresh_from_db()
    assert lost.status == Job.Status.QUEUED and lost.stalled_at is not None
    assert lost.error == (f"no worker has taken it, and it cannot be told whether the broker "
                          f"still holds its message: the queue {QUEUE} holds messages (1), "
                          f"and this broker (amqp) cannot list them")
    assert _waiting() == 1  # nothing was sent
    # The other job's message is taken; the admin's Retry, pressed twice, sends it once.
    assert _deliver() == [other.pk]
    with django_capture_on_commit_callbacks(execute=True):
        job_retry(job=lost, user=admin_user)
        with pytest.raises(Exception, match="is not stalled"):
            job_retry(job=lost, user=admin_user)
    assert _waiting() == 1
    assert _deliver() == [lost.pk]
    lost.refresh_from_db()
    assert lost.status == Job.Status.DONE and sorted(RUNS) == sorted([lost.pk, other.pk])
