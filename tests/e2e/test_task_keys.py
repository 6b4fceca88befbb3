"""Keys on task pages that send the answer only when the worker means to."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation.models import Submission
from tests.e2e.pages import task_next
from tests.e2e.test_marco_flow import project  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def test_enter_on_the_guidelines_opens_them_and_sends_nothing(project, as_user):  # noqa: F811
    """Enter submits the judgment page from anywhere; a keyboard worker who tabbed to
    "Guidelines" to re-read them before sending had their answer sent instead."""
    judge = as_user("judge")
    task_next(judge, '[data-testid="query"]')
    judge.keyboard.press("1")
    judge.keyboard.press("k")
    # a submit is sent from the keydown itself (requestSubmit): note any, send none
    judge.evaluate("""() => document.addEventListener("submit", (e) => {
        window.submitted = true; e.preventDefault(); }, true)""")
    guidelines = judge.locator("details.guidelines")
    was_open = guidelines.evaluate("d => d.open")
    judge.focus("details.guidelines summary")
    judge.keyboard.press("Enter")
    expect(guidelines).to_have_js_property("open", not was_open)
    assert judge.evaluate("window.submitted === true") is False
    # Enter elsewhere still sends the answer
    judge.focus('input[name="decision"]:checked')
    judge.keyboard.press("Enter")
    assert judge.evaluate("window.submitted === true") is True
    assert not Submission.objects.exists()
