"""Writing import batches: documents with their passages, and source questions.

Two paths with one behaviour:

* ``OrmBulkWriter``: ``bulk_create`` in batches (SQLite, and any database);
* ``PostgresCopyWriter``: ids drawn from the tables' sequences in one query, then rows
  streamed with ``COPY ... FROM STDIN`` straight into the tables, inside the import's
  transaction (so a failed import still leaves nothing).

Both skip documents and questions whose external id the corpus already has (re-imports
are idempotent) and count what they skipped.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from django.db import DatabaseError, connection
from django.db.models import Model

from collector.importers import DocumentRecord, ImportFailure, QuestionRecord
from collector.importers.errors import shorten
from collector.models import Corpus, Document, ImportRun, Passage, SourceQuestion


@dataclass(slots=True)
class PreparedDocument:
    record: DocumentRecord
    spans: list[tuple[int, int]]


@dataclass(slots=True)
class ImportCounts:
    documents_created: int = 0
    documents_skipped: int = 0
    passages_created: int = 0
    questions_created: int = 0
    questions_skipped: int = 0

    def add(self, other: ImportCounts) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class BulkWriter:
    def __init__(self, *, corpus: Corpus, run: ImportRun, file: str) -> None:
        self.corpus = corpus
        self.run = run
        self.file = file
        # A corpus that starts empty cannot hold any of this import's ids: skip lookups.
        self.check_documents = Document.objects.filter(corpus=corpus).exists()
        self.check_questions = SourceQuestion.objects.filter(corpus=corpus).exists()

    def write(self, documents: Sequence[PreparedDocument],
              questions: Sequence[QuestionRecord]) -> ImportCounts:
        counts = ImportCounts()
        try:
            doc_ids = self._existing_documents([d.record.external_id for d in documents])
            skipped = set(doc_ids)
            new_documents = [d for d in documents if d.record.external_id not in skipped]
            doc_ids.update(self._insert_documents(new_documents))
            counts.documents_created = len(new_documents)
            counts.documents_skipped = len(documents) - len(new_documents)
            counts.passages_created = sum(len(d.spans) for d in new_documents)

            existing_questions = self._existing_questions([q.external_id for q in questions])
            new_questions = [q for q in questions if q.external_id not in existing_questions]
            self._check_skipped_bodies(new_questions, documents, skipped, doc_ids)
            self._insert_questions(new_questions, doc_ids)
            counts.questions_created = len(new_questions)
            counts.questions_skipped = len(questions) - len(new_questions)
        except DatabaseError as exc:
            first = documents[0].record.where if documents else questions[0].where
            last = documents[-1].record.where if documents else questions[-1].where
            detail = " ".join(str(exc).split())
            raise ImportFailure(f"the database refused the batch: {detail}", file=self.file,
                                where=f"records from {first} to {last}") from exc
        return counts

    # -- lookups --------------------------------------------------------------------
    def _existing_documents(self, external_ids: list[str]) -> dict[str, int]:
        if not self.check_documents or not external_ids:
            return {}
        return dict(Document.objects.filter(corpus=self.corpus, external_id__in=external_ids)
                    .values_list("external_id", "id"))

    def _existing_questions(self, external_ids: list[str]) -> set[str]:
        if not self.check_questions or not external_ids:
            return set()
        return set(SourceQuestion.objects.filter(corpus=self.corpus,
                                                 external_id__in=external_ids)
                   .values_list("external_id", flat=True))

    def _check_skipped_bodies(self, questions: Sequence[QuestionRecord],
                              documents: Sequence[PreparedDocument], skipped: set[str],
                              doc_ids: dict[str, int]) -> None:
        """New questions on a document that was already there must agree with its text."""
        needed = {q.document_id for q in questions if q.document_id in skipped}
        if not needed:
            return
        records = {d.record.external_id: d.record for d in documents}
        stored = dict(Document.objects.filter(id__in=[doc_ids[e] for e in needed])
                      .values_list("external_id", "body"))
        for question in questions:
            ident = question.document_id
            if ident in needed and stored.get(ident) != records[ident].body:
                raise ImportFailure(
                    f"document {shorten(ident)} is already in corpus {self.corpus.name!r} "
                    "with a different text, so this question's offsets would not fit it",
                    file=self.file, where=question.where, field="document",
                )

    # -- inserts --------------------------------------------------------------------
    def _insert_documents(self, documents: Sequence[PreparedDocument]) -> dict[str, int]:
        raise NotImplementedError

    def _insert_questions(self, questions: Sequence[QuestionRecord],
                          doc_ids: dict[str, int]) -> None:
        raise NotImplementedError

    def _document_values(self, record: DocumentRecord) -> dict[str, Any]:
        return {
            "corpus_id": self.corpus.pk, "import_run_id": self.run.pk,
            "external_id": record.external_id, "title": record.title, "url": record.url,
            "source_type": record.source_type, "body": record.body,
            "highlights": record.highlights, "metadata": record.metadata,
        }

    def _question_values(self, question: QuestionRecord,
                         doc_ids: dict[str, int]) -> dict[str, Any]:
        return {
            "corpus_id": self.corpus.pk, "import_run_id": self.run.pk,
            "document_id": doc_ids.get(question.document_id) if question.document_id else None,
            "external_id": question.external_id, "text": question.text,
            "answers": question.answers, "is_impossible": question.is_impossible,
            "metadata": question.metadata,
        }


class OrmBulkWriter(BulkWriter):
    def _insert_documents(self, documents: Sequence[PreparedDocument]) -> dict[str, int]:
        if not documents:
            return {}
        objects = [Document(**self._document_values(d.record)) for d in documents]
        Document.objects.bulk_create(objects)
        Passage.objects.bulk_create(
            Passage(document_id=obj.pk, ordinal=ordinal, start=start, end=end,
                    text=d.record.body[start:end])
            for obj, d in zip(objects, documents, strict=True)
            for ordinal, (start, end) in enumerate(d.spans)
        )
        return {obj.external_id: obj.pk for obj in objects}

    def _insert_questions(self, questions: Sequence[QuestionRecord],
                          doc_ids: dict[str, int]) -> None:
        if questions:
            SourceQuestion.objects.bulk_create(
                SourceQuestion(**self._question_values(q, doc_ids)) for q in questions
            )


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def copy_field(value: Any) -> str:
    """One value in PostgreSQL's COPY text format."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False)
    return value.translate(_COPY_ESCAPES)


