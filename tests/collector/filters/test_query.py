"""ReCO query filter on the real query samples, with hand-labelled expectations."""

from __future__ import annotations

import json

import pytest

from collector.filters import (
    DEFAULT_YESNO_FEATURES,
    STEPS,
    Blocklist,
    IntentRules,
    QueryFilter,
    YesNoClassifier,
    YesNoFeature,
)
from collector.filters.text import detect_language, normalize
from tests.collector.filters.labels import (
    CONSTRUCTED_EN,
    CONSTRUCTED_ZH,
    REAL_EN,
    REAL_INTENT_RULES,
    REAL_ZH,
)


def _check_label(query_filter: QueryFilter, query: str, expected: str, fragment: str) -> None:
    verdict = query_filter.check(query)
    outcome = "accept" if verdict.accepted else verdict.failed_step
    assert outcome == expected, f"{query!r}: {outcome} ({verdict.reason})"
    assert fragment in verdict.reason, f"{query!r}: {fragment!r} not in {verdict.reason!r}"
    assert verdict.steps[-1].reason == verdict.reason


# ---------------------------------------------------------------- real samples
def test_labelled_queries_are_real(en_records, zh_records):
    en = {r["question"] for r in en_records}
    zh = {r["question"] for r in zh_records}
    assert len(REAL_EN) >= 30 and len(REAL_ZH) >= 30
    assert [q for q, _, _ in REAL_EN if q not in en] == []
    assert [q for q, _, _ in REAL_ZH if q not in zh] == []


@pytest.mark.parametrize(("query", "expected", "fragment"), REAL_EN)
def test_real_english_query(query_filter, query, expected, fragment):
    _check_label(query_filter, query, expected, fragment)


@pytest.mark.parametrize(("query", "expected", "fragment"), REAL_ZH)
def test_real_chinese_query(query_filter, query, expected, fragment):
    _check_label(query_filter, query, expected, fragment)


@pytest.mark.parametrize(("query", "expected", "fragment"), CONSTRUCTED_EN + CONSTRUCTED_ZH)
def test_constructed_query(query_filter, query, expected, fragment):
    _check_label(query_filter, query, expected, fragment)


@pytest.mark.parametrize(("query", "rule"), REAL_INTENT_RULES)
def test_intent_reason_names_the_rule(query_filter, query, rule):
    intent = query_filter.check(query).step("intent")
    assert intent is not None and intent.passed
    assert rule in intent.reason


def test_whole_english_sample(query_filter, en_records):
    """NQ-open holds factoid questions: only its one yes/no question gets through."""
    verdicts = list(query_filter.check_many(r["question"] for r in en_records))
    assert len(verdicts) == 200
    assert [v.text for v in verdicts if v.accepted] == ["is there a name for the at symbol"]
    by_step = {s: sum(v.failed_step == s for v in verdicts) for s in STEPS}
    assert by_step == {"intent": 17, "blocklist": 0, "yesno": 182}
    assert all(v.language == "en" and v.reason for v in verdicts)


def test_whole_chinese_sample_against_dureader_types(query_filter, zh_records):
    """DuReader's own question types as a second, independent label set.

    Every query DuReader types YES_NO is accepted except the manga title; nothing of
    another type gets through.
    """
    accepted = {r["question"] for r in zh_records if query_filter.check(r["question"]).accepted}
    yes_no = {r["question"] for r in zh_records if r["question_type"] == "YES_NO"}
    assert len(yes_no) == 18
    assert accepted == yes_no - {"勇者约吗漫画吹妖漫画"}


def test_every_verdict_is_json_ready(query_filter, zh_records):
    for r in zh_records[:50]:
        data = query_filter.check(r["question"]).to_dict()
        assert json.loads(json.dumps(data, ensure_ascii=False)) == data
        assert data["steps"][-1]["reason"] == data["reason"]


# ---------------------------------------------------------------- steps alone
def test_intent_rules_english():
    rules = IntentRules("en")
    assert rules.find("who sang i ran all the way home") == ("question word first", "who")
    assert rules.find("does it rain in lima") == ("auxiliary-verb inversion", "does")
    assert rules.find("in which year did rome fall") == ("preposition + question word", "in which")
    assert rules.find("weather in rome?") == ("question mark", "?")
    assert rules.find("whether to file taxes jointly") == ("embedded question", "whether")
    assert rules.find("is") is None  # a lone auxiliary is not an inversion
    assert rules.find("the man who sold the world") is None  # relative pronoun
    assert not rules.check("cheap flights to paris").passed


