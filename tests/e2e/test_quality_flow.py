"""Worker quality in the browser: a worker fails a qualification try, passes the second,
meets a gold check, falls below the threshold and is paused; the admin finds them in the
workers table and resumes them."""

from __future__ import annotations

import json

import pytest

from annotation import engine, gold
from annotation.models import Assignment, WorkerStage
from annotation.roles import Role
from annotation.stages import Emit
from tests.annotation.conftest import ARTICLES
from tests.e2e.pages import jobs_settled, task_next
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)

WHO = "Who voted against the library?"
NOTHING = "What colour is the mayor's car?"


def gold_line(key: str, question: str, expected: dict, reason: str) -> str:
    return json.dumps({"key": key, "data": {"question": question},
                       "document": ARTICLES[0]["external_id"], "expected": expected,
                       "reason": reason})


@pytest.fixture
def project(settings):
    from collector.models import Corpus, Document

    settings.CELERY_TASK_ALWAYS_EAGER = True
    corpus = Corpus.objects.create(name="e2e-quality", language="en")
    doc = Document.objects.create(corpus=corpus, source_type="news", **ARTICLES[0])
    admin = user_with_roles("boss", Role.ADMIN)
    project = engine.project_create(name="Quality browser", recipe="newsqa", corpus=corpus,
                                    user=admin)
    answer = project.stages.get(kind="newsqa_answer")
    engine.stage_params_update(stage=answer, params={
        "qualification_items": 2, "qualification_threshold": 0.8, "qualification_tries": 2,
        "gold_rate": 1.0, "gold_min_items": 1, "gold_min_accuracy": 0.7})
    engine.project_member_add(project=project, user=user_with_roles("learner", Role.ANNOTATOR),
                              role=Role.ANNOTATOR)
    engine.project_start(project=project, actor=admin)
    jobs_settled(what="the first stage run")
    question = project.stages.get(kind="newsqa_question")
    Assignment.objects.filter(stage=question, status="open").update(status="cancelled")
    start = doc.body.index("Dario Weiss")
    weiss = {"spans": [[start, start + len("Dario Weiss")]]}
    gold.gold_items_import(stage=answer, name="training.jsonl", purpose="training", text="\n".join([
        gold_line("t-who", WHO, weiss, "Council member Dario Weiss voted against the plan."),
        gold_line("t-none", NOTHING, {"no_answer": True}, "The story never mentions a car."),
    ]))
    gold.gold_items_import(stage=answer, name="checks.jsonl", purpose="check", text=gold_line(
        "c-who", WHO, weiss, "Weiss is the one council member who voted against."))
    engine.items_emit(source_stage=question, emits=[
        Emit(kind="newsqa_answer", key=f"q{n}", data={"question": f"Question {n}?"},
             document_id=doc.pk) for n in range(3)])
    return project, answer


def select(page, first: str, last: str) -> None:
    """Drag over the article's tokens from ``first`` to ``last`` and add the span."""
    page.locator(".tok", has_text=first).first.hover()
    page.mouse.down()
    page.locator(".tok", has_text=last).first.hover()
    page.mouse.up()
    page.click('[data-testid="add-span"]')


def answer_training(page, *, right: bool) -> None:
    """Answer the training item on the page, rightly or not; wait for the feedback."""
    page.wait_for_selector('[data-testid="article"]')
    asked = page.inner_text('[data-testid="question"]')
    if right and asked == WHO:
        select(page, "Dario", "Weiss")
        button = '[data-testid="submit"]'
    else:
        button = '[data-testid="no-answer"]'
    with page.expect_navigation(wait_until="load"):
        page.click(button)
    page.wait_for_selector('[data-testid="feedback"]')


def test_qualification_gold_pause_and_resume(project, as_user, screenshot):
    project, answer = project
    learner = as_user("learner")
    learner.goto("/tasks/")
    assert "Qualification" in learner.inner_text('[data-testid="qualifications"]')
    # Before qualifying, the answer stage gives nothing.
    learner.goto(f"/stages/{answer.pk}/qualify/")
    # Try 1: "no answer" to both items; right on one, wrong on the other.
    learner.click('[data-testid="start"]')
    answer_training(learner, right=False)
    assert learner.inner_text('[data-testid="expected"]')  # the expected answer is shown
    assert learner.is_visible('[data-testid="reason"]')
    screenshot("quality-training-feedback", of=learner)
    learner.click('[data-testid="next"]')
    answer_training(learner, right=False)
    learner.wait_for_selector('[data-testid="failed"]')
    # Try 2: both right.
    learner.click('[data-testid="start"]')
    answer_training(learner, right=True)
    learner.click('[data-testid="next"]')
    answer_training(learner, right=True)
    learner.wait_for_selector('[data-testid="passed"]')
    screenshot("quality-passed", of=learner)
    standing = WorkerStage.objects.get(member__user__username="learner", stage=answer)
    assert standing.qualified and standing.qualification_tries == 2

    # Work: the gold check comes first (rate 1); a wrong answer pauses them (min 1 check).
    learner.goto("/tasks/")
    task_next(learner, '[data-testid="article"]')
    assert learner.inner_text('[data-testid="question"]') == WHO
    with learner.expect_navigation(wait_until="load"):
        learner.click('[data-testid="no-answer"]')
    standing.refresh_from_db()
    assert standing.status == "paused" and standing.gold_seen == 1
    assert engine.task_claim(worker=standing.member.user, project=project) is None
    learner.goto("/me/quality/")
    assert "0" in learner.inner_text(f'[data-testid="accuracy-{answer.pk}"]')

    # The admin finds them paused in the workers table and resumes them.
    admin = as_user("boss")
    admin.goto(f"/manage/projects/{project.pk}/")
    admin.click('[data-testid="workers-link"]')
    assert admin.inner_text('[data-testid="status-learner"]') == "paused"
    assert "gold accuracy" in admin.inner_text('[data-testid="worker-learner"]')
    screenshot("quality-workers-paused", of=admin)
    with admin.expect_navigation(wait_until="load"):
        admin.click('[data-testid="resume-learner"]')
    admin.wait_for_selector('[data-testid="status-learner"]')
    assert admin.inner_text('[data-testid="status-learner"]') == "active"
    standing.refresh_from_db()
    assert standing.status == "active"
    # Back at work: real items now (they saw the only gold check).
    learner.goto("/tasks/")
    task_next(learner, '[data-testid="article"]')
    assert learner.inner_text('[data-testid="question"]').startswith("Question ")
