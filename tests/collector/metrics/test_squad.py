"""SQuAD v1.1 / v2.0: normalisation, per-answer scores, API against the official vectors."""

from __future__ import annotations

import json

import pytest

from collector.metrics.errors import MetricsInputError
from collector.metrics.squad import (
    exact_match,
    f1_v1,
    f1_v2,
    squad_v1_score,
    squad_v2_score,
)
from collector.metrics.tokenize import squad_normalize
from tests.collector.metrics.vectors import agrees, compared_keys, run_id, runs


def _load(folder, name):
    return json.loads((folder / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("item", runs("squad-v1"), ids=run_id)
def test_v1_api_matches_official(item):
    folder, exp, run = item
    got = squad_v1_score(_load(folder, "data.json"), _load(folder, "pred.json"))
    for key in compared_keys(exp, run):
        assert agrees(exp, run["expected"][key], got[key]), key


@pytest.mark.parametrize("item", runs("squad-v2"), ids=run_id)
def test_v2_api_matches_official(item):
    folder, exp, run = item
    args = run["cli_args"]
    na_probs = _load(folder, args[args.index("-n") + 1]) if "-n" in args else None
    thresh = float(args[args.index("-t") + 1]) if "-t" in args else 1.0
    got = squad_v2_score(_load(folder, "data.json"), _load(folder, "pred.json"),
                         na_probs=na_probs, na_prob_thresh=thresh)
    assert list(got) == list(run["expected"])  # same keys, same order as printed
    for key in compared_keys(exp, run):
        assert agrees(exp, run["expected"][key], got[key]), key


def test_normalisation():
    assert squad_normalize("The  Cat, sat!") == "cat sat"
    assert squad_normalize("an apple a day") == "apple day"
    assert squad_normalize("theatre") == "theatre"  # only whole words are articles
    assert squad_normalize("«Ça»") == "«ça»"  # only ASCII punctuation is removed


def test_per_answer_scores():
    assert exact_match("The cat.", "cat") == 1
    assert f1_v1("the cat sat", "cat sat down") == pytest.approx(0.8)
    assert f1_v1("", "") == 0  # v1.1: nothing shared scores 0
    assert f1_v2("", "") == 1  # v2.0: both empty agree
    assert f1_v2("a", "") == 1  # "a" normalises to nothing
    assert f1_v2("cat", "") == 0


DATA = {"version": "v2.0", "data": [{"title": "t", "paragraphs": [{"context": "c", "qas": [
    {"id": "a", "answers": [{"text": "Paris", "answer_start": 0}]},
    {"id": "b", "answers": []},
    {"id": "c", "answers": [{"text": "the", "answer_start": 0}]},
]}]}]}


def test_v2_no_answer_handling_and_threshold():
    preds = {"a": "Paris", "b": "", "c": ""}
    out = squad_v2_score(DATA, preds)
    # "c" has an answer that normalises to nothing: answerable, but only "" is right.
    assert out["HasAns_total"] == 2 and out["NoAns_total"] == 1 and out["exact"] == 100.0
    probs = {"a": 0.9, "b": 0.8, "c": 0.1}
    out = squad_v2_score(DATA, {"a": "Paris", "b": "London", "c": ""}, na_probs=probs,
                         na_prob_thresh=0.5)
    assert out["exact"] == 100 * 2 / 3  # "a" above the threshold counts as no answer
    # sweep in probability order c (0.1, +1), b (0.8, wrong "London": -1), a (0.9, +1)
    assert out["best_exact"] == 100 * 2 / 3 and out["best_exact_thresh"] == 0.1


def test_v2_refuses_missing_prediction_and_probability():
    with pytest.raises(MetricsInputError, match="no prediction"):
        squad_v2_score(DATA, {"a": "Paris", "b": ""})
    with pytest.raises(MetricsInputError, match="probability"):
        squad_v2_score(DATA, {"a": "x", "b": "", "c": ""}, na_probs={"a": 0.1})


def test_strict_mode_and_bad_structures():
    preds = {"a": "Paris", "b": "", "c": "", "zz": "x"}
    with pytest.raises(MetricsInputError, match="unknown question ids"):
        squad_v1_score(DATA, preds, strict=True)
    with pytest.raises(MetricsInputError, match="paragraphs"):
        squad_v1_score({"data": [{"title": "x"}]}, {})
    with pytest.raises(MetricsInputError, match="no gold answer"):
        squad_v1_score(DATA, {"b": "x"})


def _official_normalize(s):
    """``normalize_answer`` of evaluate-v1.1.py / evaluate-v2.0.py, verbatim in effect."""
    import re
    import string

    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def _sample_answer_texts():
    from tests.collector.exporters.samples import SQUAD_V1, SQUAD_V2

    groups = []
    for path in (SQUAD_V1, SQUAD_V2):
        for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
            for paragraph in article["paragraphs"]:
                for qa in paragraph["qas"]:
                    texts = [a["text"] for a in qa["answers"] + qa.get("plausible_answers", [])]
                    groups.append(texts + [qa["question"]])
    return groups


def test_tokens_once_score_as_the_strings_on_the_sample_answers():
    """squad_tokens + exact_match_tokens / f1_v1_tokens (each text normalised once, as the
    release datasheet scores human performance) give exactly exact_match / f1_v1, over
    every pair of answers (and questions, for unequal texts) of the SQuAD dev samples."""
    from collector.metrics.squad import exact_match_tokens, f1_v1_tokens, squad_tokens

    pairs = 0
    for texts in _sample_answer_texts():
        for a in texts:
            assert squad_normalize(a) == _official_normalize(a)
            for b in texts:
                ta, tb = squad_tokens(a), squad_tokens(b)
                assert exact_match_tokens(ta, tb) == exact_match(a, b)
                assert f1_v1_tokens(ta, tb) == f1_v1(a, b)
                pairs += 1
    assert pairs > 1000
    # Equal texts that normalise to nothing share no token: F1 0, as in the script.
    assert f1_v1_tokens(squad_tokens("The."), squad_tokens("The.")) == f1_v1("The.", "The.") == 0
    assert exact_match_tokens(squad_tokens("a"), squad_tokens("the")) == 1
