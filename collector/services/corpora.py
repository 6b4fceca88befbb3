"""Writes for corpora: create, import documents, import queries, record query verdicts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy, gettext_noop

from collector.importers import (
    ByteCounter,
    DocumentRecord,
    ImportFailure,
    MappingError,
    QueryRecord,
    QuestionRecord,
    format_get,
    mapping_parse,
    queries_read,
    source_open,
    units_read,
)
from collector.importers.errors import shorten
from collector.models import Corpus, ImportRun, Language, Query
from collector.progress import NullProgress, ProgressSink
from collector.services.bulk import ImportCounts, PreparedDocument, bulk_writer
from collector.splitting import MODES, passage_spans
from collector.stored_text import StoredText, stored_label

DEFAULT_BATCH = 2000


@dataclass(frozen=True, slots=True)
class SplitOptions:
    """Passage splitting for a new corpus; ``None`` keeps the default (or the corpus's)."""

    mode: str | None = None
    window_tokens: int | None = None
    window_overlap: int | None = None


@dataclass(slots=True)
class ImportReport:
    corpus: str
    run_id: int | None  # None when the import created nothing (no run is kept)
    source: str
    counts: ImportCounts = field(default_factory=ImportCounts)
    indexed: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"corpus": self.corpus, "run": self.run_id, "source": self.source,
                **self.counts.as_dict(),
                **({"passages_indexed": self.indexed} if self.indexed is not None else {})}

    def summary(self) -> str:
        c = self.counts
        text = (f"{self.source} -> corpus {self.corpus!r}: {c.documents_created} documents "
                f"imported ({c.documents_skipped} skipped, already present), "
                f"{c.passages_created} passages, {c.questions_created} questions "
                f"({c.questions_skipped} skipped)")
        if self.indexed is not None:
            text += f"; {self.indexed} passages indexed"
        return text


@dataclass(slots=True)
class QueriesReport:
    corpus: str
    run_id: int | None  # None when the import created nothing (no run is kept)
    source: str
    created: int = 0
    skipped: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"corpus": self.corpus, "run": self.run_id, "source": self.source,
                "queries_created": self.created, "queries_skipped": self.skipped}

    def summary(self) -> str:
        return (f"{self.source} -> corpus {self.corpus!r}: {self.created} queries imported "
                f"({self.skipped} skipped, already present)")


def corpus_ensure(*, name: str, language: str, split: SplitOptions | None = None,
                  description: str = "", licence: str = "", file: str = "") -> Corpus:
    """The corpus ``name``, created if needed; refuses a language or split that differs.

    Errors are :class:`ImportFailure` naming ``file`` (the import that asked).
    """
    split = split or SplitOptions()
    if language not in Language.values:
        raise ImportFailure(StoredText(gettext_noop("unknown language %(language)s (languages: "
                                                    "%(known)s)"),
                                       language=repr(language), known=", ".join(Language.values)),
                            file=file)
    if split.mode is not None and split.mode not in MODES:
        raise ImportFailure(StoredText(gettext_noop("unknown split mode %(mode)s (modes: "
                                                    "%(known)s)"),
                                       mode=repr(split.mode), known=", ".join(MODES)), file=file)
    corpus = Corpus.objects.select_for_update().filter(name=name).first()
    if corpus is None:
        corpus = Corpus(name=name, language=language, description=description,
                        licence=licence)
        if split.mode is not None:
            corpus.split_mode = split.mode
        if split.window_tokens is not None:
            corpus.window_tokens = split.window_tokens
        if split.window_overlap is not None:
            corpus.window_overlap = split.window_overlap
        # Before full_clean, whose check constraint would say only its own name.
        if corpus.window_tokens < 1:
            raise ImportFailure(StoredText(gettext_noop("window_tokens: a window of %(tokens)s "
                                                        "tokens; it needs at least 1"),
                                           tokens=corpus.window_tokens), file=file)
        if corpus.window_overlap >= corpus.window_tokens:
            raise ImportFailure(StoredText(gettext_noop("window overlap (%(overlap)s) must be "
                                                        "smaller than the window (%(tokens)s "
                                                        "tokens)"),
                                           overlap=corpus.window_overlap,
                                           tokens=corpus.window_tokens), file=file)
        try:
            corpus.full_clean()
        except ValidationError as exc:
            problems = "; ".join(f"{key}: {' '.join(msgs)}"
                                 for key, msgs in exc.message_dict.items())
            raise ImportFailure(StoredText(gettext_noop("cannot create corpus %(name)s: "
                                                        "%(problems)s"),
                                           name=repr(name), problems=problems),
                                file=file) from None
        corpus.save()
        return corpus
    if corpus.language != language:
        raise ImportFailure(StoredText(gettext_noop("corpus %(name)s is in %(language)s "
                                                    "(%(code)s), not %(wanted)s"),
                                       name=repr(name),
                                       language=stored_label(Language(corpus.language).label),
                                       code=corpus.language, wanted=language), file=file)
    for option, current in (("mode", corpus.split_mode),
                            ("window_tokens", corpus.window_tokens),
                            ("window_overlap", corpus.window_overlap)):
        wanted = getattr(split, option)
        if wanted is not None and wanted != current:
            raise ImportFailure(StoredText(gettext_noop("corpus %(name)s already has split "
                                                        "%(option)s %(current)s; splitting is "
                                                        "fixed when a corpus is created"),
                                           name=repr(name), option=option,
                                           current=repr(current)), file=file)
    return corpus


