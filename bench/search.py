"""Benchmark: building the passage index and searching it, English and Chinese.

Run from the repository root::

    .venv/bin/python bench/search.py [--docs 100000] [--zh-docs 20000] [--queries 1000]
        [--seed 20261122] [--procs 2]

1. The same 100,000 English documents as bench/ingest.py (same generator, same seed; about
   100 words each, one passage each) are imported into a fresh SQLite database
   (``index=False``; ``DEBUG=0`` as in production), then:
2. **index build**: ``index_rebuild`` (reads the passages from the database, writes the
   Whoosh index: stemming analyzer, no positions, ``--procs`` writer processes each
   writing its own segment) — passages per second; and in the same run the baseline, a
   bare Whoosh writer (default ``TEXT`` field with the same stemming analyzer, default
   single writer, ``commit()``) fed the same passage texts read the same way from the
   database. ``whoosh_ratio`` = ours / bare.
3. **queries**: 1,000 top-10 ``retrieve(corpus, text, k=10)`` calls (index search plus
   the database read of the 10 passages), timed one by one after one warm-up query:
   p50 / p95 / p99 in milliseconds. Each query is 2-6 distinct content words drawn from
   a random document (fixed seed): what someone looking for that passage might type.
   For reference, the index-only time of Whoosh's own searcher (``scorer="whoosh"``) on
   the same queries is printed too.
4. The same for 20,000 Chinese passages: documents of about 100 words drawn by frequency
   from jieba's dictionary (fixed seed), jieba's Whoosh analyzer; 2-4 word queries.

The last line is ``RESULT search index_docs_per_s=… whoosh_ratio=… p95_ms=… zh_p95_ms=…``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ingest import FUNCTION_WORDS, documents  # noqa: E402  (bench/ is the script's path)


def zh_documents(n: int, *, seed: int):
    """Chinese documents: words drawn by frequency from jieba's dictionary."""
    import jieba

    words, counts = [], []
    dictionary = Path(jieba.__file__).parent / "dict.txt"
    with dictionary.open(encoding="utf-8") as handle:
        for line in handle:
            word, count, *_ = line.split()
            if all("\u4e00" <= ch <= "\u9fff" for ch in word):
                words.append(word)
                counts.append(int(count))
    cumulative = list(itertools.accumulate(counts))
    rng = random.Random(seed)  # noqa: S311 - reproducible data
    punctuation = "，。，，；。"
    for i in range(n):
        tokens = rng.choices(words, cum_weights=cumulative, k=rng.randint(90, 110))
        text = "".join(token + (rng.choice(punctuation) if rng.random() < 0.12 else "")
                       for token in tokens)
        title = "".join(rng.choices(words, cum_weights=cumulative, k=3))
        yield {"id": f"zh{i:06d}", "title": title, "body": text.rstrip("，；") + "。"}


def percentile(sorted_values: list[float], p: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(p / 100 * len(sorted_values)) - 1))
    return sorted_values[index]


