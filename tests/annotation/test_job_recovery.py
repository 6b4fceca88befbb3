"""Failed release builds rebuilt under the same version; stalled automatic stages picked up
again by the periodic check; job pages that name their project and stage."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from annotation import engine, releases
from annotation.models import Item, Release, Stage
from annotation.workflow import stages_pick_up
from collector.jobs import jobs_recover
from collector.models import Job
from tests.annotation.test_newsqa_flow import claim_item
from tests.annotation.test_releases import finished_project  # noqa: F401 (fixture)


def _block_release_directory(project) -> object:
    """A file where the project's release directories go: the build cannot write."""
    from django.conf import settings

    blocker = Path(settings.MEDIA_ROOT) / "releases" / str(project.pk)
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("not a directory")
    return blocker


def test_a_failed_release_is_rebuilt_under_the_same_version(
    finished_project, admin_user, committed, client_for  # noqa: F811
):
    blocker = _block_release_directory(finished_project)
    with committed():
        release = releases.release_create(project=finished_project, version="1.0.1",
                                          formats=["squad-v2"], user=admin_user)
    release.refresh_from_db()
    assert release.status == Release.Status.FAILED
    assert release.job.status == Job.Status.FAILED
    client = client_for(admin_user)
    page = client.get(reverse("annotation:release_detail", args=[release.pk]))
    assert b'data-testid="release-rebuild"' in page.content
    assert b"hx-trigger" not in page.content  # failed: the page stops polling
    # The version is not used up: a new release of it is still refused (same project) ...
    with pytest.raises(ValidationError, match="exists already"):
        releases.release_create(project=finished_project, version="1.0.1",
                                formats=["squad-v2"], user=admin_user)
    # ... but the failed one is built again under it once the disk is fixed.
    blocker.unlink()
    with committed():
        response = client.post(reverse("annotation:release_action", args=[finished_project.pk]),
                               {"action": "rebuild", "release": release.pk})
    assert response.status_code == 302
    release.refresh_from_db()
    assert release.status == Release.Status.READY, release.error
    assert release.version == "1.0.1" and release.error == ""
    assert sorted(release.files.values_list("format", flat=True)) == ["datasheet", "squad-v2"]
    assert releases.release_storage().exists(
        releases.release_file_name(release, "train-v2.0.json"))
    # A ready release is not rebuilt.
    with pytest.raises(ValidationError, match="only a failed build can be rebuilt"):
        releases.release_rebuild(release=release)


def test_a_release_whose_build_worker_is_lost_for_good_fails_and_rebuilds(
    finished_project, admin_user, committed, settings  # noqa: F811
):
    settings.CROWDQA_JOB_MAX_ATTEMPTS = 1
    release = releases.release_create(project=finished_project, version="2.0.0",
                                      formats=["squad-v1"], user=admin_user)
    # The build's worker was killed mid-job (its message never ran here).
    beat = timezone.now() - timedelta(minutes=10)
    Job.objects.filter(pk=release.job_id).update(
        status=Job.Status.RUNNING, started_at=beat, heartbeat_at=beat, claim=uuid.uuid4(),
        attempts=1)
    assert jobs_recover()["failed"] == 1
    release.refresh_from_db()
    assert release.status == Release.Status.FAILED
    assert release.error.startswith("worker lost")
    with committed():
        releases.release_rebuild(release=release, user=admin_user)
    release.refresh_from_db()
    assert release.status == Release.Status.READY, release.error
    assert release.job.status == Job.Status.DONE


def _answer_first_question_uncommitted(project, workers, committed):
    """Both answers of one question go in, but the commit's follow-up (the agreement
    stage's run) is lost, as when the process died right after the commit."""
    task = engine.task_claim(worker=workers["questioner"], project=project)
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=workers["questioner"],
                           payload={"questions": ["Who voted against the plan?"]})
    item = Item.objects.get(stage__kind="newsqa_answer",
                            data__question="Who voted against the plan?")
    for name in ("ann1", "ann2"):
        task = claim_item(workers[name], project, item)
        engine.task_submit(assignment_id=task.pk, worker=workers[name],
                           payload={"no_answer": True})
    return Stage.objects.get(project=project, kind="newsqa_agreement")


def test_a_stage_with_pending_items_and_no_live_run_is_picked_up(
    newsqa_project, workers, committed, admin_user, client_for
):
    agreement = _answer_first_question_uncommitted(newsqa_project, workers, committed)
    assert Item.objects.filter(stage=agreement, status="pending").count() == 1
    assert not Job.objects.filter(kind="stage_run", params__stage_id=agreement.pk).exists()
    with committed():
        assert stages_pick_up() == [agreement.pk]
    assert not Item.objects.filter(stage=agreement, status="pending").exists()
    run = Job.objects.get(kind="stage_run", params__stage_id=agreement.pk)
    assert run.status == Job.Status.DONE
    assert stages_pick_up() == []  # nothing pending any more
    # Its page names the project and the stage.
    page = client_for(admin_user).get(reverse("collector:job_detail", args=[run.pk]))
    text = page.content.decode()
    assert "Stage run #" in text and newsqa_project.name in text
    assert f"{agreement.order}. {agreement.name}" in text


def test_a_stage_whose_runs_keep_failing_waits_for_a_retry(
    newsqa_project, workers, committed, settings
):
    settings.CROWDQA_STAGE_PICKUP_FAILURES = 2
    agreement = _answer_first_question_uncommitted(newsqa_project, workers, committed)
    for _ in range(2):
        Job.objects.create(kind="stage_run", params={"stage_id": agreement.pk},
                           status=Job.Status.FAILED, error="OperationalError: disk I/O error")
    assert stages_pick_up() == []
    # A live run (queued) is not doubled either.
    Job.objects.create(kind="stage_run", params={"stage_id": agreement.pk})
    assert stages_pick_up() == []


def test_the_release_page_stops_polling_once_its_build_job_is_final(
    finished_project, admin_user, client_for  # noqa: F811
):
    release = releases.release_create(project=finished_project, version="3.0.0",
                                      formats=["squad-v1"], user=admin_user)
    client = client_for(admin_user)
    url = reverse("annotation:release_detail", args=[release.pk])
    assert b'hx-trigger="every 1s"' in client.get(url).content  # queued: building
    Job.objects.filter(pk=release.job_id).update(status=Job.Status.FAILED, error="boom")
    assert b"hx-trigger" not in client.get(url, HTTP_HX_REQUEST="true").content