class _Preparer:
    """Checks ids across the whole file and cuts documents into passages."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.documents: dict[str, str] = {}  # external id -> where first seen
        self.questions: dict[str, str] = {}

    def document(self, record: DocumentRecord, *, file: str) -> PreparedDocument:
        first = self.documents.get(record.external_id)
        if first is not None:
            raise ImportFailure(StoredText(gettext_noop("duplicate document id %(id)s (first "
                                                        "used at %(first)s)"),
                                           id=shorten(record.external_id), first=first),
                                file=file, where=record.where, field="id")
        self.documents[record.external_id] = record.where
        corpus = self.corpus
        spans = passage_spans(record.body, mode=corpus.split_mode, size=corpus.window_tokens,
                              overlap=corpus.window_overlap, language=corpus.language,
                              paragraphs=record.paragraphs)
        if not spans:
            raise ImportFailure(StoredText(gettext_noop("has no text")), file=file,
                                where=record.where, field="body")
        return PreparedDocument(record=record, spans=spans)

    def question(self, record: QuestionRecord, *, file: str, unit_ids: set[str]) -> None:
        first = self.questions.get(record.external_id)
        if first is not None:
            raise ImportFailure(StoredText(gettext_noop("duplicate question id %(id)s (first "
                                                        "used at %(first)s)"),
                                           id=shorten(record.external_id), first=first),
                                file=file, where=record.where, field="id")
        self.questions[record.external_id] = record.where
        if record.document_id is not None and record.document_id not in unit_ids:
            raise ImportFailure(StoredText(gettext_noop("refers to document %(id)s, which is "
                                                        "not in the same record"),
                                           id=shorten(record.document_id)),
                                file=file, where=record.where, field="document")


def _forget_queries() -> None:
    """With DEBUG on, Django keeps the SQL of recent queries (bodies included): drop it
    between batches so a long import's memory stays flat. Query capture in tests (which
    forces the debug cursor) is left alone."""
    if settings.DEBUG and not connection.force_debug_cursor:
        connection.queries_log.clear()


def _documents_imported(count: int) -> Any:
    """The live progress message, put in the job page reader's language."""
    return format_lazy(gettext_lazy("{count} documents imported"), count=f"{count:,}")


def corpus_import(*, path: Path, corpus: str, language: str, format: str,
                  mapping: str | dict[str, str] | None = None, source_name: str | None = None,
                  split: SplitOptions | None = None, description: str = "", licence: str = "",
                  source_type: str = "", user: Any = None, progress: ProgressSink | None = None,
                  index: bool = True, batch_size: int = DEFAULT_BATCH,
                  bulk: str = "auto",
                  committing: Callable[[int], None] | None = None) -> ImportReport:
    """Import one file (or folder of ``.story`` files) into ``corpus``, all or nothing.

    The file is streamed and written in batches inside one transaction; any bad record
    raises :class:`ImportFailure` and rolls everything back (the corpus too, if this
    import created it). Only after the commit are the new passages added to the search
    index (``index=False`` leaves that to a later ``index_import_run``). Documents and
    questions whose ids the corpus already has are skipped and counted. ``committing(run_id)``
    is called in the import's transaction just before it commits a run (a job keeps the id,
    so that its re-run after a lost worker reports what that run imported).
    """
    progress = progress or NullProgress()
    name = source_name or path.name
    try:
        fmt = format_get(format)
        mapping_dict = mapping_parse(mapping)
    except MappingError as exc:
        raise ImportFailure(exc.text, file=name) from None
    except ValueError as exc:
        raise ImportFailure(str(exc), file=name) from None
    source = source_open(path, max_bytes=settings.CROWDQA_IMPORT_MAX_BYTES, name=name,
                         folder_suffix=fmt.folder_suffix,
                         max_record_bytes=settings.CROWDQA_IMPORT_MAX_RECORD_BYTES)
    counter = ByteCounter()
    progress.start(total=source.total_bytes,
                   message=format_lazy(gettext_lazy("reading {name}"), name=source.name))
    options = {"source_type": source_type} if fmt.takes_mapping else {}
    with transaction.atomic():
        corpus_obj = corpus_ensure(name=corpus, language=language, split=split,
                                   description=description, licence=licence, file=source.name)
        run = ImportRun.objects.create(corpus=corpus_obj, kind=ImportRun.Kind.DOCUMENTS,
                                       format=fmt.name, source_name=source.name[:500],
                                       created_by=user if getattr(user, "pk", None) else None)
        writer = bulk_writer(corpus=corpus_obj, run=run, file=source.name, bulk=bulk)
        preparer = _Preparer(corpus_obj)
        report = ImportReport(corpus=corpus_obj.name, run_id=run.pk, source=source.name)
        documents: list[PreparedDocument] = []
        questions: list[QuestionRecord] = []
        try:
            for unit in units_read(fmt, source, counter=counter, mapping=mapping_dict,
                                   **options):
                unit_ids = set()
                for record in unit.documents:
                    documents.append(preparer.document(record, file=source.name))
                    unit_ids.add(record.external_id)
                for question in unit.questions:
                    preparer.question(question, file=source.name, unit_ids=unit_ids)
                    questions.append(question)
                if len(documents) + len(questions) >= batch_size:
                    report.counts.add(writer.write(documents, questions))
                    documents, questions = [], []
                    _forget_queries()
                    progress.set(min(counter.value, source.total_bytes),
                                 message=_documents_imported(report.counts.documents_created))
            if documents or questions:
                report.counts.add(writer.write(documents, questions))
            writer.close()
        finally:
            writer.abort()
        progress.set(source.total_bytes,
                     message=_documents_imported(report.counts.documents_created))
        if report.counts.documents_created or report.counts.questions_created:
            ImportRun.objects.filter(pk=run.pk).update(**report.counts.as_dict())
            if committing is not None:
                committing(run.pk)
        else:
            # Everything was there already: keep no trace (re-imports change nothing).
            run.delete()
            report.run_id = None
    if index and report.run_id is not None:
        from collector.services.indexing import index_pending

        # This run, and any earlier one whose indexing was cut short (a crash between
        # commit and index): the index catches up with the database.
        report.indexed = index_pending(corpus=corpus_obj, progress=progress)
    return report


