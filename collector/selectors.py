"""Reads of the collector: lists never load document bodies."""

from __future__ import annotations

from typing import Any

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


def corpus_get(*, name: str, user: Any = None) -> Corpus | None:
    """The corpus ``name`` with its counts; None when missing or (with ``user``) not
    visible to them (``corpora_visible``)."""
    corpora = corpus_list() if user is None else corpora_visible(user=user, corpora=corpus_list())
    return corpora.filter(name=name).first()


def sees_all_corpora(user: Any) -> bool:
    """Checkers and admins see every corpus, its source questions and their answers."""
    from annotation.roles import Role, has_role

    return has_role(user, Role.CHECKER, Role.ADMIN)


def corpora_visible(*, user: Any, corpora: QuerySet[Corpus] | None = None) -> QuerySet[Corpus]:
    """The corpora ``user`` may browse and search: all for checkers and admins, those an
    admin opened to annotators for everybody else."""
    corpora = Corpus.objects.all() if corpora is None else corpora
    return corpora if sees_all_corpora(user) else corpora.filter(open_to_annotators=True)


def corpus_documents(*, corpus: Corpus) -> QuerySet[Document]:
    """A corpus's documents for listing: ids, titles, urls; no bodies."""
    return Document.objects.filter(corpus=corpus).listing().order_by("id")


def corpus_import_runs(*, corpus: Corpus) -> QuerySet[ImportRun]:
    return ImportRun.objects.filter(corpus=corpus).select_related("created_by")


def document_get(*, pk: int, user: Any = None) -> Document | None:
    """The document ``pk``; None when missing or (with ``user``) in a corpus they may
    not see."""
    documents = Document.objects.select_related("corpus").filter(pk=pk)
    if user is not None and not sees_all_corpora(user):
        documents = documents.filter(corpus__open_to_annotators=True)
    return documents.first()


def document_passages(*, document: Document) -> QuerySet[Passage]:
    return Passage.objects.filter(document=document).order_by("ordinal")
