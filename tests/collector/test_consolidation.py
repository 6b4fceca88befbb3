"""NewsQA agreement, span merging and the consolidated record, on hand-made cases."""

from __future__ import annotations

import pytest

from collector.consolidation import (
    Answer,
    agreement,
    answer_key,
    merge_spans,
    newsqa_question_record,
    words_between,
)

TEXT = ("PORTVALE (CNN) -- The council voted 7-2 on Tuesday to build a library, "
        "a park , and a pool near the old harbor.")


def span(phrase: str, occurrence: int = 0) -> tuple[int, int]:
    start = -1
    for _ in range(occurrence + 1):
        start = TEXT.index(phrase, start + 1)
    return (start, start + len(phrase))


def test_words_between_discounts_punctuation():
    lib_end = span("library")[1]
    park_start = span("park")[0]
    assert TEXT[lib_end:park_start] == ", a "
    assert words_between(TEXT, lib_end, park_start) == 1
    # " , and a " holds a lone comma, which is not a word: 2 words.
    park_end, pool_start = span("park")[1], span("pool")[0]
    assert words_between(TEXT, park_end, pool_start) == 2


def test_spans_less_than_three_words_apart_merge():
    merged = merge_spans(TEXT, [span("library"), span("park"), span("pool")])
    assert merged == [(span("library")[0], span("pool")[1])]


def test_spans_three_or_more_words_apart_stay_apart():
    # "council" ... "Tuesday": "voted 7 2 on" are 4 words apart ("-" is punctuation).
    first, second = span("council"), span("Tuesday")
    assert words_between(TEXT, first[1], second[0]) == 3  # voted, 7-2, on
    assert merge_spans(TEXT, [first, second]) == [first, second]
    assert merge_spans(TEXT, [first, second], max_gap_words=4) == [(first[0], second[1])]


def test_overlapping_and_unsorted_spans_merge():
    a, b = span("build a library"), span("library")
    assert merge_spans(TEXT, [b, a]) == [a]


def test_agreement_normalises_text_and_counts_no_answers():
    council = span("council")
    the_council = span("The council")
    answers = [Answer(spans=(the_council,)), Answer(spans=(council,)), Answer(no_answer=True)]
    result = agreement(TEXT, answers)
    assert result.agreed and result.support == 2
    assert result.consensus == answers[0]
    assert len(result.unique_answers) == 2

    nulls = agreement(TEXT, [Answer(no_answer=True), Answer(no_answer=True)])
    assert nulls.agreed and nulls.consensus.no_answer


def test_disagreement_and_tie_breaking():
    answers = [Answer(spans=(span("library"),)), Answer(spans=(span("park"),))]
    result = agreement(TEXT, answers)
    assert not result.agreed
    assert result.consensus == answers[0]  # ties go to the earliest answer
    assert agreement(TEXT, []).agreed is False


def test_multi_span_answers_agree_after_merging():
    one = Answer(spans=(span("library"), span("park")))  # 1 word apart: merged
    two = Answer(spans=((span("library")[0], span("park")[1]),))
    assert answer_key(TEXT, one) == answer_key(TEXT, two) == ("library park",)
    # library ... pool: "a park and a" is 4 words (the lone comma is not): kept apart
    apart = Answer(spans=(span("library"), span("pool")))
    assert answer_key(TEXT, apart) == ("library", "pool")
    far = Answer(spans=(span("council"), span("Tuesday")))
    assert answer_key(TEXT, far) == ("council", "tuesday")
    assert not agreement(TEXT, [far, Answer(spans=(span("council"),))]).agreed


def test_bad_question_flags():
    result = agreement(TEXT, [Answer(bad_question=True), Answer(bad_question=True)])
    assert result.agreed and result.consensus.bad_question
    with pytest.raises(ValueError):
        Answer()
    with pytest.raises(ValueError):
        Answer(spans=((0, 3),), no_answer=True)


def test_consolidated_record_without_validation():
    record = newsqa_question_record(
        text=TEXT, question="What will be built?",
        answers=[Answer(spans=(span("library"), span("park"))), Answer(spans=(span("library"),)),
                 Answer(no_answer=True)],
    )
    merged = (span("library")[0], span("park")[1])
    assert record["answers"][0] == {"sourcerAnswers": [{"s": merged[0], "e": merged[1]}]}
    assert record["answers"][2] == {"sourcerAnswers": [{"noAnswer": True}]}
    assert record["isAnswerAbsent"] == pytest.approx(1 / 3)
    assert record["isQuestionBad"] == 0.0
    assert record["agreed"] is False and record["validated"] is False
    assert "validatedAnswers" not in record


