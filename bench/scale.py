"""Benchmark: growth to MS MARCO scale (issue 18, sections 2 and 4): search, claim, export.

Run from the repository root (PostgreSQL at 127.0.0.1:5432)::

    .venv/bin/python bench/scale.py [--parts search,claim,export] [--results PATH]
        [--database postgres://postgres@127.0.0.1:5432/crowdqa_scale]
        search: [--sizes 10000,100000] [--million] [--ratio-size 100000] [--zh-docs 10000]
                [--backends pg,whoosh] [--procs 2]
        claim:  [--slots 10000,100000,1000000] [--claim-workers 4] [--claim-seconds 5]
                [--claim-rounds 3]
        export: [--questions 1000000] [--documents 100000]

Each part merges its figures into ``--results`` (``docs/benchmarks/scale.json``); every
run ends with the SVG plots of the curves measured so far (beside that file) and the
RESULT line made from all of them, so parts, sizes and backends may run in separate
processes (``--parts report`` only redraws and prints). ``part_claim`` and
``part_export`` say what those parts measure; the search part:

1. **Corpora**: synthetic English passages of 90-110 words from bench/ingest.py's generator
   (Zipfian vocabulary: function words, then invented words, weights 1/rank; titles of 3
   words; seed 20261122), with the real judged passages of ``data/datasets`` mixed in:
   SQuAD v1.1 dev paragraphs (their questions are the judgments: question → its own
   paragraph) and the MS MARCO v2.1 records (query → its selected passages). A Chinese
   corpus of ``--zh-docs`` synthetic passages (bench/search.py's generator, words by
   frequency from jieba's dictionary) holds the DuReader sample's documents, one passage
   per paragraph (question → its selected documents).
2. **Index build, PostgreSQL backend**, at each size: ``PostgresBackend.writer`` (batches
   analysed by ``--procs`` processes, terms upserted, entries and postings written by
   COPY, one transaction) fed the corpus's entries: passages/s. **Baseline, same run**: a
   bare Whoosh writer (``ix.writer()``, default ``TEXT`` field with the same stemming
   analyzer, ``commit()``) fed the same texts, on the 100k subset (the largest size when
   smaller; ``--ratio-size 0``: none): ``pg_index_ratio`` = PostgreSQL / bare Whoosh, both
   on that subset (the rate at that size, from whichever run measured it). The Whoosh
   backend's index
   (what searches compare with) is built too, with ``--procs`` writer processes.
3. **Top-10 OR latency** per backend and size: ``backend.search(limit=10)`` (the index
   alone, as the issue measures it) for the 200 Natural Questions of
   ``data/datasets/search_queries`` and the judged questions, one by one after a
   warm-up: p50 / p95. PostgreSQL figures are taken after ``VACUUM ANALYZE`` of the
   search tables (what autovacuum does after a bulk insert).
4. **Quality** at the largest size of the run: MRR@10 and recall@10 of the relevant
   passages (documents for DuReader) per backend, kept per corpus size; ``pg_mrr_ratio`` =
   PostgreSQL / Whoosh MRR@10 over all judged questions at the largest size both
   backends measured.

The last line is ``RESULT scale pg_index_docs_per_s=… pg_index_ratio=… pg_or_p95_ms_100k=…
pg_or_p95_ms_1m=… whoosh_or_p95_ms_1m=… pg_mrr_ratio=… claim_p95_ms_10k=… claim_p95_ms_1m=…
export_1m_s=… export_1m_rss_mb=…`` (``nan`` for what no run has measured yet).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DATASETS = REPO / "data" / "datasets"
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/crowdqa_scale"
SEED = 20261122

from ingest import documents  # noqa: E402  (bench/ is the script's path)
from search import percentile, zh_documents  # noqa: E402


@dataclass
class Judged:
    """Real passages with the questions that should find them."""

    passages: list[tuple[str, str, str]] = field(default_factory=list)  # doc id, title, text
    # (dataset, question, relevant document ids)
    questions: list[tuple[str, str, frozenset[str]]] = field(default_factory=list)


def english_judgments() -> Judged:
    judged = Judged()
    squad = json.loads((DATASETS / "squad_v1.1_dev" / "dev-v1.1.sample.json")
                       .read_text(encoding="utf-8"))
    for article in squad["data"]:
        for i, paragraph in enumerate(article["paragraphs"]):
            doc = f"squad-{article['title']}-{i}"
            judged.passages.append((doc, article["title"].replace("_", " "),
                                    paragraph["context"]))
            for qa in paragraph["qas"]:
                judged.questions.append(("squad", qa["question"], frozenset([doc])))
    marco = DATASETS / "msmarco_qa_v2.1" / "synthetic" / "msmarco_v2.1.synthetic.jsonl"
    for line in marco.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        selected = set()
        for i, passage in enumerate(record["passages"]):
            doc = f"marco-{record['query_id']}-{i}"
            judged.passages.append((doc, "", passage["passage_text"]))
            if passage["is_selected"]:
                selected.add(doc)
        if selected:
            judged.questions.append(("msmarco", record["query"], frozenset(selected)))
    return judged


def chinese_judgments() -> Judged:
    judged = Judged()
    for path in sorted((DATASETS / "dureader").glob("search.*.sample.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            selected = set()
            for i, document in enumerate(record["documents"]):
                doc = f"dureader-{record['question_id']}-{i}"
                for paragraph in document["paragraphs"]:
                    if paragraph.strip():
                        judged.passages.append((doc, document["title"], paragraph))
                if document.get("is_selected"):
                    selected.add(doc)
            if selected:
                judged.questions.append(("dureader", record["question"], frozenset(selected)))
    return judged


def entries(judged: Judged, synthetic, n: int) -> list:
    """The judged passages, then synthetic ones up to ``n`` passages in all."""
    from collector.search import IndexEntry

    out = []
    for doc, title, text in judged.passages:
        out.append(IndexEntry(passage_id=len(out) + 1, document_id=len(out) + 1,
                              external_id=doc, start=0, end=len(text), title=title, text=text,
                              run_id=1))
    for record in synthetic:
        if len(out) >= n:
            break
        out.append(IndexEntry(passage_id=len(out) + 1, document_id=len(out) + 1,
                              external_id=record["id"], start=0, end=len(record["body"]),
                              title=record["title"], text=record["body"], run_id=1))
    return out


def nq_questions() -> list[str]:
    path = DATASETS / "search_queries" / "queries.en.nq_open_dev.sample.jsonl"
    return [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines()]


def setup_django(database: str, workdir: Path) -> None:
    import psycopg2

    url = urlsplit(database)
    name = url.path.lstrip("/")
    admin = psycopg2.connect(host=url.hostname, port=url.port or 5432,
                             user=url.username or "postgres", dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if cursor.fetchone() is None:
            cursor.execute(f'CREATE DATABASE "{name}"')
    admin.close()
    # Finished items emit to the next (automatic) stage: its jobs stay queued in memory, so
    # the claim part measures claiming and submitting (as bench/assign.py does).
    os.environ.update(CELERY_BROKER_URL="memory://", DATABASE_URL=database,
                      SEARCH_INDEX_DIR=str(workdir / "index"),
                      CACHE_URL="locmemcache://", MEDIA_ROOT=str(workdir / "media"),
                      DEBUG="0", DJANGO_SETTINGS_MODULE="config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def build(backend, key: str, language: str, items: list) -> float:
    """Index ``items`` into ``key`` (a rebuild); seconds taken."""
    started = time.perf_counter()
    with backend.writer(key=key, language=language, expected=len(items), replace=True) as writer:
        for entry in items:
            writer.add(entry)
    return time.perf_counter() - started


def build_bare(workdir: Path, language: str, items: list) -> float:
    from whoosh import fields, index

    from collector.search.analysis import analyzer_for

    path = workdir / f"bare-{language}-{len(items)}"
    path.mkdir()
    schema = fields.Schema(id=fields.ID(stored=True),
                           body=fields.TEXT(analyzer=analyzer_for(language)))
    started = time.perf_counter()
    ix = index.create_in(str(path), schema)
    writer = ix.writer()
    for entry in items:
        writer.add_document(id=str(entry.passage_id), body=entry.text)
    writer.commit()
    return time.perf_counter() - started


def vacuum() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE collector_searchposting, collector_searchentry,"
                       " collector_searchterm, collector_searchindex")


def latency(backend, key: str, language: str, texts: list[str]) -> tuple[float, float]:
    backend.search(key=key, language=language, text=texts[0], limit=10)  # warm-up
    timings = []
    for text in texts:
        started = time.perf_counter()
        backend.search(key=key, language=language, text=text, limit=10)
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    return percentile(timings, 50), percentile(timings, 95)


def quality(backend, key: str, language: str,
            judged: Judged) -> dict[str, tuple[float, float, int]]:
    """Per dataset: MRR@10, recall@10 and the number of questions."""
    sums: dict[str, list[float]] = {}
    for dataset, question, relevant in judged.questions:
        hits = backend.search(key=key, language=language, text=question, limit=10).hits
        ranked = [hit.external_id for hit in hits]
        rank = next((i for i, doc in enumerate(ranked, 1) if doc in relevant), None)
        found = len(relevant & set(ranked)) / len(relevant)
        total = sums.setdefault(dataset, [0.0, 0.0, 0])
        total[0] += 1 / rank if rank else 0.0
        total[1] += found
        total[2] += 1
    return {dataset: (s[0] / s[2], s[1] / s[2], int(s[2])) for dataset, s in sums.items()}


def pooled_mrr(scores: dict[str, tuple[float, float, int]]) -> float:
    count = sum(n for _, _, n in scores.values())
    return sum(mrr * n for mrr, _, n in scores.values()) / count


RESULTS = REPO / "docs" / "benchmarks" / "scale.json"


def merged(old: dict, new: dict) -> dict:
    """``new`` over ``old``, dictionaries merged key by key (sizes measured in different
    runs stay side by side)."""
    out = dict(old)
    for key, value in new.items():
        out[key] = (merged(old[key], value) if isinstance(value, dict)
                    and isinstance(old.get(key), dict) else value)
    return out


def save(path: Path, part: str, figures: dict) -> None:
    """Merge one part's figures into the results file (parts may run in separate runs,
    the search part even one backend per run)."""
    results = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    stamp = {"measured_at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
             "load": os.getloadavg()}
    results[part] = merged(results.get(part, {}), {**figures, **stamp})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def part_search(args, sizes: list[int], workdir: Path) -> None:
    """Index build, top-10 OR latency and quality per backend and size; each backend's
    figures under its own keys (``pg_…``, ``whoosh_…``), so the backends may run in
    separate processes (``--backends``) at once."""
    from collector.search.postgres_backend import PostgresBackend
    from collector.search.whoosh_backend import WhooshBackend

    backends = {"pg": PostgresBackend(procs=args.procs),
                "whoosh": WhooshBackend(workdir / "index", procs=args.procs)}
    backends = {name: backends[name] for name in args.backends.split(",")}
    english = english_judgments()
    chinese = chinese_judgments()
    texts = nq_questions() + [q for _, q, _ in english.questions]
    print(f"judged: {len(english.passages)} English passages, "
          f"{len(english.questions)} questions (SQuAD, MS MARCO); {len(chinese.passages)} "
          f"Chinese passages, {len(chinese.questions)} DuReader questions; latency queries: "
          f"{len(texts)} (NQ + judged)", flush=True)
    corpus = entries(english, documents(max(sizes), seed=SEED), max(sizes))

    ratio_size = min(args.ratio_size, max(sizes))
    if ratio_size:
        bare_s = build_bare(workdir, "en", corpus[:ratio_size])
        save(args.results, "search", {"bare_size": ratio_size,
                                      "bare_rate": ratio_size / bare_s})
        print(f"bare Whoosh writer, {ratio_size:,} passages: {bare_s:.1f} s "
              f"({ratio_size / bare_s:,.0f} passages/s)", flush=True)
    for n in sizes:
        items = corpus[:n]
        key = f"scale-en-{n}"
        row = {}
        for name, backend in backends.items():
            seconds = build(backend, key, "en", items)
            if name == "pg":
                vacuum()
            p50, p95 = latency(backend, key, "en", texts)
            row.update({f"{name}_rate": n / seconds, f"{name}_p50": p50, f"{name}_p95": p95})
            print(f"{n:,} passages, {name}: index {seconds:.1f} s ({n / seconds:,.0f}/s); "
                  f"top-10 OR p50/p95 {p50:.1f}/{p95:.1f} ms", flush=True)
            save(args.results, "search", {"sizes": {str(n): row}})
            if n == max(sizes):
                scores = quality(backend, key, "en", english)
                save(args.results, "search", {"quality": {str(n): {name: scores}}})
            backend.drop(key=key)
    if not args.zh_docs:
        return
    zh_items = entries(chinese, zh_documents(args.zh_docs, seed=SEED), args.zh_docs)
    for name, backend in backends.items():
        seconds = build(backend, "scale-zh", "zh", zh_items)
        if name == "pg":
            vacuum()
        scores = quality(backend, "scale-zh", "zh", chinese)
        save(args.results, "search", {"quality_zh": {name: scores},
                                      "zh_size": len(zh_items)})
        print(f"Chinese, {len(zh_items):,} passages, {name}: index {seconds:.1f} s "
              f"({len(zh_items) / seconds:,.0f}/s)", flush=True)
        backend.drop(key="scale-zh")
    search_report(args.results)


def quality_pair(search: dict) -> tuple[int, dict, dict] | None:
    """The largest English corpus size whose quality both backends measured, and each
    backend's scores there with the Chinese ones: (size, PostgreSQL, Whoosh)."""
    zh = search.get("quality_zh", {})
    both = [int(n) for n, q in search.get("quality", {}).items() if set(q) == {"pg", "whoosh"}]
    if not both or set(zh) != {"pg", "whoosh"}:
        return None
    n = max(both)
    at = search["quality"][str(n)]
    return n, {**at["pg"], **zh["pg"]}, {**at["whoosh"], **zh["whoosh"]}


