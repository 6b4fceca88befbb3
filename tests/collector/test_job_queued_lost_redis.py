"""A queued job whose message the broker lost, with a real worker on Redis (CI: PostgreSQL +
Redis): the queue is flushed after the job was sent, and the periodic check of a worker run
with beat sends it again and the worker runs it, once; a message still waiting, or taken by a
worker and not yet acknowledged, is never sent a second time."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from collector.broker import broker_holdings
from collector.jobs import job_create, jobs_recover
from collector.models import Job
from config.celery import app
from tests.polling import wait_until

QUIET = {"requeued": 0, "failed": 0, "resubmitted": 0, "resent": 0, "stalled": 0}


def _waiting(queue: str = "default") -> int:
    with app.connection_for_write() as conn:
        return conn.default_channel.client.llen(queue)


def _flush(queue: str = "default") -> None:
    """What a Redis restart without persistence does to the queue."""
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge(queue)


def _sent(*, minutes_ago: float) -> Job:
    with transaction.atomic():  # sent to the broker once this commits
        job = job_create(kind="selfcheck", params={"echo": "lost"})
    Job.objects.filter(pk=job.pk).update(
        queued_at=timezone.now() - timedelta(minutes=minutes_ago))
    return job


def _state(job: Job) -> str:
    job.refresh_from_db()
    return f"{job.status} attempts={job.attempts} history={job.history} error={job.error}"


@pytest.mark.celery_worker
def test_a_job_whose_message_a_flush_dropped_is_sent_again_by_beat_and_runs_once(
    redis_broker, tmp_path
):
    job = _sent(minutes_ago=0)
    assert _waiting() == 1
    _flush()
    # A worker with beat: its periodic check finds the job queued for more than a second
    # and sends it again; the worker takes it.
    redis_broker(args=("--pool", "solo", "-B", "-s", str(tmp_path / "beat-schedule")),
                 env={"CROWDQA_JOB_QUEUED_LOST_AFTER_S": "1", "CROWDQA_PERIODIC_S": "1"})
    wait_until(lambda: Job.objects.get(pk=job.pk).finished, timeout=60,
               what="the lost job to be sent again and run", detail=lambda: _state(job))
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.result["echo"] == "lost"
    assert job.attempts == 1 and job.stalled_at is None
    assert [e["event"] for e in job.history] == [
        "the broker no longer held its message (lost in a broker restart or a flushed "
        "queue); sent to the workers again"]
    assert _waiting() == 0


@pytest.mark.celery_worker
def test_a_message_waiting_or_taken_is_not_sent_again(redis_broker, settings):
    settings.CROWDQA_JOB_QUEUED_LOST_AFTER_S = 60
    job = _sent(minutes_ago=10)
    assert broker_holdings(queues=["default"]).held(job.pk)
    assert jobs_recover() == QUIET  # waiting in the queue (no worker yet)
    assert _waiting() == 1
    with app.connection_for_write() as conn:
        channel = conn.default_channel
        # A worker takes the message and has not acknowledged it yet (acks_late): it is in
        # Redis's unacked hash, no longer in the queue.
        message = channel.basic_get("default", no_ack=False)
        assert message is not None and _waiting() == 0
        assert broker_holdings(queues=["default"]).held(job.pk)
        assert jobs_recover() == QUIET
        message.reject(requeue=True)  # that worker gave it back
    assert _waiting() == 1
    job.refresh_from_db()
    assert job.stalled_at is None and job.history == []
    redis_broker()
    wait_until(lambda: Job.objects.get(pk=job.pk).finished, timeout=60,
               what="the job to run", detail=lambda: _state(job))
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.attempts == 1
    assert _waiting() == 0  # one message was ever sent, and it was taken


@pytest.mark.celery_worker
def test_a_stalled_job_whose_message_a_flush_dropped_is_sent_again_by_retry(
    redis_broker, settings, monkeypatch, client_for, admin_user
):
    from django.urls import reverse

    from collector import broker

    settings.CROWDQA_JOB_QUEUED_LOST_AFTER_S = 60
    job = _sent(minutes_ago=10)
    # A queue too long to look through (here: any message at all) cannot say whose messages
    # it holds: the job is marked stalled, not sent again.
    monkeypatch.setattr(broker, "SCAN_LIMIT", 0)
    assert jobs_recover() == {**QUIET, "stalled": 1}
    assert _waiting() == 1
    _flush()
    page = client_for(admin_user).get(reverse("collector:job_detail", args=[job.pk]))
    assert b'data-testid="job-stalled"' in page.content
    assert b"the queue default holds more than 0 messages" in page.content
    # The admin presses Retry twice: the queue is empty now, so the job is sent, once.
    retry = reverse("collector:job_retry", args=[job.pk])
    client_for(admin_user).post(retry)
    client_for(admin_user).post(retry)
    assert _waiting() == 1
    redis_broker()
    wait_until(lambda: Job.objects.get(pk=job.pk).finished, timeout=60,
               what="the retried job to run", detail=lambda: _state(job))
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.attempts == 1 and job.stalled_at is None
    assert job.history[-1]["event"].startswith("sent again by adm after: no worker has taken")
