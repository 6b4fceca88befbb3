"""The search-index interface. The database is the source of truth; an index holds, per
passage, its ids and offsets and the analysed title and text, never the whole body.

A backend serves many indexes, one per corpus, named by a key (the corpus's
``index_key``). Writes go through :meth:`SearchBackend.writer`, one writer per index at
a time (the ``index`` job queue guarantees it; backends also lock). Whoosh is the
default (:mod:`collector.search.whoosh_backend`); a server-grade engine implements the
same few methods.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from types import TracebackType

#: BM25F as both backends rank: length normalisation, term-frequency saturation, and the
#: title's weight beside the passage text's 1.0.
B = 0.75
K1 = 1.2
TITLE_BOOST = 0.5


class IndexBusy(Exception):
    """Another process holds the index's write lock for longer than we could wait."""


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """What the index receives for one passage."""

    passage_id: int
    document_id: int
    external_id: str
    start: int
    end: int
    title: str
    text: str
    run_id: int | None


@dataclass(frozen=True, slots=True)
class IndexHit:
    passage_id: int
    document_id: int
    external_id: str
    start: int
    end: int
    score: float


@dataclass(frozen=True, slots=True)
class IndexResults:
    hits: list[IndexHit]
    total: int  # passages that match at all


class IndexWriter(ABC):
    """Adds and deletes entries; nothing is visible to searches before ``commit()``."""

    @abstractmethod
    def add(self, entry: IndexEntry) -> None: ...

    @abstractmethod
    def delete_run(self, run_id: int) -> None:
        """Delete the entries of one import run (re-indexing a run starts with this)."""

    @abstractmethod
    def commit(self) -> None: ...

    @abstractmethod
    def cancel(self) -> None: ...

    def __enter__(self) -> IndexWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.cancel()


class SearchBackend(ABC):
    #: The index lives under ``SEARCH_INDEX_DIR`` on this host's disk (health checks it).
    uses_index_dir = False

    @abstractmethod
    def writer(self, *, key: str, language: str, expected: int = 0,
               replace: bool = False) -> IndexWriter:
        """A writer for index ``key`` (created if needed).

        ``expected`` is how many entries are coming (a hint for parallel writing);
        ``replace=True`` makes the commit keep only the entries this writer added
        (a rebuild: searches see the old index until then).
        """

    @abstractmethod
    def search(self, *, key: str, language: str, text: str, limit: int,
               offset: int = 0) -> IndexResults:
        """Best-first hits for free text (BM25F over title and passage text)."""

    @abstractmethod
    def count(self, *, key: str) -> int:
        """Entries in index ``key`` (0 when it does not exist)."""

    @abstractmethod
    def exists(self, *, key: str) -> bool: ...

    @abstractmethod
    def drop(self, *, key: str) -> None:
        """Delete index ``key`` entirely."""

    @abstractmethod
    def query_terms(self, *, language: str, text: str) -> list[str]:
        """The terms a query is searched by, after analysis (stemming, segmentation)."""

    def warm_up(self, *, language: str) -> None:  # noqa: B027 (optional: no-op by default)
        """Load what analysing ``language`` needs (dictionaries, models) now, so the first
        search of a process does not pay for it. Called at process start
        (``collector.search.preload``); the default does nothing."""

    @abstractmethod
    def fragments(self, *, language: str, text: str, query: str, html: bool,
                  max_chars: int = 300) -> str:
        """The best part(s) of ``text`` for ``query``, matches marked.

        With ``html=True`` the text is HTML-escaped and matches are wrapped in ``<mark>``;
        otherwise plain text. Without matches: the start of the text.
        """
