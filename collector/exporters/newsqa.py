"""NewsQA combined JSON and combined CSV (``data/datasets/newsqa/README.md``).

JSON: ``{"data": [{"storyId", "text", "type", "questions": [{"q", "answers":
[{"sourcerAnswers": [{"s", "e"} | {"noAnswer": true}]}], "isAnswerAbsent",
["isQuestionBad",] ["validatedAnswers": [{"count", "s", "e"} | {"count", "noAnswer"} |
{"count", "badQuestion"}],] ["consensus"]}]}], "version": "1"}``.

CSV: header ``story_id,question,answer_char_ranges,is_answer_absent,is_question_bad,
validated_answers,story_text``; ``answer_char_ranges`` joins workers with ``|`` and one
worker's spans with ``,`` (``start:end``; ``None`` = no answer); ``is_question_bad`` is
``?`` when unknown; ``validated_answers`` is empty or a JSON object string
(``"start:end"`` / ``"none"`` / ``"bad_question"`` -> count). Rows end with ``\\n``;
fields are quoted only when needed (the ``csv`` module's minimal quoting, done here
directly so that a story's text is quoted once, not once per question).

Both take an iterator of :class:`NewsqaStory` whose questions may be a generator; only
one story is held. Every span is checked against the story text (``0 <= s < e <=
len(text)``); the error names the story and the question.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from pathlib import Path

from collector.exporters.errors import InvalidRecordError
from collector.exporters.records import (
    BAD_QUESTION,
    NO_ANSWER,
    CharSpan,
    NewsqaChoice,
    NewsqaQuestion,
    NewsqaStory,
)
from collector.exporters.stream import (
    DEFAULT_PROGRESS_EVERY,
    AtomicOutput,
    JsonArrayFile,
    ManifestEntry,
    Progress,
    ProgressCallback,
    encode_ascii_json,
    encode_utf8_json,
)

__all__ = [
    "NEWSQA_CSV_HEADER",
    "NewsqaJsonWriter",
    "NEWSQA_SPLITS",
    "check_newsqa_story",
    "csv_field",
    "newsqa_consensus",
    "newsqa_question_object",
    "write_newsqa_csv",
    "write_newsqa_json",
    "write_newsqa_story_ids",
]

NEWSQA_SPLITS = frozenset({"train", "dev", "test"})
NEWSQA_CSV_HEADER = ("story_id", "question", "answer_char_ranges", "is_answer_absent",
                     "is_question_bad", "validated_answers", "story_text")


def _where(story: NewsqaStory, index: int, q: NewsqaQuestion) -> str:
    return f"story {story.story_id}, question {index} ({q.q!r})"


def _check_span(span: object, text: str, where: str) -> CharSpan:
    if not isinstance(span, CharSpan):
        raise InvalidRecordError(f"{where}: expected a CharSpan, got {span!r}")
    s, e = span.s, span.e
    if (not isinstance(s, int) or not isinstance(e, int) or isinstance(s, bool)
            or isinstance(e, bool) or not 0 <= s < e <= len(text)):
        raise InvalidRecordError(
            f"{where}: span {s}:{e} is not inside the story text (length {len(text)})")
    return span


def _check_choice(choice: object, text: str, where: str) -> NewsqaChoice:
    if choice in (NO_ANSWER, BAD_QUESTION):
        return choice  # type: ignore[return-value]
    return _check_span(choice, text, where)


def _check_fraction(value: object, name: str, where: str) -> float:
    if (not isinstance(value, int | float) or isinstance(value, bool)
            or not math.isfinite(value) or not 0.0 <= value <= 1.0):
        raise InvalidRecordError(f"{where}: {name} {value!r} is not a fraction in [0, 1]")
    return float(value)


def check_newsqa_story(story: NewsqaStory) -> None:
    """Raise :class:`InvalidRecordError` unless the story's id, split and text are valid."""
    if not isinstance(story.story_id, str) or not story.story_id:
        raise InvalidRecordError(f"story {story.story_id!r}: story_id must be a string")
    if story.type not in NEWSQA_SPLITS:
        raise InvalidRecordError(
            f"story {story.story_id}: type {story.type!r} is not one of train, dev, test")
    if not isinstance(story.text, str) or not story.text:
        raise InvalidRecordError(f"story {story.story_id}: empty text")


def _choice_obj(choice: NewsqaChoice) -> dict:
    if choice == NO_ANSWER:
        return {"noAnswer": True}
    if choice == BAD_QUESTION:
        return {"badQuestion": True}
    return {"s": choice.s, "e": choice.e}  # type: ignore[union-attr]


