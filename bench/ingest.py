"""Benchmark: corpus import into SQLite and PostgreSQL, against a raw COPY of the same rows.

Run from the repository root (PostgreSQL with trust auth on 127.0.0.1:5432)::

    .venv/bin/python bench/ingest.py [--docs 100000] [--rounds 3] [--seed 20261122]
        [--pg-url postgres://postgres@127.0.0.1:5432/crowdqa_bench]

1. Writes 100,000 documents of about 100 words (90-110), generated with a fixed seed,
   to a JSONL file (``{"id", "title", "body"}``): English-like text, a Zipf-distributed
   vocabulary of 100 function words and 60,000 invented content words.
2. Imports the file with ``corpus_import`` (``--format jsonl``: streaming read, checks,
   duplicate-id detection, paragraph splitting, batches of 2,000 documents in one
   transaction; index building is measured by bench/search.py) into a fresh SQLite file
   and a fresh PostgreSQL database (``bulk_create`` on SQLite, COPY on PostgreSQL), with
   ``DEBUG=0`` as in production.
3. In the same run, the baseline: the same JSONL file read and parsed, its rows
   (id, title, body) streamed with ``COPY ... FROM STDIN`` into a bare table (no index,
   no constraint), in batches of 2,000 in one transaction; on SQLite, ``executemany``
   into a bare table.
4. Ours and the baseline alternate, ``--rounds`` times each, every run in a fresh process
   (so peak RSS is that run's own); the figures are medians. The machine is shared, so
   alternating keeps both under the same load.

The last line is ``RESULT ingest backend=postgresql rows_per_s=… copy_ratio=…
peak_rss_mb=…`` (rows = documents imported; copy_ratio = ours / raw COPY).
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PG = "postgres://postgres@127.0.0.1:5432/crowdqa_bench"
BATCH = 2000

_FUNCTION_WORDS = (
    "the of and to a in is was for on that with as by at from his her it an were are which "
    "this be or has had not but also their its after first they one two who been he she new "
    "more have into other during all than some most when where would there only over between "
    "these such can may many while about through both under would could those three years "
    "city time known made used part however including became several since later well then "
    "each any because before out up"
)
_SYLLABLES = ("ka to ri men sa lo ve tan dor pi qu el ar in os un bel rom tis ga mo ne shi vak "
              "ul per gen fa bro les di cor am hal")
FUNCTION_WORDS = tuple(_FUNCTION_WORDS.split())
SYLLABLES = tuple(_SYLLABLES.split())


def vocabulary(seed: int) -> tuple[list[str], list[float]]:
    """Function words first, then invented words; Zipf weights (1/rank) as cumulative sums."""
    rng = random.Random(seed)  # noqa: S311 - reproducible data, not secrets
    content: set[str] = set()
    while len(content) < 60_000:
        content.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    ranked = sorted(content)
    rng.shuffle(ranked)  # a content word's rank does not depend on its spelling
    words = list(dict.fromkeys(FUNCTION_WORDS)) + ranked
    cumulative = list(itertools.accumulate(1.0 / rank for rank in range(1, len(words) + 1)))
    return words, cumulative


def documents(n: int, *, seed: int) -> Iterator[dict[str, str]]:
    words, cumulative = vocabulary(seed)
    rng = random.Random(seed + 1)  # noqa: S311
    for i in range(n):
        tokens = rng.choices(words, cum_weights=cumulative, k=rng.randint(90, 110))
        sentences, start = [], 0
        while start < len(tokens):
            end = min(len(tokens), start + rng.randint(8, 20))
            sentence = " ".join(tokens[start:end])
            sentences.append(sentence[0].upper() + sentence[1:] + ".")
            start = end
        title = " ".join(w.capitalize() for w in rng.choices(words[150:], k=3))
        yield {"id": f"doc{i:06d}", "title": title, "body": " ".join(sentences)}


def write_corpus(path: Path, *, n: int, seed: int) -> int:
    with path.open("w", encoding="utf-8") as out:
        for record in documents(n, seed=seed):
            out.write(json.dumps(record) + "\n")
    return path.stat().st_size


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- children (one fresh process per measured run) -----------------------------------------
def child_ours(path: Path, database_url: str, workdir: Path) -> dict:
    os.environ.update(DATABASE_URL=database_url, SEARCH_INDEX_DIR=str(workdir / "index"),
                      CACHE_URL="locmemcache://", MEDIA_ROOT=str(workdir / "media"),
                      CROWDQA_IMPORT_MAX_BYTES=str(1 << 40), DEBUG="0",
                      DJANGO_SETTINGS_MODULE="config.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from collector.models import Passage
    from collector.services import corpus_import

    rss_before = peak_rss_mb()
    started = time.perf_counter()
    report = corpus_import(path=path, corpus="bench", language="en", format="jsonl",
                           index=False, batch_size=BATCH)
    seconds = time.perf_counter() - started
    passages = Passage.objects.count()
    from django.db import connection

    return {"seconds": seconds, "rows": report.counts.documents_created,
            "passages": passages, "peak_rss_mb": peak_rss_mb(),
            "rss_before_import_mb": rss_before, "vendor": connection.vendor}


def _rows(path: Path) -> Iterator[tuple[str, str, str]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            yield record["id"], record["title"], record["body"]


_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def child_raw_postgres(path: Path, database_url: str, rows_kind: str) -> dict:
    """Raw COPY into bare tables: ``input`` rows (id, title, body), or ``same`` rows (the
    document and passage rows the import writes, same columns and values)."""
    import psycopg2

    connection = psycopg2.connect(database_url.replace("postgres://", "postgresql://", 1))
    with connection, connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_raw_input, bench_raw_document, "
                       "bench_raw_passage")
        cursor.execute("CREATE TABLE bench_raw_input (external_id text, title text, body text)")
        cursor.execute("CREATE TABLE bench_raw_document (id bigint, corpus_id bigint, "
                       "import_run_id bigint, external_id text, title text, url text, "
                       "source_type text, body text, highlights jsonb, metadata jsonb)")
        cursor.execute('CREATE TABLE bench_raw_passage (document_id bigint, ordinal int, '
                       'start int, "end" int, text text)')
    started = time.perf_counter()
    rows = 0
    with connection, connection.cursor() as cursor:
        main, side, pending = io.StringIO(), io.StringIO(), 0

        def flush() -> None:
            if rows_kind == "input":
                main.seek(0)
                cursor.copy_expert("COPY bench_raw_input FROM STDIN", main, 1 << 20)
            else:
                main.seek(0)
                side.seek(0)
                cursor.copy_expert("COPY bench_raw_document FROM STDIN", main, 1 << 20)
                cursor.copy_expert("COPY bench_raw_passage FROM STDIN", side, 1 << 20)

        for external_id, title, body in _rows(path):
            rows += 1
            external_id, title, text = (v.translate(_ESCAPES) for v in (external_id, title, body))
            if rows_kind == "input":
                main.write(f"{external_id}\t{title}\t{text}\n")
            else:
                main.write(f"{rows}\t1\t1\t{external_id}\t{title}\t\t\t{text}\t[]\t{{}}\n")
                side.write(f"{rows}\t0\t0\t{len(body)}\t{text}\n")
            pending += 1
            if pending == BATCH:
                flush()
                main, side, pending = io.StringIO(), io.StringIO(), 0
        if pending:
            flush()
    seconds = time.perf_counter() - started
    connection.close()
    return {"seconds": seconds, "rows": rows, "peak_rss_mb": peak_rss_mb()}


def child_raw_sqlite(path: Path, workdir: Path) -> dict:
    db = workdir / "raw.sqlite3"
    db.unlink(missing_ok=True)
    connection = sqlite3.connect(db)
    connection.execute("CREATE TABLE bench_raw (external_id text, title text, body text)")
    started = time.perf_counter()
    rows = 0
    with connection:
        batch = []
        for row in _rows(path):
            batch.append(row)
            if len(batch) == BATCH:
                connection.executemany("INSERT INTO bench_raw VALUES (?, ?, ?)", batch)
                rows += len(batch)
                batch = []
        connection.executemany("INSERT INTO bench_raw VALUES (?, ?, ?)", batch)
        rows += len(batch)
    seconds = time.perf_counter() - started
    connection.close()
    return {"seconds": seconds, "rows": rows, "peak_rss_mb": peak_rss_mb()}


# -- orchestration --------------------------------------------------------------------------
def _pg_recreate(database_url: str) -> None:
    import psycopg2

    base, name = database_url.rsplit("/", 1)
    connection = psycopg2.connect(f"{base}/postgres".replace("postgres://", "postgresql://", 1))
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cursor.execute(f'CREATE DATABASE "{name}"')
    connection.close()


def _run_child(*args: str) -> dict:
    result = subprocess.run([sys.executable, __file__, "--child", *args], cwd=REPO,
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--pg-url", default=DEFAULT_PG)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, path, *rest = args.child
        if kind == "ours":
            out = child_ours(Path(path), rest[0], Path(rest[1]))
        elif kind == "raw-postgresql":
            out = child_raw_postgres(Path(path), rest[0], rest[1])
        else:
            out = child_raw_sqlite(Path(path), Path(rest[0]))
        print(json.dumps(out))
        return

    workdir = Path(tempfile.mkdtemp(prefix="crowdqa-bench-ingest-"))
    corpus = workdir / "corpus.jsonl"
    started = time.perf_counter()
    size = write_corpus(corpus, n=args.docs, seed=args.seed)
    words = sum(len(json.loads(line)["body"].split()) for line in corpus.open(encoding="utf-8"))
    print(f"corpus: {args.docs:,} documents, {words / args.docs:.1f} words each on average, "
          f"{size / 1e6:.1f} MB JSONL (seed {args.seed}), written in "
          f"{time.perf_counter() - started:.1f} s")
    results: dict[str, dict[str, list[dict]]] = {
        "sqlite": {"ours": [], "raw": []},
        "postgresql": {"ours": [], "raw": [], "raw-input": []},
    }
    for round_ in range(1, args.rounds + 1):
        sqlite_db = workdir / "ours.sqlite3"
        sqlite_db.unlink(missing_ok=True)
        runs = [
            ("sqlite", "ours", lambda db=sqlite_db: _run_child(
                "ours", str(corpus), f"sqlite:///{db}", str(workdir))),
            ("sqlite", "raw", lambda: _run_child("raw-sqlite", str(corpus), str(workdir))),
            ("postgresql", "ours", lambda: (_pg_recreate(args.pg_url), _run_child(
                "ours", str(corpus), args.pg_url, str(workdir)))[1]),
            ("postgresql", "raw", lambda: _run_child("raw-postgresql", str(corpus),
                                                     args.pg_url, "same")),
            ("postgresql", "raw-input", lambda: _run_child("raw-postgresql", str(corpus),
                                                           args.pg_url, "input")),
        ]
        for backend, side, run in runs:
            out = run()
            assert out["rows"] == args.docs, out
            if side == "ours":
                assert out["vendor"] == backend and out["passages"] == args.docs, out
            out["rows_per_s"] = out["rows"] / out["seconds"]
            results[backend][side].append(out)
            print(f"round {round_} {backend:<10} {side:<9}: {out['seconds']:7.2f} s "
                  f"{out['rows_per_s']:9,.0f} rows/s  peak RSS {out['peak_rss_mb']:6.1f} MB",
                  flush=True)
    paired = [o["rows_per_s"] / r["rows_per_s"] for o, r in
              zip(results["postgresql"]["ours"], results["postgresql"]["raw"], strict=True)]
    print("postgresql, ours / raw COPY of the same rows, round by round: "
          + ", ".join(f"{ratio:.2f}" for ratio in paired))
    summary = {}
    for backend, sides in results.items():
        ours = statistics.median(r["rows_per_s"] for r in sides["ours"])
        raw = statistics.median(r["rows_per_s"] for r in sides["raw"])
        rss = max(r["peak_rss_mb"] for r in sides["ours"])
        summary[backend] = (ours, raw, rss)
        if backend == "sqlite":
            print(f"sqlite: ours {ours:,.0f} rows/s, raw executemany of the input rows into a "
                  f"bare table {raw:,.0f} rows/s, ratio {ours / raw:.2f}, peak RSS {rss:.1f} MB")
            continue
        raw_input = statistics.median(r["rows_per_s"] for r in sides["raw-input"])
        print(f"postgresql: ours {ours:,.0f} rows/s; raw COPY of the same rows (each document "
              f"row and its passage row, into bare tables) {raw:,.0f} rows/s, ratio "
              f"{ours / raw:.2f}; raw COPY of the input rows only (id, title, body) "
              f"{raw_input:,.0f} rows/s, ratio {ours / raw_input:.2f}; peak RSS {rss:.1f} MB")
    print(f"(rows = documents; medians of {args.rounds} rounds; each document is one "
          "paragraph, so one passage row as well)")
    ours, raw, rss = summary["postgresql"]
    print(f"RESULT ingest backend=postgresql rows_per_s={ours:.0f} copy_ratio={ours / raw:.2f} "
          f"peak_rss_mb={rss:.1f}")


if __name__ == "__main__":
    main()
