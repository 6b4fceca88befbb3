"""What the admin and the checker read in Chinese that the code writes: the stage
parameters' refusals (each parameter's checks, the kinds' own, the split shares) and the
labels of a submitted payload on the item page. They were English f-strings and literals
on Chinese pages; each is now a msgid with named placeholders, and English stays as it was."""
# ruff: noqa: F811 (fixtures imported from tests/annotation/conftest.py are arguments here)

from __future__ import annotations

import html

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.translation import override

from annotation import engine
from annotation.models import Item
from annotation.payload_display import generic_blocks
from annotation.stages import stage_kind
from tests.annotation.conftest import (  # noqa: F401 - fixtures, used as arguments
    committed,
    news_corpus,
    newsqa_project,
    workers,
)
from tests.annotation.test_item_page import _page, _submission
from tests.annotation.test_newsqa_flow import _write_questions, claim_item
from tests.annotation.test_stage_params import posted_form


def _refusal(kind: str, params: dict) -> str:
    with pytest.raises(ValidationError) as refused:
        stage_kind(kind).clean_params(params)
    return refused.value.messages[0]


# (stage kind, parameters, the English refusal, the Chinese)
REFUSALS = [
    ("newsqa_answer", {"answers_per_question": "x"},
     "parameter 'answers_per_question': expected int, got 'x'",
     "参数 'answers_per_question'：应为 int，实际为 'x'"),
    ("newsqa_answer", {"answers_per_question": 0},
     "parameter 'answers_per_question': 0 is below 1",
     "参数 'answers_per_question'：0 小于最小值 1"),
    ("newsqa_answer", {"answers_per_question": 11},
     "parameter 'answers_per_question': 11 is above 10",
     "参数 'answers_per_question'：11 大于最大值 10"),
    ("newsqa_answer", {"pay_model": "weekly"},
     "parameter 'pay_model': 'weekly' is not one of submission, hourly",
     "参数 'pay_model'：'weekly' 不是 submission, hourly 之一"),
    ("newsqa_split", {"colour": "red"},
     "stage newsqa_split: unknown parameter(s) colour; known: dev, seed, test, train",
     "阶段 newsqa_split：未知参数 colour；可用的参数：dev, seed, test, train"),
    ("newsqa_split", {"train": 0.5, "dev": 0.1, "test": 0.1},
     "stage newsqa_split: the split shares (train 0.5, dev 0.1, test 0.1) add up to 0.7, not 1",
     "阶段 newsqa_split：划分比例（train 0.5, dev 0.1, test 0.1）之和为 0.7，而不是 1"),
    ("reco_split", {"train": 1.0, "dev": 0.5, "test": 0.0},
     "stage reco_split: the split shares (train 1, dev 0.5, test 0) add up to 1.5, not 1",
     "阶段 reco_split：划分比例（train 1, dev 0.5, test 0）之和为 1.5，而不是 1"),
]


@pytest.mark.parametrize(("kind", "params", "english", "chinese"), REFUSALS)
def test_a_stage_parameters_refusal_is_in_the_admins_language(kind,
                                                              params, english, chinese):
    with override("en"):
        assert _refusal(kind, params) == english
    with override("zh-hans"):
        assert _refusal(kind, params) == chinese


def test_a_kinds_own_check_and_an_unknown_kind_are_framed_in_the_admins_language(db):
    from annotation.models import Project

    with override("zh-hans"):
        refusal = _refusal("reco_query_filter", {"yesno_threshold": -5.0})
        # the frame is the stage's, the detail the filter's own, both in Chinese
        assert refusal.startswith("阶段 reco_query_filter：yesno_threshold 必须是大于 0 的数字")
        with pytest.raises(ValidationError) as unknown:
            stage_kind("reco_nothing")
        assert unknown.value.messages[0].startswith("未知的阶段类型 'reco_nothing'；可用的类型：")
        with pytest.raises(ValidationError) as created:
            engine.project_create(name="p", recipe="newsqa", params={1: {"max_articles": "x"}})
        assert created.value.messages[0].startswith("阶段 1（")
        assert "参数 'max_articles'：应为 int，实际为 'x'" in created.value.messages[0]
    assert not Project.objects.exists()


def test_the_project_page_refuses_split_shares_in_the_admins_language(
        client_for, admin_user):
    project = engine.project_create(name="p", recipe="newsqa", user=admin_user)
    stage = project.stages.get(kind="newsqa_split")
    client = client_for(admin_user)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    response = client.post(reverse("annotation:project_action", args=[project.pk]),
                           posted_form(stage, {"train": "0.9", "dev": "0.5", "test": "0.5"}))
    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    assert ("阶段 newsqa_split：划分比例（train 0.9, dev 0.5, test 0.5）之和为 1.9，而不是 1"
            in page)
    assert "add up to" not in page
    stage.refresh_from_db()
    assert stage.params["dev"] == 0.05


def test_payload_labels_follow_the_language():
    from annotation.stages.reco import label_blocks

    payload = {"intent": "informational", "exclusions": ["navigational"], "answer": "12",
               "conflict": True, "question_type": "ENTITY"}
    with override("zh-hans"):
        blocks = {b.label: b for b in generic_blocks(payload, labels=("intent", "exclusions"))}
        rejected = label_blocks({}, {"reject": True})
    assert blocks["已标记"].value == ["冲突"]
    assert {"意图", "排除原因", "答案", "问题类型"} <= set(blocks)
    assert [b.label for b in rejected] == ["已标记", "原因"]
    assert rejected[0].value == ["已拒绝"]
    assert rejected[1].value == "无法用是 / 否 / 不确定回答"  # the stored default, translated
    with override("zh-hans"):  # an item's result on the item page
        result = [b.label for b in generic_blocks({"rule": "ngram", "matched": ["ab"],
                                                   "scores": {"ngram": 0.5}})]
    assert result == ["规则", "匹配", "分数"]
    with override("en"):
        labels = [b.label for b in generic_blocks(payload, labels=("intent",))]
    assert labels == ["Marked", "Intent", "Exclusions", "Answer", "Question type"]


def test_the_item_page_names_a_submissions_fields_in_the_readers_language(
        newsqa_project, workers, committed, client_for, admin_user):
    article = _write_questions(newsqa_project, workers["questioner"], committed)
    who = Item.objects.get(stage__kind="newsqa_answer", data__question="Who opposed the plan?")
    task = claim_item(workers["ann1"], newsqa_project, who)
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=workers["ann1"],
                           payload={"no_answer": True})
    client = client_for(admin_user)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    questions = _submission(_page(client, article), article.submissions.get().pk)
    assert "<dt>问题</dt>" in questions and "<dt>Questions</dt>" not in questions
    flag = _submission(_page(client, who), who.submissions.get().pk)
    assert "<dt>已标记</dt>" in flag and '<span class="badge label">无答案</span>' in flag
