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
import queue
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from django.db import DatabaseError, connection
from django.utils.translation import gettext_noop

from collector.importers import DocumentRecord, ImportFailure, QuestionRecord
from collector.importers.errors import shorten
from collector.models import Corpus, Document, ImportRun, Passage, SourceQuestion
from collector.stored_text import StoredText

REFUSED = gettext_noop("the database refused the batch: %(detail)s")
RECORDS_FROM = gettext_noop("records from %(first)s to %(last)s")


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
            raise ImportFailure(StoredText(REFUSED, detail=detail), file=self.file,
                                where=StoredText(RECORDS_FROM, first=first, last=last)) from exc
        return counts

    def close(self) -> None:
        """Finish writing (before the transaction commits)."""

    def abort(self) -> None:
        """Stop any background work (the transaction is being rolled back)."""

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
                    StoredText(gettext_noop("document %(id)s is already in corpus %(corpus)s "
                                            "with a different text, so this question's "
                                            "offsets would not fit it"),
                               id=shorten(ident), corpus=repr(self.corpus.name)),
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
_NEEDS_ESCAPE = re.compile(r"[\\\t\n\r]")


def copy_text(value: str) -> str:
    """A string in PostgreSQL's COPY text format (most strings need no escaping)."""
    return value.translate(_COPY_ESCAPES) if _NEEDS_ESCAPE.search(value) else value


def copy_field(value: Any) -> str:
    """One value in PostgreSQL's COPY text format."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict | list):
        if not value:
            return "{}" if isinstance(value, dict) else "[]"
        value = json.dumps(value, ensure_ascii=False)
    return copy_text(value)


_STOP = object()


class PostgresCopyWriter(BulkWriter):
    """COPY into the tables, pipelined: while one batch streams to the server on a
    background thread (over this transaction's connection), the next one is read and
    formatted. Batches whose writing needs answers from the database (existing ids,
    question-to-document ids) wait for the pipeline to drain and are written in line.
    """

    DOCUMENT_COLUMNS = ("id", "corpus", "import_run", "external_id", "title", "url",
                        "source_type", "body", "highlights", "metadata")
    PASSAGE_COLUMNS = ("document", "ordinal", "start", "end", "text")
    QUESTION_COLUMNS = ("corpus", "import_run", "document", "external_id", "text", "answers",
                        "is_impossible", "metadata")

    def __init__(self, *, corpus: Corpus, run: ImportRun, file: str) -> None:
        super().__init__(corpus=corpus, run=run, file=file)
        # Created here, in the importing thread: the COPY thread only uses it.
        self._cursor = connection.cursor()
        # Check foreign keys row by row while copying (on the pipeline's thread) rather
        # than all at commit; restored by close(), or by the rollback of a failed import.
        self._cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        quote = connection.ops.quote_name
        self._sql = {
            model: "COPY {} ({}) FROM STDIN".format(
                quote(model._meta.db_table),
                ", ".join(quote(model._meta.get_field(name).column) for name in columns))
            for model, columns in ((Document, self.DOCUMENT_COLUMNS),
                                   (Passage, self.PASSAGE_COLUMNS),
                                   (SourceQuestion, self.QUESTION_COLUMNS))
        }
        self._sequence = None
        self._queue: queue.Queue = queue.Queue(maxsize=1)
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._failed_at = ""

    # -- the pipeline -----------------------------------------------------------------
    def write(self, documents: Sequence[PreparedDocument],
              questions: Sequence[QuestionRecord]) -> ImportCounts:
        if questions or self.check_documents or self.check_questions:
            self.drain()
            return super().write(documents, questions)
        self._raise_failure()
        formatted = self._format_documents(documents)
        where = (StoredText(RECORDS_FROM, first=documents[0].record.where,
                            last=documents[-1].record.where) if documents else "")
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="crowdqa-copy", daemon=True)
            self._thread.start()
        self._queue.put((formatted, where))
        return ImportCounts(documents_created=len(documents),
                            passages_created=sum(len(d.spans) for d in documents))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                if self._failure is None:
                    formatted, where = item
                    try:
                        self._store(formatted)
                    except BaseException as exc:  # handed to the importing thread
                        self._failure, self._failed_at = exc, where
            finally:
                self._queue.task_done()

    def drain(self) -> None:
        """Wait until every submitted batch is in the database."""
        if self._thread is not None:
            self._queue.join()
        self._raise_failure()

    def _raise_failure(self) -> None:
        if self._failure is not None:
            detail = " ".join(str(self._failure).split())
            raise ImportFailure(StoredText(REFUSED, detail=detail), file=self.file,
                                where=self._failed_at) from self._failure

    def close(self) -> None:
        self.drain()
        self.abort()
        self._cursor.execute("SET CONSTRAINTS ALL DEFERRED")

    def abort(self) -> None:
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join()
            self._thread = None

    # -- formatting (importing thread) and storing (either thread) -------------------------
    def _format_documents(self, documents: Sequence[PreparedDocument]
                          ) -> list[tuple[str, list[str]]]:
        """Each document's COPY row without its id, and its passages' rows without the id."""
        head = f"{self.corpus.pk}\t{self.run.pk}\t"
        formatted = []
        for prepared in documents:
            record = prepared.record
            body = record.body
            escaped_body = copy_text(body)
            row = (f"{head}{copy_text(record.external_id)}\t{copy_text(record.title)}\t"
                   f"{copy_text(record.url)}\t{record.source_type}\t{escaped_body}\t"
                   f"{copy_field(record.highlights)}\t{copy_field(record.metadata)}")
            passages = []
            for ordinal, (start, end) in enumerate(prepared.spans):
                text = escaped_body if start == 0 and end == len(body) else copy_text(
                    body[start:end])
                passages.append(f"{ordinal}\t{start}\t{end}\t{text}")
            formatted.append((row, passages))
        return formatted

    def _store(self, formatted: list[tuple[str, list[str]]]) -> list[int]:
        if not formatted:
            return []
        cursor = self._cursor
        if self._sequence is None:
            cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [Document._meta.db_table])
            self._sequence = cursor.fetchone()[0]
        cursor.execute("SELECT nextval(%s) FROM generate_series(1, %s)",
                       [self._sequence, len(formatted)])
        ids = [row[0] for row in cursor.fetchall()]
        documents = "".join([f"{pk}\t{row}\n" for pk, (row, _) in zip(ids, formatted,
                                                                      strict=True)])
        passages = "".join([f"{pk}\t{passage}\n" for pk, (_, rows) in zip(ids, formatted,
                                                                          strict=True)
                            for passage in rows])
        # Size positional: Django's debug cursor wrapper passes only positional args.
        cursor.copy_expert(self._sql[Document], io.StringIO(documents), 1 << 20)
        cursor.copy_expert(self._sql[Passage], io.StringIO(passages), 1 << 20)
        return ids

    def _insert_documents(self, documents: Sequence[PreparedDocument]) -> dict[str, int]:
        ids = self._store(self._format_documents(documents))
        return {d.record.external_id: pk for pk, d in zip(ids, documents, strict=True)}

    def _insert_questions(self, questions: Sequence[QuestionRecord],
                          doc_ids: dict[str, int]) -> None:
        if not questions:
            return
        rows = "".join(
            "\t".join([copy_field(v[name]) for name in (
                "corpus_id", "import_run_id", "document_id", "external_id", "text", "answers",
                "is_impossible", "metadata")]) + "\n"
            for v in (self._question_values(q, doc_ids) for q in questions)
        )
        self._cursor.copy_expert(self._sql[SourceQuestion], io.StringIO(rows), 1 << 20)


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
