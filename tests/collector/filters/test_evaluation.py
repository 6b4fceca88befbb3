"""Precision / recall of the query filter against an admin's labelled sample."""

from __future__ import annotations

import json

import pytest

from collector.filters import QueryFilter, evaluate_filter, precision_recall_f1
from tests.collector.filters.labels import REAL_EN, REAL_ZH, intent_labels


def test_precision_recall_f1_arithmetic():
    assert precision_recall_f1(8, 2, 4) == pytest.approx(
        (0.8, 8 / 12, 2 * 0.8 * (2 / 3) / (0.8 + 2 / 3))
    )
    assert precision_recall_f1(0, 0, 5) == (None, 0.0, None)  # nothing predicted
    assert precision_recall_f1(0, 3, 0) == (0.0, None, None)  # nothing to find
    assert precision_recall_f1(0, 3, 5) == (0.0, 0.0, 0.0)
    assert precision_recall_f1(5, 0, 0) == (1.0, 1.0, 1.0)


def test_on_dureader_types_as_labels(query_filter, zh_records):
    """Label = DuReader typed the query YES_NO; the filter misses only the manga title."""
    labelled = [(r["question"], r["question_type"] == "YES_NO") for r in zh_records]
    ev = evaluate_filter(query_filter, labelled)
    assert (ev.tp, ev.fp, ev.fn, ev.tn) == (17, 0, 1, 183)
    assert ev.total == 201
    assert ev.precision == 1.0
    assert ev.recall == pytest.approx(17 / 18)
    assert ev.f1 == pytest.approx(2 * 17 / 18 / (1 + 17 / 18))
    assert ev.accuracy == pytest.approx(200 / 201)
    assert ev.false_negatives == (("勇者约吗漫画吹妖漫画", ev.false_negatives[0][1]),)
    assert "not a question" in ev.false_negatives[0][1]
    data = ev.to_dict()
    assert json.loads(json.dumps(data, ensure_ascii=False)) == data


def test_hand_labels_whole_filter(query_filter):
    labelled = [(q, expected == "accept") for q, expected, _ in REAL_EN + REAL_ZH]
    ev = evaluate_filter(query_filter, labelled)
    assert ev.fp == 0 and ev.fn == 0 and ev.precision == ev.recall == ev.f1 == 1.0


def test_a_single_step(query_filter):
    """step="intent": is it a question at all, judged on the intent step alone."""
    ev = evaluate_filter(query_filter, intent_labels(REAL_EN + REAL_ZH), step="intent")
    assert ev.step == "intent" and ev.fp == 0 and ev.fn == 0
    # a deliberately wrong label shows up with the step's reason
    ev = evaluate_filter(query_filter, [("海信电视怎么样", False)], step="intent")
    assert ev.fp == 1 and ev.precision == 0.0 and ev.recall is None
    assert ev.false_positives == (("海信电视怎么样", "question: question word '怎么'"),)


def test_errors_are_capped_and_steps_checked():
    f = QueryFilter(language="en")
    labelled = [(f"who is person {i}", True) for i in range(30)]
    ev = evaluate_filter(f, labelled, examples=5)
    assert ev.fn == 30 and len(ev.false_negatives) == 5
    with pytest.raises(ValueError, match="step"):
        evaluate_filter(QueryFilter(steps=["intent"]), labelled, step="yesno")
