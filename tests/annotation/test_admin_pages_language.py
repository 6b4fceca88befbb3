"""Texts from the code that stayed English on the Chinese admin and checker pages (found by
reading each page of the demo in Chinese): a job's figures, a worker's submissions in a few
words and the workers page's plots, the invite form's roles and labels, a study's and an
inspection's refusals. English stays as it was."""

from __future__ import annotations

import html

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.translation import override

from annotation import engine
from annotation.models import Item


def test_a_stage_runs_figures_are_named_in_the_readers_language():
    from annotation.engine import stage_job_summary
    from collector.models import Job

    job = Job(kind="stage_run", result={
        "received": 50, "passed": 50, "report": 1, "candidates": 50, "new": 50,
        "documents_kept": 12, "queries_without": 0, "train": 40, "unknown_figure": True})
    with override("en"):
        english = stage_job_summary(job)
    assert english == ["Received 50, passed on 50.", "Report: 1.", "Candidates: 50.",
                       "New: 50.", "Documents kept: 12.", "Queries left without documents: 0.",
                       "Train: 40.", "Unknown figure: yes."]
    with override("zh-hans"):
        chinese = stage_job_summary(job)
    assert chinese[1:] == ["报告：1。", "候选答案：50。", "新增：50。", "保留的文档：12。",
                           "没有剩余文档的查询：0。", "训练：40。", "Unknown figure：是。"]


def test_a_workers_submissions_in_a_few_words_follow_the_language():
    from annotation.worker_stats import _summary

    item = Item(data={})
    cases = [
        ("newsqa_answer", {"no_answer": True}, "no answer in the article", "文章中没有答案"),
        ("newsqa_validate", {"choice": 1}, "chose answer 2", "选择了答案 2"),
        ("marco_curate", {"selected": [1, 3]}, "selected passages 1, 3", "选择了段落 1, 3"),
        ("marco_curate", {"unanswerable": True}, "not answerable by the passages",
         "这些段落无法回答"),
        ("marco_review", {"decisions": {"0": "keep"}}, "answer 1: keep", "答案 1：keep"),
        ("reco_adjudicate", {"choice": 0}, "chose label A", "选择了标注 A"),
        ("reco_evidence", {"answer": "positive", "alternatives": {"positive": "能"}},
         "Positive (yes): 能", None),
    ]
    for kind, payload, english, chinese in cases:
        with override("en"):
            assert _summary(kind, item, payload) == english
        with override("zh-hans"):
            shown = _summary(kind, item, payload)
        assert shown == chinese if chinese else shown != english and shown.endswith(": 能")


def test_the_workers_plots_are_titled_in_the_readers_language():
    from annotation.worker_stats import _counts_plot

    with override("zh-hans"):
        one = _counts_plot({"ann1": [3.0]}, ["2026-11-28 19:00"], unit="hour")
        many = _counts_plot({"ann1": [3.0, 1.0]}, ["2026-11-27", "2026-11-28"], unit="day")
    assert one.label == "每小时提交数（2026-11-28 19:00）"
    assert "3 次提交" in [rect.get("title") for rect in one.rects]
    assert many.label == "每天提交数"
    with override("en"):
        assert _counts_plot({"a": [1.0]}, ["x"], unit="day").label == "Submissions per day (x)"


@pytest.mark.django_db
def test_the_invite_form_names_roles_and_fields_in_the_admins_language(client_for, admin_user):
    project = engine.project_create(name="p", recipe="newsqa", user=admin_user)
    client = client_for(admin_user)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    page = client.get(reverse("annotation:project_members", args=[project.pk])).content.decode()
    assert '<option value="annotator">标注员</option>' in page
    assert '<option value="checker">审核员</option>' in page
    refused = client.post(reverse("annotation:project_invite_create", args=[project.pk]),
                          {"role": "annotator", "max_uses": "0"})
    errors = html.unescape(refused.content.decode()).split('class="errors">', 1)[1]
    errors = errors.split("</ul>", 1)[0]
    assert "最多使用次数（留空：不限）:" in errors and "Max uses" not in errors


@pytest.mark.django_db
def test_a_studys_and_an_inspections_refusals_follow_the_language(admin_user):
    from annotation.batches import inspection_submit
    from annotation.studies import study_create

    project = engine.project_create(name="p", recipe="newsqa", user=admin_user)
    refusals = {
        "quota": lambda: study_create(project=project, platform="prolific",
                                      completion_code="C0DE", quota=0),
        "code": lambda: study_create(project=project, platform="prolific",
                                     completion_code="has space"),
        "platform": lambda: study_create(project=project, platform="fiverr",
                                         completion_code="C0DE"),
        "verdict": lambda: inspection_submit(inspection_id=1, checker=admin_user, marks={},
                                             verdict="maybe"),
    }
    english = {"quota": "quota: 0 tasks per session; give at least 1 (or none for no limit)",
               "code": "completion_code: 'has space' is not a code (letters, digits, '_' and "
                       "'-', at most 64)",
               "platform": "platform: 'fiverr' is not one of prolific, mturk",
               "verdict": "verdict: 'maybe' is not one of accept, return"}
    chinese = {"quota": "quota: 每次会话 0 个任务；请至少填 1（或留空表示不限）",
               "code": "completion_code: 'has space' 不是有效的代码（字母、数字、“_”和“-”，"
                       "最多 64 个字符）",
               "platform": "platform: 'fiverr' 不是 prolific, mturk 之一",
               "verdict": "verdict: 'maybe' 不是 accept、return 之一"}
    for name, refuse in refusals.items():
        for language, expected in (("en", english), ("zh-hans", chinese)):
            with override(language), pytest.raises(ValidationError) as refused:
                refuse()
            assert refused.value.messages[0] == expected[name], (name, language)
    assert not project.studies.exists()