def test_consolidated_record_with_validation():
    library, park = Answer(spans=(span("library"),)), Answer(spans=(span("park"),))
    record = newsqa_question_record(
        text=TEXT, question="What will be built?", answers=[library, park],
        validator_choices=[library, library, Answer(no_answer=True)],
    )
    s, e = span("library")
    assert record["validatedAnswers"] == [{"count": 2, "s": s, "e": e},
                                          {"count": 1, "noAnswer": True}]
    assert record["consensus"] == {"s": s, "e": e}
    assert record["agreed"] is True and record["validated"] is True


def test_validation_without_agreement_is_kept_and_marked():
    library, park = Answer(spans=(span("library"),)), Answer(spans=(span("park"),))
    record = newsqa_question_record(text=TEXT, question="q?", answers=[library, park],
                                    validator_choices=[library, park])
    assert record["agreed"] is False
    assert record["consensus"] == {"s": span("library")[0], "e": span("library")[1]}


def test_majority_bad_question_makes_the_consensus_bad():
    record = newsqa_question_record(
        text=TEXT, question="Banana?",
        answers=[Answer(bad_question=True), Answer(bad_question=True), Answer(no_answer=True)],
    )
    assert record["isQuestionBad"] == pytest.approx(2 / 3)
    assert record["consensus"] == {"badQuestion": True}


def test_a_span_that_reads_like_a_flag_is_not_the_flag():
    # The article's own word "None" (or "the bad") normalises to "none" ("bad"): an answer
    # marking it names a span, it does not say "no answer" (or "the question is bad").
    text = "Asked who had paid, the mayor said: None. The bad roads stay."
    none = (text.index("None"), text.index("None") + 4)
    bad = (text.index("The bad"), text.index("The bad") + 7)
    result = agreement(text, [Answer(spans=(none,)), Answer(no_answer=True)])
    assert not result.agreed and result.support == 1
    assert len(result.unique_answers) == 2
    result = agreement(text, [Answer(bad_question=True), Answer(spans=(bad,))])
    assert not result.agreed and len(result.unique_answers) == 2
    assert agreement(text, [Answer(spans=(none,)), Answer(spans=(none,))]).agreed


def test_all_answers_bad_is_a_vote_of_its_own_that_never_agrees():
    library, park = Answer(spans=(span("library"),)), Answer(spans=(span("park"),))
    nothing, all_bad = Answer(no_answer=True), Answer.from_record({"all_bad": True})
    assert all_bad == Answer(all_bad=True) and all_bad.to_record() == {"all_bad": True}
    # Two validators reject every answer: no answer was accepted, so nothing is agreed.
    record = newsqa_question_record(text=TEXT, question="q?", answers=[library, park, nothing],
                                    validator_choices=[all_bad, all_bad])
    assert record["validatedAnswers"] == [{"count": 2, "allBad": True}]
    assert record["agreed"] is False and record["consensus"] == {"noAnswer": True}
    # "No answer in the article" and "all answers are bad" are two different votes.
    record = newsqa_question_record(text=TEXT, question="q?", answers=[library, park, nothing],
                                    validator_choices=[nothing, all_bad])
    assert record["validatedAnswers"] == [{"count": 1, "noAnswer": True},
                                          {"count": 1, "allBad": True}]
    assert record["agreed"] is False
    assert not agreement(TEXT, [nothing, all_bad]).agreed
    # Most validators reject the answers: not agreed, though two chose the same span.
    votes = [library, all_bad, library, all_bad, all_bad]
    record = newsqa_question_record(text=TEXT, question="q?", answers=[library, park],
                                    validator_choices=votes)
    assert record["agreed"] is False and record["consensus"] == {"noAnswer": True}
    # An answer most validators chose is agreed, whatever the others rejected.
    record = newsqa_question_record(text=TEXT, question="q?", answers=[library, park],
                                    validator_choices=[all_bad, library, library])
    assert record["agreed"] is True
    assert record["consensus"] == {"s": span("library")[0], "e": span("library")[1]}


def test_the_record_keeps_the_answerers_in_the_answers_order():
    library, park = Answer(spans=(span("library"),)), Answer(spans=(span("park"),))
    record = newsqa_question_record(text=TEXT, question="q?", answers=[library, park],
                                    workers=[7, 9])
    assert record["answerWorkers"] == [7, 9]
    assert "answerWorkers" not in newsqa_question_record(text=TEXT, question="q?",
                                                         answers=[library, park])
    with pytest.raises(ValueError, match=r"workers: expected 2 \(one per answer\), got 1"):
        newsqa_question_record(text=TEXT, question="q?", answers=[library, park], workers=[7])
