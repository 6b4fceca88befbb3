"""Projects that say why: an annotator told why nothing is waiting for them, an admin who
sees a stalled project's cause, completed projects, filtered lists, corpus visibility."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation import engine
from annotation.models import Item, Project
from annotation.roles import Role
from tests.annotation.conftest import ARTICLES
from tests.collector.corpus_support import NEWSQA_JSON, STORY
from tests.e2e.pages import submit
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)


def _one_article_project(name, corpus_name, admin, annotators):
    from collector.models import Corpus, Document

    corpus = Corpus.objects.create(name=corpus_name, language="en")
    Document.objects.create(corpus=corpus, source_type="news", **ARTICLES[0])
    project = engine.project_create(name=name, recipe="newsqa", corpus=corpus, user=admin)
    for user in annotators:
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    engine.project_start(project=project, actor=admin)
    return project


def _claim_and_submit(worker, project, kind, payload):
    task = engine.task_claim(worker=worker, project=project)
    assert task is not None and task.stage.kind == kind, task
    engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload)


@pytest.fixture
def crowd(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    admin = user_with_roles("boss", Role.ADMIN)
    names = ("asker", "reader1", "reader2")
    return admin, {name: user_with_roles(name, Role.ANNOTATOR) for name in names}


def test_work_on_this_project_says_why_nothing_is_available(crowd, as_user, screenshot):
    admin, people = crowd
    project = _one_article_project("Harbor library", "e2e-why", admin, people.values())
    _claim_and_submit(people["asker"], project, "newsqa_question",
                      {"questions": ["Who opposed the plan?"]})
    asker = as_user("asker")
    row = asker.locator('[data-testid="project-row"]', has_text="Harbor library")
    assert row.locator('[data-testid="open-tasks"]').inner_text() == "0"
    assert "Answer sourcing: its open tasks are ones you already did or may not do" in (
        row.locator('[data-testid="no-task-reasons"]').inner_text())
    submit(asker, '[data-testid="project-row"] button:has-text("Work on this project")')
    why = asker.locator('[data-testid="why-nothing"]')
    why.wait_for()
    text = why.inner_text()
    assert "Why nothing is waiting for you in Harbor library" in text
    assert "Question sourcing: nothing is left to do." in text
    assert ("Answer sourcing: none of its 2 open task(s) is for you: 2 you may not do "
            "(wrote questions on this article).") in text
    assert "Validation: waiting for an earlier stage to send it work." in text
    screenshot("annotator-why-nothing", of=asker)
    # A reader may take the answer task: the count says 1 and the button gives it.
    reader = as_user("reader1")
    row = reader.locator('[data-testid="project-row"]', has_text="Harbor library")
    assert row.locator('[data-testid="open-tasks"]').inner_text() == "1"
    submit(reader, '[data-testid="project-row"] button:has-text("Work on this project")')
    reader.wait_for_selector('[data-testid="article"]')


def test_admin_sees_the_stalled_project_completed_ones_and_filters(
        crowd, as_user, screenshot, settings, tmp_path):
    from collector.jobs import job_run
    from collector.services.uploads import import_job_start

    admin, people = crowd
    settings.MEDIA_ROOT = tmp_path
    settings.SEARCH_INDEX_DIR = tmp_path / "index"
    for path, fmt in ((NEWSQA_JSON, "newsqa-json"), (STORY, "story")):
        job = import_job_start(upload=SimpleUploadedFile(path.name, path.read_bytes()),
                               user=admin, options={"corpus": "cnn", "language": "en",
                                                    "format": fmt})
        job_run(job_id=job.pk)
    from collector.models import Corpus

    stalled = engine.project_create(name="NewsQA over cnn", recipe="newsqa",
                                    corpus=Corpus.objects.get(name="cnn"), user=admin)
    engine.project_start(project=stalled, actor=admin)
    done = _one_article_project("Finished library", "e2e-done", admin, people.values())
    _claim_and_submit(people["asker"], done, "newsqa_question",
                      {"questions": ["Who opposed the plan?"]})
    answer = Item.objects.get(project=done, stage__kind="newsqa_answer")
    start = answer.document.body.index("Dario Weiss")
    for name in ("reader1", "reader2"):
        _claim_and_submit(people[name], done, "newsqa_answer",
                          {"spans": [[start, start + len("Dario Weiss")]]})
    done.refresh_from_db()
    assert done.status == Project.Status.COMPLETED

    boss = as_user("boss")
    boss.goto(f"/manage/projects/{stalled.pk}/")
    banner = boss.locator('[data-testid="stalled"]')
    assert "Stage 1 (Import articles) passed nothing on" in banner.inner_text()
    assert "1 of 1 dropped: no highlights (require_highlights is on)" in banner.inner_text()
    assert "0 created, 1 skipped as already present" in banner.inner_text()
    screenshot("project-stalled", of=boss)

    boss.goto("/manage/")
    boss.select_option('[data-testid="project-filters"] select[name="status"]', "completed")
    submit(boss, '[data-testid="project-filters"] button[type="submit"]')
    rows = boss.locator('[data-testid="projects"] tbody tr')
    assert rows.count() == 1 and "Finished library" in rows.inner_text()
    assert "Completed" in rows.inner_text()
    screenshot("admin-projects-completed", of=boss)

    boss.goto("/collector/corpora/cnn/")
    submit(boss, '[data-testid="corpus-visibility"] button')
    assert "Corpus cnn is now open to annotators." in boss.inner_text(".messages")
    screenshot("corpus-open-to-annotators", of=boss)

    boss.goto("/admin/annotation/item/?status__exact=done")
    assert boss.locator("#result_list tbody tr").count() >= 6
    screenshot("django-admin-items", of=boss)

    # The reader no longer lists the completed project.
    reader = as_user("reader1")
    assert "Finished library" not in reader.inner_text("main")
