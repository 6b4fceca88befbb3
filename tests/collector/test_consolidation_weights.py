"""Consensus weighted by the answerers' competence (``agreement(..., weights=...)``)."""

from __future__ import annotations

import math

import pytest

from collector.consolidation import Answer, agreement

TEXT = "The council voted on Tuesday to build a library in March near the harbor."


def span(phrase: str) -> Answer:
    start = TEXT.index(phrase)
    return Answer(spans=((start, start + len(phrase)),))


TUESDAY, MARCH, HARBOR = span("on Tuesday"), span("in March"), span("near the harbor")
# Two agreeing groups of two: the paper's rule takes the earlier one (Tuesday).
TWO_GROUPS = [TUESDAY, TUESDAY, MARCH, MARCH]


def test_without_weights_the_paper_picks_the_earliest_of_tied_groups():
    result = agreement(TEXT, TWO_GROUPS)
    assert (result.agreed, result.consensus, result.support) == (True, TUESDAY, 2)
    assert result.weighted_support is None


def test_weights_flip_the_consensus_between_two_agreeing_groups():
    result = agreement(TEXT, TWO_GROUPS, weights=[0.2, 0.3, 0.9, 0.8])
    assert (result.agreed, result.consensus, result.support) == (True, MARCH, 2)
    assert result.weighted_support == pytest.approx(1.7)
    assert result.unique_answers == [TUESDAY, MARCH]


def test_equal_weights_and_near_ties_keep_the_papers_choice():
    assert agreement(TEXT, TWO_GROUPS, weights=[1, 1, 1, 1]).consensus == TUESDAY
    # 0.1 + 0.2 > 0.3 in floating point: still a tie.
    assert 0.1 + 0.2 > 0.3
    assert agreement(TEXT, TWO_GROUPS, weights=[0.3, 0.0, 0.1, 0.2]).consensus == TUESDAY


def test_a_heavy_single_answer_does_not_beat_an_agreeing_group():
    result = agreement(TEXT, [TUESDAY, TUESDAY, MARCH], weights=[0.1, 0.1, 5.0])
    assert (result.agreed, result.consensus, result.support) == (True, TUESDAY, 2)
    assert result.weighted_support == pytest.approx(0.2)


def test_the_agreement_test_stays_the_papers():
    # No two answerers agree: weights name the heaviest answer but agree nothing.
    result = agreement(TEXT, [TUESDAY, MARCH, HARBOR], weights=[0.1, 0.9, 0.5])
    assert (result.agreed, result.consensus, result.support) == (False, MARCH, 1)
    assert agreement(TEXT, [TUESDAY, MARCH, HARBOR]).consensus == TUESDAY
    # Weighting never turns a lone answer into an agreement, even with min_agree = 3.
    three = agreement(TEXT, TWO_GROUPS, min_agree=3, weights=[0.0, 0.0, 1.0, 1.0])
    assert (three.agreed, three.consensus) == (False, MARCH)


def test_flags_are_weighted_like_spans():
    none = Answer(no_answer=True)
    result = agreement(TEXT, [none, none, MARCH, MARCH], weights=[0.4, 0.4, 0.5, 0.5])
    assert result.consensus == MARCH
    assert agreement(TEXT, [none, none, MARCH, MARCH]).consensus == none


def test_no_answers_with_weights():
    result = agreement(TEXT, [], weights=[])
    assert (result.agreed, result.consensus, result.weighted_support) == (False, None, 0.0)


@pytest.mark.parametrize(("weights", "message"), [
    ([1.0, 1.0, 1.0], r"weights: expected 4 \(one per answer\), got 3"),
    ([1.0] * 5, r"weights: expected 4 \(one per answer\), got 5"),
    ([1.0, -0.1, 1.0, 1.0], r"weights\[2\]: expected a finite number >= 0"),
    ([1.0, 1.0, math.nan, 1.0], r"weights\[3\]: expected a finite number >= 0"),
    ([1.0, 1.0, 1.0, math.inf], r"weights\[4\]: expected a finite number >= 0"),
    ([True, 1.0, 1.0, 1.0], r"weights\[1\]: expected a number"),
    (["1", 1.0, 1.0, 1.0], r"weights\[1\]: expected a number"),
])
def test_bad_weights_are_refused(weights, message):
    with pytest.raises(ValueError, match=message):
        agreement(TEXT, TWO_GROUPS, weights=weights)
