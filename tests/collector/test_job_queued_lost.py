"""Queued jobs whose broker message was lost (a Redis restart without persistence, a flushed
queue): the periodic check sends a job again when the broker no longer holds its message,
leaves it alone while the message waits, and marks it stalled, with a Retry on its page in the
reader's language, when that cannot be told. Here on the in-memory broker, which can only
count a queue's messages, as RabbitMQ; Redis, which lists them, in test_job_queued_lost_redis.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from collector import broker
from collector.jobs import JobError, Progress, job_create, job_handler, job_retry, jobs_recover
from collector.models import Job
from collector.stored_text import StoredText
from config.celery import app

RUNS: list[int] = []
QUIET = {"requeued": 0, "failed": 0, "resubmitted": 0, "resent": 0, "stalled": 0}


@job_handler("test-queued-once")
def _once_job(job: Job, progress: Progress) -> dict:
    """Not idempotent: it must run once however often its message is sent."""
    RUNS.append(job.pk)
    return {"ran": True}


class _Workers:
    """What the workers answer to ``inspect().reserved()``: a worker's reply, as Celery
    gives it, listing the messages it reserved without starting them."""

    def __init__(self, reserved: dict | None) -> None:
        self._reserved = reserved

    def reserved(self):
        return self._reserved


@pytest.fixture
def memory_broker(settings, monkeypatch):
    """Jobs are sent to the in-memory broker (as to a real one) instead of running inline;
    ``deliver()`` plays a worker: it takes each waiting message and runs its task. No worker
    answers ``inspect`` unless a test says so. With a real broker configured (CI's
    PostgreSQL step) these skip: test_job_queued_lost_redis runs there."""
    if not app.conf.broker_url.startswith("memory://"):
        pytest.skip("these tests need the in-memory broker (no CELERY_BROKER_URL)")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CROWDQA_JOB_QUEUED_LOST_AFTER_S = 300
    monkeypatch.setattr(app.control, "inspect", lambda **kwargs: _Workers(None))
    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    RUNS.clear()
    _purge()
    try:
        yield
    finally:
        app.conf.task_always_eager = eager
        _purge()


def _purge() -> None:
    with app.connection_for_write() as conn:
        for queue in ("default", "index"):
            with contextlib.suppress(Exception):
                conn.default_channel.queue_purge(queue)


def _waiting(queue: str = "default") -> int:
    with app.connection_for_write() as conn:
        return broker._message_count(conn, queue)


def _deliver(queue: str = "default") -> int:
    """A worker's part: take every message waiting in ``queue`` and run its task."""
    from collector.tasks import job_run_task

    ran = 0
    with app.connection_for_write() as conn:
        channel = conn.default_channel
        while _waiting(queue):
            raw = channel._get(queue)
            job_run_task(broker._job_of(raw))
            ran += 1
    return ran


def _queued(*, minutes_ago: float, **fields) -> Job:
    """A job created and sent to the broker (its message waits in the queue), as long ago as
    ``minutes_ago``."""
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):  # sent once its creation commits
        job = job_create(kind="test-queued-once", **fields)
    Job.objects.filter(pk=job.pk).update(
        queued_at=timezone.now() - timedelta(minutes=minutes_ago))
    job.refresh_from_db()
    return job


def test_a_job_sent_a_moment_ago_is_not_looked_at(db, memory_broker):
    _queued(minutes_ago=1)
    _purge()  # its message is gone, but the threshold has not passed
    assert jobs_recover() == QUIET


def test_a_job_whose_message_was_lost_is_sent_again_and_runs_once(
    db, memory_broker, django_capture_on_commit_callbacks
):
    job = _queued(minutes_ago=10)
    assert _waiting() == 1
    _purge()  # the broker lost it: restarted without persistence, or a flushed queue
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_recover() == {**QUIET, "resent": 1}
    job.refresh_from_db()
    assert job.status == Job.Status.QUEUED and job.stalled_at is None
    assert job.queued_at > timezone.now() - timedelta(minutes=1)
    assert job.history[-1]["event"].startswith("the broker no longer held its message")
    assert _waiting() == 1
    # Checked again at once: its new message is young, nothing more is sent.
    assert jobs_recover() == QUIET
    assert _deliver() == 1
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and [job.pk] == RUNS and job.attempts == 1


