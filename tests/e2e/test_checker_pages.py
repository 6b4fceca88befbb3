"""A checker's pages on a phone (375 x 812, touch): the home, the batch list, a batch's
inspection and a ReCO adjudication fit the screen (no sideways scrolling of the page), the
Inspect button is a button in sight, and the adjudication is two keys (a label's number,
then Enter)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation import engine
from annotation.roles import Role
from annotation.stages import reco
from tests.annotation.test_reco import DOCUMENTS, evidence, needle_of, rows
from tests.e2e.pages import jobs_settled, submit
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"viewport": {"width": 375, "height": 812}, "has_touch": True, "is_mobile": True}
QUERIES = ["can pregnant women eat celery", "孕妇能吃芹菜吗"]


def work(worker, project, payload_for) -> None:
    while (task := engine.task_claim(worker=worker, project=project)) is not None:
        engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload_for(task.item))


@pytest.fixture
def checker_work(settings, monkeypatch):
    """For the checker "chk": a ReCO batch waiting for inspection, and two ReCO test
    questions whose two annotators disagree, to adjudicate."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    monkeypatch.setattr(reco.QueriesKind, "queries", lambda self, project: rows(QUERIES))
    monkeypatch.setattr(reco, "_retrieve_documents",
                        lambda project, text, k, max_chars=0: DOCUMENTS.get(text, [])[:k])
    admin = user_with_roles("boss", Role.ADMIN)
    checker = user_with_roles("chk", Role.CHECKER)
    first, second = (user_with_roles(f"annotator{n}", Role.ANNOTATOR) for n in (1, 2))
    projects = {}
    for name, split in (("ReCO batches", {"train": 1.0, "dev": 0.0, "test": 0.0}),
                        ("ReCO test set", {"train": 0.0, "dev": 0.0, "test": 1.0})):
        project = engine.project_create(name=name, recipe="reco", user=admin, params={
            5: split, 6: {"batch_size": 2, "inspect_fraction": 1.0}})
        for user in (first, second):
            engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
        engine.project_member_add(project=project, user=checker, role=Role.CHECKER)
        engine.project_start(project=project, actor=admin)
        jobs_settled(what=f"{name}: the first stage run")
        projects[name] = project
    work(first, projects["ReCO batches"], lambda item: evidence(item, needle_of(item)))
    work(first, projects["ReCO test set"], lambda item: evidence(item, needle_of(item)))
    work(second, projects["ReCO test set"], lambda item: evidence(
        item, item.data["documents"][0]["text"][-12:], answer="negative"))
    jobs_settled(what="the batch's inspection and the adjudications")
    return projects


def fits(page) -> None:
    """The page is no wider than the phone's screen (a mobile browser widens its layout
    to the content, so the width is compared with the screen's, not innerWidth)."""
    assert page.evaluate("document.documentElement.scrollWidth") <= 375, page.url


def test_a_checkers_pages_fit_a_phone_and_adjudication_is_two_keys(checker_work, as_user):
    page = as_user("chk", **PHONE)
    page.goto("/review/batches/")
    fits(page)
    page.goto("/review/")
    fits(page)  # the dashboard's two plots side by side were 22rem wide each at least
    inspect = page.locator('[data-testid^="inspect-"]')
    box = inspect.bounding_box()  # in sight, and a button, not a column of letters
    assert box["x"] >= 0 and box["x"] + box["width"] <= 375 and box["width"] > box["height"]
    submit(page, '[data-testid^="inspect-"]')
    expect(page.locator('[data-testid="sample-2"]')).to_be_visible()
    fits(page)

    page.goto("/review/")
    submit(page, '[data-testid="next-review"]')
    expect(page.locator('[data-testid="choice-reject"]')).to_be_visible()
    fits(page)  # the two labels side by side
    page.keyboard.press("1")
    expect(page.locator('[data-testid="choice-0"]')).to_be_checked()
    submit(page, key="Enter")
    expect(page.locator(".message.success")).to_contain_text("Saved")
    assert checker_work["ReCO test set"].items.filter(
        stage__kind="reco_adjudicate", status="done").count() == 1
