"""NewsQA answer agreement, span merging and consolidation (pure Python, no Django).

Definitions (NewsQA paper, sections 3.3-3.5; record layout of the combined JSON):

* An *answer* is what one answerer submitted: a list of character spans into the article
  text, or ``no_answer`` ("no answer in the article"), or ``bad_question`` ("the question
  makes no sense").
* *Span merging* (cleanup, section 3.5): two spans of one answer whose gap holds fewer than
  ``max_gap_words`` (3) words are merged into one span; tokens made only of punctuation do
  not count as words.
* *Agreement*: each answer is reduced to a key: ``(NO_ANSWER,)`` for no answer,
  ``(BAD_QUESTION,)`` for a bad question, otherwise the tuple of SQuAD-normalised texts of
  its merged spans in article order (so a multi-span answer agrees only with an answer
  naming the same parts in the same order, and a span that differs only by case,
  punctuation or an article agrees). The flags' keys hold punctuation, which normalised
  text never does: a span that reads "None" or "the bad" is not a flag.
  A question is *agreed* when at least ``min_agree`` (2) answerers share a key; the
  consensus is the most frequent key (ties broken by the earliest answer), represented by
  the first answer that has it.
* *Weighted consensus* (an option, not in the paper): given one non-negative weight per
  answer (say, each answerer's competence), the agreement test stays the paper's, but the
  consensus is the key of highest total weight among the keys at least ``min_agree``
  answerers share (among all keys when none does, so a question without agreement still
  names its heaviest answer). Totals within 1e-9 tie, and ties go to the paper's choice
  (more answerers, then the earliest answer). ``weighted_support`` is the consensus key's
  total weight.
* *Validation* counts validator choices among the unique answers, "all answers are bad"
  (``all_bad``: a vote of its own, never the same as choosing the unique answer "no answer
  in the article") and "the question makes no sense"; after it, a question is agreed when
  the most chosen option (ties broken by the earliest vote) has ``min_agree`` validators
  and is an answer. When "all answers are bad" is the most chosen option the validators
  rejected the answers: the question has no agreed answer (NewsQA section 3.4-3.5: it is
  kept, marked as without agreement), and its record's consensus is ``noAnswer`` (or
  ``badQuestion``), as the NewsQA files mark such questions.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from collector.metrics import squad_normalize

NO_ANSWER = "<no answer>"
BAD_QUESTION = "<bad question>"
ALL_BAD = "<all answers bad>"
_WORD = re.compile(r"\S+")
_PUNCT_ONLY = re.compile(r"^[\W_]+$")
_WEIGHT_TIE = 1e-9


@dataclass(frozen=True)
class Answer:
    """One answerer's answer: spans (start inclusive, end exclusive) or a flag; or a
    validator's vote: one of those (the answer they chose) or ``all_bad`` ("all answers are
    bad", which only a validator gives)."""

    spans: tuple[tuple[int, int], ...] = ()
    no_answer: bool = False
    bad_question: bool = False
    all_bad: bool = False

    def __post_init__(self) -> None:
        flags = int(self.no_answer) + int(self.bad_question) + int(self.all_bad)
        if flags > 1 or (flags and self.spans) or (not flags and not self.spans):
            raise ValueError("an answer is one or more spans, or no_answer, or bad_question, "
                             "or all_bad")

    @classmethod
    def from_record(cls, record: dict) -> Answer:
        """From the payload form ``{"spans": [[s, e], ...]}`` / ``{"no_answer": true}`` /
        ``{"bad_question": true}`` / ``{"all_bad": true}``."""
        if record.get("no_answer"):
            return cls(no_answer=True)
        if record.get("bad_question"):
            return cls(bad_question=True)
        if record.get("all_bad"):
            return cls(all_bad=True)
        return cls(spans=tuple(sorted((int(s), int(e)) for s, e in record.get("spans", ()))))

    def to_record(self) -> dict:
        if self.no_answer:
            return {"no_answer": True}
        if self.bad_question:
            return {"bad_question": True}
        if self.all_bad:
            return {"all_bad": True}
        return {"spans": [list(span) for span in self.spans]}


