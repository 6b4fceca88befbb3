"""A search backend in the shared PostgreSQL database, for deployments with several hosts
(``CROWDQA_SEARCH_BACKEND=postgres``).

* Tables (``collector.models``): ``SearchIndex`` (one row per logical index, i.e. per
  corpus key: its live generation and BM25 statistics), ``SearchEntry`` (one row per
  passage: the ids and offsets a hit returns), ``SearchTerm`` (the vocabulary with document
  frequencies) and ``SearchPosting`` (entry, term, precomputed BM25F term weight), with
  the postings of each generation written by a rebuild in a child table of its own.
* Analysis: the Whoosh backend's analyzers (``collector.search.analysis``: English
  stemming, Chinese segmented by jieba), so both backends index and query the same terms;
  highlighting is the same code too.
* Writing: a writer is one database transaction, holding a transaction-level advisory
  lock on its index (one writer per index; another waits up to ``lock_timeout``, then
  ``IndexBusy``). Entries are analysed in batches of ``BATCH`` (by ``procs`` processes
  for large writes, in jobs of ``CHUNK`` entries that return their vocabulary and numpy
  arrays of term numbers and frequencies; analysing one batch overlaps writing the one
  before), new terms upserted, the weights and document frequencies computed with numpy,
  entries written by ``COPY`` and postings by binary ``COPY``; document frequencies are
  written once at commit. Nothing is visible before ``commit()``; ``cancel()`` rolls back.
* Rebuilds (``replace=True``) write the next generation and switch to it at commit. Its
  postings go to a table of their own, created by the writer's transaction (so no other
  session sees it) without indexes and filled by ``COPY … FREEZE``; the commit builds the
  posting table's two indexes on it (one sort each: maintaining the impact index row by
  row cost most of the time of a large write), analyses it and attaches it to the posting
  table by inheritance (``ALTER TABLE … INHERIT``: a lock that searches do not wait for),
  so searches of the posting table read it from the commit on. The old generation is
  deleted in the same transaction: its table dropped if the searches reading it let go
  within ``drop_timeout``, else emptied (and dropped by the next rebuild). Writers that
  add to an index (``replace=False``) write into the posting table itself.
* Weights: a posting holds ``tf·(K1+1) / (tf + K1·(1-B+B·len/avglen))`` for the text plus
  ``TITLE_BOOST`` times the same for the title (Whoosh's BM25F with its B, K1 and title
  boost), with the average lengths known when the batch was written (a batch counts itself
  in), stored at full double precision. The idf (Whoosh's ``log(N/(df+1)) + 1``) is
  applied at query time from the term's current ``df``, so it follows every commit.
* Ranking: the top of an OR query is found without scoring every matching passage
  (MaxScore-like pruning). Terms in at most ``rare_fraction`` of the passages contribute
  all their postings; each common term contributes only its ``depth`` highest-weight
  postings, read best first from the impact-ordered index and stopping there. The sum of
  these parts ranks the candidates; the best ``max(pool, 2 × (offset + limit))`` are then
  scored exactly with every query term (primary-key probes) and the best returned. Deep
  pages (``offset + limit > exhaustive_from``) score every matching passage.
  ``total`` is exact when the query's postings number at most ``exact_total_from``; above
  that it is the expected size of the union of independent terms.
"""

from __future__ import annotations

import io
import multiprocessing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, OperationalError, connection, transaction

from annotation.sql import execute
from collector.search.analysis import fragments, index_terms_many, query_terms, warm_up
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

BATCH = 2000

INDEX = "collector_searchindex"
ENTRY = "collector_searchentry"
TERM = "collector_searchterm"
POSTING = "collector_searchposting"

CHUNK = 500  # entries per analysis job (fewer: more terms sent twice)

# What a job's analysis returns: its vocabulary (distinct terms), then per field (body,
# title) the terms of every entry as indexes into the vocabulary, their frequencies, how
# many distinct terms each entry has and its field length. Arrays pickle as raw bytes.
_Field = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
_Analysed = tuple[list[str], _Field, _Field]


