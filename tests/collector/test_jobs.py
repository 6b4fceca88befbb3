"""Background jobs: claimed once, progress visible, failures recorded, safe to re-deliver."""

from __future__ import annotations

import pytest
from django.urls import reverse

from collector.jobs import JobError, Progress, job_create, job_handler, job_progress, job_run
from collector.models import Job

CALLS: list[int] = []


@job_handler("test-count")
def _count_job(job: Job, progress: Progress) -> dict:
    total = job.params["n"]
    progress.start(total=total, message="counting")
    for _ in range(total):
        progress.advance()
    CALLS.append(job.pk)
    if job.params.get("fail"):
        raise JobError(f"line {total}: field 'x' is missing")
    return {"counted": total}


@pytest.fixture(autouse=True)
def _reset_calls():
    CALLS.clear()


def test_job_runs_on_commit_and_records_result(
    django_capture_on_commit_callbacks, admin_user, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the embedded mode, whatever CI configured
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        job = job_create(kind="test-count", params={"n": 5}, user=admin_user)
    assert len(callbacks) == 1
    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    assert job.result == {"counted": 5}
    assert (job.progress_done, job.progress_total) == (5, 5)
    assert job_progress(job)["percent"] == 100


def test_finished_job_is_not_run_twice(db):
    job = Job.objects.create(kind="test-count", params={"n": 2})
    assert job_run(job_id=job.pk).status == Job.Status.DONE
    assert job_run(job_id=job.pk).status == Job.Status.DONE
    assert [job.pk] == CALLS


def test_failure_keeps_the_readable_error(db):
    job = Job.objects.create(kind="test-count", params={"n": 3, "fail": True})
    job = job_run(job_id=job.pk)
    assert job.status == Job.Status.FAILED
    assert job.error == "line 3: field 'x' is missing"


def test_the_log_names_each_job_and_why_it_failed(db, caplog):
    """The worker's own log line says only that a task returned 'failed': the job's id,
    kind and error are logged too (no traceback for an expected failure)."""
    ok = Job.objects.create(kind="test-count", params={"n": 2})
    bad = Job.objects.create(kind="test-count", params={"n": 3, "fail": True})
    with caplog.at_level("INFO", logger="collector.jobs"):
        job_run(job_id=ok.pk)
        job_run(job_id=bad.pk)
    assert f"job {ok.pk} (test-count) done" in caplog.messages
    failed = [r for r in caplog.records if r.getMessage().startswith(f"job {bad.pk} ")]
    assert [(r.levelname, r.getMessage(), r.exc_info) for r in failed] == [
        ("WARNING", f"job {bad.pk} (test-count) failed: line 3: field 'x' is missing", None)
    ]


def test_unknown_kind_is_refused(db):
    with pytest.raises(JobError, match="unknown job kind 'nope'"):
        job_create(kind="nope")


def test_live_progress_comes_from_the_cache(db):
    job = Job.objects.create(kind="test-count", params={"n": 10})
    progress = Progress(job)
    progress.start(total=10, message="reading")
    progress.set(4)
    progress.flush()
    assert job_progress(job) == {"done": 4, "total": 10, "percent": 40, "message": "reading"}


def test_job_page_polls_until_finished(client_for, admin_user, annotator):
    job = Job.objects.create(kind="test-count", params={"n": 10}, created_by=admin_user)
    client = client_for(admin_user)
    page = client.get(reverse("collector:job_detail", args=[job.pk]))
    assert b'hx-trigger="every 1s"' in page.content
    fragment = client.get(reverse("collector:job_detail", args=[job.pk]), HTTP_HX_REQUEST="true")
    assert b"<html" not in fragment.content
    assert b'id="job-progress"' in fragment.content
    job_run(job_id=job.pk)
    done = client.get(reverse("collector:job_detail", args=[job.pk]), HTTP_HX_REQUEST="true")
    assert b"hx-trigger" not in done.content
    assert b'value="100"' in done.content
    other = client_for(annotator).get(reverse("collector:job_detail", args=[job.pk]))
    assert other.status_code == 403


def test_a_job_the_broker_never_got_fails_saying_so_and_can_be_retried(
    db, settings, monkeypatch, caplog, admin_user
):
    """With the broker down, creating a job answered 500 and left the job queued for ever:
    no worker would hear of it, and a queued job has no Retry."""
    from kombu.exceptions import OperationalError

    from collector import tasks
    from collector.jobs import job_enqueue, job_retry

    def refused(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    settings.CELERY_TASK_ALWAYS_EAGER = False
    monkeypatch.setattr(tasks.job_run_task, "apply_async", refused)
    job = Job.objects.create(kind="test-count", params={"n": 2}, created_by=admin_user)
    with caplog.at_level("ERROR", logger="collector.jobs"):
        job_enqueue(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error.startswith("the broker could not be reached (Error 111 connecting")
    assert f"job {job.pk} could not be sent to the broker" in caplog.text
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CROWDQA_JOBS_IN_THREAD = False
    job_retry(job=job, user=admin_user)
    job.refresh_from_db()
    assert job.status == Job.Status.QUEUED