def setup_django(workdir: Path, procs: int) -> None:
    os.environ.update(DATABASE_URL=f"sqlite:///{workdir / 'search.sqlite3'}",
                      SEARCH_INDEX_DIR=str(workdir / "index"), CACHE_URL="locmemcache://",
                      MEDIA_ROOT=str(workdir / "media"), CROWDQA_IMPORT_MAX_BYTES=str(1 << 40),
                      DEBUG="0", DJANGO_SETTINGS_MODULE="config.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.CROWDQA_INDEX_PROCS = procs
    call_command("migrate", verbosity=0)


def load(path: Path, records, *, corpus: str, language: str) -> tuple[object, list[dict]]:
    from collector.models import Corpus
    from collector.services import corpus_import

    kept = []
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            kept.append(record["body"])
    started = time.perf_counter()
    report = corpus_import(path=path, corpus=corpus, language=language, format="jsonl",
                           index=False)
    print(f"{corpus}: imported {report.counts.documents_created:,} documents, "
          f"{report.counts.passages_created:,} passages in {time.perf_counter() - started:.1f} s",
          flush=True)
    return Corpus.objects.get(name=corpus), kept


def build_ours(corpus) -> tuple[int, float]:
    from collector.services import index_rebuild

    started = time.perf_counter()
    count = index_rebuild(corpus=corpus)
    return count, time.perf_counter() - started


def build_bare(corpus, workdir: Path) -> tuple[int, float]:
    from whoosh import fields, index

    from collector.models import Passage
    from collector.search.whoosh_backend import analyzer_for

    path = workdir / f"bare-{corpus.name}"
    path.mkdir()
    schema = fields.Schema(id=fields.ID(stored=True),
                           body=fields.TEXT(analyzer=analyzer_for(corpus.language)))
    started = time.perf_counter()
    ix = index.create_in(str(path), schema)
    writer = ix.writer()
    count = 0
    for pid, text in (Passage.objects.filter(document__corpus=corpus).order_by("id")
                      .values_list("id", "text").iterator(chunk_size=2000)):
        writer.add_document(id=str(pid), body=text)
        count += 1
    writer.commit()
    return count, time.perf_counter() - started


def make_queries(bodies: list[str], *, n: int, seed: int, language: str,
                 sizes: tuple[int, int]) -> list[tuple[int, str]]:
    rng = random.Random(seed)  # noqa: S311
    stop = set(FUNCTION_WORDS)
    queries = []
    if language == "zh":
        import jieba

        cut = jieba.lcut
    for _ in range(n):
        i = rng.randrange(len(bodies))
        if language == "zh":
            words = sorted({w for w in cut(bodies[i]) if len(w) > 1})
            joiner = ""
        else:
            words = sorted({w.strip(".").lower() for w in bodies[i].split()} - stop)
            joiner = " "
        chosen = rng.sample(words, min(len(words), rng.randint(*sizes)))
        queries.append((i, joiner.join(chosen)))
    return queries


def time_queries(corpus, queries: list[tuple[int, str]]) -> dict:
    from collector.search.whoosh_backend import WhooshBackend
    from collector.services import retrieve
    from collector.services.indexing import index_key

    retrieve(corpus=corpus, text=queries[0][1], k=10)  # opens the searcher (warm-up)
    timings, first = [], 0
    for i, text in queries:
        started = time.perf_counter()
        hits = retrieve(corpus=corpus, text=text, k=10)
        timings.append((time.perf_counter() - started) * 1000)
        first += bool(hits) and hits[0].external_id.endswith(f"{i:06d}")
    timings.sort()
    reference = WhooshBackend(Path(os.environ["SEARCH_INDEX_DIR"]), scorer="whoosh")
    key = index_key(corpus)
    reference.search(key=key, language=corpus.language, text=queries[0][1], limit=10)
    whoosh_times = []
    for _, text in queries:
        started = time.perf_counter()
        reference.search(key=key, language=corpus.language, text=text, limit=10)
        whoosh_times.append((time.perf_counter() - started) * 1000)
    whoosh_times.sort()
    return {"p50": percentile(timings, 50), "p95": percentile(timings, 95),
            "p99": percentile(timings, 99), "top1": first / len(queries),
            "whoosh_p50": percentile(whoosh_times, 50),
            "whoosh_p95": percentile(whoosh_times, 95),
            "whoosh_p99": percentile(whoosh_times, 99)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--zh-docs", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--procs", type=int, default=2)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="crowdqa-bench-search-"))
    setup_django(workdir, args.procs)

    results = {}
    for language, n, records, sizes in (
        ("en", args.docs, documents(args.docs, seed=args.seed), (2, 6)),
        ("zh", args.zh_docs, zh_documents(args.zh_docs, seed=args.seed), (2, 4)),
    ):
        corpus, bodies = load(workdir / f"{language}.jsonl", records, corpus=f"bench-{language}",
                              language=language)
        bare_count, bare_s = build_bare(corpus, workdir)
        print(f"{language}: bare Whoosh writer: {bare_count:,} passages in {bare_s:.1f} s "
              f"({bare_count / bare_s:,.0f}/s)", flush=True)
        count, seconds = build_ours(corpus)
        assert count == bare_count == n, (count, bare_count)
        print(f"{language}: ours (index_rebuild, procs={args.procs}): {count:,} passages in "
              f"{seconds:.1f} s ({count / seconds:,.0f}/s), ratio {bare_s / seconds:.2f}",
              flush=True)
        queries = make_queries(bodies, n=args.queries, seed=args.seed + 7, language=language,
                               sizes=sizes)
        timing = time_queries(corpus, queries)
        print(f"{language}: {len(queries)} top-10 retrieve() calls: p50 {timing['p50']:.1f} ms, "
              f"p95 {timing['p95']:.1f} ms, p99 {timing['p99']:.1f} ms; source passage "
              f"first in {timing['top1']:.0%}. Whoosh's own searcher (index only): p50 "
              f"{timing['whoosh_p50']:.1f} ms, p95 {timing['whoosh_p95']:.1f} ms, p99 "
              f"{timing['whoosh_p99']:.1f} ms", flush=True)
        results[language] = (count / seconds, bare_s / seconds, timing)
    rate, ratio, timing = results["en"]
    print(f"RESULT search index_docs_per_s={rate:.0f} whoosh_ratio={ratio:.2f} "
          f"p95_ms={timing['p95']:.1f} zh_p95_ms={results['zh'][2]['p95']:.1f}")


if __name__ == "__main__":
    main()