def test_a_job_a_worker_reserved_is_not_sent_again(db, memory_broker, monkeypatch):
    job = _queued(minutes_ago=10)
    _purge()
    # The worker took its message and holds it, waiting for a free pool process.
    reply = {"celery@host": [{"id": "t-1", "name": "collector.tasks.job_run_task",
                              "args": [job.pk], "kwargs": {}, "acknowledged": False}]}
    monkeypatch.setattr(app.control, "inspect", lambda **kwargs: _Workers(reply))
    assert jobs_recover() == QUIET
    assert _waiting() == 0
    job.refresh_from_db()
    assert job.status == Job.Status.QUEUED and job.stalled_at is None and job.history == []


def _in_chinese(client) -> None:
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})


@pytest.fixture
def chinese_of_the_stalled_page():
    """The Chinese of this change's new texts, put into the catalogue while the test runs
    (the committed catalogue gets them from the translators)."""
    from django.utils.translation import trans_real

    entries = {
        "no worker has taken it, and it cannot be told whether the broker still holds its "
        "message: %(why)s": "没有工作进程接手，也无法判断消息代理是否仍保存着它的消息：%(why)s",
        "the queue %(queue)s holds messages (%(count)s), and this broker (%(broker)s) "
        "cannot list them":
            "队列 %(queue)s 中有消息（%(count)s 条），而此消息代理（%(broker)s）无法列出它们",
        "Stalled": "停滞",
    }
    catalog = trans_real.translation("zh-hans")._catalog
    first = catalog._catalogs[0]  # where TranslationCatalog.__setitem__ writes
    saved = dict(first)
    for msgid, text in entries.items():
        catalog[msgid] = text
    yield
    first.clear()
    first.update(saved)


def test_a_job_whose_message_cannot_be_told_apart_is_stalled_and_retried_once(
    memory_broker, client_for, admin_user, annotator, django_capture_on_commit_callbacks,
    chinese_of_the_stalled_page,
):
    job = _queued(minutes_ago=10, user=admin_user)
    # Its message waits in the queue, but this broker can only count messages, not say
    # whose: the job is not sent again (that may be its message) but marked stalled.
    assert jobs_recover() == {**QUIET, "stalled": 1}
    assert jobs_recover() == QUIET  # marked once
    job.refresh_from_db()
    assert job.status == Job.Status.QUEUED and job.stalled_at is not None
    assert job.error == ("no worker has taken it, and it cannot be told whether the broker "
                         "still holds its message: the queue default holds messages (1), and "
                         "this broker (memory) cannot list them")
    assert job.error_text["msgid"].startswith("no worker has taken it")

    client = client_for(admin_user)
    url = reverse("collector:job_detail", args=[job.pk])
    page = client.get(url).content.decode()
    assert 'data-testid="job-stalled"' in page and 'data-testid="job-retry"' in page
    assert "none has taken it yet: no worker has taken it" in page
    assert 'hx-trigger="every 1s"' in page  # still queued: a worker may yet take it
    _in_chinese(client)
    chinese = client.get(url).content.decode()
    assert ("没有工作进程接手，也无法判断消息代理是否仍保存着它的消息："
            "队列 default 中有消息（1 条），而此消息代理（memory）无法列出它们") in chinese
    assert "停滞" in chinese and "no worker has taken it" not in chinese
    # The creator who is not an admin sees the state, without a Retry.
    job.created_by = annotator
    job.save(update_fields=["created_by"])
    theirs = client_for(annotator).get(url).content.decode()
    assert 'data-testid="job-stalled"' in theirs and 'data-testid="job-retry"' not in theirs
    assert client_for(annotator).post(reverse("collector:job_retry", args=[job.pk])
                                      ).status_code == 403

    # Retry sends it again; pressed twice, it sends it once.
    retry_url = reverse("collector:job_retry", args=[job.pk])
    with django_capture_on_commit_callbacks(execute=True) as sent:
        client_for(admin_user).post(retry_url)
        again = client_for(admin_user).post(retry_url, follow=True)
    assert len(sent) == 1
    assert "is not stalled" in again.content.decode() or "没有停滞" in again.content.decode()
    job.refresh_from_db()
    assert job.stalled_at is None and job.error == "" and job.error_text == {}
    assert job.history[-1]["event"].startswith("sent again by adm after: no worker has taken")
    assert _waiting() == 2
    # Its first message was there after all: both are delivered, and the job runs once.
    assert _deliver() == 2
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and RUNS.count(job.pk) == 1 and job.attempts == 1