def newsqa_consensus(q: NewsqaQuestion) -> NewsqaChoice:
    """The consensus Maluuba's loader computes for the question (``maluuba/newsqa/
    data_processing.py``: ``get_consensus_answer`` and ``to_dict``), from the fields the
    CSV carries.

    With validated answers: the first choice with the highest count is the consensus when
    ``max_count >= total / 2``, and only if it is a span; otherwise there is none. Without
    validation: the most frequent of all sourcer ranges (every span of every answerer and
    every ``None`` counted once; ties go to the first seen), if it is a span. When there is
    no span consensus it is ``BAD_QUESTION`` if ``is_question_bad >= 0.5``, else
    ``NO_ANSWER`` (the paper's "questions without agreement ... specially marked").
    """
    span: CharSpan | None = None
    if q.validated_answers:
        best = max(q.validated_answers, key=lambda va: va.count)  # first of the maxima
        total = sum(va.count for va in q.validated_answers)
        if best.count >= total / 2 and isinstance(best.choice, CharSpan):
            span = best.choice
    else:
        # Counter.most_common(1) is max() over the counts in first-seen order: the first
        # of the most frequent; counted in a plain dict, which is faster.
        ranges: dict[CharSpan | None, int] = {}
        for answer in q.answers:
            for one in answer.spans or (None,):
                ranges[one] = ranges.get(one, 0) + 1
        if ranges:
            span = max(ranges, key=ranges.__getitem__)
    if span is not None:
        return span
    return BAD_QUESTION if (q.is_question_bad or 0) >= 0.5 else NO_ANSWER


def newsqa_question_object(story: NewsqaStory, index: int, q: NewsqaQuestion) -> dict:
    """The question as the official JSON object, every span checked against the story."""
    text = story.text
    where = _where(story, index, q)
    if not isinstance(q.q, str) or not q.q.strip():
        raise InvalidRecordError(f"{where}: empty question text")
    answers = []
    for answer in q.answers:
        if answer.spans:
            spans = [_check_span(span, text, where) for span in answer.spans]
            answers.append({"sourcerAnswers": [{"s": sp.s, "e": sp.e} for sp in spans]})
        else:
            answers.append({"sourcerAnswers": [{"noAnswer": True}]})
    obj: dict = {"q": q.q, "answers": answers,
                 "isAnswerAbsent": _check_fraction(q.is_answer_absent, "is_answer_absent",
                                                   where)}
    if q.is_question_bad is not None:
        obj["isQuestionBad"] = _check_fraction(q.is_question_bad, "is_question_bad", where)
    if q.validated_answers is not None:
        validated = []
        for va in q.validated_answers:
            if not isinstance(va.count, int) or isinstance(va.count, bool) or va.count < 1:
                raise InvalidRecordError(f"{where}: validated answer count {va.count!r}")
            choice = _check_choice(va.choice, text, where)
            validated.append({"count": va.count, **_choice_obj(choice)})
        obj["validatedAnswers"] = validated
    if q.consensus is not None:
        obj["consensus"] = _choice_obj(_check_choice(q.consensus, text, where))
    return obj


class NewsqaJsonWriter(JsonArrayFile):
    """The NewsQA JSON writer fed one story at a time (``add``), for a caller that feeds
    several writers from one read of the data; ``write_newsqa_json`` is this over an
    iterator. A context manager, like :class:`~collector.exporters.squad.SquadWriter`."""

    head = '{"data": ['
    tail = '], "version": "1"}'

    def __init__(self, path: str | os.PathLike[str], *, ensure_ascii: bool = False,
                 progress: ProgressCallback | None = None,
                 progress_every: int = DEFAULT_PROGRESS_EVERY, overwrite: bool = False,
                 fragment: bool = False):
        super().__init__(path, progress=progress, progress_every=progress_every,
                         overwrite=overwrite, fragment=fragment)
        self._enc = encode_ascii_json if ensure_ascii else encode_utf8_json

    def add(self, story: NewsqaStory) -> None:
        """Write one story (kept even without questions: the split is story-level)."""
        enc = self._enc
        write = self._output.write
        tick = self._counter.tick
        check_newsqa_story(story)
        write(f'{self._next_item()}{{"storyId": {enc(story.story_id)}, '
              f'"text": {enc(story.text)}, "type": {enc(story.type)}, "questions": [')
        q_sep = ""
        for index, q in enumerate(story.questions):
            write(q_sep + enc(newsqa_question_object(story, index, q)))
            q_sep = ", "
            tick()
        write("]}")


