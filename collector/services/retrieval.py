"""Finding passages: ``retrieve`` for pipeline stages, ``search_page`` for people.

The index returns ids, offsets and scores; texts come from the database, which stays
the source of truth (a hit whose passage is gone from the database is dropped).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.utils.safestring import SafeString, mark_safe

from collector.models import Corpus, Passage
from collector.search import IndexHit, search_backend
from collector.services.indexing import index_key

PASSAGE = "passage"
DOCUMENT = "document"


@dataclass(frozen=True, slots=True)
class RetrievedPassage:
    passage_id: int
    document_id: int
    external_id: str  # the document's external id
    title: str
    ordinal: int
    start: int
    end: int
    text: str
    score: float


@dataclass(frozen=True, slots=True)
class RetrievedDocument:
    document_id: int
    external_id: str
    title: str
    score: float  # its best passage's score
    passages: list[RetrievedPassage]  # its matching passages, best first


def _load(hits: list[IndexHit]) -> list[RetrievedPassage]:
    rows = {
        p.pk: p
        for p in Passage.objects.filter(pk__in=[hit.passage_id for hit in hits])
        .select_related("document")
        .only("id", "ordinal", "start", "end", "text", "document__id",
              "document__external_id", "document__title")
    }
    found = []
    for hit in hits:
        passage = rows.get(hit.passage_id)
        if passage is None:
            continue
        found.append(RetrievedPassage(
            passage_id=passage.pk, document_id=passage.document.pk,
            external_id=passage.document.external_id, title=passage.document.title,
            ordinal=passage.ordinal, start=passage.start, end=passage.end, text=passage.text,
            score=hit.score,
        ))
    return found


def retrieve(*, corpus: Corpus, text: str, k: int = 10,
             unit: str = PASSAGE) -> list[RetrievedPassage] | list[RetrievedDocument]:
    """The top ``k`` passages (or documents, by their best passage) for ``text``."""
    if unit not in (PASSAGE, DOCUMENT):
        raise ValueError(f"unit must be {PASSAGE!r} or {DOCUMENT!r}, not {unit!r}")
    if k <= 0 or not text.strip():
        return []
    backend = search_backend()
    key = index_key(corpus)
    if unit == PASSAGE:
        results = backend.search(key=key, language=corpus.language, text=text, limit=k)
        return _load(results.hits)
    limit = k * 5
    while True:
        results = backend.search(key=key, language=corpus.language, text=text, limit=limit)
        documents: dict[int, RetrievedDocument] = {}
        for passage in _load(results.hits):
            document = documents.get(passage.document_id)
            if document is None:
                documents[passage.document_id] = RetrievedDocument(
                    document_id=passage.document_id, external_id=passage.external_id,
                    title=passage.title, score=passage.score, passages=[passage],
                )
            else:
                document.passages.append(passage)
        if len(documents) >= k or len(results.hits) >= results.total:
            return list(documents.values())[:k]
        limit *= 4


@dataclass(frozen=True, slots=True)
class SearchResult:
    passage: RetrievedPassage
    highlighted: SafeString  # HTML-escaped text with <mark> around matches


@dataclass(frozen=True, slots=True)
class SearchPage:
    query: str
    results: list[SearchResult]
    total: int
    page: int
    pages: int
    per_page: int

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.pages

    @property
    def first_rank(self) -> int:
        return (self.page - 1) * self.per_page + 1


MAX_PAGE = 100_000


def search_page(*, corpus: Corpus, text: str, page: int = 1, per_page: int = 10) -> SearchPage:
    """One page of passage hits for a person, with matches highlighted."""
    text = text.strip()
    page = max(1, page)
    if not text:
        return SearchPage(query=text, results=[], total=0, page=1, pages=0, per_page=per_page)
    backend = search_backend()
    page = min(page, MAX_PAGE)  # an offset no database overflows on

    def hits(number: int):
        return backend.search(key=index_key(corpus), language=corpus.language, text=text,
                              limit=per_page, offset=(number - 1) * per_page)

    results = hits(page)
    pages = math.ceil(results.total / per_page)
    if pages and page > pages:  # past the last page (an old link, a hand-made one): the last
        page = pages
        results = hits(page)
    elif not pages:
        page = 1
    found = [
        SearchResult(passage=passage, highlighted=mark_safe(  # noqa: S308 - escaped by fragments()
            backend.fragments(language=corpus.language, text=passage.text, query=text,
                              html=True)))
        for passage in _load(results.hits)
    ]
    return SearchPage(query=text, results=found, total=results.total, page=page,
                      pages=pages, per_page=per_page)