def search_report(path: Path) -> None:
    """Quality per dataset and backend, and the pooled MRR@10 ratio, from the results."""
    pair = quality_pair(json.loads(path.read_text(encoding="utf-8"))["search"])
    if pair is None:
        return
    n, pg, wh = pair
    print(f"quality (English corpus of {n:,} passages, Chinese of the --zh-docs run):")
    for dataset in pg:
        row = []
        for name, scores in (("pg", pg), ("whoosh", wh)):
            mrr, recall, count = scores[dataset]
            row.append(f"{name} MRR@10 {mrr:.3f} recall@10 {recall:.3f}")
        print(f"  {dataset} ({count} questions): " + "; ".join(row))
    print(f"  all judged questions: PostgreSQL MRR@10 {pooled_mrr(pg):.3f}, Whoosh "
          f"{pooled_mrr(wh):.3f}, ratio {pooled_mrr(pg) / pooled_mrr(wh):.3f}")


ENGINE_TABLES = ("annotation_item", "annotation_assignment", "annotation_submission",
                 "annotation_transitionlog", "annotation_projectmember")


def answer_stage_clear(stage) -> None:
    """Delete the bulky rows of a bench answer stage by SQL (its slots, their log rows and
    submissions, its items), so that ``benchdb.project_drop`` has only the rest to do: the
    ORM's cascade would load a million rows first."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM annotation_transitionlog l USING annotation_assignment a"
                       " WHERE l.model = 'Assignment' AND l.object_id = a.id"
                       " AND a.stage_id = %s", [stage.pk])
        cursor.execute("DELETE FROM annotation_submission WHERE stage_id = %s", [stage.pk])
        cursor.execute("DELETE FROM annotation_assignment WHERE stage_id = %s", [stage.pk])
        cursor.execute("UPDATE annotation_item SET parent_id = NULL WHERE project_id = %s"
                       " AND parent_id IS NOT NULL", [stage.project_id])
        cursor.execute("DELETE FROM annotation_item WHERE stage_id = %s", [stage.pk])


def claim_explained(*, user, project, repeats: int) -> dict:
    """The claim statement's own cost, free of the machine's load: ``engine.task_claim``
    run ``repeats`` times in transactions rolled back, its UPDATE … SKIP LOCKED statement
    also run under ``EXPLAIN (ANALYZE, BUFFERS)`` (so each claim takes the same first slot):
    median server execution ms, shared buffers touched, and the last plan's text."""
    import statistics

    from django.db import connection, transaction

    from annotation import engine

    plans: list[list[dict]] = []

    def explain(execute, text, params, many, context):
        if text.lstrip().startswith("WITH live AS") and "SKIP LOCKED" in text:
            context["cursor"].execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {text}", params)
            plans.append(context["cursor"].fetchone()[0])
            context["cursor"].execute("ROLLBACK TO SAVEPOINT scale_explain")
        return execute(text, params, many, context)

    for _ in range(repeats):
        connection.close()  # a fresh session: the claim's first use is not prepared
        with transaction.atomic(), connection.execute_wrapper(explain):
            connection.cursor().execute("SAVEPOINT scale_explain")
            engine.task_claim(worker=user, project=project)
            transaction.set_rollback(True)
    if len(plans) != repeats:
        raise SystemExit(f"claim part: the claim statement was seen {len(plans)} times in "
                         f"{repeats} claims (annotation/slots.py changed its form?)")

    def buffers(node: dict) -> int:
        return (node.get("Shared Hit Blocks", 0) + node.get("Shared Read Blocks", 0))

    return {"execution_ms": statistics.median(p[0]["Execution Time"] for p in plans),
            "buffers": statistics.median(buffers(p[0]["Plan"]) for p in plans),
            "plan": plans[-1][0]}


