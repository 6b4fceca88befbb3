"""Plain records the release job fills from the database and the writers consume.

Every writer takes an *iterator* of these records and never needs more than one of them
(SQuAD: one paragraph, NewsQA: one story) in memory. The fields mirror the official
formats (``data/datasets/*/README.md``); names are Python names, the writers map them to
the official spelling (``is_answer_absent`` -> ``isAnswerAbsent`` ...). Sequences may be
lists or tuples; the ``Iterable`` fields (``SquadArticle.paragraphs``,
``SquadParagraph.qas``, ``NewsqaStory.questions``) may be lazy generators, consumed once,
in order.

Workers: the optional ``worker`` / ``workers`` / ``annotator`` fields hold a worker
*reference* (a database id), never a username. Official formats have no place for them;
the Hugging Face writer turns them into per-release pseudonyms (see ``pseudonyms.py``)
or drops them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

WorkerRef = int | str
"""A worker's database id (or another stable, non-personal key)."""

# --------------------------------------------------------------------------- SQuAD


@dataclass(slots=True)
class SquadAnswer:
    """A span answer: ``context[answer_start:answer_start + len(text)] == text``.

    ``answer_start`` counts Unicode code points (a Python ``str`` index), as SQuAD does.
    """

    text: str
    answer_start: int
    worker: WorkerRef | None = None


@dataclass(slots=True)
class SquadQuestion:
    """One question. ``id`` is unique in the release (SQuAD uses 24 lowercase hex digits;
    see :func:`collector.exporters.squad.squad_id`).

    Answerable: ``answers`` holds every crowd answer (duplicates kept, order kept).
    Unanswerable (v2.0 only): ``is_impossible=True``, ``answers`` empty and, where the
    question writer marked one, ``plausible_answers`` the distractor span(s).
    """

    id: str
    question: str
    answers: Sequence[SquadAnswer] = ()
    is_impossible: bool = False
    plausible_answers: Sequence[SquadAnswer] | None = None


@dataclass(slots=True)
class SquadParagraph:
    """A context and its questions (``qas`` may be a generator)."""

    context: str
    qas: Iterable[SquadQuestion]


@dataclass(slots=True)
class SquadArticle:
    """A document: title (SQuAD writes Wikipedia titles with underscores) and paragraphs.

    The SQuAD writers take an iterator of articles, each yielding its paragraphs in
    order; callers streaming flat question rows can use
    :func:`collector.exporters.squad.squad_articles_from_rows` instead.
    """

    title: str
    paragraphs: Iterable[SquadParagraph]


@dataclass(slots=True)
class SquadRow:
    """A flat question row, for callers that stream one query ordered by
    (article, paragraph, question). ``article_key`` / ``paragraph_key`` group rows
    (e.g. database ids); when None, ``title`` / ``context`` are the keys."""

    title: str
    context: str
    question: SquadQuestion
    article_key: Hashable | None = None
    paragraph_key: Hashable | None = None


# --------------------------------------------------------------------------- NewsQA

NO_ANSWER: Final = "noAnswer"
BAD_QUESTION: Final = "badQuestion"


@dataclass(frozen=True, slots=True)
class CharSpan:
    """Character offsets into the story text: ``s`` inclusive, ``e`` exclusive."""

    s: int
    e: int


NewsqaChoice = CharSpan | Literal["noAnswer", "badQuestion"]
"""A validator's choice or the consensus: a span, ``NO_ANSWER`` or ``BAD_QUESTION``."""


@dataclass(slots=True)
class NewsqaSourcerAnswer:
    """One answer-sourcing worker's answer: one or more spans (a multi-span answer), or
    no spans = "no answer in the article"."""

    spans: Sequence[CharSpan] = ()
    worker: WorkerRef | None = None


@dataclass(slots=True)
class NewsqaValidatedAnswer:
    """One distinct validator choice and how many validators chose it."""

    choice: NewsqaChoice
    count: int


@dataclass(slots=True)
class NewsqaQuestion:
    """A question with its sourcer answers (one entry per worker, in order).

    ``is_question_bad`` None = unknown (omitted in JSON, ``?`` in CSV);
    ``validated_answers`` None = the question did not go through validation;
    ``consensus`` None = no consensus recorded (omitted).
    """

    q: str
    answers: Sequence[NewsqaSourcerAnswer]
    is_answer_absent: float
    is_question_bad: float | None = None
    validated_answers: Sequence[NewsqaValidatedAnswer] | None = None
    consensus: NewsqaChoice | None = None


