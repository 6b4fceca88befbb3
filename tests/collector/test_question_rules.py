from __future__ import annotations

import pytest

from collector.question_rules import check_question, highlight_overlap

HIGHLIGHTS = [
    "Portvale council votes 7-2 to build a library on the old harbor site",
    "Construction is expected to start in March and cost about $4 million",
]


def test_overlap_counts_content_words_only():
    # content words: council, vote(s)... "who" and "the" are function words.
    assert highlight_overlap("Who voted against the library?", HIGHLIGHTS) == pytest.approx(1 / 3)
    assert highlight_overlap("Portvale council votes library harbor site?", HIGHLIGHTS) == 1.0
    assert highlight_overlap("the of and", HIGHLIGHTS) == 0.0


def test_copying_the_highlights_is_refused_with_an_explanation():
    verdict = check_question("Will construction start in March?", HIGHLIGHTS, max_overlap=0.6)
    assert not verdict.ok
    assert verdict.overlap == pytest.approx(1.0)
    assert "100% of your question's words come from the highlights (limit 60%)" in verdict.reason


def test_a_curious_question_passes():
    verdict = check_question("Who voted against the plan?", HIGHLIGHTS, max_overlap=0.6)
    assert verdict.ok, verdict.reason


@pytest.mark.parametrize(
    ("question", "ok"),
    [
        ("Why did the council vote for it?", False),
        ("How will the town pay for it?", False),
        ("How much will the library cost?", True),
        ("How long will construction take?", True),
        ("How many members voted no?", True),
    ],
)
def test_how_and_why_rule(question, ok):
    verdict = check_question(question, HIGHLIGHTS, max_overlap=1.0)
    assert verdict.ok is ok, verdict.reason
    assert check_question(question, HIGHLIGHTS, max_overlap=1.0, forbid_how_why=False).ok


def test_too_short_is_refused():
    assert not check_question("Who?", HIGHLIGHTS, max_overlap=1.0).ok