def part_claim(args) -> None:
    """Claim + submit through the engine (bench/assign.py's ``EngineWorker`` and phases)
    with each number of open slots, one project per size built first; then rounds over the
    sizes in turn (so the machine's load drifts over every size alike), each size one
    worker alone, then ``--claim-workers`` at once; latencies pooled over the rounds."""
    import random
    from functools import partial

    from arrivals import article
    from assign import EngineWorker, _phase, percentile
    from benchdb import news_answer_project, project_drop
    from django.db import connection, connections

    from annotation import engine
    from annotation.roles import Role
    from annotation.services import user_ensure

    sizes = sorted(int(s) for s in args.slots.split(","))
    built = {}
    for n in sizes:
        started = time.perf_counter()
        project, stage = news_answer_project(
            name=f"bench-scale-{n}", docs=20, items=n // 2, rng=random.Random(SEED),
            article=article, title=lambda k: f"Scale article {k}",
            question=lambda k: f"What did the report say about question {k}?")
        users = []
        for w in range(args.claim_workers + 1):
            user, _ = user_ensure(username=f"bench-scale-{n}-{w}",
                                  password="bench-password-0123",  # noqa: S106
                                  roles=(Role.ANNOTATOR,))
            engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
            users.append(user)
        built[n] = (project, stage, users, time.perf_counter() - started)
        print(f"{n:,} open slots built in {built[n][3]:.1f} s", flush=True)
    with connection.cursor() as cursor:
        for table in ENGINE_TABLES:
            cursor.execute(f"VACUUM (ANALYZE) {table}")
    timings: dict = {(n, phase): ([], [], [0.0]) for n in sizes
                     for phase in ("solo", "concurrent")}
    for _ in range(args.claim_rounds):
        for n in sizes:
            project, _, users, _ = built[n]
            make = partial(EngineWorker, project_id=project.pk)
            for phase, ids, procs in (("solo", users[-1:], 1),
                                      ("concurrent", users[:-1], min(2, args.claim_workers))):
                connections.close_all()  # forked children must not share this connection
                claims, submits, errors, elapsed, _ = _phase(make, ids, args.claim_seconds,
                                                             procs)
                if errors:
                    raise SystemExit(f"claim part, {n:,} open slots, {phase}: {errors[:3]}")
                pooled = timings[(n, phase)]
                pooled[0].extend(claims)
                pooled[1].extend(submits)
                pooled[2][0] += elapsed
    figures: dict = {"sizes": {}, "workers": args.claim_workers, "rounds": args.claim_rounds,
                     "seconds": args.claim_seconds}
    # The claim statement's plan twice: with the statistics of the bulk load (this
    # machine's PostgreSQL runs with autovacuum off), then after ANALYZE, as autovacuum
    # would have run after the rounds' claims and submits.
    stale = {n: claim_explained(user=built[n][2][-1], project=built[n][0], repeats=20)
             for n in sizes}
    with connection.cursor() as cursor:
        for table in ENGINE_TABLES:
            cursor.execute(f"ANALYZE {table}")
    for n in sizes:
        project, stage, users, build_s = built[n]
        row: dict = {"build_s": build_s}
        for phase in ("solo", "concurrent"):
            claims, submits, (elapsed,) = timings[(n, phase)]
            row[phase] = {"cycles": len(submits), "per_s": len(submits) / elapsed,
                          "claim_p50": percentile(claims, 0.5),
                          "claim_p95": percentile(claims, 0.95),
                          "submit_p50": percentile(submits, 0.5),
                          "submit_p95": percentile(submits, 0.95)}
        row["claim_p95"] = row["solo"]["claim_p95"]
        explained = claim_explained(user=users[-1], project=project, repeats=20)
        row["explain"] = {k: explained[k] for k in ("execution_ms", "buffers")}
        row["explain_stale"] = {k: stale[n][k] for k in ("execution_ms", "buffers")}
        if n == sizes[-1]:
            figures["plan_largest"] = explained["plan"]
            figures["plan_largest_stale"] = stale[n]["plan"]
        figures["sizes"][str(n)] = row
        solo, busy = row["solo"], row["concurrent"]
        print(f"{n:,} open slots: alone claim p50/p95 {solo['claim_p50']:.1f}/"
              f"{solo['claim_p95']:.1f} ms, submit {solo['submit_p50']:.1f}/"
              f"{solo['submit_p95']:.1f} ms ({solo['cycles']} cycles); {args.claim_workers} "
              f"workers at once: claim {busy['claim_p50']:.1f}/{busy['claim_p95']:.1f} ms, "
              f"submit {busy['submit_p50']:.1f}/{busy['submit_p95']:.1f} ms "
              f"({busy['per_s']:.0f} submits/s); the claim statement alone (EXPLAIN ANALYZE, "
              f"median of 20): {stale[n]['execution_ms']:.2f} ms, {stale[n]['buffers']:.0f} "
              f"buffers with the bulk load's statistics, {explained['execution_ms']:.2f} ms, "
              f"{explained['buffers']:.0f} buffers after ANALYZE", flush=True)
    save(args.results, "claim", figures)
    for project, stage, _, _ in built.values():
        answer_stage_clear(stage)
        project_drop(project)


