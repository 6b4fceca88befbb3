"""The judgment study in the browser: two raters score every candidate with the keys 1-5
(blind to the system); the admin runs the study, sees the three tables and the sweep
plots, and downloads the CSV."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from annotation import engine
from annotation.judgment_demo import references_upload, system_uploads
from annotation.roles import Role
from annotation.stages.judgment_import import judgment_import
from tests.e2e.pages import submit, task_next
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def project(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    admin = user_with_roles("boss", Role.ADMIN)
    project = engine.project_create(name="Judgment browser", recipe="judgment", language="zh",
                                    user=admin, params={1: {"yes_no": 2, "entity": 2,
                                                            "description": 1}})
    judgment_import(project=project, references=references_upload(),
                    predictions=system_uploads())
    for name in ("rater1", "rater2"):
        engine.project_member_add(project=project, user=user_with_roles(name, Role.ANNOTATOR),
                                  role=Role.ANNOTATOR)
    engine.project_start(project=project, actor=admin)
    return project


def rate_everything(page, keys: str) -> int:
    """Score candidates with the keys, one after the other, until no task is left."""
    task_next(page, '[data-testid="candidate"]')
    rated = 0
    while page.locator('[data-testid="candidate"]').count():
        body = page.content()
        assert "extractive" not in body and "lead-sentence" not in body  # blind
        with page.expect_navigation(wait_until="load"):
            page.keyboard.press(keys[rated % len(keys)])
        rated += 1
    return rated


def test_two_raters_then_the_admin_reads_the_study(project, as_user):
    first, second = as_user("rater1"), as_user("rater2")
    assert rate_everything(first, "54321") == 10
    assert rate_everything(second, "4523") == 10

    boss = as_user("boss")
    boss.goto(f"/manage/projects/{project.pk}/judgment/")
    submit(boss, '[data-testid="run-study"]')
    boss.wait_for_selector('[data-testid="table3"]')
    boss.wait_for_selector('[data-testid="run-study"]')  # the run finished
    for testid in ("table1", "table2", "table3", "bootstrap", "plot-alpha", "plot-beta",
                   "plot-scores_overall"):
        assert boss.locator(f'[data-testid="{testid}"]').count() == 1, testid
    assert "Adapted ROUGE-L" in boss.inner_text('[data-testid="table2"]')
    with boss.expect_download() as download:
        boss.click('[data-testid="download-csv"]')
    text = Path(download.value.path()).read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:4] == ["question_id", "system", "type", "rouge_l"]
    candidates = [r for r in rows[1:] if r and r[1] in ("extractive", "lead-sentence")]
    assert len(candidates) == 10
