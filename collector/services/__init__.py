"""Collector services: every write (and the index-backed reads) goes through here."""

from collector.services.corpora import (
    ImportReport,
    QueriesReport,
    SplitOptions,
    corpus_ensure,
    corpus_import,
    queries_import,
    query_verdict_record,
)
from collector.services.indexing import (
    corpus_delete,
    index_count,
    index_drop,
    index_import_run,
    index_pending,
    index_rebuild,
)
from collector.services.retrieval import (
    RetrievedDocument,
    RetrievedPassage,
    SearchPage,
    retrieve,
    search_page,
)

__all__ = [
    "ImportReport", "QueriesReport", "RetrievedDocument", "RetrievedPassage", "SearchPage",
    "SplitOptions", "corpus_delete", "corpus_ensure", "corpus_import", "index_count", "index_drop",
    "index_import_run", "index_pending", "index_rebuild", "queries_import",
    "query_verdict_record", "retrieve", "search_page",
]