def part_export(args) -> None:
    """A release of ``--questions`` consolidated questions (bench/export.py's project and
    its child process, so the peak RSS is the export's own)."""
    import export

    project_id = export.setup(args.questions, args.documents)
    stamp = time.strftime("%H%M%S")
    hour, minute_second = int(stamp[:2]), int(stamp[2:])  # no leading zero: "8.08.…" is refused
    built = export.child("--child", "export", str(project_id), f"8.{hour}.{minute_second}")
    # The build may split the rows between two processes: the phases add both halves (so
    # they sum to more than the wall time), RSS adds both peaks, CPU both processes.
    def both(key: str) -> float:
        return built[key] + built.get(f"child_{key}", 0.0)

    figures = {"questions": args.questions, "documents": args.documents,
               "seconds": built["total_s"],
               "rss_mb": built.get("peak_rss_total_mb", built["peak_rss_mb"]),
               "datasheet_s": both("datasheet_s"), "squad_s": both("squad-v2_s"),
               "newsqa_s": both("newsqa-json_s"), "bytes": built["sizes"],
               "cpu_s": built["cpu_s"]}
    save(args.results, "export", figures)
    print(f"release of {args.questions:,} questions over {args.documents:,} documents, both "
          f"formats: {built['total_s']:.1f} s (seconds in each part, both processes added: "
          f"datasheet {figures['datasheet_s']:.1f} s, SQuAD v2.0 {figures['squad_s']:.1f} s, "
          f"NewsQA JSON {figures['newsqa_s']:.1f} s), peak RSS {figures['rss_mb']:.0f} MB; "
          f"CPU time of the export processes {built['cpu_s']:.1f} s (the wall-clock time "
          "waits for a core on a loaded machine)", flush=True)