def _analyse(job: tuple[str, list[tuple[str, str]]]) -> _Analysed:
    """Analyse the (title, text) of some entries (in a worker process)."""
    language, docs = job
    vocab: dict[str, int] = {}
    fields = []
    for which in (1, 0):  # text, then title
        terms, tfs, distinct, lengths = index_terms_many(language, [d[which] for d in docs],
                                                         vocab)
        fields.append((np.array(terms, dtype=np.int32), np.array(tfs, dtype=np.int32),
                       np.array(distinct, dtype=np.int32), np.array(lengths, dtype=np.int64)))
    return list(vocab), fields[0], fields[1]


def _may_fork() -> bool:
    return not multiprocessing.current_process().daemon


NULL = r"\N"


def _copy_text(text: str) -> str:
    """``text`` as a field of COPY's text format."""
    if any(ch in text for ch in "\\\t\n\r"):
        text = (text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
                .replace("\r", "\\r"))
    return text


def _copy(cursor: Any, table: str, columns: Sequence[str], lines: list[str]) -> None:
    names = ", ".join(f'"{c}"' for c in columns)
    cursor.copy_expert(f"COPY {table} ({names}) FROM STDIN", io.StringIO("".join(lines)))


# COPY's binary format: a posting is a tuple of 3 fields, each preceded by its length.
_BINARY_HEADER = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
_BINARY_TRAILER = (-1).to_bytes(2, "big", signed=True)
_POSTING_ROW = np.dtype([("fields", ">i2"), ("entry_size", ">i4"), ("entry", ">i8"),
                         ("term_size", ">i4"), ("term", ">i8"), ("weight_size", ">i4"),
                         ("weight", ">f8")])


def _copy_postings(cursor: Any, table: str, entries: np.ndarray, terms: np.ndarray,
                   weights: np.ndarray, *, freeze: bool) -> None:
    """COPY postings into ``table`` in the binary format, built from the arrays at once
    (``freeze``: the table was created in this transaction, see ``_generation_table``)."""
    rows = np.empty(len(entries), dtype=_POSTING_ROW)
    rows["fields"] = 3
    rows["entry_size"] = rows["term_size"] = rows["weight_size"] = 8
    rows["entry"] = entries
    rows["term"] = terms
    rows["weight"] = weights
    data = b"".join((_BINARY_HEADER, rows.tobytes(), _BINARY_TRAILER))
    options = "FORMAT binary, FREEZE" if freeze else "FORMAT binary"
    cursor.copy_expert(f'COPY {table} ("entry_id", "term_id", "weight") FROM STDIN'
                       f" WITH ({options})", io.BytesIO(data))


def _generation_table(index_id: int, generation: int) -> str:
    """The table holding the postings of a generation written by a rebuild: a child of
    the posting table (inheritance), so that searches of the posting table read it."""
    return f"{POSTING}_{index_id}_{generation}"


def _generation_tables(cursor: Any, index_id: int) -> list[str]:
    cursor.execute(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
        " WHERE i.inhparent = %s::regclass AND c.relname ~ %s",
        [POSTING, f"^{POSTING}_{index_id}_[0-9]+$"])
    return [row[0] for row in cursor.fetchall()]


def _lock_id(key: str) -> str:
    return f"crowdqa-search:{key}"


