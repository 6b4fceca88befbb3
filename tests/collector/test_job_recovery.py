"""Jobs whose worker died: found by their silent heartbeat, run again when idempotent,
otherwise failed with "worker lost" and retried by an admin; never run twice at once."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from collector.jobs import (
    WORKER_LOST,
    JobError,
    Progress,
    _Heartbeat,
    job_describe,
    job_handler,
    job_retry,
    job_run,
    jobs_recover,
)
from collector.models import Job

RUNS: list[int] = []


@job_handler("test-idempotent", rerun_when_lost=True)
def _idempotent_job(job: Job, progress: Progress) -> dict:
    RUNS.append(job.pk)
    return {"documents_created": 3, "run": None, "splits": {"train": 2, "dev": 1}}


@job_handler("test-once")
def _once_job(job: Job, progress: Progress) -> dict:
    RUNS.append(job.pk)
    return {"sent": True}


@pytest.fixture(autouse=True)
def _reset_runs():
    RUNS.clear()


def _running(kind: str, *, silent_s: float, attempts: int = 1, **fields) -> Job:
    """A job as a worker left it: claimed, running, its last heartbeat ``silent_s`` ago."""
    beat = timezone.now() - timedelta(seconds=silent_s)
    return Job.objects.create(kind=kind, status=Job.Status.RUNNING, started_at=beat,
                              heartbeat_at=beat, claim=uuid.uuid4(), worker="gone:4242",
                              attempts=attempts, **fields)


def test_a_job_with_a_live_heartbeat_is_not_run_again(db, settings):
    settings.CROWDQA_JOB_LOST_AFTER_S = 60
    job = _running("test-idempotent", silent_s=5)
    # A second delivery of its message (the broker's visibility timeout ran out) ...
    again = job_run(job_id=job.pk)
    assert again.status == Job.Status.RUNNING and again.claim == job.claim
    assert RUNS == []
    # ... and the periodic check leave a job whose worker is alive alone.
    assert jobs_recover() == {"requeued": 0, "failed": 0, "resubmitted": 0, "resent": 0,
                              "stalled": 0}


def test_a_lost_idempotent_job_is_queued_again_and_finishes(
    db, settings, django_capture_on_commit_callbacks
):
    settings.CROWDQA_JOB_LOST_AFTER_S = 60
    job = _running("test-idempotent", silent_s=120)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert jobs_recover()["requeued"] == 1
    assert len(callbacks) == 1  # the job is sent to the workers once the move commits
    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    assert [job.pk] == RUNS
    assert job.attempts == 2
    assert job.history[0]["event"].startswith(f"{WORKER_LOST} on gone:4242")
    assert "queued again for run 2 of 3" in job.history[0]["event"]


def test_a_redelivered_message_recovers_a_lost_job_itself(db, settings):
    settings.CROWDQA_JOB_LOST_AFTER_S = 60
    job = _running("test-idempotent", silent_s=120)
    # The broker gave the message of a dead worker to a new one before the periodic check.
    done = job_run(job_id=job.pk)
    assert done.status == Job.Status.DONE and [job.pk] == RUNS


def test_a_lost_job_that_is_not_idempotent_fails_and_an_admin_retries_it(
    settings, client_for, admin_user, annotator, django_capture_on_commit_callbacks
):
    settings.CROWDQA_JOB_LOST_AFTER_S = 60
    job = _running("test-once", silent_s=120, created_by=admin_user)
    assert jobs_recover()["failed"] == 1
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and RUNS == []
    assert job.error.startswith("worker lost: the worker on gone:4242 stopped")
    assert job.claim is None

    page = client_for(admin_user).get(reverse("collector:job_detail", args=[job.pk]))
    assert b"The worker running this job stopped before it finished." in page.content
    assert b'data-testid="job-retry"' in page.content
    assert b'hx-trigger' not in page.content  # a final state: no more polling

    # Only admins retry, and only with POST.
    retry_url = reverse("collector:job_retry", args=[job.pk])
    assert client_for(annotator).post(retry_url).status_code == 403
    assert client_for(admin_user).get(retry_url).status_code == 405
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(admin_user).post(retry_url)
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and [job.pk] == RUNS
    assert job.error == "" and job.attempts == 1
    assert job.history[-1]["event"].startswith("retried by adm after: worker lost")
    # A job that did not fail is not retried.
    with pytest.raises(JobError, match="is done, not failed"):
        job_retry(job=job)


def test_a_job_that_keeps_losing_its_worker_fails_after_its_attempts(db, settings):
    settings.CROWDQA_JOB_LOST_AFTER_S = 60
    settings.CROWDQA_JOB_MAX_ATTEMPTS = 3
    job = _running("test-idempotent", silent_s=120, attempts=3)
    assert jobs_recover()["failed"] == 1
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert "after 3 runs" in job.error and RUNS == []


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_stamps_the_row_and_stops_when_the_claim_is_taken(settings):
    settings.CROWDQA_JOB_HEARTBEAT_S = 0.05
    job = _running("test-idempotent", silent_s=30)
    first = job.heartbeat_at
    with _Heartbeat(job.pk, job.claim) as beat:
        deadline = time.monotonic() + 10
        while Job.objects.get(pk=job.pk).heartbeat_at == first:
            assert time.monotonic() < deadline, "no heartbeat within 10 s"
            time.sleep(0.02)
        # The periodic check gave the job to another run: this one's heartbeat stops.
        Job.objects.filter(pk=job.pk).update(claim=uuid.uuid4())
        while beat._thread.is_alive():
            assert time.monotonic() < deadline, "the heartbeat did not stop"
            beat._thread.join(0.05)
    assert beat.taken


def test_a_late_run_whose_claim_was_taken_does_not_record_its_outcome(db, settings):
    """A run that was taken for lost (a long pause) and then finishes anyway: only the run
    holding the current claim writes the job's status."""
    seen: list[str] = []

    @job_handler("test-slow-then-taken", rerun_when_lost=True)
    def _taken(job: Job, progress: Progress) -> dict:
        # While this run works, the job is recovered and claimed by another run.
        Job.objects.filter(pk=job.pk).update(claim=uuid.uuid4(), status=Job.Status.RUNNING)
        seen.append("ran")
        return {"ok": True}

    job = Job.objects.create(kind="test-slow-then-taken")
    after = job_run(job_id=job.pk)
    assert seen == ["ran"]
    assert after.status == Job.Status.RUNNING and after.result == {}