def svg_write(path: Path, plot) -> None:
    """One plot of ``annotation.plots`` as a stand-alone SVG file (the pages' template, with
    the namespace and the stylesheet's plot rules it needs outside a page)."""
    from django.template.loader import render_to_string

    body = render_to_string("annotation/_plot.html", {"plot": plot}).strip()
    style = ("<style>text{font:13px sans-serif}text:not([fill]){fill:#1f2328}"
             ".bar{fill:#0b5cad}</style>"
             f'<rect x="0" y="0" width="{plot.width}" height="{plot.height}" fill="#fff"/>')
    body = body.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
    body = body.replace(">", ">" + style, 1)
    path.write_text(body + "\n", encoding="utf-8")


def plots_write(path: Path) -> list[Path]:
    """The curves of every part measured so far, as SVG files beside the results file."""
    from annotation.plots import WIDTH, hbar, line_plot

    results = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    written = []

    def size_name(n: str) -> str:
        n = int(n)
        return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k"

    def measured(get, row: dict) -> float | None:
        try:
            return get(row)
        except KeyError:  # this size not measured (yet) for that series
            return None

    def curve(name: str, table: dict, series: dict, *, what: str, **kwargs) -> None:
        # The sizes every series has measured (a 1M build of one backend may still run).
        sizes = [n for n in sorted(table, key=int)
                 if all(measured(get, table[n]) is not None for get in series.values())]
        if len(sizes) < 2:
            return
        plot = line_plot({label: [get(table[n]) for n in sizes]
                          for label, get in series.items()}, width=WIDTH,
                         x_span=(size_name(sizes[0]), size_name(sizes[-1])),
                         x_label=f"{what} ({', '.join(size_name(n) for n in sizes)})",
                         **kwargs)
        svg_write(path.parent / name, plot)
        written.append(path.parent / name)

    search = results.get("search", {})
    if search.get("sizes"):
        bare = search.get("bare_rate")
        curve("scale-index-rate.svg", search["sizes"],
              {"PostgreSQL backend": lambda r: round(r["pg_rate"]),
               "Whoosh backend": lambda r: round(r["whoosh_rate"])},
              label="index build, passages/s by corpus size",
              threshold=round(3 * bare) if bare else None, lo=0,
              what="passages; dashed: 3 × bare Whoosh",
              y_label="passages/s")
        curve("scale-search-p95.svg", search["sizes"],
              {"PostgreSQL p95": lambda r: round(r["pg_p95"], 1),
               "Whoosh p95": lambda r: round(r["whoosh_p95"], 1),
               "PostgreSQL p50": lambda r: round(r["pg_p50"], 1),
               "Whoosh p50": lambda r: round(r["whoosh_p50"], 1)},
              label="top-10 OR search latency by corpus size", lo=0,
              what="passages", y_label="ms")
    claim = results.get("claim", {})
    if claim.get("sizes"):
        workers = claim.get("workers", "")
        curve("scale-claim-p95.svg", claim["sizes"],
              {"claim p95, alone": lambda r: round(r["solo"]["claim_p95"], 1),
               "submit p95, alone": lambda r: round(r["solo"]["submit_p95"], 1),
               f"claim p95, {workers} at once": lambda r: round(r["concurrent"]["claim_p95"], 1),
               f"submit p95, {workers} at once":
                   lambda r: round(r["concurrent"]["submit_p95"], 1)},
              label="claim and submit p95 by open slots", lo=0,
              what="open slots", y_label="ms")
    export = results.get("export", {})
    if export:
        rows = [(name, [(round(export[key], 1), "bar", f"{name}: {export[key]:.1f} s")])
                for name, key in (("datasheet", "datasheet_s"), ("SQuAD v2.0", "squad_s"),
                                  ("NewsQA JSON", "newsqa_s"), ("whole release", "seconds"))]
        plot = hbar(rows, total=" s", width=WIDTH,
                    label=f"release export of {export['questions']:,} questions, seconds "
                          f"(peak RSS {export['rss_mb']:.0f} MB)")
        svg_write(path.parent / "scale-export.svg", plot)
        written.append(path.parent / "scale-export.svg")
    return written


