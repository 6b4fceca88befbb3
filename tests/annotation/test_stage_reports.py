"""Automatic stages say what they dropped and why; a project whose first stage passed
nothing on says so with the cause (the issue's case: a corpus imported as NewsQA JSON,
then as .story files, under a NewsQA project with require_highlights)."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation import engine, selectors
from collector.jobs import job_run
from collector.models import Document, Job
from collector.services.uploads import import_job_start
from tests.collector.corpus_support import NEWSQA_JSON, STORY


def _import(path, fmt, admin):
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    job = import_job_start(upload=upload, user=admin, options={
        "corpus": "cnn", "language": "en", "format": fmt})
    job = job_run(job_id=job.pk)
    assert job.status == Job.Status.DONE, job.error
    return job


def test_require_highlights_dropping_every_article_is_shown_with_the_imports(
        admin_user, client, committed, settings, tmp_path):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.MEDIA_ROOT = tmp_path
    settings.SEARCH_INDEX_DIR = tmp_path / "index"
    json_job = _import(NEWSQA_JSON, "newsqa-json", admin_user)
    story_job = _import(STORY, "story", admin_user)
    assert (story_job.result["documents_created"], story_job.result["documents_skipped"]) == (
        0, 1)
    document = Document.objects.get(corpus__name="cnn")
    assert document.highlights == []  # the JSON gave none; the story was "already present"

    project = engine.project_create(name="NewsQA over cnn", recipe="newsqa",
                                    corpus=document.corpus, user=admin_user)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    dashboard = selectors.project_dashboard(project=project)
    first = dashboard["stage_rows"][0]
    assert first["report"]["received"] == 1 and first["report"]["passed"] == 0
    assert first["report"]["dropped"] == [("no highlights (require_highlights is on)", 1)]
    stalled = dashboard["stalled"]
    assert stalled["stage"].order == 1
    assert stalled["causes"] == ["1 of 1 dropped: no highlights (require_highlights is on)"]
    assert [(run["job"].pk, run["created"], run["skipped"]) for run in stalled["imports"]] == [
        (story_job.pk, 0, 1), (json_job.pk, 1, 0)]

    client.force_login(admin_user)
    page = client.get(reverse("annotation:project_detail", args=[project.pk])).content.decode()
    assert "Stage 1 (Import articles) passed nothing on" in page
    assert "1 of 1 dropped: no highlights (require_highlights is on)" in page
    assert "0 created, 1 skipped as already present — they kept what the earlier" in page
    assert "received 1, passed on 0" in page


def test_a_moving_project_is_not_stalled_and_its_runs_are_reported(newsqa_project):
    dashboard = selectors.project_dashboard(project=newsqa_project)
    assert dashboard["stalled"] is None
    first = dashboard["stage_rows"][0]["report"]
    assert (first["received"], first["passed"], first["dropped"]) == (2, 2, [])


def test_articles_beyond_max_articles_and_a_second_run_are_reported(
        news_corpus, admin_user, committed, settings, run_reports):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="One article", recipe="newsqa", corpus=news_corpus,
                                    user=admin_user, params={1: {"max_articles": 1}})
    with committed():
        engine.project_start(project=project, actor=admin_user)
    assert run_reports(project)["newsqa_articles"] == (
        2, 1, {"beyond max_articles (1)": 1}, [])
    with committed():
        engine.stage_run_enqueue(stage=project.stages.get(order=1))
    assert run_reports(project)["newsqa_articles"] == (
        2, 0, {"beyond max_articles (1)": 1, "taken by an earlier run": 1}, [])
    assert selectors.project_dashboard(project=project)["stalled"] is None
