from __future__ import annotations

import hashlib
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.test import RequestFactory

from annotation import engine, releases
from annotation.demo import (
    MARCO_DONE,
    MARCO_OPEN,
    NEWSQA_DONE,
    NEWSQA_OPEN,
    RECO_DONE,
    RECO_OPEN,
)
from annotation.judgment_demo import JUDGMENT_DONE
from annotation.models import Assignment, Batch, Item, Project, Release
from annotation.selectors import checker_queue, consolidated_items, usernames_in_text

COMPLETE = {
    NEWSQA_DONE: ["squad-v1", "squad-v2", "newsqa-json", "newsqa-csv", "hf"],
    RECO_DONE: ["reco", "hf"],
    MARCO_DONE: ["msmarco", "dureader", "hf"],
}
IN_PROGRESS = (NEWSQA_OPEN, RECO_OPEN, MARCO_OPEN)


def _row_counts() -> dict[str, int]:
    return {
        model._meta.label: model.objects.count()
        for model in apps.get_models()
        if model._meta.app_label in {"auth", "collector", "annotation"}
    }


def _user(username: str):
    return get_user_model().objects.get(username=username)


# The demo projects run the pipeline through its jobs, which start when each transaction
# commits: this test needs real commits (and so builds the demo once, checking it all).
@pytest.mark.django_db(transaction=True)
def test_load_demo_twice_leaves_the_same_rows_and_a_demo_to_explore(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    first_out, second_out = StringIO(), StringIO()
    call_command("load_demo", stdout=first_out)
    first = _row_counts()
    call_command("load_demo", stdout=second_out)
    assert _row_counts() == first
    assert first["auth.User"] == 5
    out = first_out.getvalue()
    assert f"password (demo mode only): {settings.CROWDQA_DEMO_PASSWORD}" in out
    user = authenticate(RequestFactory().post("/accounts/login/"), username="annotator2",
                        password=settings.CROWDQA_DEMO_PASSWORD)
    assert [g.name for g in user.groups.all()] == ["annotator"]
    # One report line per demo project; the second run finds every one of them.
    assert first["annotation.Project"] == 7
    for name in (*COMPLETE, JUDGMENT_DONE):
        assert f"project {name!r}: complete" in out
    for name in IN_PROGRESS:
        assert f"project {name!r}: in progress" in out
    for name in (*COMPLETE, *IN_PROGRESS, JUDGMENT_DONE):
        assert f"project {name!r}: exists" in second_out.getvalue()
    # Descriptions go verbatim into datasheets and dataset cards: no demo user is named.
    usernames = list(get_user_model().objects.values_list("username", flat=True))
    for project in Project.objects.all():
        assert usernames_in_text(project.description, usernames) == [], project.name
    _check_complete_projects()
    _check_judgment()
    _check_protocols()
    _check_fresh_work()


def _check_complete_projects() -> None:
    for name, formats in COMPLETE.items():
        project = Project.objects.get(name=name)
        assert project.status == Project.Status.COMPLETED  # nothing pending: it completed
        items = Item.objects.filter(project=project)
        assert not items.exclude(status__in=["done", "cancelled"]).exists(), name
        assert not Assignment.objects.filter(stage__project=project,
                                             status__in=["open", "active"]).exists(), name
        records = consolidated_items(project=project).count()
        assert records >= 3, name
        # Made by people: every human stage holds submissions of the demo users.
        workers = set(project.items.filter(submissions__isnull=False)
                      .values_list("submissions__worker__username", flat=True))
        assert workers and workers <= {"annotator1", "annotator2", "annotator3", "checker"}
        release = Release.objects.get(project=project, version="1.0.0")
        assert release.status == Release.Status.PUBLISHED, release.error
        assert release.formats == formats
        assert release.created_by.username == "admin"
        assert set(release.files.values_list("format", flat=True)) == {*formats, "datasheet"}
        assert sum(release.split_counts.values()) == records
        for f in release.files.all():
            with releases.release_open(release, f.path) as handle:
                data = handle.read()
            assert (hashlib.sha256(data).hexdigest(), len(data)) == (f.sha256, f.bytes), f.path
        # The Hugging Face folder holds every record.
        hf_rows = sum(f.records for f in release.files.filter(format="hf").exclude(split=""))
        assert hf_rows == records, name


def _check_judgment() -> None:
    """The judgment demo: every DuReader sample question rated by two demo annotators, a
    report, and a published release holding it."""
    from annotation.judgment_models import JudgmentReport

    project = Project.objects.get(name=JUDGMENT_DONE)
    assert project.status == Project.Status.COMPLETED  # nothing pending after the study
    assert not Item.objects.filter(project=project).exclude(status="done").exists()
    report = JudgmentReport.objects.get(project=project).report
    assert report["counts"]["candidates"] == 50 and report["counts"]["ratings"] == 100
    workers = set(project.items.filter(submissions__isnull=False)
                  .values_list("submissions__worker__username", flat=True))
    assert workers == {"annotator1", "annotator2"}
    release = Release.objects.get(project=project, version="1.0.0")
    assert release.status == Release.Status.PUBLISHED
    assert release.datasheet["rated"]["candidates"] == 50


def _check_protocols() -> None:
    newsqa = [i.result for i in consolidated_items(project=Project.objects.get(name=NEWSQA_DONE))]
    assert any(r["agreed"] and not r["validated"] for r in newsqa)  # answerers agreed
    assert any(r["validated"] for r in newsqa)  # a disagreement went to a validator
    assert any("noAnswer" in r["consensus"] for r in newsqa)  # and one has no answer
    reco = Project.objects.get(name=RECO_DONE)
    batch = Batch.objects.get(project=reco)
    assert (batch.status, batch.annotator.username) == ("accepted", "annotator1")
    assert batch.inspections.get().checker.username == "checker"
    refused = Item.objects.filter(project=reco, stage__kind="reco_query_filter",
                                  result__accepted=False)
    assert refused.exists()  # the query filter refused most of the queries
    marco = Project.objects.get(name=MARCO_DONE)
    review = Item.objects.filter(project=marco, stage__kind="marco_review")
    decisions = {d for i in review for d in i.result["decisions"].values()}
    assert decisions == {"keep", "drop"}
    assert review.first().submissions.get().worker.username == "checker"
    curators = Item.objects.filter(project=marco, stage__kind="marco_curate").values_list(
        "submissions__worker_id", flat=True)
    for item in Item.objects.filter(project=marco, stage__kind="marco_distill"):
        editors = set(item.submissions.values_list("worker_id", flat=True))
        assert len(editors) == 2 and not editors & {item.parent.submissions.get().worker_id}
    assert len(set(curators)) > 1  # curation rotates between the annotators


def _check_fresh_work() -> None:
    for name in IN_PROGRESS:
        project = Project.objects.get(name=name)
        assert project.status == Project.Status.ACTIVE
        assert Assignment.objects.filter(stage__project=project, status="open").exists(), name
    for username in ("annotator1", "annotator2", "annotator3"):
        task = engine.task_claim(worker=_user(username))
        assert task is not None, f"{username} has no task"
        assert task.stage.project.name in IN_PROGRESS
    checker = _user("checker")
    waiting = checker_queue(checker=checker)["waiting"]
    assert [i.batch.project.name for i in waiting] == [RECO_OPEN]
    assert waiting[0].batch.annotator.username == "annotator2"


@pytest.mark.django_db
def test_load_demo_without_projects_loads_users_and_data_only():
    call_command("load_demo", "--no-projects", stdout=StringIO())
    assert get_user_model().objects.count() == 5
    assert not Project.objects.exists()


@pytest.mark.django_db
def test_load_demo_refuses_production(settings):
    from django.core.management.base import CommandError

    settings.PRODUCTION = True
    with pytest.raises(CommandError, match="demo mode only"):
        call_command("load_demo", stdout=StringIO())
