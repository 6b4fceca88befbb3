"""A worker whose interface is in Simplified Chinese is told why a qualification try cannot
start in their language, the stage by the name they see."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.utils.translation import override

from annotation import gold
from tests.annotation.test_gold import qualifying  # noqa: F401


def test_why_a_try_cannot_start_names_the_stage_in_chinese(qualifying, workers):  # noqa: F811
    project, answer = qualifying
    worker = workers["ann3"]
    for _ in range(2):
        standing = gold.qualification_start(stage=answer, worker=worker)
        while (item := gold.qualification_item(standing=standing)) is not None:
            gold.qualification_answer(standing=standing, item=item,
                                      payload={"bad_question": True})
            standing.refresh_from_db()
    with override("zh-hans"), pytest.raises(ValidationError) as refused:
        gold.qualification_start(stage=answer, worker=worker)
    assert refused.value.messages[0] == "“答案收集”已没有剩余的资格测试机会（已用 2 次）"
    assert "Answer sourcing" not in refused.value.messages[0]


def test_gold_explanations_are_in_the_workers_language():
    """After a training item the worker reads why the expected answer is right: ReCO's and
    MS MARCO's explanations were English f-strings on Chinese pages."""
    from annotation.models import Item
    from annotation.stages import stage_kind

    reco = Item(data={"query": "孕妇能吃芹菜吗",
                      "documents": [{"title": "t", "body": "芹菜可以吃"}]})
    marco = Item(data={"passages": [{"rank": 1, "text": "芹菜可以吃"}],
                       "answers": [{"text": "可以"}]})
    cases = {
        "reco_evidence": ("reco_evidence", reco, {
            "doc": 0, "evidence_text": "芹菜可以吃", "answer": "positive",
            "alternatives": {"positive": "能", "negative": "不能", "uncertain": "无法确定"}}),
        "reco_reject": ("reco_evidence", reco, {"reject": True}),
        "marco_judge": ("marco_judge", marco, {
            "decision": "exclude", "intent": "informational", "exclusions": ["sensitive"],
            "query_type": "ENTITY", "question_type": "ENTITY"}),
        "marco_curate": ("marco_curate", marco, {"selected": [1]}),
        "marco_none": ("marco_curate", marco, {"unanswerable": True}),
        "marco_review": ("marco_review", marco, {"decisions": {"0": "drop"}}),
    }

    def explained() -> dict[str, str]:
        return {name: stage_kind(kind).gold_explain(item, expected)
                for name, (kind, item, expected) in cases.items()}

    english = explained()
    assert english["reco_evidence"] == ("Document 1, evidence: “芹菜可以吃” · answer: "
                                        "Positive (yes) (“能”)")
    assert english["marco_review"] == "Answer 1 (可以): drop"
    with override("zh-hans"):
        chinese = explained()
    assert chinese == {
        "reco_evidence": "文档 1，证据：“芹菜可以吃” · 答案：肯定（是）（“能”）",
        "reco_reject": "拒绝该查询：无法用是 / 否 / 不确定回答。",
        "marco_judge": "排除：信息型 · 排除原因：可能含有敏感信息 · 查询类型 ENTITY · "
                       "问题类型 ENTITY",
        "marco_curate": "段落 1：芹菜可以吃",
        "marco_none": "检索到的段落无法回答。",
        "marco_review": "答案 1（可以）：丢弃",
    }
