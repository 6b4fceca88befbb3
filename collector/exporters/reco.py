"""ReCO JSON (``data/datasets/reco/README.md``): one JSON array of records
``{"query_id", "query", "url", "doc", "passage", "alternatives", "answer"}``, one record
per line, UTF-8 without escapes (the ReCO code loads the file with ``json.load``).

``passage`` is the evidence, ``alternatives`` the three candidates joined by ``|`` with
the gold answer first (ReCO's training code takes item 0 as gold; the other two keep
their order). ``url`` and ``answer`` are left out when None (unlabelled test records).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from collector.exporters.errors import InvalidRecordError
from collector.exporters.records import RecoRecord
from collector.exporters.stream import (
    DEFAULT_PROGRESS_EVERY,
    AtomicOutput,
    ManifestEntry,
    Progress,
    ProgressCallback,
    encode_utf8_json,
)

__all__ = ["reco_alternatives", "reco_row", "write_reco"]


def reco_alternatives(record: RecoRecord) -> list[str]:
    """The three candidates, gold first when the answer is known (validated)."""
    qid = record.query_id
    alts = list(record.alternatives)
    if len(alts) != 3:
        raise InvalidRecordError(f"query {qid}: {len(alts)} alternatives, ReCO has exactly 3")
    for alt in alts:
        if not isinstance(alt, str) or not alt.strip() or "|" in alt:
            raise InvalidRecordError(
                f"query {qid}: alternative {alt!r} is empty or contains '|'")
    if len(set(alts)) != 3:
        raise InvalidRecordError(f"query {qid}: alternatives {alts!r} repeat a candidate")
    if record.answer is not None:
        if record.answer not in alts:
            raise InvalidRecordError(
                f"query {qid}: answer {record.answer!r} is not one of {alts!r}")
        alts.remove(record.answer)
        alts.insert(0, record.answer)
    return alts


def reco_row(record: RecoRecord) -> dict:
    qid = record.query_id
    if not isinstance(qid, int) or isinstance(qid, bool):
        raise InvalidRecordError(f"query_id {qid!r}: expected an int")
    for name in ("query", "doc", "passage"):
        value = getattr(record, name)
        if not isinstance(value, str) or not value.strip():
            raise InvalidRecordError(f"query {qid}: {name} is empty")
    row: dict = {"query_id": qid, "query": record.query}
    if record.url is not None:
        row["url"] = record.url
    row["doc"] = record.doc
    row["passage"] = record.passage
    row["alternatives"] = "|".join(reco_alternatives(record))
    if record.answer is not None:
        row["answer"] = record.answer
    return row


def write_reco(path: str | os.PathLike[str], records: Iterable[RecoRecord], *,
               progress: ProgressCallback | None = None,
               progress_every: int = DEFAULT_PROGRESS_EVERY,
               overwrite: bool = False) -> ManifestEntry:
    """Write a ReCO JSON array file (e.g. ``ReCO.validationset.json``)."""
    counter = Progress(progress, progress_every)
    with AtomicOutput(path, overwrite=overwrite) as out:
        sep = "[\n"
        for record in records:
            out.write(sep + encode_utf8_json(reco_row(record)))
            sep = ",\n"
            counter.tick()
        out.write("[]\n" if sep == "[\n" else "\n]\n")
    counter.finish()
    return out.entry(counter.count)
