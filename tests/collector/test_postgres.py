"""PostgreSQL: the COPY path, with real commits (CI runs the suite on PostgreSQL too)."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from collector.importers import ImportFailure
from collector.models import Corpus, Document, ImportRun, Passage, SourceQuestion
from collector.services import corpus_import, retrieve
from collector.services.bulk import PostgresCopyWriter, bulk_writer, copy_field
from tests.collector.corpus_support import (
    DUREADER_DEV,
    SQUAD_V1,
    indexed,
    row_counts,
    squad_contexts,
)

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("isolated_storage")]


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs DATABASE_URL=postgres://... (CI runs the suite on PostgreSQL)")


def test_copy_field_escapes_the_text_format():
    assert copy_field("a\tb\nc\\d\re") == "a\\tb\\nc\\\\d\\re"
    assert copy_field(None) == "\\N" and copy_field(True) == "t" and copy_field(7) == "7"
    assert copy_field({"k": ["文", "\t"]}) == '{"k": ["文", "\\\\t"]}'


def test_copy_and_orm_paths_write_the_same_rows():
    corpus_import(path=DUREADER_DEV, corpus="copy", language="zh", format="dureader",
                  bulk="copy", batch_size=50)
    corpus_import(path=DUREADER_DEV, corpus="orm", language="zh", format="dureader",
                  bulk="orm", batch_size=50)
    corpus = Corpus.objects.get(name="copy")
    run = ImportRun.objects.get(corpus=corpus)
    assert isinstance(bulk_writer(corpus=corpus, run=run, file="x"), PostgresCopyWriter)

    def snapshot(name):
        documents = {d.external_id: (d.title, d.body, d.url, d.source_type, d.highlights,
                                     d.metadata, [(p.ordinal, p.start, p.end, p.text)
                                                  for p in d.passages.order_by("ordinal")])
                     for d in Document.objects.filter(corpus__name=name)}
        questions = {q.external_id: (q.text, q.answers, q.metadata,
                                     q.document.external_id if q.document else None)
                     for q in SourceQuestion.objects.filter(corpus__name=name)}
        return documents, questions

    assert snapshot("copy") == snapshot("orm")
    assert len(snapshot("copy")[0]) == 74
    assert indexed(corpus) == Passage.objects.filter(document__corpus=corpus).count() == 657
    # Ids came from the sequences: ordinary inserts still work afterwards.
    Document.objects.create(corpus=corpus, external_id="after-copy", body="More text.")


def test_a_failure_after_committed_batches_leaves_nothing(tmp_path):
    corpus_import(path=SQUAD_V1, corpus="kept", language="en", format="squad")
    corpus = Corpus.objects.get(name="kept")
    before, entries = row_counts(), indexed(corpus)
    records = [{"id": f"p{i}", "body": text} for i, (_, text) in enumerate(squad_contexts())]
    records.append({"id": "p2", "body": "again"})
    path = tmp_path / "late-duplicate.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for name in ("kept", "fresh"):
        with pytest.raises(ImportFailure, match=r"line 17: field 'id': duplicate document id"):
            corpus_import(path=path, corpus=name, language="en", format="jsonl", batch_size=4)
        assert row_counts() == before
    assert indexed(corpus) == entries
    assert not Corpus.objects.filter(name="fresh").exists()
    assert retrieve(corpus=corpus, text="Maria Skłodowska-Curie", k=1)[0].external_id == "Warsaw#0"


def test_skipped_documents_are_found_across_batches_on_copy(tmp_path):
    contexts = squad_contexts()
    first = tmp_path / "first.jsonl"
    first.write_text("".join(json.dumps({"id": f"p{i}", "body": c}) + "\n"
                             for i, (_, c) in enumerate(contexts[::2])), encoding="utf-8")
    everything = tmp_path / "all.jsonl"
    everything.write_text("".join(json.dumps({"id": f"p{i}", "body": c}) + "\n"
                                  for i, (_, c) in enumerate(contexts)), encoding="utf-8")
    corpus_import(path=first, corpus="c", language="en", format="jsonl")
    report = corpus_import(path=everything, corpus="c", language="en", format="jsonl",
                           batch_size=3)
    assert report.counts.documents_skipped == 8 and report.counts.documents_created == 8
    assert Document.objects.filter(corpus__name="c").count() == 16
    assert indexed(Corpus.objects.get(name="c")) == Passage.objects.count()


def test_copy_statements_run_under_the_debug_cursor():
    # Query capture (like DEBUG=True) wraps cursors in Django's debug wrapper.
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        corpus_import(path=SQUAD_V1, corpus="debug", language="en", format="squad")
    copies = [q["sql"].split()[1] for q in captured.captured_queries
              if q["sql"].startswith("COPY ")]
    # (The postgres search backend's index writes, when configured, are COPYs too.)
    assert [table for table in copies if not table.startswith("collector_search")] == [
        '"collector_document"', '"collector_passage"', '"collector_sourcequestion"']
    assert Document.objects.filter(corpus__name="debug").count() == 16


def test_a_copy_refused_on_the_pipeline_thread_fails_the_import():
    from django.db import transaction

    from collector.importers import DocumentRecord
    from collector.services.bulk import PreparedDocument

    corpus = Corpus.objects.create(name="pipe", language="en")
    run = ImportRun.objects.create(corpus=corpus, format="jsonl", source_name="x.jsonl")
    with pytest.raises(ImportFailure) as caught, transaction.atomic():
        writer = bulk_writer(corpus=corpus, run=run, file="x.jsonl")
        assert isinstance(writer, PostgresCopyWriter) and not writer.check_documents
        # A row the writer does not know about takes the id first (as a concurrent
        # import would): the unique constraint refuses the COPY on the background thread.
        Document.objects.create(corpus=corpus, external_id="p1", body="First.")
        try:
            writer.write([PreparedDocument(DocumentRecord("p1", "Second.", "line 1"),
                                           [(0, 7)])], [])
            writer.close()
        finally:
            writer.abort()
    assert str(caught.value).startswith(
        "x.jsonl: records from line 1 to line 1: the database refused the batch:")
    assert "collector_document_external_id_unique" in str(caught.value)
    assert Document.objects.filter(corpus=corpus).count() == 0
