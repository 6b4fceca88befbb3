"""MS MARCO Question Answering v2.1 (``data/datasets/msmarco_qa_v2.1/README.md``).

- Row JSONL: one object per line, keys ``answers, passages, query, query_id,
  query_type, wellFormedAnswers``; passages ``{"is_selected": 0|1, "passage_text",
  "url"}``.
- The official column-oriented JSON (``DataFrame.to_json()`` layout): one object whose
  keys are the field names, each mapping ``"0"``, ``"1"``, ... to the row's value. It is
  streamed: each column goes to its own spool file next to the destination while the
  records pass once, then the spools are joined into the final file and removed.
- Evaluation references: ``{"query_id", "answers"}`` per line (the scorer's input).

No answer is written ``["No Answer Present."]`` with every ``is_selected`` 0 (a selected
passage on such a record is an error); absent well-formed answers are the 4-character
string ``"[]"``. Records with ``answers=None`` (evaluation/test) carry neither
``answers`` nor ``wellFormedAnswers``; a file is either all of one kind or the other.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from collector.exporters.errors import InvalidRecordError
from collector.exporters.records import NO_ANSWER_PRESENT, MarcoRecord
from collector.exporters.stream import (
    DEFAULT_PROGRESS_EVERY,
    AtomicOutput,
    ManifestEntry,
    Progress,
    ProgressCallback,
    encode_ascii_json,
)

__all__ = [
    "MSMARCO_COLUMNS",
    "MSMARCO_QUERY_TYPES",
    "msmarco_row",
    "write_msmarco_columnar",
    "write_msmarco_jsonl",
    "write_msmarco_references",
]

MSMARCO_QUERY_TYPES = frozenset({"DESCRIPTION", "NUMERIC", "ENTITY", "LOCATION", "PERSON"})
MSMARCO_COLUMNS = ("answers", "passages", "query", "query_id", "query_type",
                   "wellFormedAnswers")
_EVAL_COLUMNS = ("passages", "query", "query_id", "query_type")


def msmarco_row(record: MarcoRecord) -> dict:
    """The record as the official JSONL object (validated)."""
    qid = record.query_id
    if not isinstance(qid, int) or isinstance(qid, bool):
        raise InvalidRecordError(f"query_id {qid!r}: expected an int")
    if not isinstance(record.query, str) or not record.query.strip():
        raise InvalidRecordError(f"query {qid}: empty query text")
    if record.query_type not in MSMARCO_QUERY_TYPES:
        raise InvalidRecordError(
            f"query {qid}: query_type {record.query_type!r} is not one of "
            f"{', '.join(sorted(MSMARCO_QUERY_TYPES))}")
    passages = [{"is_selected": 1 if p.is_selected else 0, "passage_text": p.passage_text,
                 "url": p.url} for p in record.passages]
    for p in passages:
        if type(p["passage_text"]) is not str or type(p["url"]) is not str:
            raise InvalidRecordError(f"query {qid}: passage text and url must be strings")
    any_selected = any(p["is_selected"] for p in passages)
    row: dict = {}
    if record.answers is not None:
        answers = list(record.answers)
        if any(not isinstance(a, str) or not a.strip() for a in answers):
            raise InvalidRecordError(f"query {qid}: an answer is empty or not a string")
        if not answers or answers == [NO_ANSWER_PRESENT]:
            if any_selected:
                raise InvalidRecordError(
                    f"query {qid}: no answer, yet a passage is selected (MS MARCO marks "
                    "every passage is_selected 0 when no answer is present)")
            answers = [NO_ANSWER_PRESENT]
        elif NO_ANSWER_PRESENT in answers:
            raise InvalidRecordError(
                f"query {qid}: {NO_ANSWER_PRESENT!r} mixed with real answers")
        row["answers"] = answers
    elif record.well_formed_answers:
        raise InvalidRecordError(f"query {qid}: well-formed answers without answers")
    row["passages"] = passages
    row["query"] = record.query
    row["query_id"] = qid
    row["query_type"] = record.query_type
    if record.answers is not None:
        wfa = list(record.well_formed_answers or ())
        if any(not isinstance(a, str) or not a.strip() for a in wfa):
            raise InvalidRecordError(f"query {qid}: a well-formed answer is empty")
        row["wellFormedAnswers"] = wfa if wfa else "[]"
    return row


class _Kind:
    """Remembers whether the file holds answered or evaluation records; refuses a mix."""

    def __init__(self) -> None:
        self.with_answers: bool | None = None

    def check(self, record: MarcoRecord) -> bool:
        has = record.answers is not None
        if self.with_answers is None:
            self.with_answers = has
        elif has != self.with_answers:
            raise InvalidRecordError(
                f"query {record.query_id}: mixes records with and without answers in one "
                "file (evaluation records have answers=None throughout)")
        return has


def write_msmarco_jsonl(path: str | os.PathLike[str], records: Iterable[MarcoRecord], *,
                        progress: ProgressCallback | None = None,
                        progress_every: int = DEFAULT_PROGRESS_EVERY,
                        overwrite: bool = False) -> ManifestEntry:
    """Write the row JSONL form (ASCII escapes, like the official conversion)."""
    counter = Progress(progress, progress_every)
    kind = _Kind()
    with AtomicOutput(path, overwrite=overwrite) as out:
        for record in records:
            kind.check(record)
            out.write(encode_ascii_json(msmarco_row(record)) + "\n")
            counter.tick()
    counter.finish()
    return out.entry(counter.count)


def write_msmarco_columnar(path: str | os.PathLike[str], records: Iterable[MarcoRecord], *,
                           progress: ProgressCallback | None = None,
                           progress_every: int = DEFAULT_PROGRESS_EVERY,
                           overwrite: bool = False) -> ManifestEntry:
    """Write the official column-oriented JSON, streaming through per-column spools."""
    dest = Path(path)
    counter = Progress(progress, progress_every)
    kind = _Kind()
    token = secrets.token_hex(6)
    spool_paths = [dest.with_name(f".{dest.name}.{token}.col{i}.tmp")
                   for i in range(len(MSMARCO_COLUMNS))]
    spools = []
    try:
        with AtomicOutput(dest, overwrite=overwrite) as out:
            for spool_path in spool_paths:
                fd = os.open(spool_path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
                spools.append(os.fdopen(fd, "w+b", buffering=1 << 20))
            sep = ""
            for index, record in enumerate(records):
                kind.check(record)
                row = msmarco_row(record)
                prefix = f'{sep}"{index}": '
                for column, spool in zip(MSMARCO_COLUMNS, spools, strict=True):
                    if column in row:
                        spool.write((prefix + encode_ascii_json(row[column])).encode())
                sep = ", "
                counter.tick()
            columns = MSMARCO_COLUMNS if kind.with_answers is not False else _EVAL_COLUMNS
            out.write("{")
            for i, (column, spool) in enumerate(zip(MSMARCO_COLUMNS, spools, strict=True)):
                if column not in columns:
                    continue
                out.write(f'{", " if column != columns[0] else ""}'
                          f'{encode_ascii_json(column)}: {{')
                spool.flush()
                spool.seek(0)
                out.copy_from(spool)
                spool.close()
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(spool_paths[i])
                out.write("}")
            out.write("}\n")
    finally:
        for spool, spool_path in zip(spools, spool_paths, strict=False):
            if not spool.closed:
                spool.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(spool_path)
    counter.finish()
    return out.entry(counter.count)


def write_msmarco_references(path: str | os.PathLike[str], records: Iterable[MarcoRecord], *,
                             progress: ProgressCallback | None = None,
                             progress_every: int = DEFAULT_PROGRESS_EVERY,
                             overwrite: bool = False) -> ManifestEntry:
    """Write the evaluation reference file ``{"query_id", "answers"}`` per line, the
    first argument of ``python -m collector.metrics msmarco``."""
    counter = Progress(progress, progress_every)
    with AtomicOutput(path, overwrite=overwrite) as out:
        for record in records:
            if record.answers is None:
                raise InvalidRecordError(
                    f"query {record.query_id}: a reference needs answers (got None)")
            row = msmarco_row(record)
            out.write(encode_ascii_json({"query_id": row["query_id"],
                                         "answers": row["answers"]}) + "\n")
            counter.tick()
    counter.finish()
    return out.entry(counter.count)
