"""The judgment recipe in the Simplified Chinese interface: what a rater and the admin
read is in Chinese where the catalogue has it (stage names, question types)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils.translation import gettext, override

from annotation import engine
from annotation.judgment_demo import references_upload, system_uploads
from annotation.roles import Role
from annotation.stages.judgment_import import judgment_import
from tests.annotation.test_judgment import _rate_all, draft, raters, started  # noqa: F401


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_why_a_rater_has_no_task_names_the_stage_in_chinese(started, raters, client,  # noqa: F811
                                                             committed):
    with committed():
        _rate_all(started, raters[0])
    client.force_login(raters[0])
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    page = _text(client.get(reverse("annotation:annotator_home"),
                            {"project": started.pk}).content.decode())
    assert "给答案打 1–5 分：它的 22 个开放任务都不适合你" in page, page
    assert "Rate answers 1-5" not in page


def test_the_report_page_in_chinese(started, raters, admin_user, client,  # noqa: F811
                                    committed):
    with committed():
        for rater in raters:
            _rate_all(started, rater)
    client.force_login(admin_user)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    html = client.get(reverse("annotation:judgment_report", args=[started.pk])).content.decode()
    with override("zh-hans"):
        overall, label = gettext("Overall"), gettext("Scores 1–5 per system: %(type)s")
    # the tables' columns and the plots' labels name the question types in Chinese
    head = re.search(r'data-testid="table1">\s*<thead>(.*?)</thead>', html, re.S).group(1)
    assert re.findall(r"<th>([^<]*)</th>", head) == ["", "是非", "实体", "描述", overall]
    assert f'aria-label="{label % {"type": "是非"}}"' in html
    assert "Yes-no" not in html


def test_chinese_references_are_scored_by_character_in_a_project_made_with_an_english_corpus(
        raters, admin_user, committed, settings):  # noqa: F811
    from annotation.judgment_models import JudgmentReport
    from collector.metrics.dureader import adapted_rouge_l
    from collector.metrics.tokenize import char_tokens

    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="Judgment, English corpus", recipe="judgment",
                                    language="en", user=admin_user,
                                    params={1: {"yes_no": 0, "entity": 0, "description": 3}})
    judgment_import(project=project, references=references_upload(),
                    predictions=system_uploads())
    for rater in raters:
        engine.project_member_add(project=project, user=rater, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    with committed():
        for rater in raters:
            _rate_all(project, rater)
    report = JudgmentReport.objects.get(project=project).report
    assert report["parameters"]["tokens"] == "char"
    items = {(str(i.data["question_id"]), i.data["system"]): i.data
             for i in project.items.filter(stage__kind="judgment_study")}
    for cand in report["candidates"]:
        data = items[(str(cand["question_id"]), cand["system"])]
        expected = adapted_rouge_l(char_tokens(data["answer"]),
                                   [char_tokens(a) for a in data["reference"]["answers"]],
                                   alpha=0, beta=0).score
        assert cand["rouge_l"] == pytest.approx(expected, abs=1e-6)


def test_the_report_says_when_every_overall_level_draw_is_the_same(
        started, raters, admin_user, client, committed):  # noqa: F811
    with committed():
        for rater in raters:
            _rate_all(started, rater)
    client.force_login(admin_user)
    html = client.get(reverse("annotation:judgment_report", args=[started.pk])).content.decode()
    # 11 questions, 30 per draw: one pair per system, and two systems leave r undefined
    assert 'data-testid="table3-one-draw"' in html
    row = re.search(r'data-testid="table3-rouge_l">(.*?)</tr>', html, re.S).group(1)
    assert re.findall(r"<td>([^<]*)</td>", row)[1:] == ["—"] * 4


def test_a_judgment_project_does_not_start_before_its_import(draft, admin_user, client):  # noqa: F811
    """The import is refused once the project runs: a project started empty could never
    get questions (it started, sampled nothing and waited for ever)."""
    from annotation.models import Project

    client.force_login(admin_user)
    page = client.post(reverse("annotation:project_action", args=[draft.pk]),
                       {"action": "start"}, follow=True)
    draft.refresh_from_db()
    assert draft.status == Project.Status.DRAFT
    assert "Import the questions and the systems' answers first" in _text(
        page.content.decode()).replace("&#x27;", "'")
    assert 'data-testid="judgment-import-link"' in page.content.decode()