class PostgresIndexWriter(IndexWriter):
    def __init__(self, backend: PostgresBackend, *, key: str, language: str, expected: int,
                 replace: bool) -> None:
        self._language = language
        self._replace = replace
        self._postings = POSTING  # where this writer's postings go
        self._unfrozen = False  # postings written to a new table without FREEZE
        self._drop_timeout = backend.drop_timeout
        self._buffer: list[IndexEntry] = []
        self._pending: tuple[list[IndexEntry], Any] | None = None
        self._pool: Any = None
        # The terms this writer has seen, by dense index: their ids in the database and
        # the document frequencies not yet written.
        self._dense: dict[str, int] = {}
        self._term_ids = np.zeros(1024, dtype=np.int64)
        self._df = np.zeros(1024, dtype=np.int64)
        self._atomic = transaction.atomic()
        self._atomic.__enter__()
        self._open = True
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('lock_timeout', %s, true)",
                               [f"{backend.lock_timeout * 1000:.0f}"])
                try:
                    cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                                   [_lock_id(key)])
                except OperationalError:
                    raise IndexBusy(
                        f"the search index {key} stayed locked by another writer for "
                        f"{backend.lock_timeout:.0f} s") from None
                cursor.execute("SELECT set_config('lock_timeout', '0', true)")
                cursor.execute(
                    f"INSERT INTO {INDEX} (key, language, generation, doc_count, body_length,"  # noqa: S608
                    " title_length) VALUES (%s, %s, 1, 0, 0, 0) ON CONFLICT (key) DO UPDATE"
                    " SET language = EXCLUDED.language"
                    " RETURNING id, generation, doc_count, body_length, title_length",
                    [key, language])
                self._index_id, generation, docs, body, title = cursor.fetchone()
            if replace:
                self._old_generation = generation
                self._generation = generation + 1
                self._docs, self._body_length, self._title_length = 0, 0, 0
                # The new generation's postings go to a table of their own, without
                # indexes until the commit builds them (far cheaper than maintaining
                # them row by row), seen by no other session until then.
                self._postings = _generation_table(self._index_id, self._generation)
                with connection.cursor() as cursor:
                    cursor.execute(f"DROP TABLE IF EXISTS {self._postings}")
                    cursor.execute(f"CREATE TABLE {self._postings} (LIKE {POSTING})")
            else:
                self._generation = generation
                self._docs, self._body_length, self._title_length = docs, body, title
            if backend.procs > 1 and expected >= backend.parallel_from and _may_fork():
                self._pool = multiprocessing.get_context("fork").Pool(backend.procs)
        except BaseException as exc:
            self._close(exc)
            raise

    # -- the interface --------------------------------------------------------------
    def add(self, entry: IndexEntry) -> None:
        self._buffer.append(entry)
        if len(self._buffer) >= BATCH:
            self._flush()

    def delete_run(self, run_id: int) -> None:
        self._drain()
        with connection.cursor() as cursor:
            cursor.execute(
                f"""WITH gone AS (
                        DELETE FROM {ENTRY} WHERE index_id = %s AND generation = %s
                        AND run_id = %s RETURNING id, body_length, title_length),
                    dropped AS (
                        DELETE FROM {self._postings} WHERE entry_id IN (SELECT id FROM gone)
                        RETURNING term_id),
                    counted AS (
                        UPDATE {TERM} t SET df = t.df - c.n
                        FROM (SELECT term_id, count(*) AS n FROM dropped GROUP BY term_id) c
                        WHERE t.id = c.term_id)
                    SELECT count(*), coalesce(sum(body_length), 0),
                           coalesce(sum(title_length), 0) FROM gone""",  # noqa: S608
                [self._index_id, self._generation, run_id])
            docs, body, title = cursor.fetchone()
        self._docs -= docs
        self._body_length -= body
        self._title_length -= title

    def commit(self) -> None:
        try:
            self._drain()
            self._apply_df()
            with connection.cursor() as cursor:
                if self._replace:
                    self._index_generation(cursor)
                    self._delete_generation(cursor, self._old_generation)
                    cursor.execute(f"ALTER TABLE {self._postings} INHERIT {POSTING}")
                cursor.execute(
                    f"UPDATE {INDEX} SET generation = %s, doc_count = %s, body_length = %s,"  # noqa: S608
                    " title_length = %s WHERE id = %s",
                    [self._generation, self._docs, self._body_length, self._title_length,
                     self._index_id])
        except BaseException as exc:
            self._close(exc)
            raise
        self._close(None)
        if self._unfrozen and not connection.in_atomic_block:
            # Mark the new table's pages all-visible now (VACUUM cannot run inside a
            # transaction: in one, autovacuum does it later).
            try:
                with connection.cursor() as cursor:
                    cursor.execute(f"VACUUM {self._postings}")
            except DatabaseError:  # dropped by a rebuild since: nothing to do
                pass

    def cancel(self) -> None:
        if self._open:
            transaction.set_rollback(True)
            self._close(None)

    # -- work -----------------------------------------------------------------------
    def _close(self, exc: BaseException | None) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool = None
        if self._open:
            self._open = False
            if exc is None:
                self._atomic.__exit__(None, None, None)
            else:
                self._atomic.__exit__(type(exc), exc, exc.__traceback__)

    def _index_generation(self, cursor: Any) -> None:
        """Give the new generation's posting table the posting table's indexes (each
        built by one sort) and its planner statistics."""
        table = self._postings
        cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {table}_pkey"
                       " PRIMARY KEY (entry_id, term_id)")
        cursor.execute(f"CREATE INDEX {table}_impact ON {table}"
                       " (term_id, weight DESC) INCLUDE (entry_id)")
        cursor.execute(f"ANALYZE {table}")

    def _delete_generation(self, cursor: Any, generation: int) -> None:
        # Its postings are in its own table (written by a rebuild) or, added by writers
        # since, in the posting table itself. Its table (and any left empty before) is
        # dropped if searches let go of it within drop_timeout, else emptied (a row lock).
        for table in _generation_tables(cursor, self._index_id):
            try:
                with transaction.atomic():
                    cursor.execute("SELECT set_config('lock_timeout', %s, true)",
                                   [f"{self._drop_timeout * 1000:.0f}"])
                    cursor.execute(f"DROP TABLE {table}")
            except OperationalError:
                cursor.execute(f"DELETE FROM {table}")  # noqa: S608
            cursor.execute("SELECT set_config('lock_timeout', '0', true)")
        cursor.execute(
            f"DELETE FROM ONLY {POSTING} WHERE entry_id IN (SELECT id FROM {ENTRY}"  # noqa: S608
            " WHERE index_id = %s AND generation = %s)", [self._index_id, generation])
        cursor.execute(f"DELETE FROM {ENTRY} WHERE index_id = %s AND generation = %s",  # noqa: S608
                       [self._index_id, generation])
        cursor.execute(f"DELETE FROM {TERM} WHERE index_id = %s AND generation = %s",  # noqa: S608
                       [self._index_id, generation])

    def _flush(self) -> None:
        """Hand the buffered entries to the analysers; write the batch analysed before
        (with a pool, analysing one batch overlaps writing the previous one)."""
        batch, self._buffer = self._buffer, []
        if batch:
            jobs = [(self._language, [(entry.title, entry.text) for entry in batch[i:i + CHUNK]])
                    for i in range(0, len(batch), CHUNK)]
            if self._pool is None:
                self._write(batch, [_analyse(job) for job in jobs])
                return
            pending = self._pool.map_async(_analyse, jobs, chunksize=1)
        if self._pending is not None:
            previous, result = self._pending
            self._pending = None
            self._write(previous, result.get())
        if batch:
            self._pending = (batch, pending)

    def _drain(self) -> None:
        self._flush()
        self._flush()

    def _dense_terms(self, vocabs: list[list[str]]) -> list[np.ndarray]:
        """Each vocabulary's terms as this writer's dense term indexes; terms new to the
        writer are upserted into the term table (their ids kept by dense index)."""
        dense = self._dense
        new: list[str] = []
        maps = []
        for vocab in vocabs:
            numbers = list(map(dense.get, vocab))
            if None in numbers:
                for i, term in enumerate(vocab):
                    if numbers[i] is None:
                        numbers[i] = dense[term] = len(dense)
                        new.append(term)
            maps.append(np.array(numbers, dtype=np.int64))
        if len(dense) > len(self._term_ids):
            size = max(len(dense), 2 * len(self._term_ids))
            self._term_ids = np.resize(self._term_ids, size)
            self._df = np.concatenate([self._df, np.zeros(size - len(self._df), np.int64)])
        if new:
            with connection.cursor() as cursor:
                cursor.execute(
                    f"""INSERT INTO {TERM} (index_id, generation, term, df)
                        SELECT %s, %s, t, 0 FROM unnest(%s::text[]) AS u(t)
                        ON CONFLICT (index_id, generation, term)
                        DO UPDATE SET df = {TERM}.df
                        RETURNING term, id""",  # noqa: S608
                    [self._index_id, self._generation, new])
                for term, term_id in cursor.fetchall():
                    self._term_ids[dense[term]] = term_id
        return maps

    def _write(self, batch: list[IndexEntry], analysed: list[_Analysed]) -> None:
        maps = self._dense_terms([a[0] for a in analysed])
        vocabulary = len(self._dense)

        def field(which: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
            """Per posting of the field: its entry (index in the batch), dense term and
            frequency; and the field length of every entry."""
            parts = [a[which] for a in analysed]
            terms = np.concatenate([m[p[0]] for m, p in zip(maps, parts, strict=True)])
            tfs = np.concatenate([p[1] for p in parts])
            distinct = np.concatenate([p[2] for p in parts])
            lengths = np.concatenate([p[3] for p in parts])
            docs = np.repeat(np.arange(len(batch), dtype=np.int64), distinct)
            return docs, terms, tfs, lengths

        body_docs, body_terms, body_tfs, body_lengths = field(1)
        title_docs, title_terms, title_tfs, title_lengths = field(2)
        self._docs += len(batch)
        self._body_length += int(body_lengths.sum())
        self._title_length += int(title_lengths.sum())
        avg_body = max(self._body_length / self._docs, 1.0)
        avg_title = max(self._title_length / self._docs, 1.0)
        # BM25F weights, in the same order of operations as Whoosh's per-term formula.
        norm = K1 * ((1 - B) + B * body_lengths[body_docs] / avg_body)
        weights = body_tfs * (K1 + 1) / (body_tfs + norm)
        keys = body_docs * vocabulary + body_terms
        if len(title_docs):
            norm = K1 * ((1 - B) + B * title_lengths[title_docs] / avg_title)
            title = TITLE_BOOST * title_tfs * (K1 + 1) / (title_tfs + norm)
            # One posting per (entry, term): the title's part added to the text's.
            keys, where = np.unique(np.concatenate([keys, title_docs * vocabulary
                                                    + title_terms]), return_inverse=True)
            weights = np.bincount(where, weights=np.concatenate([weights, title]),
                                  minlength=len(keys))
        docs, terms = np.divmod(keys, vocabulary)
        self._df[:vocabulary] += np.bincount(terms, minlength=vocabulary)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT nextval(pg_get_serial_sequence('{ENTRY}', 'id'))"  # noqa: S608
                           " FROM generate_series(1, %s)", [len(batch)])
            ids = np.array([row[0] for row in cursor.fetchall()], dtype=np.int64)
            _copy(cursor, ENTRY,
                  ("id", "index_id", "generation", "passage_id", "document_id", "external_id",
                   "start", "end", "run_id", "body_length", "title_length"),
                  [f"{entry_id}\t{self._index_id}\t{self._generation}\t{e.passage_id}\t"
                   f"{e.document_id}\t{_copy_text(e.external_id)}\t{e.start}\t{e.end}\t"
                   f"{NULL if e.run_id is None else e.run_id}\t{body}\t{title}\n"
                   for entry_id, e, body, title in zip(ids.tolist(), batch,
                                                       body_lengths.tolist(),
                                                       title_lengths.tolist(), strict=True)])
            freeze = False
            if self._postings != POSTING:
                # COPY FREEZE (rows written frozen, pages marked all-visible: index-only
                # scans from the start) is refused while the session has a cursor open,
                # such as the caller's QuerySet.iterator() feeding this writer.
                cursor.execute("SELECT NOT EXISTS (SELECT FROM pg_cursors)")
                freeze = cursor.fetchone()[0]
                self._unfrozen = self._unfrozen or not freeze
            _copy_postings(cursor, self._postings, ids[docs], self._term_ids[terms], weights,
                           freeze=freeze)

    def _apply_df(self) -> None:
        counted = np.flatnonzero(self._df)
        if not len(counted):
            return
        with connection.cursor() as cursor:
            cursor.execute(
                f"""UPDATE {TERM} t SET df = t.df + u.n
                    FROM unnest(%s::bigint[], %s::int[]) AS u(id, n) WHERE t.id = u.id""",  # noqa: S608
                [self._term_ids[counted].tolist(), self._df[counted].tolist()])
        self._df[:] = 0


