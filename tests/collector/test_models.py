"""Models: exact offsets, constraints, lists that leave bodies out, query verdicts."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from collector.models import Corpus, Document, Passage, Query
from collector.querysets import DOCUMENT_LISTING_FIELDS
from collector.services import corpus_import, query_verdict_record
from tests.collector.corpus_support import SQUAD_V1, assert_offsets_exact

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_storage")]


@pytest.fixture
def corpus():
    corpus_import(path=SQUAD_V1, corpus="squad", language="en", format="squad", index=False)
    return Corpus.objects.get(name="squad")


def test_passages_are_exact_slices_of_their_document(corpus):
    assert assert_offsets_exact(corpus) > 0
    # Offsets are Python string indexes (code points), also past non-ASCII text.
    document = Document.objects.get(corpus=corpus, external_id="Warsaw#0")
    assert any(ord(ch) > 127 for ch in document.body)
    for passage in document.passages.all():
        assert document.body[passage.start:passage.end] == passage.text


def test_external_ids_are_unique_per_corpus_and_passages_need_a_span(corpus):
    document = Document.objects.filter(corpus=corpus).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Document.objects.create(corpus=corpus, external_id=document.external_id, body="x")
    other = Corpus.objects.create(name="other", language="en")
    Document.objects.create(corpus=other, external_id=document.external_id, body="x")
    with pytest.raises(IntegrityError), transaction.atomic():
        Passage.objects.create(document=document, ordinal=99, start=5, end=5, text="")
    with pytest.raises(IntegrityError), transaction.atomic():
        Passage.objects.create(document=document, ordinal=0, start=0, end=1, text="S")
    with pytest.raises(IntegrityError), transaction.atomic():
        Corpus.objects.create(name="fr", language="fr")


def test_listing_does_not_load_bodies(corpus):
    with CaptureQueriesContext(connection) as captured:
        rows = list(Document.objects.filter(corpus=corpus).listing())
    assert len(rows) == 16
    sql = captured.captured_queries[0]["sql"]
    assert '"body"' not in sql and '"metadata"' not in sql
    assert all(f'"{name}"' in sql for name in DOCUMENT_LISTING_FIELDS)
    assert rows[0].get_deferred_fields() >= {"body", "metadata", "highlights"}


def test_query_verdicts_are_recorded_per_filter(corpus):
    query = Query.objects.create(corpus=corpus, external_id="q1", text="who won", language="en")
    query_verdict_record(query=query, filter_name="intent", verdict="keep")
    query_verdict_record(query=query, filter_name="adult", verdict="drop", reason="blocklist")
    query_verdict_record(query=query, filter_name="intent", verdict="drop", reason="navigational")
    query.refresh_from_db()
    assert {name: v["verdict"] for name, v in query.verdicts.items()} == {
        "intent": "drop", "adult": "drop"}
    assert query.verdicts["intent"]["reason"] == "navigational"