class PostgresCopyWriter(BulkWriter):
    def _next_ids(self, model: type[Model], count: int) -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
                [model._meta.db_table, count],
            )
            return [row[0] for row in cursor.fetchall()]

    @staticmethod
    def _copy(model: type[Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        buffer = io.StringIO()
        write = buffer.write
        for row in rows:
            write("\t".join([copy_field(value) for value in row]))
            write("\n")
        buffer.seek(0)
        quote = connection.ops.quote_name
        names = ", ".join(quote(model._meta.get_field(name).column) for name in columns)
        with connection.cursor() as cursor:
            cursor.copy_expert(f"COPY {quote(model._meta.db_table)} ({names}) FROM STDIN",
                               buffer, size=1 << 20)

    def _insert_documents(self, documents: Sequence[PreparedDocument]) -> dict[str, int]:
        if not documents:
            return {}
        ids = self._next_ids(Document, len(documents))
        corpus_id, run_id = self.corpus.pk, self.run.pk
        self._copy(
            Document,
            ("id", "corpus", "import_run", "external_id", "title", "url", "source_type", "body",
             "highlights", "metadata"),
            ((pk, corpus_id, run_id, r.external_id, r.title, r.url, r.source_type, r.body,
              r.highlights, r.metadata)
             for pk, r in zip(ids, (d.record for d in documents), strict=True)),
        )
        self._copy(
            Passage, ("document", "ordinal", "start", "end", "text"),
            ((pk, ordinal, start, end, d.record.body[start:end])
             for pk, d in zip(ids, documents, strict=True)
             for ordinal, (start, end) in enumerate(d.spans)),
        )
        return {d.record.external_id: pk for pk, d in zip(ids, documents, strict=True)}

    def _insert_questions(self, questions: Sequence[QuestionRecord],
                          doc_ids: dict[str, int]) -> None:
        if not questions:
            return
        columns = ("corpus", "import_run", "document", "external_id", "text", "answers",
                   "is_impossible", "metadata")
        self._copy(SourceQuestion, columns, (
            (v["corpus_id"], v["import_run_id"], v["document_id"], v["external_id"], v["text"],
             v["answers"], v["is_impossible"], v["metadata"])
            for v in (self._question_values(q, doc_ids) for q in questions)
        ))


def bulk_writer(*, corpus: Corpus, run: ImportRun, file: str, bulk: str = "auto") -> BulkWriter:
    """The fastest writer the database offers (``bulk="orm"`` forces the generic one)."""
    if bulk not in ("auto", "orm", "copy"):
        raise ValueError(f"unknown bulk path {bulk!r}")
    copy_ok = (connection.vendor == "postgresql"
               and connection.Database.__name__ == "psycopg2")
    if bulk == "copy" and not copy_ok:
        raise ValueError("COPY needs PostgreSQL through psycopg2")
    cls = PostgresCopyWriter if bulk != "orm" and copy_ok else OrmBulkWriter
    return cls(corpus=corpus, run=run, file=file)