def words_between(text: str, start: int, end: int) -> int:
    """Words in ``text[start:end]``, not counting tokens made only of punctuation."""
    return sum(
        1 for token in _WORD.findall(text[start:end]) if not _PUNCT_ONLY.match(token)
    )


def merge_spans(
    text: str, spans: Iterable[tuple[int, int]], *, max_gap_words: int = 3
) -> list[tuple[int, int]]:
    """Merge spans less than ``max_gap_words`` words apart (overlapping spans merge too)."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged:
            last_start, last_end = merged[-1]
            if start <= last_end or words_between(text, last_end, start) < max_gap_words:
                merged[-1] = (last_start, max(last_end, end))
                continue
        merged.append((start, end))
    return merged


def answer_key(text: str, answer: Answer, *, max_gap_words: int = 3) -> tuple[str, ...]:
    """The key two answers must share to agree (see the module docstring)."""
    if answer.no_answer:
        return (NO_ANSWER,)
    if answer.bad_question:
        return (BAD_QUESTION,)
    if answer.all_bad:
        return (ALL_BAD,)
    return tuple(
        squad_normalize(text[s:e]) for s, e in merge_spans(text, answer.spans,
                                                          max_gap_words=max_gap_words)
    )


@dataclass
class Agreement:
    agreed: bool
    consensus: Answer | None
    support: int
    unique_answers: list[Answer] = field(default_factory=list)
    #: Total weight of the consensus key; ``None`` without weights (the paper's rule).
    weighted_support: float | None = None


def _check_weights(weights: Sequence[float], n: int) -> list[float]:
    if len(weights) != n:
        raise ValueError(f"weights: expected {n} (one per answer), got {len(weights)}")
    checked = []
    for i, weight in enumerate(weights, start=1):
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise ValueError(f"weights[{i}]: expected a number, got {weight!r}")
        if not math.isfinite(weight) or weight < 0:
            raise ValueError(f"weights[{i}]: expected a finite number >= 0, got {weight!r}")
        checked.append(float(weight))
    return checked


def agreement(
    text: str,
    answers: Sequence[Answer],
    *,
    min_agree: int = 2,
    max_gap_words: int = 3,
    weights: Sequence[float] | None = None,
) -> Agreement:
    """Agreement among answerers, the consensus and the unique answers (first of each key).

    Without ``weights`` this is the paper's rule. With ``weights`` (one finite number >= 0
    per answer, in the order of ``answers``) ``agreed`` and ``support`` are unchanged, the
    consensus is the heaviest key as described in the module docstring, and
    ``weighted_support`` is its total weight. ``ValueError`` names a bad weight, or a
    count that does not match the answers.

    Validators' votes may include ``all_bad``: it is counted as an option of its own, and
    when it is the consensus the question is not agreed (no answer was accepted).
    """
    checked = None if weights is None else _check_weights(weights, len(answers))
    keys = [answer_key(text, a, max_gap_words=max_gap_words) for a in answers]
    first_with: dict[tuple[str, ...], Answer] = {}
    for key, answer in zip(keys, answers, strict=True):
        first_with.setdefault(key, answer)
    if not answers:
        return Agreement(agreed=False, consensus=None, support=0,
                         weighted_support=None if checked is None else 0.0)
    counts = Counter(keys)
    order = {key: i for i, key in reversed(list(enumerate(keys)))}

    def paper_order(key: tuple[str, ...]) -> tuple[int, int]:
        return counts[key], -order[key]

    def agrees(key: tuple[str, ...]) -> bool:
        return counts[key] >= min_agree and key != (ALL_BAD,)

    best = max(counts, key=paper_order)
    agreed = agrees(best)
    weighted_support = None
    if checked is not None:
        totals: dict[tuple[str, ...], float] = dict.fromkeys(counts, 0.0)
        for key, weight in zip(keys, checked, strict=True):
            totals[key] += weight
        candidates = [k for k in counts if agrees(k)] if agreed else list(counts)
        heaviest = max(totals[k] for k in candidates)
        best = max((k for k in candidates if totals[k] >= heaviest - _WEIGHT_TIE),
                   key=paper_order)
        weighted_support = totals[best]
    return Agreement(
        agreed=agreed,
        consensus=first_with[best],
        support=counts[best],
        unique_answers=list(first_with.values()),
        weighted_support=weighted_support,
    )


def clean_answer(text: str, answer: Answer, *, max_gap_words: int = 3) -> Answer:
    """The answer with its spans merged (cleanup step)."""
    if not answer.spans:
        return answer
    return Answer(spans=tuple(merge_spans(text, answer.spans, max_gap_words=max_gap_words)))


def _newsqa_span(answer: Answer) -> dict:
    """An answer as a NewsQA ``consensus`` / ``validatedAnswers`` entry.

    NewsQA's consensus is a single span; a multi-span answer that survived merging is
    written as the span from its first start to its last end.
    """
    if answer.no_answer:
        return {"noAnswer": True}
    if answer.bad_question:
        return {"badQuestion": True}
    if answer.all_bad:  # a validators' entry only: the NewsQA files have no such choice
        return {"allBad": True}
    return {"s": answer.spans[0][0], "e": answer.spans[-1][1]}


def newsqa_question_record(
    *,
    text: str,
    question: str,
    answers: Sequence[Answer],
    validator_choices: Sequence[Answer] | None = None,
    min_agree: int = 2,
    max_gap_words: int = 3,
    weights: Sequence[float] | None = None,
    workers: Sequence[int | str | None] | None = None,
) -> dict:
    """The consolidated NewsQA record of one question, as in the combined JSON.

    Keeps every sourcer answer (cleaned), the validators' choices with counts, and the
    consensus. Adds ``agreed`` (bool) and ``validated`` (bool) so questions without
    agreement after validation are kept and marked. ``validator_choices`` holds one vote per
    validator: the unique answer they chose (a span, ``no_answer`` or ``bad_question``) or
    ``Answer(all_bad=True)``; the all-bad votes are one ``validatedAnswers`` entry of their
    own, ``{"count": n, "allBad": true}``, and never count as a "no answer" vote.
    ``weights`` (one per answer, e.g. the answerers' competence): the sourcers' consensus is
    the agreeing group of the highest total weight (``agreement``); None keeps the paper's
    rule. ``workers``: the answerers' ids, one per answer in the same order, kept as
    ``answerWorkers`` (a release turns them into its own pseudonyms, or leaves them out).
    """
    if workers is not None and len(workers) != len(answers):
        raise ValueError(f"workers: expected {len(answers)} (one per answer), got "
                         f"{len(workers)}")
    cleaned = [clean_answer(text, a, max_gap_words=max_gap_words) for a in answers]
    first = agreement(text, cleaned, min_agree=min_agree, max_gap_words=max_gap_words,
                      weights=weights)
    n = len(cleaned) or 1
    record: dict = {
        "q": question,
        "answers": [
            {"sourcerAnswers": [{"noAnswer": True}] if a.no_answer else
             [{"badQuestion": True}] if a.bad_question else
             [{"s": s, "e": e} for s, e in a.spans]}
            for a in cleaned
        ],
        "isAnswerAbsent": sum(a.no_answer for a in cleaned) / n,
        "isQuestionBad": sum(a.bad_question for a in cleaned) / n,
    }
    if workers is not None:
        record["answerWorkers"] = list(workers)
    consensus, agreed = first.consensus, first.agreed
    if validator_choices:
        chosen = [clean_answer(text, a, max_gap_words=max_gap_words) for a in validator_choices]
        keys = [answer_key(text, a, max_gap_words=max_gap_words) for a in chosen]
        counts = Counter(keys)
        first_with: dict[tuple[str, ...], Answer] = {}
        for key, answer in zip(keys, chosen, strict=True):
            first_with.setdefault(key, answer)
        record["validatedAnswers"] = [
            {"count": counts[key], **_newsqa_span(answer)} for key, answer in first_with.items()
        ]
        validated = agreement(text, chosen, min_agree=min_agree, max_gap_words=max_gap_words)
        consensus, agreed = validated.consensus, validated.agreed
        if consensus is not None and consensus.all_bad:
            consensus = None  # the answers were rejected: no answer is the consensus
    if record["isQuestionBad"] >= 0.5:
        consensus = Answer(bad_question=True)
    record["consensus"] = _newsqa_span(consensus) if consensus else {"noAnswer": True}
    record["agreed"] = agreed
    record["validated"] = bool(validator_choices)
    return record
