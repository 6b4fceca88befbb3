"""Batch inspection arithmetic: sampling, strict/loose errors, the 0.95 threshold."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from collector.filters import (
    Violation,
    inspect_batch,
    item_error,
    round_seed,
    sample_batch,
    sample_size,
)

STRICT = Violation.ANSWER_INCORRECT
STRICT2 = Violation.QUESTION_INVALID
LOOSE = Violation.EVIDENCE_IRRELEVANT
LOOSE2 = Violation.QUESTION_TOO_EASY


# ---------------------------------------------------------------- the threshold edge
def test_exactly_095_fails():
    result = inspect_batch(range(20), {0: [STRICT]})  # 1 error in 20 items
    assert result.accuracy_exact == Fraction(19, 20)
    assert result.accuracy == 0.95 and result.errors == 1.0
    assert not result.passed
    assert result.reason.startswith("accuracy 0.9500 <= 0.95")


def test_exactly_095_from_loose_errors_fails():
    result = inspect_batch(range(20), {0: [LOOSE], 1: [LOOSE2]})  # 0.5 + 0.5 in 20
    assert result.accuracy_exact == Fraction(19, 20) and not result.passed


def test_above_095_passes():
    result = inspect_batch(range(40), {0: [LOOSE], 1: [STRICT]})  # 1.5 errors in 40
    assert result.accuracy_exact == Fraction(77, 80)  # 0.9625
    assert result.passed and "passed" in result.reason
    assert inspect_batch(range(21), {0: [STRICT]}).passed  # 20/21 = 0.952...
    assert inspect_batch(range(5), {}).passed  # no violation: accuracy 1.0


def test_below_095_fails():
    result = inspect_batch(range(20), {0: [STRICT], 1: [LOOSE]})
    assert result.accuracy == pytest.approx(0.925) and not result.passed


def test_threshold_is_a_parameter():
    assert inspect_batch(range(10), {0: [STRICT]}, threshold=0.85).passed  # 0.9 > 0.85
    assert not inspect_batch(range(10), {0: [STRICT]}, threshold=0.9).passed  # 0.9 == 0.9
    assert inspect_batch(range(10), {i: [STRICT] for i in range(10)}, threshold=0).passed is False


# ---------------------------------------------------------------- strict / loose
def test_strict_and_loose_weights():
    assert item_error([]) == 0
    assert item_error([STRICT]) == 1
    assert item_error([STRICT2]) == 1
    assert item_error([LOOSE]) == Fraction(1, 2)
    assert item_error([LOOSE2]) == Fraction(1, 2)
    assert item_error(["evidence_irrelevant"]) == Fraction(1, 2)  # stored string values


def test_several_violations_on_one_item_count_at_most_one():
    assert item_error([STRICT, LOOSE]) == 1
    assert item_error([STRICT, STRICT2]) == 1
    assert item_error([LOOSE, LOOSE2]) == 1
    assert item_error([LOOSE, LOOSE]) == Fraction(1, 2)  # the same rule twice counts once
    result = inspect_batch(range(4), {0: [STRICT, STRICT2, LOOSE, LOOSE2], 1: [LOOSE]})
    assert result.errors == 1.5 and result.item_errors == {0: 1.0, 1: 0.5, 2: 0.0, 3: 0.0}
    assert result.violation_counts == {
        "answer_incorrect": 1,
        "question_invalid": 1,
        "evidence_irrelevant": 2,
        "question_too_easy": 1,
    }
    assert (result.strict_items, result.loose_only_items) == (1, 1)


def test_custom_weights():
    assert item_error([LOOSE], loose_weight=0.25) == Fraction(1, 4)
    result = inspect_batch(range(8), {0: [LOOSE], 1: [LOOSE]}, loose_weight=0.25)
    assert result.errors == 0.5 and result.accuracy == 0.9375


def test_violation_metadata():
    assert STRICT.strict and STRICT2.strict and not LOOSE.strict and not LOOSE2.strict
    assert "irrelevant" in LOOSE.label


def test_bad_marks_refused():
    with pytest.raises(ValueError, match="not sampled"):
        inspect_batch([1, 2, 3], {4: [STRICT]})
    with pytest.raises(ValueError, match="unknown violation"):
        inspect_batch([1, 2, 3], {1: ["typo"]})
    with pytest.raises(ValueError, match="at least one"):
        inspect_batch([], {})
    with pytest.raises(ValueError, match="unique"):
        inspect_batch([1, 1], {})
    with pytest.raises(ValueError, match="threshold"):
        inspect_batch([1], {}, threshold=1.5)


# ---------------------------------------------------------------- sampling
def test_sampling_is_reproducible():
    ids = list(range(1000, 6000))  # a batch of 5,000 items, as in the paper
    a = sample_batch(ids, fraction=0.02, seed=42)
    b = sample_batch(list(reversed(ids)), fraction=0.02, seed=42)  # order does not matter
    assert a == b and len(a) == 100
    assert a.item_ids == tuple(sorted(a.item_ids)) and set(a.item_ids) <= set(ids)
    assert sample_batch(ids, fraction=0.02, seed=43).item_ids != a.item_ids
    # a fixed seed gives a fixed sample on every machine and Python run
    assert sample_batch(range(10), fraction=0.3, seed=7).item_ids == (2, 5, 6)


def test_sample_records_fraction_and_seed():
    s = sample_batch(["b", "a", "c"], fraction=0.5, seed=1)
    assert s.to_dict() == {
        "item_ids": list(s.item_ids),
        "batch_size": 3,
        "fraction": 0.5,
        "seed": 1,
        "minimum": 1,
    }
    assert json.loads(json.dumps(s.to_dict())) == s.to_dict()
    drawn = sample_batch(range(50), fraction=0.1)  # no seed given: one is drawn and recorded
    assert sample_batch(range(50), fraction=0.1, seed=drawn.seed) == drawn


def test_sample_size_at_least_one():
    assert sample_size(10, 0.01) == 1
    assert sample_size(5000, 0.01) == 50
    assert sample_size(101, 0.1) == 11  # ceil
    assert sample_size(3, 1.0) == 3
    assert sample_size(3, 0.1, minimum=5) == 3  # never more than the batch
    assert len(sample_batch([7], fraction=0.01, seed=0)) == 1
    with pytest.raises(ValueError, match="fraction"):
        sample_size(10, 0)
    with pytest.raises(ValueError, match="fraction"):
        sample_size(10, 1.5)
    with pytest.raises(ValueError, match="empty"):
        sample_batch([], fraction=0.5, seed=1)
    with pytest.raises(ValueError, match="unique"):
        sample_batch([1, 1, 2], fraction=0.5, seed=1)
    with pytest.raises(TypeError, match="int or str"):
        sample_batch([1.5], fraction=0.5, seed=1)


def test_inspect_a_sample_object():
    sample = sample_batch(range(100), fraction=0.2, seed=3)
    marks = {sample.item_ids[0]: [LOOSE]}
    result = inspect_batch(sample, marks)
    assert result.sampled == 20 and result.accuracy == 0.975 and result.passed


def test_round_seeds():
    assert round_seed(99, 1) == 99
    seeds = {round_seed(99, r) for r in range(1, 6)}
    assert len(seeds) == 5 and all(0 <= s < 2**63 for s in seeds)
    assert round_seed(99, 3) == round_seed(99, 3)
    a = sample_batch(range(500), fraction=0.1, seed=round_seed(5, 1))
    b = sample_batch(range(500), fraction=0.1, seed=round_seed(5, 2))
    assert a.item_ids != b.item_ids  # a relabelled batch gets a fresh sample
    with pytest.raises(ValueError, match="round_number"):
        round_seed(1, 0)