# One statement per search (with its query terms' lookup), prepared per database session
# (annotation.sql.execute): a round trip and planning cost more than the scoring itself.
# Parameters: index key, rare fraction, query terms, then per statement.
_TERMS = f"""
    i AS (SELECT id, generation, doc_count FROM {INDEX} WHERE key = %s),
    q AS MATERIALIZED (
        SELECT t.id AS term_id, t.df, ln(i.doc_count::float8 / (t.df + 1)) + 1 AS idf,
               t.df <= %s * i.doc_count AS rare
        FROM i JOIN {TERM} t ON t.index_id = i.id AND t.generation = i.generation
        WHERE t.term = ANY(%s::text[]) AND t.df > 0)"""  # noqa: S608
_PAGE = f"""
    page AS (
        SELECT e.passage_id, e.document_id, e.external_id, e.start, e."end", s.score,
               s.entry_id
        FROM scored s JOIN {ENTRY} e ON e.id = s.entry_id
        ORDER BY s.score DESC, s.entry_id LIMIT %s OFFSET %s)"""  # noqa: S608
_RESULT = """
    SELECT page.passage_id, page.document_id, page.external_id, page.start, page."end",
           page.score, stats.total
    FROM stats LEFT JOIN page ON true ORDER BY page.score DESC, page.entry_id"""
