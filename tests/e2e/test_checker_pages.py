"""A checker's pages on a phone (375 x 812, touch): the home, the batch list, a batch's
inspection and a ReCO adjudication fit the screen (no sideways scrolling of the page), the
Inspect button is a button in sight, and the adjudication is two keys (a label's number,
then Enter). The MS MARCO outlier review's chart is readable there too."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation import engine
from annotation.roles import Role
from annotation.stages import reco
from tests.annotation.test_marco import GOOD, OUTLIER
from tests.annotation.test_reco import DOCUMENTS, evidence, needle_of, rows
from tests.e2e.pages import jobs_settled, marco_query_project, submit
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


@pytest.fixture
def marco_review(settings, monkeypatch):
    """For the checker "chk": an MS MARCO query whose three answers hold an outlier the
    consensus flagged, waiting for review."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project, people = marco_query_project(monkeypatch, name="MARCO phone")
    steps = [("judge", {"intent": "informational", "decision": "keep", "exclusions": [],
                        "query_type": "DESCRIPTION", "question_type": "DESCRIPTION"}),
             ("curator", {"selected": [1]}), ("ed1", {"answer": GOOD[0]}),
             ("ed2", {"answer": GOOD[1]}), ("ed3", {"answer": OUTLIER})]
    for name, payload in steps:
        task = engine.task_claim(worker=people[name], project=project)
        engine.task_submit(assignment_id=task.pk, worker=people[name], payload=payload)
        jobs_settled(what=f"the stage after {name}'s answer")
    return project


def test_the_outlier_reviews_chart_is_readable_on_a_phone(marco_review, as_user):
    """The chart was drawn 560 px wide and shrunk to the phone's card: its labels were
    about 5 px tall. Now they keep a readable size, and the page still fits the screen."""
    page = as_user("chk", **PHONE)
    page.goto("/review/")
    submit(page, '[data-testid="next-review"]')
    chart = page.locator('[data-testid="plot-weights"]')
    expect(chart).to_be_visible()
    expect(chart.locator("rect.bar-pending")).to_have_count(1)
    fits(page)
    labels = chart.locator("text")
    expect(labels.first).to_be_visible()
    # Each label's height on the screen, and its font's size there (the stylesheet's size
    # times the SVG's scale): the box alone is no proof, as the font's line box is half as
    # tall again as its size (a shrunk chart's 6.6 px text had 10 px boxes).
    sizes = labels.evaluate_all("""texts => texts.map(t => [
        t.getBoundingClientRect().height,
        parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a])""")
    assert len(sizes) == 3 * 2, sizes  # an answer's label and figure, for three answers
    assert min(height for height, _ in sizes) >= 10, sizes
    assert min(size for _, size in sizes) >= 12, sizes
    # Each answer's label and bar are in sight without scrolling sideways.
    box = chart.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 375, box
