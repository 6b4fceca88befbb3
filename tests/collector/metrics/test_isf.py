"""The NewsQA isf sentence baseline (section 6.3)."""

from __future__ import annotations

import math

import pytest

from collector.metrics.errors import MetricsInputError
from collector.metrics.isf import (
    isf_accuracy,
    isf_answer_sentence,
    isf_scores,
    isf_select,
    split_sentences,
)

ARTICLE = ("The storm hit the coast on Monday. Thousands of homes lost power. "
           "Officials said the storm was the worst in a decade. Power returned on Friday.")


def test_split_sentences_spans():
    spans = split_sentences(ARTICLE)
    assert [ARTICLE[s:e] for s, e in spans] == [
        "The storm hit the coast on Monday.", "Thousands of homes lost power.",
        "Officials said the storm was the worst in a decade.", "Power returned on Friday."]
    assert split_sentences("  ") == []


def test_isf_scores_follow_the_definition():
    sentences = ["a b c", "a b", "a d"]
    scores = isf_scores(sentences, "b d e")
    # isf(w) = log(N / n_w): b in 2 of 3 sentences, d in 1 of 3; a everywhere is worth 0
    assert scores == pytest.approx([math.log(3 / 2), math.log(3 / 2), math.log(3)])
    assert isf_select(sentences, "b d e") == 2
    assert isf_select(sentences, "b") == 0  # ties go to the first sentence


def test_answer_sentence_and_accuracy():
    pred = isf_answer_sentence(ARTICLE, "When was power returned?")
    assert pred.sentence == "Power returned on Friday."
    start = ARTICLE.index("Friday")
    monday = ARTICLE.index("Monday")
    assert isf_accuracy([(ARTICLE, "When was power returned?", start),
                         (ARTICLE, "When was power returned?", monday)]) == 0.5
    with pytest.raises(MetricsInputError):
        isf_accuracy([])
