"""Selecting a span with a finger, on a phone-sized touch screen (375 x 812): a finger
cannot drag over the words (it scrolls the page), so the first tap marks where the span
starts and the second where it ends. Before, the second tap started again (only one-word
spans, one-character evidence in Chinese), and the first tap's focus scrolled the page,
so the finger's release landed on another word and selected a range nobody chose."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation.models import Submission
from tests.annotation.test_reco import QINCAI_PARAPHRASE, doc
from tests.e2e.pages import reco_batch_project, task_next, text_under
from tests.e2e.test_keys_and_corrections import SENTENCES, project  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def phone(as_user):
    """``phone(username)``: a phone's browser (375 x 812, touch) logged in as that user."""
    return lambda username: as_user(username, has_touch=True, is_mobile=True,
                                    viewport={"width": 375, "height": 812})


def test_a_span_is_two_taps_on_a_phone(project, phone):  # noqa: F811
    reader = phone("reader1")
    task_next(reader, '[data-testid="article"]')
    expect(reader.get_by_test_id("touch-hint")).to_be_visible()
    # the header wraps: nothing is wider than the phone (the page was zoomed out to fit a
    # header 550 px wide, the language buttons were white on white, taps missed)
    assert reader.evaluate("document.documentElement.scrollWidth") == 375
    # no text under 12 px: the key hints (kbd) were 11.5 px, 10.2 px inside a hint
    assert text_under(reader) == []
    words = SENTENCES[1].rstrip(".").split(" ")
    first = reader.locator('[data-testid="article"] .tok', has_text=words[0])
    at = int(first.get_attribute("data-i"))  # w1x0: the one token of that text
    last = reader.locator(f'[data-testid="article"] .tok[data-i="{at + 3}"]')
    first.tap()
    last.tap()
    reader.get_by_test_id("add-span").tap()
    assert reader.inner_text('[data-testid="spans"]').startswith(
        "“" + " ".join(words[:4]) + "”")
    # a third tap starts a new span
    first.tap()
    reader.get_by_test_id("add-span").tap()
    assert f"“{words[0]}”" in reader.inner_text('[data-testid="spans"]')


def test_reco_evidence_is_two_taps_on_a_phone(settings, monkeypatch, phone):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    text = "第一句。" + QINCAI_PARAPHRASE * 30
    reco_batch_project(monkeypatch, name="ReCO phone", query="孕妇能吃芹菜吗",
                       documents=[doc("long", text, "长文")], annotator="labeller")
    page = phone("labeller")
    task_next(page)
    page.wait_for_selector('[data-testid="doc-0"] .tok')
    start, end = len("第一句。"), len("第一句。") + 12
    page.locator(f'[data-testid="doc-0"] .tok[data-s="{start}"]').tap()
    page.locator(f'[data-testid="doc-0"] .tok[data-e="{end}"]').tap()
    expect(page.get_by_test_id("evidence")).to_have_text(text[start:end])
    assert (page.input_value("#ev-start"), page.input_value("#ev-end")) == (str(start), str(end))
    page.locator(f'[data-testid="doc-0"] .tok[data-s="{start + 2}"]').tap()  # starts again
    expect(page.get_by_test_id("evidence")).to_have_text(text[start + 2:start + 3])
    page.locator(f'[data-testid="doc-0"] .tok[data-e="{end}"]').tap()
    # The three alternatives' text boxes are wide enough to read what one types (they were
    # 26 px wide between their label and the "correct" choice), and the page no wider
    # than the phone; the task is done start to finish with taps.
    for key in ("positive", "negative", "uncertain"):
        box = page.get_by_test_id(f"alt-{key}").bounding_box()
        assert box is not None and box["width"] >= 200, (key, box)
    assert page.evaluate("document.documentElement.scrollWidth") == 375
    assert text_under(page) == []
    page.get_by_test_id("alt-positive").fill("能吃")
    page.get_by_test_id("alt-negative").fill("不能吃")
    page.get_by_test_id("alt-uncertain").fill("无法确定")
    page.get_by_test_id("answer-positive").tap()
    with page.expect_navigation(wait_until="load"):
        page.get_by_test_id("submit").tap()
    saved = Submission.objects.get(worker__username="labeller", stage__kind="reco_evidence")
    assert saved.payload["alternatives"]["negative"] == "不能吃"
    assert saved.payload["answer"] == "positive"


def test_the_home_pages_buttons_are_on_a_phones_screen(project, phone):  # noqa: F811
    """"Work on this project" and "Correct" end their table rows: on a phone they were past
    the screen's right edge, in a table that scrolls sideways with nothing to say so."""
    reader = phone("reader1")
    work = reader.get_by_role("button", name="Work on this project")
    box = work.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375, box
    with reader.expect_navigation(wait_until="load"):
        work.tap()
    with reader.expect_navigation(wait_until="load"):
        reader.get_by_test_id("no-answer").tap()
    reader.goto("/tasks/")
    correct = reader.get_by_test_id("correct-last")
    box = correct.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375, box
    assert reader.evaluate("document.documentElement.scrollWidth") == 375
    with reader.expect_navigation(wait_until="load"):
        correct.tap()
    reader.wait_for_selector('[data-testid="correcting"]')