# Depth per common term, candidates, limit, offset, the most postings counted exactly.
_SEARCH_PRUNED = f"""WITH {_TERMS},
    candidates AS (
        SELECT entry_id FROM (
            SELECT p.entry_id, p.weight * q.idf AS part
            FROM {POSTING} p JOIN q ON p.term_id = q.term_id WHERE q.rare
            UNION ALL
            SELECT top.entry_id, top.weight * q.idf FROM q CROSS JOIN LATERAL (
                SELECT p.entry_id, p.weight FROM {POSTING} p WHERE p.term_id = q.term_id
                ORDER BY p.weight DESC LIMIT %s) top
            WHERE NOT q.rare) parts
        GROUP BY entry_id ORDER BY sum(part) DESC, entry_id LIMIT %s),
    scored AS (
        SELECT c.entry_id, (
            -- The candidate's postings by primary-key prefix ("+ 0" keeps the planner off
            -- the impact index, which would scan a common term's whole list per probe).
            SELECT sum(p.weight * q.idf) FROM {POSTING} p JOIN q ON p.term_id + 0 = q.term_id
            WHERE p.entry_id = c.entry_id) AS score
        FROM candidates c),
    {_PAGE},
    stats AS (
        SELECT CASE WHEN sum(q.df) <= %s THEN (
                   SELECT count(DISTINCT p.entry_id) FROM {POSTING} p
                   WHERE p.term_id IN (SELECT term_id FROM q))
               ELSE round((SELECT doc_count FROM i) * (1 - exp(sum(ln(greatest(
                   1 - q.df::float8 / (SELECT doc_count FROM i), 1e-12))))))
               END AS total
        FROM q)
    {_RESULT}"""  # noqa: S608