def queries_import(*, path: Path, corpus: str, language: str, source_name: str | None = None,
                   user: Any = None, progress: ProgressSink | None = None,
                   batch_size: int = DEFAULT_BATCH) -> QueriesReport:
    """Import a query list into ``corpus``, all or nothing; known ids are skipped."""
    progress = progress or NullProgress()
    name = source_name or path.name
    source = source_open(path, max_bytes=settings.CROWDQA_IMPORT_MAX_BYTES, name=name,
                         max_record_bytes=settings.CROWDQA_IMPORT_MAX_RECORD_BYTES)
    counter = ByteCounter()
    progress.start(total=source.total_bytes,
                   message=format_lazy(gettext_lazy("reading {name}"), name=source.name))
    with transaction.atomic():
        corpus_obj = corpus_ensure(name=corpus, language=language, file=source.name)
        run = ImportRun.objects.create(corpus=corpus_obj, kind=ImportRun.Kind.QUERIES,
                                       format="queries", source_name=source.name[:500],
                                       created_by=user if getattr(user, "pk", None) else None)
        report = QueriesReport(corpus=corpus_obj.name, run_id=run.pk, source=source.name)
        check_existing = Query.objects.filter(corpus=corpus_obj).exists()
        seen: dict[str, str] = {}
        batch: list[QueryRecord] = []

        def flush() -> None:
            existing: set[str] = set()
            if check_existing:
                existing = set(Query.objects.filter(
                    corpus=corpus_obj, external_id__in=[r.external_id for r in batch],
                ).values_list("external_id", flat=True))
            new = [r for r in batch if r.external_id not in existing]
            Query.objects.bulk_create(
                Query(corpus=corpus_obj, import_run=run, external_id=r.external_id,
                      text=r.text, language=language, source=source.name[:500],
                      metadata=r.metadata)
                for r in new
            )
            report.created += len(new)
            report.skipped += len(batch) - len(new)
            batch.clear()
            progress.set(min(counter.value, source.total_bytes),
                         message=format_lazy(gettext_lazy("{count} queries imported"),
                                             count=f"{report.created:,}"))

        for record in queries_read(source, counter=counter):
            first = seen.get(record.external_id)
            if first is not None:
                what = (gettext_noop("duplicate query %(id)s (first at %(first)s)")
                        if record.external_id.startswith("sha1:")
                        else gettext_noop("duplicate query id %(id)s (first at %(first)s)"))
                raise ImportFailure(StoredText(what, id=shorten(record.external_id),
                                               first=first), file=source.name,
                                    where=record.where, field="id")
            seen[record.external_id] = record.where
            batch.append(record)
            if len(batch) >= batch_size:
                flush()
                _forget_queries()
        if batch:
            flush()
        if report.created:
            ImportRun.objects.filter(pk=run.pk).update(queries_created=report.created,
                                                       queries_skipped=report.skipped)
        else:
            run.delete()
            report.run_id = None
    return report


def query_verdict_record(*, query: Query, filter_name: str, verdict: str,
                         reason: str = "") -> Query:
    """Record one filter's verdict on a query (replacing that filter's earlier verdict)."""
    with transaction.atomic():
        locked = Query.objects.select_for_update().get(pk=query.pk)
        locked.verdicts = {**locked.verdicts, filter_name: {
            "verdict": verdict, "reason": reason, "at": timezone.now().isoformat(),
        }}
        locked.save(update_fields=["verdicts"])
    return locked
