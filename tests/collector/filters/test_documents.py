"""Document filter: drop trivial surface overlap with the query, keep paraphrases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collector.filters import DocumentFilter, query_core

DUREADER = Path(__file__).resolve().parents[3] / "data" / "datasets" / "dureader"


@pytest.fixture(scope="module")
def doc_filter() -> DocumentFilter:
    return DocumentFilter()


def _dureader_docs(question_id: int) -> tuple[str, list[str]]:
    for name in ("search.dev", "search.train", "search.test"):
        with (DUREADER / f"{name}.sample.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                record = json.loads(line)
                if record["question_id"] == question_id:
                    docs = [
                        d["title"] + "\n" + "\n".join(d["paragraphs"]) for d in record["documents"]
                    ]
                    return record["question"], docs
    raise LookupError(question_id)


# ---------------------------------------------------------------- the paper's example
def test_english_verbatim_dropped(doc_filter):
    v = doc_filter.check(
        "Can pregnant women eat celery?",
        "Forum thread. Q: Can pregnant women eat celery? A: Yes, in moderation.",
    )
    assert not v.kept and v.rule == "contains" and v.score == 1.0
    assert v.matched == ("pregnant women eat celery",)
    assert "whole query 'pregnant women eat celery' occurs" in v.reason


def test_english_reordered_statement_dropped(doc_filter):
    """The paper: 'pregnant women can eat celery' is a trivial document."""
    v = doc_filter.check("Can pregnant women eat celery?", "Pregnant women can eat celery.")
    assert not v.kept and v.rule == "window"
    assert v.scores["window"] == 1.0 and v.scores["contains"] == 0.0
    assert v.matched == ("pregnant women can eat celery",)


def test_english_paraphrase_kept(doc_filter):
    v = doc_filter.check(
        "Can pregnant women eat celery?",
        "Celery is a healthy vegetable; doctors say expectant mothers may safely include "
        "it in their diet.",
    )
    assert v.kept and v.rule is None
    assert v.scores == {"contains": 0.0, "ngram": 0.0, "window": 0.25}
    assert v.reason.startswith("kept: query core not in document, 2-gram share 0.00 < 0.80")


def test_chinese_verbatim_dropped(doc_filter):
    v = doc_filter.check("孕妇能吃芹菜吗", "网友提问：孕妇能吃芹菜吗？回答：适量食用没有问题。")
    assert not v.kept and v.rule == "contains" and v.matched == ("孕妇能吃芹菜",)


def test_chinese_paraphrase_kept(doc_filter):
    v = doc_filter.check("孕妇能吃芹菜吗", "怀孕期间适量食用西芹对身体有益，医生建议少量多次。")
    assert v.kept and v.scores["contains"] == 0.0 and v.scores["ngram"] == 0.0


def test_chinese_statement_dropped(doc_filter):
    v = doc_filter.check("孕妇能吃芹菜吗", "孕妇可以吃芹菜，医生说适量就好。")
    assert not v.kept and v.rule == "window"  # 能 -> 可以 is a rewording, not a paraphrase


# ---------------------------------------------------------------- real DuReader documents
def test_real_documents_养猴子犯法吗(doc_filter):
    query, docs = _dureader_docs(181669)
    assert query == "养猴子犯法吗"
    verdicts = doc_filter.check_many(query, docs)
    # doc 1's title is the query itself; doc 2 is a news report that never says it
    assert not verdicts[1].kept and verdicts[1].rule == "contains"
    assert verdicts[2].kept, verdicts[2].reason
    assert "买只猴子当宠物" in docs[2]


def test_real_documents_孕妇能吃银耳吗(doc_filter):
    query, docs = _dureader_docs(181645)
    verdicts = doc_filter.check_many(query, docs)
    assert [v.kept for v in verdicts] == [False, False, False, False, True]
    assert [v.rule for v in verdicts] == ["contains", "contains", "contains", "window", None]


# ---------------------------------------------------------------- rules and parameters
def test_query_core():
    assert query_core("Can pregnant women eat celery?", "en") == (
        "pregnant",
        "women",
        "eat",
        "celery",
    )
    assert query_core("whether to sell", "en") == ("to", "sell")
    assert "".join(query_core("孕妇能不能吃芹菜呢", "zh")) == "孕妇能吃芹菜"
    assert "".join(query_core("鸟屎掉衣服上吉不吉利", "zh")) == "鸟屎掉衣服上吉利"
    assert "".join(query_core("是否需要签证", "zh")) == "需要签证"
    assert "".join(query_core("孕妇能吃芹菜吗", "zh", strip_question=False)) == "孕妇能吃芹菜吗"
    assert query_core("is", "en") == ("is",)  # never empty when the query is not


def test_rules_and_thresholds_are_parameters():
    query, doc = "Can pregnant women eat celery?", "Pregnant women can eat celery."
    only_contains = DocumentFilter(rules=["contains"])
    v = only_contains.check(query, doc)
    assert v.kept and v.scores == {"contains": 0.0}
    lax_ngram = DocumentFilter(rules=["ngram"], ngram_n=1, ngram_threshold=1.0)
    v = lax_ngram.check(query, doc)
    assert not v.kept and v.rule == "ngram" and v.score == 1.0
    assert v.matched == ("pregnant", "women", "eat", "celery")
    assert "1-gram share 1.00 >= 1.00 of the query's 4 n-grams" in v.reason
    strict_window = DocumentFilter(rules=["window"], window_factor=1.0)
    assert strict_window.check(query, doc).kept  # 4-word window cannot hold all 4 + "can"
    per_lang = DocumentFilter(ngram_n={"zh": 2})
    assert per_lang.ngram_n == {"en": 2, "zh": 2}


def test_verbatim_english_is_word_aligned(doc_filter):
    v = doc_filter.check("is art good", "The smart goods store")
    assert v.scores["contains"] == 0.0


def test_params_round_trip_and_validation():
    f = DocumentFilter(language="zh", rules=["contains", "window"], window_threshold=0.75)
    params = json.loads(json.dumps(f.params()))
    assert DocumentFilter.from_params(params).params() == f.params()
    with pytest.raises(ValueError, match="unknown document filter parameters"):
        DocumentFilter.from_params({"threshold": 0.5})
    with pytest.raises(ValueError, match="rules"):
        DocumentFilter(rules=["contains", "bm25"])
    with pytest.raises(ValueError, match="ngram_threshold"):
        DocumentFilter(ngram_threshold=0)
    with pytest.raises(ValueError, match="window_factor"):
        DocumentFilter(window_factor=0.5)
    with pytest.raises(ValueError, match="ngram_n"):
        DocumentFilter(ngram_n=0)


def test_verdict_is_json_ready(doc_filter):
    v = doc_filter.check("孕妇能吃芹菜吗", "孕妇能吃芹菜吗？")
    data = v.to_dict()
    assert json.loads(json.dumps(data, ensure_ascii=False)) == data
    assert data["kept"] is False and data["rule"] == "contains"


def test_prepared_query_reused(doc_filter):
    q = doc_filter.prepare("孕妇能吃芹菜吗")
    assert q.language == "zh" and q.core_text == "孕妇能吃芹菜" and q.window == 9
    assert doc_filter.check(q, "孕妇能吃芹菜") == doc_filter.check("孕妇能吃芹菜吗", "孕妇能吃芹菜")