def test_intent_rules_chinese():
    rules = IntentRules("zh")
    assert rules.find("孕妇能吃芹菜吗") == ("final question particle", "吗")
    assert rules.find("能吃么") == ("final question particle", "么")
    assert rules.find("这是为什么") == ("question word", "为什么")
    assert rules.find("能不能退款") == ("yes/no form", "能不能")
    assert rules.find("是否需要签证") == ("yes/no form", "是否")
    assert rules.find(normalize("天气？")) == ("question mark", "?")  # full-width folded
    assert rules.find("几乎没有人知道") is None  # 几乎 is not 几
    assert rules.find("勇者约吗漫画") is None  # 吗 inside a title, not clause-final


def test_yesno_classifier_scores_and_threshold():
    zh = YesNoClassifier("zh")
    assert zh.score("孕妇能不能吃芹菜") == (1.0, ("a_not_a:能不能",))
    assert zh.score("有什么好处吗") == (0.0, ("ma_particle:吗", "wh_word:什么"))
    assert not zh.check("有什么好处吗").passed
    en = YesNoClassifier("en")
    score, fired = en.score("is there any way to get a refund")
    assert score == 2.0 and fired == ("aux_inversion:is", "is_there_any:is there any")
    lenient = YesNoClassifier("en", threshold=-1.0)
    assert lenient.check("who is the king of spain").passed


def test_yesno_features_are_parameters():
    features = [
        {"name": "please_tell", "pattern": r"^please tell me if\b", "weight": 1.0},
        {"name": "wh", "pattern": r"^(?:who|what)\b", "weight": -1.0},
    ]
    custom = QueryFilter(language="en", yesno_features={"en": features}, yesno_threshold=1.0)
    v = custom.check("please tell me if the shop is open?")
    assert v.accepted and v.score == 1.0 and v.matched == ("please_tell:please tell me if",)
    # the defaults no longer apply: an inversion alone scores 0 now
    assert custom.check("is the shop open").failed_step == "yesno"
    assert custom.params()["yesno_features"]["en"] == features
    assert custom.yesno_classifier("en").threshold == 1.0


def test_bad_yesno_features_refused():
    with pytest.raises(ValueError, match="bad pattern"):
        YesNoClassifier("en", [YesNoFeature("broken", "(", 1.0)])
    with pytest.raises(ValueError, match="unique"):
        YesNoClassifier("en", [YesNoFeature("a", "x", 1.0), YesNoFeature("a", "y", 1.0)])
    with pytest.raises(ValueError, match="weight must be a number"):
        YesNoFeature.from_dict({"name": "a", "pattern": "x", "weight": "1"})
    with pytest.raises(ValueError, match="needs name, pattern and weight"):
        YesNoFeature.from_dict({"name": "a"})


def test_default_features_cover_the_papers_examples():
    names = {lang: {f.name for f in feats} for lang, feats in DEFAULT_YESNO_FEATURES.items()}
    assert {"could_i", "whether", "is_there_any", "aux_inversion"} <= names["en"]
    assert {"ma_particle", "a_not_a", "shifou"} <= names["zh"]
    zh = YesNoClassifier("zh")
    for query in ["能不能", "可不可以", "有没有", "会不会", "是不是", "好不好"]:
        assert zh.check(f"这个{query}用").passed, query


# ---------------------------------------------------------------- the filter object
def test_steps_short_circuit_unless_all_steps(query_filter):
    v = query_filter.check("成都二手房交易流程")
    assert [s.step for s in v.steps] == ["intent"] and v.score is None
    full = query_filter.check("成都二手房交易流程", all_steps=True)
    assert [s.step for s in full.steps] == ["intent", "blocklist", "yesno"]
    assert full.failed_step == "intent" and not full.accepted
    assert full.score == full.step("yesno").score


def test_first_failing_step_decides_with_all_steps():
    f = QueryFilter(all_steps=True)
    v = f.check("怎么下载岛国片")
    assert v.failed_step == "blocklist" and v.matched == ("岛国片",)
    assert not v.step("yesno").passed  # also not yes/no, recorded but not decisive