def write_newsqa_json(path: str | os.PathLike[str], stories: Iterable[NewsqaStory], *,
                      ensure_ascii: bool = False, progress: ProgressCallback | None = None,
                      progress_every: int = DEFAULT_PROGRESS_EVERY,
                      overwrite: bool = False) -> ManifestEntry:
    """Write ``combined-newsqa-data-v1.json``; ``records`` counts questions. Stories with
    no questions are kept (the split is story-level)."""
    with NewsqaJsonWriter(path, ensure_ascii=ensure_ascii, progress=progress,
                          progress_every=progress_every, overwrite=overwrite) as writer:
        for story in stories:
            writer.add(story)
    return writer.entry


def _float_text(value: float) -> str:
    return repr(float(value))


def _csv_validated(story: NewsqaStory, index: int, q: NewsqaQuestion) -> str:
    if not q.validated_answers:
        return ""
    counts: dict[str, int] = {}
    for va in q.validated_answers:
        if va.choice == NO_ANSWER:
            key = "none"
        elif va.choice == BAD_QUESTION:
            key = "bad_question"
        else:
            key = f"{va.choice.s}:{va.choice.e}"  # type: ignore[union-attr]
        if key in counts:
            raise InvalidRecordError(
                f"{_where(story, index, q)}: validated answer {key} listed twice")
        counts[key] = va.count
    return encode_ascii_json(counts)


_CSV_NEEDS_QUOTES = re.compile(r'[,"\r\n]')


def csv_field(value: str) -> str:
    """One CSV field as ``csv.writer`` (excel dialect, minimal quoting, ``\\n`` line
    ends) writes it, except that a lone carriage return is quoted too: left bare, as
    ``csv.writer`` leaves it, it breaks the row for ``csv`` and pandas readers."""
    if _CSV_NEEDS_QUOTES.search(value):
        return '"' + value.replace('"', '""') + '"'
    return value


def write_newsqa_csv(path: str | os.PathLike[str], stories: Iterable[NewsqaStory], *,
                     include_story_text: bool = True, progress: ProgressCallback | None = None,
                     progress_every: int = DEFAULT_PROGRESS_EVERY,
                     overwrite: bool = False) -> ManifestEntry:
    """Write ``combined-newsqa-data-v1.csv`` (one row per question); ``records`` counts
    rows. ``include_story_text=False`` writes the story-less ``newsqa-data-v1.csv``."""
    header = NEWSQA_CSV_HEADER if include_story_text else NEWSQA_CSV_HEADER[:-1]
    counter = Progress(progress, progress_every)
    with AtomicOutput(path, overwrite=overwrite) as out:
        write = out.write
        write(",".join(header) + "\n")
        for story in stories:
            check_newsqa_story(story)
            story_id = csv_field(story.story_id)
            tail = "," + csv_field(story.text) + "\n" if include_story_text else "\n"
            for index, q in enumerate(story.questions):
                # Validates every field exactly as the JSON writer does.
                obj = newsqa_question_object(story, index, q)
                ranges = "|".join(
                    ",".join(f"{sp['s']}:{sp['e']}" for sp in a["sourcerAnswers"])
                    if "s" in a["sourcerAnswers"][0] else "None"
                    for a in obj["answers"])
                bad = obj.get("isQuestionBad")
                write(",".join((
                    story_id, csv_field(q.q), csv_field(ranges),
                    _float_text(obj["isAnswerAbsent"]),
                    "?" if bad is None else _float_text(bad),
                    csv_field(_csv_validated(story, index, q)))))
                write(tail)  # the story's quoted text, shared by all its rows
                counter.tick()
    counter.finish()
    return out.entry(counter.count)


def write_newsqa_story_ids(path: str | os.PathLike[str], story_ids: Iterable[str], *,
                           progress: ProgressCallback | None = None,
                           progress_every: int = DEFAULT_PROGRESS_EVERY,
                           overwrite: bool = False) -> ManifestEntry:
    """Write one split's story-id list, as the NewsQA repository's ``train_story_ids.csv``
    / ``dev_story_ids.csv`` / ``test_story_ids.csv``: the header ``story_id``, then one id
    a row (quoted only when needed). Maluuba's ``split_dataset.py`` splits the combined
    CSV by these lists. ``records`` counts ids; an empty id is refused."""
    counter = Progress(progress, progress_every)
    with AtomicOutput(path, overwrite=overwrite) as out:
        out.write("story_id\n")
        for story_id in story_ids:
            if not isinstance(story_id, str) or not story_id:
                raise InvalidRecordError(
                    f"story id {story_id!r} (row {counter.count + 2} of {Path(path).name}): "
                    "expected a non-empty string")
            out.write(csv_field(story_id) + "\n")
            counter.tick()
    counter.finish()
    return out.entry(counter.count)
