"""Admin screens a project manager can use alone: stage parameters as typed forms with their
meaning and the paper's default, and dashboard plots whose text is readable and fits."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation import engine
from annotation.models import Stage
from annotation.roles import Role
from tests.annotation.conftest import ARTICLES
from tests.factories import user_with_roles

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def draft(settings):
    from collector.models import Corpus, Document

    settings.CELERY_TASK_ALWAYS_EAGER = True
    admin = user_with_roles("boss", Role.ADMIN)
    corpus = Corpus.objects.create(name="e2e-params", language="en")
    Document.objects.create(corpus=corpus, source_type="news", **ARTICLES[0])
    return engine.project_create(name="Harbor library", recipe="newsqa", corpus=corpus,
                                 user=admin)


def test_stage_parameters_are_a_form_with_help_bounds_and_errors_by_the_field(
        draft, as_user, screenshot):
    stage = draft.stages.get(kind="newsqa_answer")
    boss = as_user("boss")
    boss.goto(f"/manage/projects/{draft.pk}/")
    section = boss.get_by_test_id(f"params-{stage.order}")
    section.locator("summary").click()
    field = section.get_by_label("Answers per question")
    expect(field).to_have_attribute("type", "number")
    expect(field).to_have_attribute("min", "1")
    expect(section.locator(f"#id_stage{stage.pk}-answers_per_question_helptext")).to_contain_text(
        "Answerers asked first. Paper's default: 2.")
    expect(section.get_by_label("Pay model")).to_have_js_property("tagName", "SELECT")
    field.fill("0")
    section.get_by_label("Gold rate").fill("0.05")
    section.get_by_role("button", name="Save parameters").click()
    section = boss.get_by_test_id(f"params-{stage.order}")
    error = section.get_by_test_id("param-error-answers_per_question")
    expect(error).to_contain_text("greater than or equal to 1")
    # the refused form keeps what was typed, open at the stage
    expect(section.get_by_label("Gold rate")).to_have_value("0.05")
    screenshot("stage-params-error", of=boss)
    section.get_by_label("Answers per question").fill("3")
    section.get_by_role("button", name="Save parameters").click()
    expect(boss.locator(".messages, [role=status], .message").first).to_contain_text(
        f"Parameters of stage {stage.order} saved")
    stage = Stage.objects.get(pk=stage.pk)
    assert stage.params["answers_per_question"] == 3 and stage.params["gold_rate"] == 0.05
    boss.get_by_test_id(f"params-{stage.order}").locator("summary").click()
    screenshot("stage-params", of=boss)


def test_dashboard_plot_text_is_readable_and_inside_its_plot(draft, as_user, screenshot):
    engine.project_start(project=draft, actor=None)
    boss = as_user("boss")
    boss.set_viewport_size({"width": 1280, "height": 900})
    boss.goto(f"/manage/projects/{draft.pk}/")
    plot = boss.get_by_test_id("plot-stages")
    expect(plot).to_be_visible()
    measures = plot.evaluate("""svg => {
        const box = svg.getBoundingClientRect();
        return [...svg.querySelectorAll('text')].map(t => {
            const r = t.getBoundingClientRect();
            return {text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize)
                        * box.width / svg.viewBox.baseVal.width,
                    inside: r.left >= box.left - 1 && r.right <= box.right + 1};
        });
    }""")
    assert measures
    for m in measures:
        assert m["size"] >= 11, m  # drawn at its own size, not shrunk to 7 px
        assert m["inside"], m  # no label cut off at the plot's edge
    screenshot("dashboard-plots", of=boss)


def test_a_name_without_spaces_breaks_instead_of_stretching_the_page(draft, as_user):
    """A 300-character name stretched /manage/ to 2,555 px and the project pages to 3,758 px
    in a 1,280 px window; the top bar stayed, and the cards spilled past it."""
    from annotation.models import Project

    Project.objects.filter(pk=draft.pk).update(name="<b>W</b>" + "W" * 300)
    boss = as_user("boss")
    boss.set_viewport_size({"width": 1280, "height": 900})
    for path in ("/manage/", f"/manage/projects/{draft.pk}/",
                 f"/manage/projects/{draft.pk}/members/"):
        boss.goto(path)
        expect(boss.get_by_text("<b>W</b>WWW", exact=False).first).to_be_visible()
        wide = boss.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= 1280, (path, wide)