def result_line(path: Path) -> str:
    """The RESULT line from every part's latest figures in the results file."""
    results = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    nan = float("nan")
    search = results.get("search", {})
    sizes = search.get("sizes", {})
    claim = results.get("claim", {}).get("sizes", {})
    export = results.get("export", {})

    def get(table: dict, size: str, name: str) -> float:
        return table.get(size, {}).get(name, nan)

    bare = str(search.get("bare_size", ""))
    rate = get(sizes, bare, "pg_rate")
    pair = quality_pair(search)
    values = {
        "pg_index_docs_per_s": f"{rate:.0f}" if rate == rate else "nan",
        "pg_index_ratio": rate / search["bare_rate"] if "bare_rate" in search else nan,
        "pg_or_p95_ms_100k": get(sizes, "100000", "pg_p95"),
        "pg_or_p95_ms_1m": get(sizes, "1000000", "pg_p95"),
        "whoosh_or_p95_ms_1m": get(sizes, "1000000", "whoosh_p95"),
        "pg_mrr_ratio": pooled_mrr(pair[1]) / pooled_mrr(pair[2]) if pair else nan,
        "claim_p95_ms_10k": get(claim, "10000", "claim_p95"),
        "claim_p95_ms_1m": get(claim, "1000000", "claim_p95"),
        "export_1m_s": export.get("seconds", nan),
        "export_1m_rss_mb": export.get("rss_mb", nan),
    }

    def fmt(name: str, value) -> str:
        if isinstance(value, str):
            return value
        if value != value:  # noqa: PLR0124 - nan check
            return "nan"
        return f"{value:.3f}" if name in ("pg_index_ratio", "pg_mrr_ratio") else f"{value:.1f}"

    return "RESULT scale " + " ".join(f"{k}={fmt(k, v)}" for k, v in values.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default="search,claim,export",
                        help="comma-separated parts to run: search, claim, export; report "
                             "alone writes the plots and the RESULT line from --results")
    parser.add_argument("--sizes", default="10000,100000",
                        help="comma-separated passage counts (English corpus)")
    parser.add_argument("--million", action="store_true", help="add 1,000,000 to the sizes")
    parser.add_argument("--zh-docs", type=int, default=10_000,
                        help="passages of the Chinese corpus holding DuReader's documents")
    parser.add_argument("--ratio-size", type=int, default=100_000,
                        help="the subset the bare Whoosh writer indexes")
    parser.add_argument("--database", default=DEFAULT_DB)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--backends", default="pg,whoosh",
                        help="search part: the backends to build and query (pg, whoosh)")
    parser.add_argument("--slots", default="10000,100000,1000000",
                        help="claim part: comma-separated numbers of open slots")
    parser.add_argument("--claim-workers", type=int, default=4,
                        help="claim part: workers claiming at once after the one alone")
    parser.add_argument("--claim-seconds", type=float, default=5.0,
                        help="claim part: seconds of each phase (alone, at once) per round")
    parser.add_argument("--claim-rounds", type=int, default=3,
                        help="claim part: rounds over the sizes in turn")
    parser.add_argument("--questions", type=int, default=1_000_000,
                        help="export part: consolidated questions of the release")
    parser.add_argument("--documents", type=int, default=100_000,
                        help="export part: documents they ask about")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="JSON file each part's figures are merged into")
    args = parser.parse_args()
    parts = args.parts.split(",")
    unknown = set(parts) - {"search", "claim", "export", "report"}
    if unknown:
        parser.error(f"--parts: unknown part(s) {', '.join(sorted(unknown))}")
    sizes = sorted({int(s) for s in args.sizes.split(",")} | ({1_000_000} if args.million
                                                                 else set()))
    workdir = Path(tempfile.mkdtemp(prefix="crowdqa-bench-scale-"))
    setup_django(args.database, workdir)
    if "search" in parts:
        part_search(args, sizes, workdir)
    if "claim" in parts:
        part_claim(args)
    if "export" in parts:
        part_export(args)
    for plot in plots_write(args.results):
        print(f"plot: {plot.relative_to(REPO) if plot.is_relative_to(REPO) else plot}")
    print(result_line(args.results))


if __name__ == "__main__":
    main()
