"""DuReader JSON lines (``data/datasets/dureader/README.md``), UTF-8 without escapes.

Key order: ``question_id, question, segmented_question, question_type, fact_or_opinion,
yesno_type, documents, answers, segmented_answers, yesno_answers, entity_answers,
answer_docs, answer_spans, fake_answers, match_scores`` (absent fields left out; the
official files have no fixed order). Document keys: ``title, segmented_title,
paragraphs, segmented_paragraphs, bs_rank_pos, is_selected, most_related_para``.

The raw form is written when the preprocessed fields are None; the preprocessed form
when they are given, in which case every extractive answer is checked as DuReader's
preprocessing defines it: ``"".join(documents[answer_docs[k]].segmented_paragraphs[
most_related_para][s:e + 1]) == fake_answers[k]`` with ``[s, e] = answer_spans[k]``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from collector.exporters.errors import InvalidRecordError
from collector.exporters.records import (
    DUREADER_FACT_OR_OPINION,
    DUREADER_QUESTION_TYPES,
    DUREADER_YESNO_LABELS,
    DureaderDocument,
    DureaderRecord,
)
from collector.exporters.stream import (
    DEFAULT_PROGRESS_EVERY,
    AtomicOutput,
    ManifestEntry,
    Progress,
    ProgressCallback,
    encode_utf8_json,
)

__all__ = ["dureader_row", "write_dureader"]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _strings(value: object, what: str, qid: int) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidRecordError(f"question {qid}: {what} must be a list of strings")
    items = list(value)
    if any(not isinstance(item, str) for item in items):
        raise InvalidRecordError(f"question {qid}: {what} must be a list of strings")
    return items


def _document(doc: DureaderDocument, index: int, qid: int) -> dict:
    where = f"document {index}"
    if not isinstance(doc.title, str):
        raise InvalidRecordError(f"question {qid}: {where} title must be a string")
    obj: dict = {"title": doc.title}
    if doc.segmented_title is not None:
        obj["segmented_title"] = _strings(doc.segmented_title, f"{where} segmented_title", qid)
    obj["paragraphs"] = _strings(doc.paragraphs, f"{where} paragraphs", qid)
    if doc.segmented_paragraphs is not None:
        seg = [_strings(p, f"{where} segmented_paragraphs", qid)
               for p in doc.segmented_paragraphs]
        if len(seg) != len(obj["paragraphs"]):
            raise InvalidRecordError(
                f"question {qid}: {where} has {len(obj['paragraphs'])} paragraphs but "
                f"{len(seg)} segmented paragraphs")
        obj["segmented_paragraphs"] = seg
    if not _is_int(doc.bs_rank_pos) or doc.bs_rank_pos < 0:
        raise InvalidRecordError(f"question {qid}: {where} bs_rank_pos {doc.bs_rank_pos!r}")
    obj["bs_rank_pos"] = doc.bs_rank_pos
    if doc.is_selected is not None:
        obj["is_selected"] = bool(doc.is_selected)
    if doc.most_related_para is not None:
        mrp = doc.most_related_para
        # -1: no related paragraph (DuReader's preprocessing writes it for such documents)
        if not _is_int(mrp) or not -1 <= mrp < len(obj["paragraphs"]):
            raise InvalidRecordError(
                f"question {qid}: {where} most_related_para {mrp!r} is not a paragraph index "
                "or -1")
        obj["most_related_para"] = mrp
    return obj


def _check_preprocessed(record: DureaderRecord, row: dict, qid: int) -> None:
    fields = ("answer_docs", "answer_spans", "fake_answers", "match_scores")
    given = [getattr(record, name) is not None for name in fields]
    if not any(given):
        return
    if not all(given):
        missing = [name for name, ok in zip(fields, given, strict=True) if not ok]
        raise InvalidRecordError(
            f"question {qid}: preprocessed fields given without {', '.join(missing)}")
    docs = list(record.answer_docs or ())
    spans = [list(span) for span in record.answer_spans or ()]
    fakes = list(record.fake_answers or ())
    scores = list(record.match_scores or ())
    if not len(docs) == len(spans) == len(fakes) == len(scores):
        raise InvalidRecordError(
            f"question {qid}: answer_docs, answer_spans, fake_answers and match_scores "
            "differ in length")
    documents = row["documents"]
    for k, (doc_index, span, fake) in enumerate(zip(docs, spans, fakes, strict=True)):
        if not _is_int(doc_index) or not 0 <= doc_index < len(documents):
            raise InvalidRecordError(
                f"question {qid}: answer_docs[{k}] = {doc_index!r} is not a document index")
        if len(span) != 2 or not all(_is_int(x) for x in span) or not 0 <= span[0] <= span[1]:
            raise InvalidRecordError(f"question {qid}: answer_spans[{k}] = {span!r}")
        doc = documents[doc_index]
        if ("segmented_paragraphs" not in doc or "most_related_para" not in doc
                or doc["most_related_para"] < 0):
            raise InvalidRecordError(
                f"question {qid}: answer_spans[{k}] points into document {doc_index}, which "
                "has no segmented_paragraphs / most_related_para")
        tokens = doc["segmented_paragraphs"][doc["most_related_para"]]
        if span[1] >= len(tokens) or "".join(tokens[span[0]:span[1] + 1]) != fake:
            found = "".join(tokens[span[0]:span[1] + 1])
            raise InvalidRecordError(
                f"question {qid}: fake_answers[{k}] {fake!r} does not match answer_spans[{k}] "
                f"{span} in document {doc_index} (tokens give {found!r})")
    row["answer_docs"] = docs
    row["answer_spans"] = spans
    row["fake_answers"] = fakes
    row["match_scores"] = [float(s) for s in scores]


def dureader_row(record: DureaderRecord) -> dict:
    """The record as an official DuReader JSON object (validated)."""
    qid = record.question_id
    if not _is_int(qid):
        raise InvalidRecordError(f"question_id {qid!r}: expected an int")
    if not isinstance(record.question, str) or not record.question.strip():
        raise InvalidRecordError(f"question {qid}: empty question text")
    if record.question_type not in DUREADER_QUESTION_TYPES:
        raise InvalidRecordError(
            f"question {qid}: question_type {record.question_type!r} is not one of "
            f"{', '.join(sorted(DUREADER_QUESTION_TYPES))}")
    if record.fact_or_opinion not in DUREADER_FACT_OR_OPINION:
        raise InvalidRecordError(
            f"question {qid}: fact_or_opinion {record.fact_or_opinion!r} is not FACT or "
            "OPINION")
    row: dict = {"question_id": qid, "question": record.question}
    if record.segmented_question is not None:
        row["segmented_question"] = _strings(record.segmented_question,
                                             "segmented_question", qid)
    row["question_type"] = record.question_type
    row["fact_or_opinion"] = record.fact_or_opinion
    if record.yesno_type is not None:
        if record.yesno_type not in DUREADER_FACT_OR_OPINION:
            raise InvalidRecordError(
                f"question {qid}: yesno_type {record.yesno_type!r} is not FACT or OPINION")
        row["yesno_type"] = record.yesno_type
    row["documents"] = [_document(doc, i, qid) for i, doc in enumerate(record.documents)]

    if record.answers is None:
        for name in ("yesno_answers", "entity_answers", "segmented_answers", "answer_docs",
                     "answer_spans", "fake_answers", "match_scores"):
            if getattr(record, name) is not None:
                raise InvalidRecordError(f"question {qid}: {name} given without answers")
        return row
    answers = _strings(record.answers, "answers", qid)
    row["answers"] = answers
    if record.segmented_answers is not None:
        seg = [_strings(a, "segmented_answers", qid) for a in record.segmented_answers]
        if len(seg) != len(answers):
            raise InvalidRecordError(
                f"question {qid}: {len(seg)} segmented answers for {len(answers)} answers")
        row["segmented_answers"] = seg
    if record.yesno_answers is not None:
        labels = _strings(record.yesno_answers, "yesno_answers", qid)
        if labels and record.question_type != "YES_NO":
            raise InvalidRecordError(
                f"question {qid}: yesno_answers on a {record.question_type} question")
        if len(labels) != len(answers):
            raise InvalidRecordError(
                f"question {qid}: {len(labels)} yesno_answers for {len(answers)} answers "
                "(they run parallel)")
        bad = [label for label in labels if label not in DUREADER_YESNO_LABELS]
        if bad:
            raise InvalidRecordError(
                f"question {qid}: yesno label {bad[0]!r} is not Yes, No or Depends")
        row["yesno_answers"] = labels
    if record.entity_answers is not None:
        entities = [_strings(e, "entity_answers", qid) for e in record.entity_answers]
        if any(entities) and record.question_type != "ENTITY":
            raise InvalidRecordError(
                f"question {qid}: entity_answers on a {record.question_type} question")
        if len(entities) != len(answers):
            raise InvalidRecordError(
                f"question {qid}: {len(entities)} entity lists for {len(answers)} answers "
                "(they run parallel)")
        row["entity_answers"] = entities
    _check_preprocessed(record, row, qid)
    return row


def write_dureader(path: str | os.PathLike[str], records: Iterable[DureaderRecord], *,
                   progress: ProgressCallback | None = None,
                   progress_every: int = DEFAULT_PROGRESS_EVERY,
                   overwrite: bool = False) -> ManifestEntry:
    """Write DuReader JSON lines (e.g. ``search.dev.json``); ``records`` counts questions."""
    counter = Progress(progress, progress_every)
    with AtomicOutput(path, overwrite=overwrite) as out:
        for record in records:
            out.write(encode_utf8_json(dureader_row(record)) + "\n")
            counter.tick()
    counter.finish()
    return out.entry(counter.count)