def test_a_stalled_job_whose_message_turns_up_runs_and_is_no_longer_stalled(
    db, memory_broker
):
    job = _queued(minutes_ago=10)
    assert jobs_recover() == {**QUIET, "stalled": 1}  # its own message is there, unknown
    assert _deliver() == 1
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.stalled_at is None and job.error == ""


def test_a_stalled_job_whose_message_is_held_is_not_sent_again_on_retry(
    db, memory_broker, monkeypatch, admin_user
):
    job = _queued(minutes_ago=10)
    assert jobs_recover() == {**QUIET, "stalled": 1}
    _purge()
    reply = {"celery@host": [{"name": "collector.tasks.job_run_task", "args": f"({job.pk},)"}]}
    monkeypatch.setattr(app.control, "inspect", lambda **kwargs: _Workers(reply))
    with pytest.raises(JobError, match="the broker still holds its message"):
        job_retry(job=job, user=admin_user)
    job.refresh_from_db()
    assert job.stalled_at is None and job.error == ""  # waiting, not stalled
    assert _waiting() == 0


def test_a_broker_that_cannot_be_asked_stalls_the_job_without_sending_it(
    db, memory_broker, monkeypatch
):
    job = _queued(minutes_ago=10)
    _purge()

    def refused(*args, **kwargs):
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(broker, "_counted_holdings", refused)
    assert jobs_recover() == {**QUIET, "stalled": 1}
    job.refresh_from_db()
    assert job.error.endswith("the broker could not be asked (ConnectionRefusedError: "
                              "[Errno 111] Connection refused)")
    assert _waiting() == 0


def test_a_message_is_read_whatever_the_celery_sends(db, memory_broker):
    """The job id of a real message: from its headers, or from its body when the headers
    do not say (an older protocol, a long argument list); other tasks are not jobs."""
    from collector.tasks import job_run_task, jobs_recover_task

    job_run_task.apply_async((41,), queue="default")
    jobs_recover_task.apply_async(queue="default")
    with app.connection_for_write() as conn:
        first = conn.default_channel._get("default")
        second = conn.default_channel._get("default")
    assert broker._job_of(first) == 41 and broker._job_of(second) is None
    first["headers"].pop("argsrepr")
    assert broker._job_of(first) == 41
    with pytest.raises(broker.Unreadable):
        broker._job_of({**first, "content-type": "application/x-python-serialize"})


def test_the_history_of_a_job_reads_in_the_readers_language(db, chinese_of_the_stalled_page):
    from collector.jobs import _history, job_describe

    job = Job.objects.create(kind="test-queued-once")
    job.history = _history(job, StoredText("Stalled"), timezone.now())
    job.history.append({"at": "2026-01-01T00:00:00", "event": "retried by adm after: x"})
    with translation.override("zh-hans"):
        events = [entry["event"] for entry in job_describe(job)["history"]]
    assert events == ["停滞", "retried by adm after: x"]
    assert job.history[0]["event"] == "Stalled"
