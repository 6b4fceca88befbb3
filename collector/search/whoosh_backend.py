"""The default search backend: one Whoosh index per corpus on local disk.

* Schema: ids and offsets stored; title and passage text analysed (English: stemming
  analyzer; Chinese: jieba's Whoosh analyzer), indexed without positions (retrieval is
  bag-of-words), never stored.
* Writing: one writer per index (Whoosh's lock; the ``index`` job queue keeps writers
  from waiting on it). Large batches are indexed by several processes, each writing its
  own segment (``procs``/``multisegment``), which is what makes a 100k-passage build
  take a minute rather than several on a small machine.
* Ranking: BM25F (B=0.75, K1=1.2) over the title (boost 0.5) and text fields, with
  Whoosh's statistics (idf, encoded field lengths). Whoosh evaluates an OR query one
  document at a time in Python, which costs tens of milliseconds per query once terms
  are common; the default ``scorer="arrays"`` reads each query term's postings block by
  block from the same index and adds up the same BM25F formula with numpy, term at a
  time. The tests check that both give the same scores and order; ``scorer="whoosh"``
  uses Whoosh's own searcher.
"""

from __future__ import annotations

import multiprocessing
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from whoosh import index, scoring
from whoosh.codec.whoosh3 import W3LeafMatcher
from whoosh.fields import ID, STORED, TEXT, Schema
from whoosh.index import LockError
from whoosh.query import Or, Term
from whoosh.reading import TermNotFound
from whoosh.writing import CLEAR

from collector.search.analysis import analyzer_for, fragments, query_terms, warm_up
from collector.search.base import (
    K1,
    TITLE_BOOST,
    B,
    IndexBusy,
    IndexEntry,
    IndexHit,
    IndexResults,
    IndexWriter,
    SearchBackend,
)

FIELDS = (("body", 1.0), ("title", TITLE_BOOST))


def schema_for(language: str) -> Schema:
    analyzer = analyzer_for(language)
    return Schema(
        passage_id=ID(stored=True, unique=True),
        document_id=STORED(),
        external_id=STORED(),
        start=STORED(),
        end=STORED(),
        run=ID(),
        title=TEXT(analyzer=analyzer, phrase=False),
        body=TEXT(analyzer=analyzer, phrase=False),
    )


def _may_fork() -> bool:
    # A daemonic process (a multiprocessing pool worker) may not start children.
    return not multiprocessing.current_process().daemon


class WhooshIndexWriter(IndexWriter):
    def __init__(self, writer: Any, *, replace: bool) -> None:
        self._writer = writer
        self._replace = replace

    def add(self, entry: IndexEntry) -> None:
        fields: dict[str, Any] = {
            "passage_id": str(entry.passage_id), "document_id": entry.document_id,
            "external_id": entry.external_id, "start": entry.start, "end": entry.end,
            "title": entry.title, "body": entry.text,
        }
        if entry.run_id is not None:
            fields["run"] = str(entry.run_id)
        self._writer.add_document(**fields)

    def delete_run(self, run_id: int) -> None:
        self._writer.delete_by_term("run", str(run_id))

    def commit(self) -> None:
        if self._replace:
            self._writer.commit(mergetype=CLEAR)
        else:
            self._writer.commit()

    def cancel(self) -> None:
        self._writer.cancel()


@dataclass
class _SearchState:
    """An open searcher and the per-document arrays the array scorer needs."""

    searcher: Any
    doc_count: int
    leaves: list[tuple[Any, int]]
    lengths: dict[str, np.ndarray] = field(default_factory=dict)
    avg_length: dict[str, float] = field(default_factory=dict)
    deleted: np.ndarray | None = None

    @classmethod
    def open(cls, ix: Any) -> _SearchState:
        searcher = ix.searcher(weighting=scoring.BM25F(B=B, K1=K1))
        leaves = [(sub.reader(), offset) for sub, offset in searcher.leaf_searchers()]
        state = cls(searcher=searcher, doc_count=searcher.doc_count_all(), leaves=leaves)
        for name, _boost in FIELDS:
            lengths = np.zeros(state.doc_count, dtype=np.float64)
            for reader, offset in leaves:
                for docnum in range(reader.doc_count_all()):
                    lengths[offset + docnum] = reader.doc_field_length(docnum, name, 0) or 0
            state.lengths[name] = lengths
            state.avg_length[name] = searcher.avg_field_length(name) or 1.0
        if any(reader.has_deletions() for reader, _ in leaves):
            deleted = np.zeros(state.doc_count, dtype=bool)
            for reader, offset in leaves:
                for docnum in range(reader.doc_count_all()):
                    if reader.is_deleted(docnum):
                        deleted[offset + docnum] = True
            state.deleted = deleted
        return state

    def close(self) -> None:
        self.searcher.close()