def test_the_job_page_says_what_happened_in_words(client_for, admin_user):
    job = Job.objects.create(kind="test-idempotent", created_by=admin_user)
    job = job_run(job_id=job.pk)
    page = client_for(admin_user).get(reverse("collector:job_detail", args=[job.pk]))
    text = page.content.decode()
    assert "Test idempotent #" in text
    assert "Documents created: 3." in text
    # (PostgreSQL's jsonb orders keys its own way.)
    assert "Splits: train 2, dev 1." in text or "Splits: dev 1, train 2." in text
    assert "documents_created" not in text and "None" not in text
    assert job_describe(job)["runs"] == "run 1 of at most 3"


def test_the_embedded_beat_runs_the_whole_schedule_in_the_web_process(
    db, settings, django_capture_on_commit_callbacks
):
    from config.celery import beat_run_once, embedded_beat_start

    settings.CROWDQA_JOB_LOST_AFTER_S = 60
    job = _running("test-idempotent", silent_s=120)
    with django_capture_on_commit_callbacks(execute=True):
        results = beat_run_once()
    # Every periodic job ran (a failing one would be missing), lost jobs included.
    assert set(results) == set(settings.CELERY_BEAT_SCHEDULE)
    assert results["recover-jobs"]["requeued"] == 1
    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    # Jobs run inline here (as with a broker, beat's task): no embedded ticker.
    assert embedded_beat_start() is False