# Limit, offset.
_SEARCH_ALL = f"""WITH {_TERMS},
    scored AS (
        SELECT p.entry_id, sum(p.weight * q.idf) AS score
        FROM {POSTING} p JOIN q ON p.term_id = q.term_id GROUP BY p.entry_id),
    {_PAGE},
    stats AS (SELECT count(*) AS total FROM scored)
    {_RESULT}"""  # noqa: S608


class PostgresBackend(SearchBackend):
    def __init__(self, root: Path | None = None, *, procs: int = 2, lock_timeout: float = 300.0,
                 parallel_from: int = 5000, rare_fraction: float = 0.05, pool: int = 50,
                 depth: int = 100, exhaustive_from: int = 100,
                 exact_total_from: int = 5000, drop_timeout: float = 2.0) -> None:
        if connection.vendor != "postgresql":
            raise ImproperlyConfigured(
                "CROWDQA_SEARCH_BACKEND=postgres keeps the index in the database, which must "
                f"then be PostgreSQL (DATABASE_URL is {connection.vendor})")
        self.procs = max(1, procs)
        self.lock_timeout = lock_timeout
        self.parallel_from = parallel_from
        self.rare_fraction = rare_fraction
        self.pool = pool
        self.exhaustive_from = exhaustive_from
        self.depth = depth
        self.exact_total_from = exact_total_from
        self.drop_timeout = drop_timeout

    # -- storage ------------------------------------------------------------------
    def exists(self, *, key: str) -> bool:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {INDEX} WHERE key = %s", [key])  # noqa: S608
            return cursor.fetchone() is not None

    def count(self, *, key: str) -> int:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT doc_count FROM {INDEX} WHERE key = %s", [key])  # noqa: S608
            row = cursor.fetchone()
        return int(row[0]) if row else 0

    def drop(self, *, key: str) -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                           [_lock_id(key)])
            cursor.execute(f"SELECT id FROM {INDEX} WHERE key = %s", [key])  # noqa: S608
            row = cursor.fetchone()
            if row is None:
                return
            for table in _generation_tables(cursor, row[0]):
                cursor.execute(f"DROP TABLE {table}")
            cursor.execute(
                f"DELETE FROM ONLY {POSTING} WHERE entry_id IN (SELECT id FROM {ENTRY}"  # noqa: S608
                " WHERE index_id = %s)", row)
            for table in (ENTRY, TERM):
                cursor.execute(f"DELETE FROM {table} WHERE index_id = %s", row)  # noqa: S608
            cursor.execute(f"DELETE FROM {INDEX} WHERE id = %s", row)  # noqa: S608

    def writer(self, *, key: str, language: str, expected: int = 0,
               replace: bool = False) -> IndexWriter:
        return PostgresIndexWriter(self, key=key, language=language, expected=expected,
                                   replace=replace)

    # -- searching ----------------------------------------------------------------
    def query_terms(self, *, language: str, text: str) -> list[str]:
        return query_terms(language, text)

    def warm_up(self, *, language: str) -> None:
        warm_up(language)

    def search(self, *, key: str, language: str, text: str, limit: int,
               offset: int = 0) -> IndexResults:
        terms = self.query_terms(language=language, text=text)
        if not terms or limit <= 0:
            return IndexResults(hits=[], total=0)
        want = offset + limit
        with connection.cursor() as cursor:
            if want > self.exhaustive_from:
                execute(cursor, _SEARCH_ALL, [key, self.rare_fraction, terms, limit, offset])
            else:
                execute(cursor, _SEARCH_PRUNED,
                        [key, self.rare_fraction, terms, self.depth, max(self.pool, 2 * want),
                         limit, offset, self.exact_total_from])
            rows = cursor.fetchall()
        hits = [IndexHit(passage_id=r[0], document_id=r[1], external_id=r[2], start=r[3],
                         end=r[4], score=float(r[5])) for r in rows if r[0] is not None]
        total = int(rows[0][6] or 0) if rows else 0
        # An estimated total is at least what this page shows to have been found; a page
        # past the end shows nothing, and says nothing about the total.
        return IndexResults(hits=hits, total=max(total, offset + len(hits)) if hits else total)

    # -- highlighting -------------------------------------------------------------
    def fragments(self, *, language: str, text: str, query: str, html: bool,
                  max_chars: int = 300) -> str:
        return fragments(language=language, text=text, query=query, html=html,
                         max_chars=max_chars)