def test_step_subset():
    only_yesno = QueryFilter(language="zh", steps=["yesno"])
    v = only_yesno.check("2017还怎么下载岛国片")
    assert v.failed_step == "yesno" and [s.step for s in v.steps] == ["yesno"]
    no_blocklist = QueryFilter(steps=["yesno", "intent"])
    assert no_blocklist.steps == ("intent", "yesno")  # always the paper's order
    assert no_blocklist.check("吸食大麻犯法吗").accepted


def test_language_auto_and_fixed():
    auto = QueryFilter()
    assert auto.check("三星s8值得买吗").language == "zh"
    assert auto.check("is it safe").language == "en"
    zh_only = QueryFilter(language="zh")
    assert zh_only.check("is it safe").language == "zh"  # fixed: no detection
    with pytest.raises(ValueError, match="serves"):
        zh_only.blocklist("en")
    assert detect_language("ＡＢＣ") == "en" and detect_language("s8手机") == "zh"


def test_empty_and_whitespace_queries(query_filter):
    for text in ["", "   ", "\u3000"]:
        v = query_filter.check(text)
        assert not v.accepted and v.failed_step == "intent" and v.reason == "empty query"


def test_custom_blocklist_replaces_default():
    f = QueryFilter(language="en", blocklists={"en": ["celery"]})
    assert f.check("can i eat celery").failed_step == "blocklist"
    assert f.check("is cocaine addictive").accepted  # the default list is not used
    assert f.blocklist("en").terms == ("celery",)
    with pytest.raises(ValueError, match="is a 'zh' list"):
        QueryFilter(language="en", blocklists={"en": Blocklist("zh", ["色情"])})


@pytest.mark.parametrize(("params", "message"), [
    ({"blocklists": {"en": "sex"}}, r"blocklists\['en'\] must be a list of terms; got 'sex'"),
    ({"blocklists": {"en": ["sex", 3]}}, "must be a list of terms"),
    ({"blocklists": ["sex"]}, "blocklists must map a language"),
    ({"yesno_features": "when"}, "yesno_features must map a language"),
    ({"intent_models": []}, "intent_models must map a language"),
    ({"yesno_threshold": -5}, "yesno_threshold must be a number above 0"),
    ({"yesno_threshold": 0}, "above 0"),
    ({"yesno_threshold": float("nan")}, "above 0"),
    ({"yesno_threshold": float("inf")}, "above 0"),
])
def test_parameters_of_the_wrong_shape_are_refused_not_reinterpreted(params, message):
    """A string of terms would become a list of its characters (and replace the shipped
    list); a threshold at or below 0 makes every query yes/no."""
    with pytest.raises(ValueError, match=message):
        QueryFilter.from_params(params)


def test_params_round_trip_through_json():
    f = QueryFilter(language="zh", yesno_threshold=0.8, all_steps=True)
    params = json.loads(json.dumps(f.params(), ensure_ascii=False))
    again = QueryFilter.from_params(params)
    assert again.params() == f.params()
    for q in ["孕妇能吃银耳吗", "怎么约炮", "成都二手房交易流程"]:
        assert again.check(q) == f.check(q)


def test_bad_parameters_refused():
    with pytest.raises(ValueError, match="unknown query filter parameters"):
        QueryFilter.from_params({"langauge": "en"})
    with pytest.raises(ValueError, match="language"):
        QueryFilter(language="fr")
    with pytest.raises(ValueError, match="steps"):
        QueryFilter(steps=["intent", "spam"])
    with pytest.raises(ValueError, match="steps"):
        QueryFilter(steps=[])
    with pytest.raises(ValueError, match="intent_mode"):
        QueryFilter(intent_mode="magic")
    with pytest.raises(ValueError, match="needs intent_models"):
        QueryFilter(language="en", intent_mode="model")


def test_check_many_streams(query_filter):
    def endless():
        while True:
            yield "孕妇能吃银耳吗"
            yield "who sang i ran all the way home"

    stream = query_filter.check_many(endless())
    first = [next(stream) for _ in range(4)]
    assert [v.accepted for v in first] == [True, False, True, False]
