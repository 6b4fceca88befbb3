"""Consolidated records of a project, streamed from the database as exporter records.

Each recipe's final stage holds one done item per record (``selectors.consolidated_items``).
These generators read them in (document, id) order, fetch documents in chunks (a body is
read once per chunk, not once per question), and build the plain records of
``collector.exporters`` lazily, so an export's memory stays flat however large the
project is.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterator
from itertools import groupby
from typing import Any

from django.utils.translation import gettext_noop

from annotation.models import Item, Project
from collector.exporters import (
    BAD_QUESTION,
    NO_ANSWER,
    CharSpan,
    DureaderDocument,
    DureaderRecord,
    MarcoPassage,
    MarcoRecord,
    NewsqaQuestion,
    NewsqaSourcerAnswer,
    NewsqaStory,
    NewsqaValidatedAnswer,
    RecoRecord,
    SquadAnswer,
    SquadArticle,
    SquadParagraph,
    SquadQuestion,
    newsqa_consensus,
    squad_id,
)
from collector.models import Document

CHUNK = 2000


def _newsqa_loads(text: str | bytes) -> Any:
    """``json.loads`` of a NewsQA record, by orjson when it is installed (a third of the
    time); what orjson refuses (a lone surrogate escape) goes to ``json.loads``. orjson
    reads an integer beyond 64 bits as a float (``json.loads`` as an int): in a NewsQA
    record only an offset or a count could be one, and the writers refuse both unless
    they are ints, so no file changes silently. Other records keep ``json.loads``."""
    try:
        return _fast_loads(text)
    except ValueError:
        return json.loads(text)


try:
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is in requirements.txt
    _fast_loads = json.loads


def final_items(project: Project) -> Any:
    last = project.stages.order_by("-order").first()
    return Item.objects.filter(stage=last, status=Item.Status.DONE)


def _final_rows(project: Project, *, split: str | None = None,
                documents: tuple[int | None, int | None] = (None, None),
                loads: Callable[[str | bytes], Any] = json.loads
                ) -> Iterator[tuple[int, str, str, Any, int | None]]:
    """``(id, key, split, result, document_id)`` of each final item in (document, id)
    order, ``result`` parsed here from the database's JSON text: the query the ORM builds,
    run on a server-side cursor (``chunked_cursor``) and fetched ``CHUNK`` rows at a time,
    without a converter per row (a million rows read in a fraction of the time).
    ``documents``: only the rows whose document id is in ``[low, high)`` (None: open);
    rows without a document go with the last range (``high`` None), where PostgreSQL
    sorts them."""
    from django.db import connections
    from django.db.models import Q

    qs = _in_split(final_items(project), split)
    low, high = documents
    if low is not None:
        qs = qs.filter(Q(document_id__gte=low) | Q(document_id__isnull=True))
    if high is not None:
        qs = qs.filter(document_id__lt=high)
    qs = qs.order_by("document_id", "id").values_list("id", "key", "split", "result",
                                                      "document_id")
    sql, params = qs.query.sql_with_params()
    with connections[qs.db].chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while chunk := cursor.fetchmany(CHUNK):
            for pk, key, row_split, result, document_id in chunk:
                # The JSON text as stored (PostgreSQL's jsonb text, SQLite's text); a
                # driver that parses JSON itself hands over the value.
                yield (pk, key, row_split,
                       loads(result) if isinstance(result, str | bytes) else result,
                       document_id)


def _in_split(qs: Any, split: str | None) -> Any:
    """``qs`` (items) of ``split`` only (None: every split). Records without a split
    (recipes with no split stage) are train, as in split_counts and splits_of."""
    if split is None:
        return qs
    return qs.filter(split__in=[split, ""]) if split == "train" else qs.filter(split=split)


def _rows_with_documents(project: Project, *, split: str | None = None,
                         documents: tuple[int | None, int | None] = (None, None),
                         loads: Callable[[str | bytes], Any] = json.loads
                         ) -> Iterator[tuple[dict[str, Any], Document | None]]:
    """(row, document) for each final item in (document, id) order; documents loaded by
    chunk with only the fields exports need."""
    buffer: list[dict[str, Any]] = []
    cache: dict[int, Document] = {}
    for pk, key, row_split, result, document_id in _final_rows(
            project, split=split, documents=documents, loads=loads):
        buffer.append({"id": pk, "key": key, "split": row_split, "result": result,
                       "document_id": document_id})
        if len(buffer) >= CHUNK:
            yield from _flush(buffer, cache)
            buffer = []
    yield from _flush(buffer, cache)


def documents_with_rows(project: Project, *, split: str | None = None,
                        documents: tuple[int | None, int | None] = (None, None)
                        ) -> Iterator[tuple[Document | None, list[dict[str, Any]]]]:
    """(document, its final rows in id order) for each document of the final items (those
    in the ``documents`` id range, see ``_final_rows``): the rows of one document, the
    unit every NewsQA and SQuAD record is built from."""
    for _, group in groupby(_rows_with_documents(project, split=split, documents=documents,
                                                 loads=_newsqa_loads),
                            key=lambda pair: pair[0]["document_id"]):
        rows = list(group)
        yield rows[0][1], [row for row, _ in rows]


def _flush(buffer: list[dict[str, Any]], cache: dict[int, Document]
           ) -> Iterator[tuple[dict[str, Any], Document | None]]:
    """Yield the buffered rows with their documents; the cache keeps only this chunk's
    documents (a document whose questions span two chunks is read once)."""
    needed = {r["document_id"] for r in buffer if r["document_id"]}
    for stale in set(cache) - needed:
        del cache[stale]
    missing = needed - set(cache)
    if missing:
        cache.update(Document.objects.only("id", "external_id", "title", "url", "body",
                                           "metadata")
                     .in_bulk(missing))
    for row in buffer:
        yield row, cache.get(row["document_id"])


def document_pivot(project: Project) -> int | None:
    """The document id that splits the final rows with a document into two halves (rows
    of documents below it, rows of it and above), for two processes to write one release;
    None without rows."""
    qs = final_items(project).exclude(document_id=None)
    n = qs.count()
    if not n:
        return None
    return qs.order_by("document_id").values_list("document_id", flat=True)[n // 2]


def split_counts(project: Project) -> dict[str, int]:
    """Final records per split (counted in the database)."""
    from django.db.models import Count

    counts: dict[str, int] = {}
    for split, n in (final_items(project).values_list("split").annotate(n=Count("id"))
                     .order_by()):
        counts[split or "train"] = counts.get(split or "train", 0) + n
    return counts


def splits_of(project: Project) -> list[str]:
    order = {"train": 0, "dev": 1, "test": 2}
    found = final_items(project).values_list("split", flat=True).distinct()
    return sorted({s or "train" for s in found}, key=lambda s: (order.get(s, 9), s))


# NewsQA ------------------------------------------------------------------------------

def _choice(obj: dict[str, Any] | None) -> Any:
    if not obj:
        return None
    if obj.get("noAnswer"):
        return NO_ANSWER
    if obj.get("badQuestion"):
        return BAD_QUESTION
    return CharSpan(obj["s"], obj["e"])


def newsqa_story_id(doc: Document) -> str:
    """The ``storyId`` of a document in the NewsQA files: the source's own id.

    A story imported from NewsQA data keeps its ``storyId`` (``metadata["story_id"]``); a
    CNN story file becomes ``./cnn/stories/<file name>`` as in NewsQA; any other document
    (a SQuAD paragraph, a news article from elsewhere) keeps its own external id (e.g.
    ``Super_Bowl_50#0``), never a made-up CNN path.
    """
    meta = doc.metadata or {}
    if meta.get("story_id"):
        return str(meta["story_id"])
    if meta.get("story_file"):
        return f"./cnn/stories/{meta['story_file']}"
    return doc.external_id


def story_id_kind(doc: Document) -> str:
    """Which rule of :func:`newsqa_story_id` applies (counted in the datasheet)."""
    meta = doc.metadata or {}
    return "newsqa" if meta.get("story_id") else "cnn" if meta.get("story_file") else "source"


def _validated_answers(entries: list[dict[str, Any]]) -> list[NewsqaValidatedAnswer]:
    """The record's ``validatedAnswers`` as the NewsQA files carry them. Their format knows
    a span, ``none`` / ``noAnswer`` and ``bad_question`` / ``badQuestion`` only (Maluuba's
    loader reads any other key as a span and fails), so the validators' "all answers are
    bad" votes (``allBad``, kept apart in the record) are counted with ``none``: no valid
    answer, which is what the loader makes of them, and the votes still count towards its
    ``max_count >= total / 2``, so a span most validators rejected never becomes the
    files' consensus. The record keeps the two apart: its ``agreed`` is what SQuAD, Hugging
    Face and the datasheet follow."""
    validated: list[NewsqaValidatedAnswer] = []
    none: NewsqaValidatedAnswer | None = None
    for entry in entries:
        choice = NO_ANSWER if entry.get("allBad") else _choice(entry)
        if choice == NO_ANSWER:
            if none is not None:
                none.count += entry["count"]
                continue
            none = NewsqaValidatedAnswer(choice=NO_ANSWER, count=entry["count"])
            validated.append(none)
        else:
            validated.append(NewsqaValidatedAnswer(choice=choice, count=entry["count"]))
    return validated


def _answer_workers(record: dict[str, Any]) -> list[Any]:
    """The answerers' ids, parallel to the record's answers (None where the record, made
    before they were kept, has none)."""
    workers = record.get("answerWorkers")
    return list(workers) if workers else [None] * len(record["answers"])


def _newsqa_question(record: dict[str, Any]) -> NewsqaQuestion:
    answers = [
        NewsqaSourcerAnswer(spans=[CharSpan(s["s"], s["e"]) for s in a["sourcerAnswers"]
                                   if "s" in s], worker=worker)
        for a, worker in zip(record["answers"], _answer_workers(record), strict=True)
    ]
    validated = record.get("validatedAnswers")
    return NewsqaQuestion(
        q=record["q"], answers=answers, is_answer_absent=record["isAnswerAbsent"],
        is_question_bad=record.get("isQuestionBad"),
        validated_answers=_validated_answers(validated) if validated is not None else None,
    )


def newsqa_question(record: dict[str, Any]) -> NewsqaQuestion:
    """The question as the NewsQA files carry it, with the consensus Maluuba's loader
    computes from its answers (:func:`collector.exporters.newsqa_consensus`); the
    platform's own choice stays in the record's ``consensus``."""
    question = _newsqa_question(record)
    question.consensus = newsqa_consensus(question)
    return question


def split_parts(rows: list[dict[str, Any]], questions: list[Any]
                ) -> list[tuple[str, list[dict[str, Any]], list[Any]]]:
    """The final ``rows`` of one document and their ``questions`` (same order) by split
    (no split: train): ``(split, rows, questions)``, each split's rows in their order,
    the splits in the order of their first row. NewsQA splits by article, so a
    document's questions share one split; where they do not, each question still goes
    with its own split (the document then appears once per split)."""
    first = rows[0]["split"] or "train"
    if all((row["split"] or "train") == first for row in rows):
        return [(first, rows, questions)]
    parts: dict[str, tuple[list[dict[str, Any]], list[Any]]] = {}
    for row, question in zip(rows, questions, strict=True):
        part_rows, part_questions = parts.setdefault(row["split"] or "train", ([], []))
        part_rows.append(row)
        part_questions.append(question)
    return [(split, part_rows, part_questions)
            for split, (part_rows, part_questions) in parts.items()]


def newsqa_stories(project: Project, *, split: str | None = None) -> Iterator[NewsqaStory]:
    """The NewsQA stories of the final rows (of ``split`` only, unless None), one per
    document and split (:func:`split_parts`), each with its split as ``type``."""
    for doc, rows in documents_with_rows(project, split=split):
        questions = [newsqa_question(r["result"]) for r in rows]
        for _, part_rows, part_questions in split_parts(rows, questions):
            yield newsqa_story(doc, part_rows, part_questions)


def newsqa_story_ids(project: Project, *, split: str) -> Iterator[str]:
    """The ``storyId`` (:func:`newsqa_story_id`) of each document with final rows in
    ``split``, in document order (the order of the NewsQA files): the story-id list of
    the split, as NewsQA's ``train_story_ids.csv`` / ``dev_story_ids.csv`` /
    ``test_story_ids.csv``. Reads documents' ids and metadata only, not their text."""
    documents = _in_split(final_items(project), split).exclude(document_id=None).values(
        "document_id")
    for doc in (Document.objects.filter(pk__in=documents).order_by("pk")
                .only("id", "external_id", "metadata").iterator(chunk_size=CHUNK)):
        yield newsqa_story_id(doc)


def newsqa_story(doc: Document, rows: list[dict[str, Any]],
                 questions: list[NewsqaQuestion]) -> NewsqaStory:
    """The NewsQA story of ``doc``: its final ``rows`` and their ``questions``
    (:func:`newsqa_question`, in the same order)."""
    return NewsqaStory(story_id=newsqa_story_id(doc), text=doc.body,
                       type=rows[0]["split"] or "train", questions=questions)


# What SQuAD and Hugging Face get for a question without agreement after validation.
#: The values of Release.UnagreedQuestions, in full: English in the datasheet, translated
#: where the project page offers them (marked for the catalogue).
UNAGREED_CHOICES = {
    "unanswerable": gettext_noop("not answerable (SQuAD v2.0 is_impossible, with the answers "
                                 "as plausible answers; left out of SQuAD v1.1), as the NewsQA "
                                 "paper suggests treating them"),
    "omit": gettext_noop("left out of SQuAD and Hugging Face, as the NewsQA paper's "
                         "experiments use only questions with answer agreement"),
    "consensus": gettext_noop("answerable when the official NewsQA consensus is a span"),
}


def squad_articles(project: Project, *, split: str | None = None, namespace: str,
                   unagreed: str = "unanswerable") -> Iterator[SquadArticle]:
    """One article and one paragraph (the document body) per document. The answer is the
    consensus Maluuba's loader computes (:func:`newsqa_question`); a question without
    agreement after validation (the record's ``agreed`` false) is exported as
    ``unagreed`` says (:data:`UNAGREED_CHOICES`)."""
    if unagreed not in UNAGREED_CHOICES:
        raise ValueError(f"unagreed: {unagreed!r} is not one of {', '.join(UNAGREED_CHOICES)}")
    for doc, rows in documents_with_rows(project, split=split):
        article = squad_article(doc, rows, [newsqa_question(r["result"]) for r in rows],
                                namespace=namespace, unagreed=unagreed)
        if article is not None:
            yield article


def squad_article(doc: Document, rows: list[dict[str, Any]], questions: list[NewsqaQuestion],
                  *, namespace: str, unagreed: str) -> SquadArticle | None:
    """The SQuAD article of ``doc`` (one paragraph, its body) from its final ``rows`` and
    their ``questions`` (:func:`newsqa_question`, same order); lists, so one article feeds
    several writers. None when every question is left out (``unagreed="omit"``)."""
    body = doc.body
    qas = [q for q in (_squad_question(body, row, namespace, unagreed, question)
                       for row, question in zip(rows, questions, strict=True))
           if q is not None]
    if not qas:
        return None
    return SquadArticle(title=doc.title or doc.external_id,
                        paragraphs=[SquadParagraph(context=body, qas=qas)])


def _squad_question(body: str, row: dict[str, Any], namespace: str, unagreed: str,
                    question: NewsqaQuestion | None = None) -> SquadQuestion | None:
    record = row["result"]
    agreed = record.get("agreed", True)
    if not agreed and unagreed == "omit":
        return None
    # Each answerer's span answer (its parts) and its answerer; as one span from its first
    # start to its last end.
    given = [(a["sourcerAnswers"], worker)
             for a, worker in zip(record["answers"], _answer_workers(record), strict=True)
             if "s" in a["sourcerAnswers"][0]]
    sourced = [((parts[0]["s"], parts[-1]["e"]), worker) for parts, worker in given]
    consensus = (question or newsqa_question(record)).consensus
    qid = squad_id(namespace, row["key"])
    if not isinstance(consensus, CharSpan) or (not agreed and unagreed != "consensus"):
        plausible: dict[tuple[int, int], Any] = {}
        for span, worker in sourced:
            plausible.setdefault(span, worker)
        return SquadQuestion(
            id=qid, question=record["q"], answers=(), is_impossible=True,
            plausible_answers=[SquadAnswer(body[s:e], s, worker)
                               for (s, e), worker in plausible.items()],
        )
    first = (consensus.s, consensus.e)
    # The consensus is the answer of the first answerer who gave it: as their whole answer,
    # or (Maluuba's count without validation) as one of its spans.
    author = next((worker for (span, worker), (parts, _) in zip(sourced, given, strict=True)
                   if span == first or any(first == (p["s"], p["e"]) for p in parts)), None)
    ordered = [(first, author)] + [(span, worker) for span, worker in sourced if span != first]
    return SquadQuestion(id=qid, question=record["q"],
                         answers=[SquadAnswer(body[s:e], s, worker)
                                  for (s, e), worker in ordered])


# MS MARCO and DuReader ----------------------------------------------------------------

def _numeric(text: str) -> bool:
    return text.isascii() and text.isdigit()  # "²" is a digit to isdigit, not to int


def _hashed_id(text: str) -> int:
    return zlib.crc32(text.encode()) & 0x7FFFFFFF


def _int_id(value: Any, fallback: int, taken: dict[str, int] | None = None) -> int:
    """MS MARCO and DuReader want integer ids: a numeric external id as it is, otherwise a
    stable 31-bit number from it (``taken``: the ids :func:`query_int_ids` gave the
    external ids whose numbers collide)."""
    text = str(value)
    if taken and text in taken:
        return taken[text]
    if _numeric(text):
        return int(text)
    return _hashed_id(text) or fallback


def query_int_ids(project: Project) -> dict[str, int]:
    """The integer ids of the project's final records whose 31-bit number collides with
    another record's (two records of one release must not share a ``query_id``: the
    official scorers key answers by it). Among the external ids sharing a number, a numeric
    id keeps it (the one written as that number first), else the first in sorted order
    does; each other one takes the number of ``"<id>#1"``, ``"<id>#2"``, ... that no record
    has. Decided over every split of the
    project, so a query keeps one id in every file and format of a release, and the same
    id in the next release unless a new colliding id sorts before it. The records' query
    ids are read alone, in one pass, their numbers kept in an array (8 bytes a record), and
    the colliding ids only in a second pass. Numeric ids written differently ("007", "7")
    collide too: the one written as the number keeps it."""
    import numpy as np
    from django.db.models.fields.json import KT

    keys = (final_items(project).order_by().annotate(query_id=KT("result__query_id"))
            .values_list("query_id", flat=True))

    def number(key: Any) -> int:
        # A numeric id past 63 bits is compared by its low 63 (the array's width).
        return int(key) % 2**63 if _numeric(key := str(key)) else _hashed_id(key)

    numbers = np.fromiter((number(k) for k in keys.iterator(chunk_size=CHUNK)),
                          dtype=np.int64)
    values, counts = np.unique(numbers, return_counts=True)
    shared = set(values[counts > 1].tolist())
    if not shared:
        return {}
    groups: dict[int, list[str]] = {}
    for key in keys.iterator(chunk_size=CHUNK):
        if (n := number(key)) in shared:
            groups.setdefault(n, []).append(str(key))
    used = set(shared)
    taken: dict[str, int] = {}
    for n, group in sorted(groups.items()):
        # One id keeps n: the numeric id written as n ("7", not "007"), else the first
        # numeric one, else the first in sorted order; the others take new numbers.
        ordered = sorted(set(group), key=lambda k: (k != str(n), not _numeric(k), k))
        for key in ordered[1:]:
            probe = 1
            while True:
                candidate = _hashed_id(f"{key}#{probe}")
                position = np.searchsorted(values, candidate)
                if candidate and candidate not in used and not (
                        position < len(values) and values[position] == candidate):
                    break
                probe += 1
            used.add(candidate)
            taken[key] = candidate
    return taken


def marco_records(project: Project, *, split: str | None = None,
                  include_unanswerable: bool = True) -> Iterator[MarcoRecord]:
    taken = query_int_ids(project)
    for row, _ in _rows_with_documents(project, split=split):
        record = row["result"]
        if record.get("no_answer") and not include_unanswerable:
            continue
        yield MarcoRecord(
            query_id=_int_id(record["query_id"], row["id"], taken), query=record["query"],
            query_type=record.get("query_type") or "DESCRIPTION",
            passages=[MarcoPassage(passage_text=p["passage_text"], url=p.get("url") or "",
                                   is_selected=bool(p["is_selected"]))
                      for p in record["passages"]],
            answers=[] if record.get("no_answer") else record["answers"],
            workers=record.get("answer_workers"),
        )


def dureader_records(project: Project, *, split: str | None = None) -> Iterator[DureaderRecord]:
    taken = query_int_ids(project)
    for row, _ in _rows_with_documents(project, split=split):
        record = row["result"]
        if record.get("no_answer"):
            continue
        qtype = record.get("question_type") or "DESCRIPTION"
        yield DureaderRecord(
            question_id=_int_id(record["query_id"], row["id"], taken),
            question=record["query"],
            question_type=qtype, fact_or_opinion="OPINION" if qtype == "YES_NO" else "FACT",
            documents=[DureaderDocument(title=p.get("document") or "",
                                        paragraphs=[p["passage_text"]],
                                        bs_rank_pos=int(p["rank"]) - 1,
                                        is_selected=bool(p["is_selected"]))
                       for p in record["passages"]],
            answers=record["answers"],
            yesno_answers=record.get("yesno_answers") or ([] if qtype == "YES_NO" else None),
            entity_answers=record.get("entity_answers") or (
                [[] for _ in record["answers"]] if qtype == "ENTITY" else None),
            workers=record.get("answer_workers"),
        )


# ReCO ------------------------------------------------------------------------------

def reco_records(project: Project, *, split: str | None = None) -> Iterator[RecoRecord]:
    """ReCO final records (``annotation.stages.reco.final_record``)."""
    for row, _ in _rows_with_documents(project, split=split):
        record = row["result"]
        provenance = record.get("provenance") or {}
        ident = record.get("query_id") or provenance.get("external_id") or row["key"]
        annotators = provenance.get("annotators") or [None]
        yield RecoRecord(
            query_id=_int_id(ident, row["id"]), query=record["query"], doc=record["doc"],
            passage=record["passage"], alternatives=record["alternatives"].split("|"),
            answer=record.get("answer"), url=record.get("url"), annotator=annotators[0],
        )