class WhooshBackend(SearchBackend):
    uses_index_dir = True

    def __init__(self, root: Path, *, procs: int = 2, limitmb: int = 64,
                 lock_timeout: float = 300.0, parallel_from: int = 5000,
                 scorer: str = "arrays") -> None:
        if scorer not in ("arrays", "whoosh"):
            raise ValueError(f"unknown scorer {scorer!r}")
        self.root = Path(root)
        self.procs = max(1, procs)
        self.limitmb = limitmb
        self.lock_timeout = lock_timeout
        self.parallel_from = parallel_from
        self.scorer = scorer
        self._local = threading.local()

    # -- storage ------------------------------------------------------------------
    def path(self, key: str) -> Path:
        return self.root / f"corpus-{key}"

    def _open(self, key: str) -> Any | None:
        path = self.path(key)
        if not index.exists_in(str(path)):
            return None
        return index.open_dir(str(path))

    def exists(self, *, key: str) -> bool:
        return index.exists_in(str(self.path(key)))

    def count(self, *, key: str) -> int:
        ix = self._open(key)
        if ix is None:
            return 0
        with ix.reader() as reader:
            return reader.doc_count()

    def drop(self, *, key: str) -> None:
        self._forget(key)
        shutil.rmtree(self.path(key), ignore_errors=True)

    # -- writing ------------------------------------------------------------------
    def writer(self, *, key: str, language: str, expected: int = 0,
               replace: bool = False) -> IndexWriter:
        path = self.path(key)
        path.mkdir(parents=True, exist_ok=True)
        if index.exists_in(str(path)):
            ix = index.open_dir(str(path))
        else:
            ix = index.create_in(str(path), schema_for(language))
        options: dict[str, Any] = {"limitmb": self.limitmb, "timeout": self.lock_timeout,
                                   "delay": 0.25}
        if self.procs > 1 and expected >= self.parallel_from and _may_fork():
            options.update(procs=self.procs, multisegment=True, batchsize=256)
        try:
            writer = ix.writer(**options)
        except LockError:
            raise IndexBusy(
                f"the search index at {path} stayed locked by another writer for "
                f"{self.lock_timeout:.0f} s"
            ) from None
        return WhooshIndexWriter(writer, replace=replace)

    # -- searching ----------------------------------------------------------------
    def _states(self) -> dict[str, _SearchState]:
        states = getattr(self._local, "states", None)
        if states is None:
            states = self._local.states = {}
        return states

    def _forget(self, key: str) -> None:
        state = self._states().pop(key, None)
        if state is not None:
            state.close()

    def _state(self, key: str) -> _SearchState | None:
        states = self._states()
        state = states.get(key)
        if state is not None:
            try:
                if state.searcher.up_to_date():
                    return state
            except Exception:  # noqa: S110 - the index went away or changed under us
                pass
            self._forget(key)
        ix = self._open(key)
        if ix is None:
            return None
        state = states[key] = _SearchState.open(ix)
        return state

    def warm_up(self, *, language: str) -> None:
        warm_up(language)

    def search(self, *, key: str, language: str, text: str, limit: int,
               offset: int = 0) -> IndexResults:
        state = self._state(key)
        terms = self.query_terms(language=language, text=text)
        if state is None or not terms or limit <= 0 or state.doc_count == 0:
            return IndexResults(hits=[], total=0)
        if self.scorer == "whoosh":
            return self._search_whoosh(state, terms, limit=limit, offset=offset)
        scores, matched = self._scores(state, terms)
        candidates = np.flatnonzero(matched)
        total = int(candidates.size)
        want = min(offset + limit, total)
        if want <= offset:
            return IndexResults(hits=[], total=total)
        candidate_scores = scores[candidates]
        if want < total:
            # The want-th best score; ties at the cut go to the earlier documents.
            cut = np.partition(candidate_scores, total - want)[total - want]
            above = np.flatnonzero(candidate_scores > cut)
            tied = np.flatnonzero(candidate_scores == cut)[: want - above.size]
            chosen = np.concatenate([above, tied])
        else:
            chosen = np.arange(total)
        # Best first; equal scores in index order, as Whoosh orders them.
        chosen = chosen[np.lexsort((candidates[chosen], -candidate_scores[chosen]))]
        hits = [self._hit(state, int(candidates[i]), float(candidate_scores[i]))
                for i in chosen[offset:want]]
        return IndexResults(hits=hits, total=total)

    def _scores(self, state: _SearchState, terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
        scores = np.zeros(state.doc_count, dtype=np.float64)
        matched = np.zeros(state.doc_count, dtype=bool)
        for name, boost in FIELDS:
            lengths = state.lengths[name]
            norm = K1 * ((1 - B) + B * lengths / state.avg_length[name])
            for term in terms:
                ids, weights = self._postings(state, name, term)
                if ids is None:
                    continue
                idf = state.searcher.idf(name, term)
                scores[ids] += boost * idf * (weights * (K1 + 1)) / (weights + norm[ids])
                matched[ids] = True
        if state.deleted is not None:
            matched &= ~state.deleted
        return scores, matched

    @staticmethod
    def _postings(state: _SearchState, name: str, term: str
                  ) -> tuple[np.ndarray | None, np.ndarray | None]:
        all_ids: list[np.ndarray] = []
        all_weights: list[np.ndarray] = []
        for reader, offset in state.leaves:
            try:
                matcher = reader.postings(name, term)
            except TermNotFound:
                continue
            if isinstance(matcher, W3LeafMatcher):
                # Whole posting blocks at a time (Whoosh's block reader).
                while matcher.is_active():
                    matcher._read_ids()
                    matcher._read_weights()
                    all_ids.append(np.asarray(matcher._ids, dtype=np.int64) + offset)
                    all_weights.append(np.asarray(matcher._weights, dtype=np.float64))
                    matcher._next_block()
            else:
                ids, weights = [], []
                while matcher.is_active():
                    ids.append(matcher.id())
                    weights.append(matcher.weight())
                    matcher.next()
                all_ids.append(np.asarray(ids, dtype=np.int64) + offset)
                all_weights.append(np.asarray(weights, dtype=np.float64))
        if not all_ids:
            return None, None
        return np.concatenate(all_ids), np.concatenate(all_weights)

    def _search_whoosh(self, state: _SearchState, terms: list[str], *, limit: int,
                       offset: int) -> IndexResults:
        query = Or([Term(name, term, boost=boost) for name, boost in FIELDS for term in terms])
        results = state.searcher.search(query, limit=offset + limit)
        hits = [self._hit(state, hit.docnum, float(hit.score))
                for hit in list(results)[offset:offset + limit]]
        return IndexResults(hits=hits, total=len(results))

    @staticmethod
    def _hit(state: _SearchState, docnum: int, score: float) -> IndexHit:
        stored = state.searcher.stored_fields(docnum)
        return IndexHit(
            passage_id=int(stored["passage_id"]), document_id=int(stored["document_id"]),
            external_id=stored["external_id"], start=int(stored["start"]),
            end=int(stored["end"]), score=score,
        )

    # -- analysis -----------------------------------------------------------------
    def query_terms(self, *, language: str, text: str) -> list[str]:
        return query_terms(language, text)

    def fragments(self, *, language: str, text: str, query: str, html: bool,
                  max_chars: int = 300) -> str:
        return fragments(language=language, text=text, query=query, html=html,
                         max_chars=max_chars)
