"""A project completes when nothing is pending, and leaves the annotators' lists."""

from __future__ import annotations

from django.urls import reverse

from annotation import engine, selectors
from annotation.models import Item, Project, TransitionLog
from annotation.roles import Role
from annotation.workflow import project_complete_if_done
from tests.annotation.conftest import ARTICLES
from tests.annotation.test_newsqa_flow import claim_item, phrase_span


def _one_article_project(admin_user, workers, committed):
    from collector.models import Corpus, Document

    corpus = Corpus.objects.create(name="one-article", language="en")
    Document.objects.create(corpus=corpus, source_type="news", **ARTICLES[0])
    project = engine.project_create(name="One article", recipe="newsqa", corpus=corpus,
                                    user=admin_user)
    for user in workers.values():
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    return project


def _submit(worker, project, item, payload, committed):
    task = claim_item(worker, project, item)
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload)


def test_the_project_completes_when_its_last_item_is_done(admin_user, workers, committed,
                                                          settings, client):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = _one_article_project(admin_user, workers, committed)
    question = Item.objects.get(project=project, stage__kind="newsqa_question")
    _submit(workers["questioner"], project, question,
            {"questions": ["Who opposed the plan?"]}, committed)
    answer = Item.objects.get(project=project, stage__kind="newsqa_answer")
    _submit(workers["ann1"], project, answer,
            {"spans": [phrase_span(answer, "Dario Weiss")]}, committed)
    project.refresh_from_db()
    assert project.status == Project.Status.ACTIVE  # one answer still open
    assert not project_complete_if_done(project_id=project.pk)
    assert [row["project"] for row in selectors.worker_projects(worker=workers["ann2"])] == [
        project]

    _submit(workers["ann2"], project, answer,
            {"spans": [phrase_span(answer, "Dario Weiss")]}, committed)
    assert Item.objects.get(project=project, stage__kind="newsqa_consolidate").status == "done"
    project.refresh_from_db()
    assert project.status == Project.Status.COMPLETED
    assert TransitionLog.objects.filter(model="Project", object_id=project.pk,
                                        to_status="completed").exists()
    # Completed projects leave the annotators' lists ...
    assert selectors.worker_projects(worker=workers["ann2"]) == []
    client.force_login(workers["ann2"])
    page = client.get(reverse("annotation:annotator_home")).content.decode()
    assert "One article" not in page
    # ... and a claim there says so.
    response = client.post(reverse("annotation:task_next"), {"project": project.pk},
                           follow=True)
    assert "The project is completed." in response.content.decode()
    # Admins still see it, shown as Completed, and can filter on it.
    client.force_login(admin_user)
    page = client.get(reverse("annotation:admin_home"), {"status": "completed"})
    assert "One article" in page.content.decode()
    assert 'class="badge completed">Completed' in page.content.decode()
    page = client.get(reverse("annotation:admin_home"), {"status": "active"})
    assert "One article" not in page.content.decode()


def test_an_empty_project_does_not_complete(admin_user, workers, committed, settings):
    from collector.models import Corpus

    settings.CELERY_TASK_ALWAYS_EAGER = True
    corpus = Corpus.objects.create(name="empty", language="en")
    project = engine.project_create(name="Empty", recipe="newsqa", corpus=corpus)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    assert not project_complete_if_done(project_id=project.pk)
    project.refresh_from_db()
    assert project.status == Project.Status.ACTIVE


def test_a_completed_project_reopens_when_work_arrives(admin_user, workers, committed,
                                                       settings):
    from annotation.stages import Emit

    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = _one_article_project(admin_user, workers, committed)
    question = Item.objects.get(project=project, stage__kind="newsqa_question")
    _submit(workers["questioner"], project, question,
            {"questions": ["Who opposed the plan?"]}, committed)
    answer = Item.objects.get(project=project, stage__kind="newsqa_answer")
    for name in ("ann1", "ann2"):
        _submit(workers[name], project, answer,
                {"spans": [phrase_span(answer, "Dario Weiss")]}, committed)
    project.refresh_from_db()
    assert project.status == Project.Status.COMPLETED
    with committed():
        engine.items_emit(source_stage=question.stage, parent=question, emits=[Emit(
            kind="newsqa_answer", key="late-question", document_id=question.document_id,
            data={"question": "When will work begin?"})])
    project.refresh_from_db()
    assert project.status == Project.Status.ACTIVE
    assert [row["project"] for row in selectors.worker_projects(worker=workers["ann3"])] == [
        project]
