"""The optional trained intent classifier: train on labelled queries, save, load, use."""

from __future__ import annotations

import json

import pytest

from collector.filters import IntentClassifier, QueryFilter, parse_label
from collector.filters.classifier import extract_features
from tests.collector.filters.labels import (
    CONSTRUCTED_EN,
    CONSTRUCTED_ZH,
    REAL_EN,
    REAL_ZH,
    intent_labels,
)


@pytest.fixture(scope="module")
def en_model() -> IntentClassifier:
    return IntentClassifier.train(intent_labels(REAL_EN + CONSTRUCTED_EN), language="en")


@pytest.fixture(scope="module")
def zh_model() -> IntentClassifier:
    return IntentClassifier.train(intent_labels(REAL_ZH + CONSTRUCTED_ZH), language="zh")


def test_fits_the_labelled_sample(en_model, zh_model):
    for model, labels in (
        (en_model, REAL_EN + CONSTRUCTED_EN),
        (zh_model, REAL_ZH + CONSTRUCTED_ZH),
    ):
        wrong = [q for q, is_q in intent_labels(labels) if model.predict(q) != is_q]
        assert wrong == []
        assert model.trained["converged"]
        assert model.trained["samples"] == len(labels)


def test_generalises_to_similar_unseen_queries(en_model, zh_model):
    """Unseen queries built like the training ones (about 45 labels per language)."""
    assert en_model.probability("who plays the lead in the crown") > 0.5
    assert en_model.probability("what is the capital of peru") > 0.5
    assert en_model.probability("cheap flights to rome") < 0.5
    assert en_model.probability("types of bread in france") < 0.5
    assert zh_model.probability("手机可以带上飞机吗") > 0.5
    assert zh_model.probability("牛奶能不能空腹喝") > 0.5
    assert zh_model.probability("北京二手房交易流程") < 0.5
    assert zh_model.probability("鲁迅的诗") < 0.5


def test_json_round_trip_is_exact(tmp_path, en_model, zh_model):
    for model in (en_model, zh_model):
        path = tmp_path / f"{model.language}.json"
        model.save(path)
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["format"] == "crowdqa.filters.intent-logreg" and data["version"] == 1
        again = IntentClassifier.load(path)
        for q, _, _ in REAL_EN + REAL_ZH:
            assert again.probability(q) == model.probability(q)
        assert again.to_dict() == model.to_dict()


def test_used_by_the_query_filter(en_model, zh_model):
    models = {"en": en_model, "zh": zh_model}
    f = QueryFilter(intent_mode="model", intent_models=models)
    v = f.check("is there a name for the at symbol")
    assert v.accepted
    intent = v.step("intent")
    assert intent.reason.startswith("question: classifier p=") and intent.score > 0.5
    rejected = f.check("成都二手房交易流程")
    assert rejected.failed_step == "intent" and "classifier p=" in rejected.reason

    # through JSON stage parameters
    again = QueryFilter.from_params(json.loads(json.dumps(f.params())))
    assert again.check("成都二手房交易流程") == rejected


def test_combined_modes(en_model):
    either = QueryFilter(
        language="en", intent_mode="rules_or_model", intent_models={"en": en_model}
    )
    both = QueryFilter(language="en", intent_mode="rules_and_model", intent_models={"en": en_model})
    # the rules reject a cloze statement; a model that thinks otherwise would flip "either"
    query = "swan lake the sleeping beauty and the nutcracker are three famous ballets by"
    p = en_model.probability(query)
    assert either.check(query).step("intent").passed == (p >= 0.5)
    assert not both.check(query).step("intent").passed
    reason = both.check("does it rain in lima").step("intent").reason
    assert "auxiliary-verb inversion" in reason and "classifier p=" in reason


def test_features():
    feats = extract_features("Is it?", word_ngrams=(1, 2), char_ngrams=None)
    assert {"w:<s> is", "w:is it", "w:it </s>", "w:is", "p:?"} <= feats
    zh = extract_features("能吃吗", word_ngrams=None, char_ngrams=(1, 3))
    assert {"c:^能", "c:吗$", "c:能吃吗", "c:^"} <= zh


def test_training_errors():
    with pytest.raises(ValueError, match="both classes"):
        IntentClassifier.train([("who is it", True), ("what is it", 1)], language="en")
    with pytest.raises(ValueError, match="unrecognised label"):
        IntentClassifier.train([("who is it", "maybe")], language="en")
    with pytest.raises(ValueError, match="not a crowdqa.filters.intent-logreg"):
        IntentClassifier.from_dict({"format": "other"})
    with pytest.raises(ValueError, match="model"):
        QueryFilter(language="en", intent_mode="model", intent_models={"en": _tiny("zh")})


def _tiny(language: str) -> IntentClassifier:
    return IntentClassifier.train([("能吃吗", True), ("流程", False)], language=language)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (0, False),
        ("yes", True),
        ("Not question", False),
        ("1", True),
        ("reject", False),
    ],
)
def test_parse_label(value, expected):
    assert parse_label(value) is expected
