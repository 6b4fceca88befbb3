"""Reads of the collector: lists never load document bodies."""

from __future__ import annotations

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from collector.models import Corpus, Document, ImportRun, Passage, Query, SourceQuestion


def _count(queryset: QuerySet, group: str) -> Coalesce:
    counted = (queryset.order_by().values(group).annotate(n=Count("pk")).values("n"))
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def corpus_list() -> QuerySet[Corpus]:
    """Corpora with their document, passage, question and query counts."""
    return Corpus.objects.annotate(
        documents_count=_count(Document.objects.filter(corpus=OuterRef("pk")), "corpus"),
        passages_count=_count(Passage.objects.filter(document__corpus=OuterRef("pk")),
                              "document__corpus"),
        questions_count=_count(SourceQuestion.objects.filter(corpus=OuterRef("pk")), "corpus"),
        queries_count=_count(Query.objects.filter(corpus=OuterRef("pk")), "corpus"),
    ).order_by("name")


def corpus_get(*, name: str) -> Corpus | None:
    return corpus_list().filter(name=name).first()


def corpus_documents(*, corpus: Corpus) -> QuerySet[Document]:
    """A corpus's documents for listing: ids, titles, urls; no bodies."""
    return Document.objects.filter(corpus=corpus).listing().order_by("id")


def corpus_import_runs(*, corpus: Corpus) -> QuerySet[ImportRun]:
    return ImportRun.objects.filter(corpus=corpus).select_related("created_by")


def document_get(*, pk: int) -> Document | None:
    return Document.objects.select_related("corpus").filter(pk=pk).first()


def document_passages(*, document: Document) -> QuerySet[Passage]:
    return Passage.objects.filter(document=document).order_by("ordinal")
