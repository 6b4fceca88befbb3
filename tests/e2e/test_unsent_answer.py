"""A reload of a task page keeps the answer being written: a phone reloads a tab it had put
away (or a finger pulls to refresh) and the questions typed were gone. The page fills them
in again from the tab's storage; another task's page does not get them."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from annotation import engine
from annotation.models import Submission
from annotation.roles import Role
from tests.e2e.pages import submit, task_next
from tests.e2e.test_task_lease import project  # noqa: F401
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)

User = get_user_model()


def test_a_reload_keeps_the_questions_being_written(project, as_user):  # noqa: F811
    page = as_user("asker", has_touch=True, is_mobile=True,
                   viewport={"width": 375, "height": 667})
    task_next(page, "#task-form")
    first = page.url
    page.fill('[data-testid="question-1"]', "What is the vote count?")
    page.fill('[data-testid="question-2"]', "Which site was chosen?")
    page.reload(wait_until="load")
    expect(page.get_by_test_id("question-1")).to_have_value("What is the vote count?")
    expect(page.get_by_test_id("question-2")).to_have_value("Which site was chosen?")
    expect(page.get_by_test_id("question-3")).to_have_value("")
    # the restored questions are checked as typed ones are
    expect(page.get_by_test_id("verdict-2")).not_to_be_empty()
    submit(page, '[data-testid="submit"]')
    saved = Submission.objects.get(worker__username="asker")
    assert saved.payload == {"questions": ["What is the vote count?",
                                           "Which site was chosen?"]}
    # the next task's page starts empty, and keeps its own answer across a reload
    assert page.url != first
    page.wait_for_selector("#task-form")
    expect(page.get_by_test_id("question-1")).to_have_value("")
    page.fill('[data-testid="question-1"]', "Where will the library be built?")
    page.reload(wait_until="load")
    expect(page.get_by_test_id("question-1")).to_have_value("Where will the library be built?")
    expect(page.get_by_test_id("question-2")).to_have_value("")


@pytest.fixture
def answer_project(settings):
    """A NewsQA project whose question is written: its answer task is open."""
    from collector.models import Corpus, Document
    from tests.annotation.conftest import ARTICLES
    from tests.e2e.pages import jobs_settled

    settings.CELERY_TASK_ALWAYS_EAGER = True
    corpus = Corpus.objects.create(name="e2e-unsent-spans", language="en")
    Document.objects.create(corpus=corpus, source_type="news", **ARTICLES[0])
    admin = user_with_roles("boss", Role.ADMIN)
    newsqa = engine.project_create(name="Unsent spans", recipe="newsqa", corpus=corpus,
                                    user=admin)
    for name in ("asker", "reader"):
        engine.project_member_add(project=newsqa, user=user_with_roles(name, Role.ANNOTATOR),
                                  role=Role.ANNOTATOR)
    engine.project_start(project=newsqa, actor=admin)
    jobs_settled(what="the first stage run")
    asker = User.objects.get(username="asker")
    task = engine.task_claim(worker=asker, project=newsqa)
    engine.task_submit(assignment_id=task.pk, worker=asker,
                       payload={"questions": ["Who opposed the plan?"]})
    jobs_settled(what="the answer item of the question")
    return newsqa


def _drag(page, first, last) -> None:
    first.hover()
    page.mouse.down()
    last.hover()
    page.mouse.up()


def test_a_reload_keeps_the_spans_selected_on_the_answer_page(answer_project, as_user):
    page = as_user("reader")
    task_next(page, '[data-testid="article"]')
    _drag(page, page.locator(".tok", has_text="Dario").first,
          page.locator(".tok", has_text="Weiss").first)
    page.click('[data-testid="add-span"]')
    _drag(page, page.locator(".tok", has_text="March").first,
          page.locator(".tok", has_text="March").first)
    page.click('[data-testid="add-span"]')
    expect(page.get_by_test_id("spans")).to_contain_text("Dario Weiss")
    page.reload(wait_until="load")
    # the spans are listed, highlighted on the article and in the form again
    expect(page.get_by_test_id("spans").locator("li")).to_have_count(2)
    expect(page.get_by_test_id("spans")).to_contain_text("Dario Weiss")
    expect(page.get_by_test_id("spans")).to_contain_text("March")
    expect(page.locator(".tok.chosen")).to_have_count(3)
    # a span removed after the reload stays removed across the next one
    page.get_by_test_id("spans").locator("li", has_text="March").get_by_role("button").click()
    page.reload(wait_until="load")
    expect(page.get_by_test_id("spans").locator("li")).to_have_count(1)
    submit(page, '[data-testid="submit"]')
    saved = Submission.objects.get(worker__username="reader")
    body = saved.item.document.body
    start = body.index("Dario Weiss")
    assert saved.payload["spans"] == [[start, start + len("Dario Weiss")]]


def test_a_reload_keeps_the_evidence_selected_on_the_reco_page(settings, monkeypatch,
                                                                 as_user):
    from annotation.stages import reco  # noqa: F401
    from tests.annotation.test_reco import QINCAI_PARAPHRASE, doc
    from tests.e2e.pages import reco_batch_project

    settings.CELERY_TASK_ALWAYS_EAGER = True
    second = "第二篇。" + QINCAI_PARAPHRASE
    reco_batch_project(monkeypatch, name="ReCO unsent", query="孕妇能吃芹菜吗",
                       documents=[doc("one", "第一篇。" + QINCAI_PARAPHRASE, "One"),
                                  doc("two", second, "Two")], annotator="labeller")
    page = as_user("labeller")
    task_next(page)
    page.wait_for_selector('[data-testid="doc-0"] .tok')
    page.get_by_test_id("doc-tab-1").click()
    start, end = second.index("芹菜富含"), second.index("纤维") + 2
    _drag(page, page.locator(f'[data-testid="doc-1"] .tok[data-s="{start}"]'),
          page.locator(f'[data-testid="doc-1"] .tok[data-e="{end}"]'))
    expect(page.get_by_test_id("evidence")).to_have_text(second[start:end])
    page.fill('[data-testid="alt-positive"]', "能吃")
    page.reload(wait_until="load")
    # the evidence is back, in its document, shown and highlighted
    expect(page.get_by_test_id("evidence")).to_have_text(second[start:end])
    expect(page.get_by_test_id("alt-positive")).to_have_value("能吃")
    expect(page.locator('[data-testid="doc-1"]')).to_be_visible()
    expect(page.locator('[data-testid="doc-1"] .tok.chosen').first).to_be_visible()
    assert page.input_value("#ev-doc") == "1"
    assert page.input_value("#ev-start") == str(start)
    assert page.input_value("#ev-end") == str(end)
    # cleared, it stays cleared across the next reload
    page.click("#evidence-clear")
    page.reload(wait_until="load")
    expect(page.locator("#evidence-none")).to_be_visible()
    assert page.input_value("#ev-start") == ""
