"""A reload of a task page keeps the answer being written: a phone reloads a tab it had put
away (or a finger pulls to refresh) and the questions typed were gone. The page fills them
in again from the tab's storage; another task's page does not get them."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation.models import Submission
from tests.e2e.pages import submit, task_next
from tests.e2e.test_task_lease import project  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


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