@dataclass(slots=True)
class NewsqaStory:
    """A story: ``story_id`` as NewsQA writes it (``./cnn/stories/<sha1>.story``), the body
    text the offsets index, the story-level split (``train`` / ``dev`` / ``test``) and its
    questions (may be a generator)."""

    story_id: str
    text: str
    type: str
    questions: Iterable[NewsqaQuestion]


# --------------------------------------------------------------------------- MS MARCO

NO_ANSWER_PRESENT: Final = "No Answer Present."


@dataclass(slots=True)
class MarcoPassage:
    passage_text: str
    url: str
    is_selected: bool = False


@dataclass(slots=True)
class MarcoRecord:
    """One query with its passages.

    ``answers``: the distilled answers; empty = no answer (written as
    ``["No Answer Present."]``, and then no passage may be selected); None = an
    evaluation/test record (``answers`` and ``wellFormedAnswers`` omitted).
    ``well_formed_answers``: None or empty = absent (written as the string ``"[]"``).
    ``workers``: parallel to ``answers`` (Hugging Face export only).
    """

    query_id: int
    query: str
    query_type: str
    passages: Sequence[MarcoPassage]
    answers: Sequence[str] | None = ()
    well_formed_answers: Sequence[str] | None = None
    workers: Sequence[WorkerRef | None] | None = None


# --------------------------------------------------------------------------- ReCO


@dataclass(slots=True)
class RecoRecord:
    """One ReCO sample: the query, the full document, the extracted evidence
    (``passage``), the three candidates (positive, negative, uncertain) and the gold
    ``answer`` (one of them; None for unlabelled test records). The writer puts the gold
    candidate first, as ReCO's training code expects."""

    query_id: int
    query: str
    doc: str
    passage: str
    alternatives: Sequence[str]
    answer: str | None = None
    url: str | None = None
    annotator: WorkerRef | None = None


# --------------------------------------------------------------------------- DuReader

DUREADER_QUESTION_TYPES: Final = frozenset({"YES_NO", "ENTITY", "DESCRIPTION"})
DUREADER_FACT_OR_OPINION: Final = frozenset({"FACT", "OPINION"})
DUREADER_YESNO_LABELS: Final = frozenset({"Yes", "No", "Depends"})


@dataclass(slots=True)
class DureaderDocument:
    """A retrieved document. ``is_selected`` None = unknown (test split: omitted). The
    ``segmented_*`` and ``most_related_para`` fields belong to the preprocessed form and
    are written only when given (``most_related_para`` -1 = no related paragraph, as
    DuReader's preprocessing writes it)."""

    title: str
    paragraphs: Sequence[str]
    bs_rank_pos: int
    is_selected: bool | None = None
    segmented_title: Sequence[str] | None = None
    segmented_paragraphs: Sequence[Sequence[str]] | None = None
    most_related_para: int | None = None


@dataclass(slots=True)
class DureaderRecord:
    """One DuReader question. ``answers`` None = test split (answer fields omitted).

    ``yesno_answers`` (YES_NO questions) and ``entity_answers`` (ENTITY questions) run
    parallel to ``answers``. The preprocessed-form fields (``segmented_*``,
    ``answer_docs``, ``answer_spans``, ``fake_answers``, ``match_scores``) are written
    only when given; ``workers`` is parallel to ``answers`` (Hugging Face export only).
    """

    question_id: int
    question: str
    question_type: str
    fact_or_opinion: str
    documents: Sequence[DureaderDocument]
    answers: Sequence[str] | None = None
    yesno_answers: Sequence[str] | None = None
    entity_answers: Sequence[Sequence[str]] | None = None
    yesno_type: str | None = None
    segmented_question: Sequence[str] | None = None
    segmented_answers: Sequence[Sequence[str]] | None = None
    answer_docs: Sequence[int] | None = None
    answer_spans: Sequence[Sequence[int]] | None = None
    fake_answers: Sequence[str] | None = None
    match_scores: Sequence[float] | None = None
    workers: Sequence[WorkerRef | None] | None = None
