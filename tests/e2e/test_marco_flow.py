"""MS MARCO distillation in the browser: an editor judges a query, another curates its
passages, three editors distil answers (one an outlier, with a spelling slip), and a
checker sees the outlier flagged and drops it; the admin sees the weights."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation import engine
from annotation.models import Item
from annotation.roles import Role
from tests.annotation.test_marco import GOOD, QUERY, TABLE2
from tests.e2e.pages import marco_query_project, row, submit, task_next

pytestmark = pytest.mark.django_db(transaction=True)

OUTLIER = "Ask the dealler, it depends on the color of the car."


@pytest.fixture
def project(settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    return marco_query_project(monkeypatch, name="MARCO browser")[0]


def distil(page, answer):
    task_next(page, '[data-testid="answer"]')
    assert page.inner_text('[data-testid="query"]') == QUERY
    page.fill('[data-testid="answer"]', answer)
    submit(page, key="Control+Enter")


def test_judge_curate_distil_and_drop_the_outlier(project, as_user, screenshot):
    # The judge: informational (1), description (4), keep (k), Enter.
    judge = as_user("judge")
    task_next(judge, '[data-testid="query"]')
    assert judge.inner_text('[data-testid="query"]') == QUERY
    # Exclude (e) without an intent, Enter: refused in the page, the reason by the intents.
    assert "needs an intent" in judge.inner_text('[data-testid="judge-hint"]')
    judge.keyboard.press("e")
    judge.keyboard.press("Enter")
    missing = judge.locator('[data-testid="client-error-intent"]')
    missing.wait_for()
    assert "every query needs one, also one you exclude" in missing.inner_text()
    assert judge.locator("fieldset:has(legend:text('Intent')) .field-error").count() == 1
    screenshot("marco-judge-intent-missing", of=judge)
    assert Item.objects.get(stage__kind="marco_judge").submissions.count() == 0
    for key in ("1", "4", "k"):
        judge.keyboard.press(key)
    assert judge.is_checked('[data-testid="keep"]')
    expect(missing).to_have_count(0)  # the message goes once an intent is chosen
    screenshot("marco-judge", of=judge)
    submit(judge, key="Enter")
    judgment = row(Item.objects.filter(stage__kind="marco_judge"), what="the judged query")
    assert judgment.result["kept"] is True and judgment.result["query_type"] == "DESCRIPTION"
    # Retrieval ran at once and the judge is offered the curation: they pass it on.
    judge.wait_for_selector('[data-testid="passages"]')
    with judge.expect_navigation():
        judge.click('[data-testid="release"]')

    # The curator: ten ranked passages; ticking "conflict" asks why before submitting.
    curator = as_user("curator")
    task_next(curator, '[data-testid="passages"]')
    assert curator.locator('input[name="selected"]').count() == 10
    curator.keyboard.press("1")
    curator.keyboard.press("3")
    curator.keyboard.press("c")  # conflict: the reason field takes the focus
    curator.keyboard.type("passage 1 is the official government page")
    curator.locator('[data-testid="passage-3"]').uncheck()
    assert curator.is_checked('[data-testid="passage-1"]')
    screenshot("marco-curate", of=curator)
    submit(curator, '[data-testid="submit"]')
    distill = row(Item.objects.filter(stage__kind="marco_distill"),
                  what="the distillation item (after curation)")
    assert [p["rank"] for p in distill.data["passages"] if p["is_selected"]] == [1]

    # Three editors; none sees another's answer; the third writes an outlier with a typo.
    ed1 = as_user("ed1")
    distil(ed1, GOOD[0])
    ed2 = as_user("ed2")
    distil(ed2, GOOD[1])
    ed3 = as_user("ed3")
    task_next(ed3, '[data-testid="answer"]')
    assert GOOD[0] not in ed3.content() and GOOD[1] not in ed3.content()
    assert TABLE2["passage"][:40] in ed3.inner_text('[data-testid="passages"]')
    ed3.fill('[data-testid="answer"]', OUTLIER)
    ed3.wait_for_selector('[data-testid="spelling-warning"]')
    assert "dealler" in ed3.inner_text('[data-testid="spelling"]')
    screenshot("marco-distill", of=ed3)
    submit(ed3, key="Control+Enter")  # a warning only: the answer goes in
    consensus = row(Item.objects.filter(stage__kind="marco_consensus"),
                    what="the consensus item (after the pa-BLEU stage job)")
    assert consensus.result["flagged"] == [2]

    # An editor who is also a checker may not review the answers they wrote: the checker
    # home counts nothing for them and says why.
    from django.contrib.auth.models import Group, User

    writer = User.objects.get(username="ed3")
    writer.groups.add(Group.objects.get(name=Role.CHECKER.value))
    engine.project_member_add(project=project, user=writer, role=Role.CHECKER)
    ed3.goto("/review/")
    assert ed3.inner_text('[data-testid="open-reviews"]') == "0"
    assert "already did or may not do" in ed3.inner_text('[data-testid="no-review-reasons"]')
    screenshot("checker-review-why-nothing", of=ed3, element='[data-testid="reviews"]')

    # The checker: the review from the checker home, the outlier flagged on the plot.
    chk = as_user("chk")
    chk.wait_for_selector('[data-testid="next-review"]')
    assert chk.inner_text('[data-testid="open-reviews"]') == "1"
    # The review page binds its keys in deferred scripts: "q" below waits for its load.
    with chk.expect_navigation(wait_until="load"):
        chk.keyboard.press("r")
    chk.wait_for_selector('[data-testid="plot-weights"]')
    assert chk.is_visible('[data-testid="flagged-3"]')
    assert not chk.locator('[data-testid="flagged-1"]').count()
    assert chk.locator('[data-testid="plot-weights"] rect.bar-pending').count() == 1
    chk.keyboard.press("q")  # drop the first flagged answer
    assert chk.is_checked('[data-testid="drop-3"]')
    screenshot("marco-review", of=chk)
    submit(chk, key="Enter")
    record = row(Item.objects.filter(stage__kind="marco_record", status="done"),
                 what="the MS MARCO record (after the record stage job)").result
    assert record["answers"] == GOOD
    assert record["dropped_answers"][0]["text"] == OUTLIER
    assert record["review"]["decisions"] == {"2": "drop"}

    boss = as_user("boss")
    boss.goto(f"/manage/projects/{project.pk}/")
    boss.wait_for_selector('[data-testid="marco-figures"]')
    assert boss.inner_text('[data-testid="answers-flagged"]') == "1"
    assert boss.inner_text('[data-testid="review-decisions"]') == "0 / 1"
    assert boss.locator('[data-testid="plot-query-weights"]').count() == 1
    screenshot("marco-dashboard", of=boss)
