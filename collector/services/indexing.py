"""Keeping a corpus's search index in step with the database (the source of truth).

Every function here writes the index, so callers run them where index writes are
serialised: jobs on the ``index`` queue, or management commands (which also wait for
the index's own lock).
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import QuerySet
from django.utils import timezone
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy

from collector.models import Corpus, ImportRun, Passage
from collector.progress import NullProgress, ProgressSink
from collector.search import IndexEntry, search_backend

CHUNK = 2000


def index_key(corpus: Corpus) -> str:
    return corpus.index_key.hex


def _entries(passages: QuerySet[Passage], progress: ProgressSink) -> Iterator[IndexEntry]:
    rows = passages.order_by("id").values_list(
        "id", "document_id", "document__external_id", "start", "end", "document__title",
        "text", "document__import_run_id",
    ).iterator(chunk_size=CHUNK)
    pending = 0
    for pid, doc_id, external_id, start, end, title, text, run_id in rows:
        yield IndexEntry(passage_id=pid, document_id=doc_id, external_id=external_id,
                         start=start, end=end, title=title, text=text, run_id=run_id)
        pending += 1
        if pending == 1000:
            progress.advance(pending)
            pending = 0
    if pending:
        progress.advance(pending)


def index_import_run(*, run_id: int, progress: ProgressSink | None = None) -> int:
    """Add one committed import's passages to its corpus index; returns how many.

    Idempotent: the run's earlier entries are deleted in the same commit, and a run
    already marked indexed is left alone.
    """
    progress = progress or NullProgress()
    run = ImportRun.objects.select_related("corpus").get(pk=run_id)
    if run.kind != ImportRun.Kind.DOCUMENTS or run.indexed_at is not None:
        return 0
    corpus = run.corpus
    passages = Passage.objects.filter(document__import_run_id=run.pk)
    total = run.passages_created
    progress.start(total=total, message=format_lazy(gettext_lazy("indexing {count} passages"),
                                                count=f"{total:,}"))
    added = 0
    with search_backend().writer(key=index_key(corpus), language=corpus.language,
                                 expected=total) as writer:
        writer.delete_run(run.pk)
        for entry in _entries(passages, progress):
            writer.add(entry)
            added += 1
    ImportRun.objects.filter(pk=run.pk).update(indexed_at=timezone.now())
    progress.set(added, total=added, message=format_lazy(gettext_lazy("{count} passages indexed"),
                                                         count=f"{added:,}"))
    return added


def index_pending(*, corpus: Corpus, progress: ProgressSink | None = None) -> int:
    """Index every committed import of ``corpus`` not indexed yet (the one just made, and
    any whose indexing a crash cut short)."""
    runs = ImportRun.objects.filter(corpus=corpus, kind=ImportRun.Kind.DOCUMENTS,
                                    indexed_at__isnull=True).order_by("id")
    return sum(index_import_run(run_id=run_id, progress=progress)
               for run_id in runs.values_list("id", flat=True))


def index_rebuild(*, corpus: Corpus, progress: ProgressSink | None = None) -> int:
    """Rebuild ``corpus``'s index from the database; searches use the old one until done."""
    progress = progress or NullProgress()
    runs = list(ImportRun.objects.filter(corpus=corpus, kind=ImportRun.Kind.DOCUMENTS)
                .values_list("id", flat=True))
    passages = Passage.objects.filter(document__corpus=corpus)
    total = passages.count()
    progress.start(total=total, message=format_lazy(
        gettext_lazy("rebuilding the index of {count} passages"), count=f"{total:,}"))
    added = 0
    with search_backend().writer(key=index_key(corpus), language=corpus.language,
                                 expected=total, replace=True) as writer:
        for entry in _entries(passages, progress):
            writer.add(entry)
            added += 1
    ImportRun.objects.filter(pk__in=runs).update(indexed_at=timezone.now())
    progress.set(added, total=added, message=format_lazy(gettext_lazy("{count} passages indexed"),
                                                         count=f"{added:,}"))
    return added


def index_count(*, corpus: Corpus) -> int:
    """Passages in ``corpus``'s index (compare with the database to spot a stale index)."""
    return search_backend().count(key=index_key(corpus))


def index_drop(*, corpus: Corpus) -> None:
    search_backend().drop(key=index_key(corpus))


def corpus_delete(*, corpus: Corpus) -> None:
    """Delete a corpus with its documents, passages, questions and queries, and its index."""
    from django.db import transaction

    key = index_key(corpus)
    with transaction.atomic():
        corpus.delete()
        transaction.on_commit(lambda: search_backend().drop(key=key))
