"""SQuAD v1.1 and v2.0 JSON, streamed article by article.

Layouts (``data/datasets/squad_v1.1_dev/README.md``, ``squad_v2.0_dev/README.md``),
mirrored down to the key order and ``json.dumps`` separators of the official files:

- v1.1: ``{"data": [{"title", "paragraphs": [{"context", "qas": [{"answers":
  [{"answer_start", "text"}], "question", "id"}]}]}], "version": "1.1"}``
- v2.0: ``{"version": "v2.0", "data": [{"title", "paragraphs": [{"qas": [{
  ["plausible_answers",] "question", "id", "answers": [{"text", "answer_start"}],
  "is_impossible"}], "context"}]}]}``

Input contract: an iterator of :class:`SquadArticle`, each yielding its
:class:`SquadParagraph` s in order, each yielding its questions. Only the current
paragraph's context is held. Paragraphs without questions, and articles without
paragraphs, are not written (the official files have none). Every answer (and plausible
answer) is checked against its context before anything of its question is written; a
mismatch raises :class:`InvalidRecordError` naming the question id, and the file is not
created.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Hashable, Iterable, Iterator
from itertools import chain, groupby

from collector.exporters.errors import InvalidRecordError, RecordOrderError
from collector.exporters.records import (
    SquadAnswer,
    SquadArticle,
    SquadParagraph,
    SquadQuestion,
    SquadRow,
)
from collector.exporters.stream import (
    DEFAULT_PROGRESS_EVERY,
    JsonArrayFile,
    ManifestEntry,
    ProgressCallback,
    encode_ascii_json,
)

__all__ = [
    "SquadWriter",
    "check_squad_answer",
    "squad_articles_from_rows",
    "squad_id",
    "squad_question_object",
    "write_squad_v1",
    "write_squad_v2",
]


def squad_id(namespace: str, key: object) -> str:
    """A stable 24-hex-digit question id (SQuAD's shape) for ``key`` within ``namespace``
    (e.g. the project's slug and the question's primary key)."""
    digest = hashlib.sha256(f"{namespace}\x00{key}".encode()).hexdigest()
    return digest[:24]


def check_squad_answer(context: str, answer: SquadAnswer, *, question_id: str,
                       what: str = "answer") -> None:
    """Raise :class:`InvalidRecordError` unless the answer is a span of ``context``."""
    start = answer.answer_start
    text = answer.text
    if not isinstance(text, str) or not text:
        raise InvalidRecordError(f"question {question_id}: {what} text is empty")
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        raise InvalidRecordError(
            f"question {question_id}: {what} {text!r} has answer_start {start!r}, "
            "expected a non-negative int")
    found = context[start:start + len(text)]
    if found != text:
        raise InvalidRecordError(
            f"question {question_id}: {what} {text!r} does not match the context at "
            f"answer_start={start} (context[{start}:{start + len(text)}] is {found!r})")


def _answers_v1(context: str, q: SquadQuestion) -> list[dict]:
    out = []
    for answer in q.answers:
        check_squad_answer(context, answer, question_id=q.id)
        out.append({"answer_start": answer.answer_start, "text": answer.text})
    return out


def _answers_v2(context: str, answers: Iterable[SquadAnswer], qid: str,
                what: str) -> list[dict]:
    out = []
    for answer in answers:
        check_squad_answer(context, answer, question_id=qid, what=what)
        out.append({"text": answer.text, "answer_start": answer.answer_start})
    return out


def _question_v1(context: str, q: SquadQuestion) -> dict | None:
    if q.is_impossible or not q.answers:
        return None
    return {"answers": _answers_v1(context, q), "question": q.question, "id": q.id}


def _question_v2(context: str, q: SquadQuestion) -> dict:
    if q.is_impossible:
        if q.answers:
            raise InvalidRecordError(
                f"question {q.id}: is_impossible but has {len(q.answers)} answer(s); "
                "put the distractor spans in plausible_answers")
        obj: dict = {}
        if q.plausible_answers is not None:
            obj["plausible_answers"] = _answers_v2(
                context, q.plausible_answers, q.id, "plausible answer")
        obj["question"] = q.question
        obj["id"] = q.id
        obj["answers"] = []
        obj["is_impossible"] = True
        return obj
    if not q.answers:
        raise InvalidRecordError(
            f"question {q.id}: no answers and not is_impossible (SQuAD v2.0 marks "
            "unanswerable questions with is_impossible=True)")
    return {"question": q.question, "id": q.id,
            "answers": _answers_v2(context, q.answers, q.id, "answer"),
            "is_impossible": False}


def _check_question(q: SquadQuestion) -> None:
    if not isinstance(q.id, str) or not q.id:
        raise InvalidRecordError(f"question id {q.id!r}: expected a non-empty string")
    if not isinstance(q.question, str) or not q.question.strip():
        raise InvalidRecordError(f"question {q.id}: question text is empty")


def squad_question_object(context: str, q: SquadQuestion, *, v2: bool) -> dict | None:
    """The question as the official v1.1 / v2.0 JSON object, every answer checked against
    ``context``; None for an unanswerable question in v1.1 (which has no place there)."""
    _check_question(q)
    return _question_v2(context, q) if v2 else _question_v1(context, q)


class SquadWriter(JsonArrayFile):
    """The SQuAD writer fed one article at a time (``add``), for a caller that feeds
    several writers from one read of the data; ``write_squad_v1`` / ``write_squad_v2``
    are this over an iterator. Use as a context manager: the file appears when the block
    ends without an error (``entry`` is then its manifest entry), else not at all."""

    def __init__(self, path: str | os.PathLike[str], *, v2: bool,
                 skip_unanswerable: bool = False, progress: ProgressCallback | None = None,
                 progress_every: int = DEFAULT_PROGRESS_EVERY, overwrite: bool = False,
                 fragment: bool = False):
        super().__init__(path, progress=progress, progress_every=progress_every,
                         overwrite=overwrite, fragment=fragment)
        self.v2 = v2
        self.head = '{"version": "v2.0", "data": [' if v2 else '{"data": ['
        self.tail = "]}" if v2 else '], "version": "1.1"}'
        self.skip_unanswerable = skip_unanswerable

    def add(self, article: SquadArticle) -> None:
        """Write one article (nothing when none of its questions is written)."""
        enc = encode_ascii_json
        v2 = self.v2
        tick = self._counter.tick
        write = self._output.write
        article_open = False
        para_sep = ""
        for paragraph in article.paragraphs:
            context = paragraph.context
            if not isinstance(context, str) or not context:
                raise InvalidRecordError(
                    f"article {article.title!r}: a paragraph has an empty context")
            q_sep = None
            for q in paragraph.qas:
                obj = squad_question_object(context, q, v2=v2)
                if obj is None:
                    if self.skip_unanswerable:
                        continue
                    raise InvalidRecordError(
                        f"question {q.id}: unanswerable questions have no place in "
                        "SQuAD v1.1 (pass skip_unanswerable=True to leave them out)")
                if q_sep is None:
                    if not article_open:
                        if not isinstance(article.title, str) or not article.title:
                            raise InvalidRecordError(
                                f"question {q.id}: its article's title {article.title!r} "
                                "is not a non-empty string")
                        write(f'{self._next_item()}{{"title": {enc(article.title)}, '
                              '"paragraphs": [')
                        article_open = True
                    if v2:
                        write(f'{para_sep}{{"qas": [')
                    else:
                        write(f'{para_sep}{{"context": {enc(context)}, "qas": [')
                    para_sep = ", "
                    q_sep = ""
                write(q_sep + enc(obj))
                q_sep = ", "
                tick()
            if q_sep is not None:
                write(f'], "context": {enc(context)}}}' if v2 else "]}")
        if article_open:
            write("]}")


def _write_squad(path: str | os.PathLike[str], articles: Iterable[SquadArticle], *,
                 v2: bool, skip_unanswerable: bool, progress: ProgressCallback | None,
                 progress_every: int, overwrite: bool) -> ManifestEntry:
    with SquadWriter(path, v2=v2, skip_unanswerable=skip_unanswerable, progress=progress,
                     progress_every=progress_every, overwrite=overwrite) as writer:
        for article in articles:
            writer.add(article)
    return writer.entry


def write_squad_v1(path: str | os.PathLike[str], articles: Iterable[SquadArticle], *,
                   skip_unanswerable: bool = False, progress: ProgressCallback | None = None,
                   progress_every: int = DEFAULT_PROGRESS_EVERY,
                   overwrite: bool = False) -> ManifestEntry:
    """Write SQuAD v1.1 JSON; ``records`` in the entry counts questions.

    v1.1 has no unanswerable questions: one (``is_impossible`` or no answers) raises
    :class:`InvalidRecordError`, or is left out with ``skip_unanswerable=True``.
    """
    return _write_squad(path, articles, v2=False, skip_unanswerable=skip_unanswerable,
                        progress=progress, progress_every=progress_every,
                        overwrite=overwrite)


def write_squad_v2(path: str | os.PathLike[str], articles: Iterable[SquadArticle], *,
                   progress: ProgressCallback | None = None,
                   progress_every: int = DEFAULT_PROGRESS_EVERY,
                   overwrite: bool = False) -> ManifestEntry:
    """Write SQuAD v2.0 JSON (``is_impossible``, ``plausible_answers`` when given);
    ``records`` in the entry counts questions."""
    return _write_squad(path, articles, v2=True, skip_unanswerable=False,
                        progress=progress, progress_every=progress_every,
                        overwrite=overwrite)


# --------------------------------------------------------------------------- flat rows


def _article_key(row: SquadRow) -> Hashable:
    return row.title if row.article_key is None else row.article_key


def _paragraph_key(row: SquadRow) -> Hashable:
    return row.context if row.paragraph_key is None else row.paragraph_key


def squad_articles_from_rows(rows: Iterable[SquadRow]) -> Iterator[SquadArticle]:
    """Group flat question rows into articles and paragraphs on the fly.

    ``rows`` must be ordered so that the rows of one article are contiguous and, within
    it, the rows of one paragraph are contiguous (``ORDER BY article, paragraph,
    question``). A group that reappears later raises :class:`RecordOrderError`; rows of
    one group with a different title / context raise :class:`InvalidRecordError`. Only
    the article keys seen so far are remembered (one small value per article).
    """
    seen_articles: set[Hashable] = set()
    for key, group in groupby(rows, key=_article_key):
        if key in seen_articles:
            raise RecordOrderError(
                f"rows of article {key!r} are not contiguous: order the rows by "
                "(article, paragraph)")
        seen_articles.add(key)
        yield _article(key, group)


def _article(key: Hashable, rows: Iterator[SquadRow]) -> SquadArticle:
    first = next(rows)
    return SquadArticle(first.title, _paragraphs(key, first.title, chain((first,), rows)))


def _paragraphs(article: Hashable, title: str,
                rows: Iterable[SquadRow]) -> Iterator[SquadParagraph]:
    seen: set[Hashable] = set()
    for key, group in groupby(rows, key=_paragraph_key):
        if key in seen:
            raise RecordOrderError(
                f"rows of paragraph {key!r} in article {article!r} are not contiguous: "
                "order the rows by (article, paragraph)")
        seen.add(key)
        yield _paragraph(title, group)


def _paragraph(title: str, rows: Iterator[SquadRow]) -> SquadParagraph:
    first = next(rows)
    return SquadParagraph(first.context, _questions(title, first.context, chain((first,), rows)))


def _questions(title: str, context: str, rows: Iterable[SquadRow]) -> Iterator[SquadQuestion]:
    for row in rows:
        if row.title != title:
            raise InvalidRecordError(
                f"question {row.question.id}: title {row.title!r} differs from its "
                f"article's title {title!r}")
        if row.context is not context and row.context != context:
            raise InvalidRecordError(
                f"question {row.question.id}: context differs from the other rows of "
                "its paragraph")
        yield row.question
