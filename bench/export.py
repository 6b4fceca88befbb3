"""Benchmark: streaming release export on PostgreSQL.

Builds a NewsQA project with 300,000 consolidated questions over 30,000 documents, then
exports SQuAD v2.0 and NewsQA JSON as one release through the release builder, in a fresh
subprocess so its peak RSS is its own; the time of each format's writer is reported apart
from the datasheet (computed once per release). Targets: each export <= 30 s, peak RSS
<= 300 MB.

The release build reads the rows once for the datasheet and both formats, and writes the
NewsQA JSON from a forked second process on PostgreSQL: the CPU time and the peak RSS
printed include that process (RSS: the sum of the two peaks).

Baselines named in the output, measured in the same run: ``--baseline CHECKOUT`` exports
the same project first with another checkout's code (e.g. the commit before the one-pass
build, ``git archive addba2c | tar -x -C /tmp/base``), and reports old/new; and, unless
``--skip-naive``, the same SQuAD v2.0 export done the naive way (every row loaded with its
document, the whole JSON tree built in memory, then one json.dump) on the first tenth of
the questions, scaled x10 for time.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/crowdqa_bench_export \\
        .venv/bin/python bench/export.py [--questions 300000] [--documents 30000] \\
        [--baseline /tmp/base] [--processes 1] [--skip-naive] [--setup-only]

It reads DATABASE_URL and refuses SQLite. It migrates that database and reuses a project
built by an earlier run with the same sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "false")
TARGET_S = 30.0
TARGET_RSS_MB = 300.0
WHOLE_TARGET_S = 60.0  # issue 18 section 4: the release of 1M questions
_WORDS_TEXT = """council library harbor vote mayor bridge river county million repairs deck lane
engineer station school market festival museum railway tunnel budget plan city town report
election court police storm flood park garden road"""
WORDS = _WORDS_TEXT.split()


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _copy_rows(table: str, columns: tuple[str, ...], rows) -> None:
    """Insert ``rows`` (tuples of ``columns``) by COPY in batches of 50,000, in one
    transaction (PostgreSQL; a million rows in about a minute where ``bulk_create`` took
    25 minutes). The same rows ``bulk_create`` wrote before, in the same order."""
    import io
    from itertools import islice

    from django.db import connection, transaction

    from collector.search.postgres_backend import _copy_text

    names = ", ".join(columns)
    rows = iter(rows)
    with transaction.atomic(), connection.cursor() as cursor:
        while batch := list(islice(rows, 50_000)):
            text = "".join("\t".join(_copy_text(str(v)) for v in row) + "\n" for row in batch)
            cursor.copy_expert(f"COPY {table} ({names}) FROM STDIN", io.StringIO(text),
                               1 << 20)
        cursor.execute(f"ANALYZE {table}")  # the planner's row counts, as autovacuum would


def setup(questions: int, documents: int) -> int:
    from django.utils import timezone

    from annotation import engine
    from annotation.models import Item, Project
    from collector.models import Corpus, Document

    name = f"bench-export-{questions}-{documents}"
    project = Project.objects.filter(name=name).first()
    if project is not None and Item.objects.filter(
            project=project, stage__kind="newsqa_consolidate").count() == questions:
        print(f"reusing project {name}")
        return project.pk
    rng = random.Random(20161107)
    corpus, _ = Corpus.objects.get_or_create(name=f"bench-export-{documents}",
                                             defaults={"language": "en"})
    if Document.objects.filter(corpus=corpus).count() != documents:
        Document.objects.filter(corpus=corpus).delete()
        t0 = time.perf_counter()
        _copy_rows("collector_document", ("corpus_id", "external_id", "title", "url",
                                          "source_type", "body", "highlights", "metadata"),
                   ((corpus.pk, f"{n:040x}", f"Story {n}", "", "news",
                     " ".join(rng.choice(WORDS) for _ in range(400)), "[]", "{}")
                    for n in range(documents)))
        print(f"documents: {documents:,} in {time.perf_counter() - t0:.1f} s")
    project = engine.project_create(name=name, recipe="newsqa", corpus=corpus)
    stage = project.stages.get(kind="newsqa_consolidate")
    docs = list(Document.objects.filter(corpus=corpus).order_by("id").values_list("id", "body"))
    per_doc = questions // documents
    t0 = time.perf_counter()
    now = timezone.now().isoformat()

    def rows():
        for d, (doc_id, body) in enumerate(docs):
            for q in range(per_doc):
                s = rng.randrange(0, len(body) - 40)
                s = body.index(" ", s) + 1
                e = body.index(" ", s + 5)
                span = {"s": s, "e": e}
                record = {"q": f"What happened {d}-{q}?",
                          "answers": [{"sourcerAnswers": [span]}, {"sourcerAnswers": [span]}],
                          "isAnswerAbsent": 0.0, "isQuestionBad": 0.0, "consensus": span,
                          "agreed": True, "validated": False}
                yield (project.pk, stage.pk, Item.Status.DONE, doc_id, f"{d}/{q}", "{}",
                       json.dumps(record), 1, 0, "train" if d % 20 else "dev", "", now)

    _copy_rows("annotation_item", ("project_id", "stage_id", "status", "document_id", "key",
                                   "data", "result", "overlap", "priority", "split", "gold",
                                   "created_at"), rows())
    print(f"consolidated questions: {questions:,} in {time.perf_counter() - t0:.1f} s")
    return project.pk


def export_child(project_id: int, version: str, processes: int | None = None) -> None:
    """Child process: build one release with both formats; print per-phase times as JSON.
    ``processes``: ``settings.CROWDQA_RELEASE_PROCESSES`` (1 = no second process)."""
    import django

    django.setup()
    from django.conf import settings

    if processes is not None:
        settings.CROWDQA_RELEASE_PROCESSES = processes
    from annotation import releases
    from annotation.models import Project

    project = Project.objects.get(pk=project_id)
    release = releases.release_create(project=project, version=version,
                                      formats=["squad-v2", "newsqa-json"], build=False)
    t0 = time.perf_counter()
    # Into the release storage (MEDIA_ROOT unless STORAGES says otherwise), as a build job.
    result = releases.release_build(release=release)
    total = time.perf_counter() - t0
    # Bytes per format, its files of every split added (the SQuAD file of each split; the
    # NewsQA JSON without the story-id lists written beside it), and per file.
    sizes: dict[str, int] = {}
    for f in release.files.exclude(path__endswith="_story_ids.csv"):
        sizes[f.format] = sizes.get(f.format, 0) + f.bytes
    files = {f.path: f.bytes for f in release.files.all()}
    usage = resource.getrusage(resource.RUSAGE_SELF)
    # The build may fork a process writing a format: its CPU time counts, and its peak
    # RSS adds to this one's (both are alive during the pass).
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    child_rss = children.ru_maxrss / 1024 if children.ru_maxrss else 0.0
    print(json.dumps({**result["timings"], "total_s": total, "sizes": sizes, "files": files,
                      "peak_rss_mb": peak_rss_mb(), "child_peak_rss_mb": child_rss,
                      "peak_rss_total_mb": peak_rss_mb() + child_rss,
                      "cpu_s": usage.ru_utime + usage.ru_stime + children.ru_utime
                      + children.ru_stime}))


def naive_child(project_id: int, limit: int) -> None:
    """Child process: the naive in-memory SQuAD v2.0 export of the first ``limit`` rows."""
    import django

    django.setup()
    from annotation.models import Item

    t0 = time.perf_counter()
    articles: dict[int, dict] = {}
    rows = (Item.objects.filter(project_id=project_id, stage__kind="newsqa_consolidate")
            .select_related("document").order_by("document_id", "id")[:limit])
    for item in rows:
        doc = item.document
        article = articles.setdefault(doc.pk, {"title": doc.title, "paragraphs": [
            {"context": doc.body, "qas": []}]})
        c = item.result["consensus"]
        article["paragraphs"][0]["qas"].append({
            "id": item.key, "question": item.result["q"], "is_impossible": False,
            "answers": [{"text": doc.body[c["s"]:c["e"]], "answer_start": c["s"]}]})
    with tempfile.TemporaryDirectory() as out:
        Path(out, "squad.json").write_text(json.dumps({"version": "v2.0",
                                                       "data": list(articles.values())}))
    print(json.dumps({"seconds": time.perf_counter() - t0, "peak_rss_mb": peak_rss_mb()}))


def child(*args: str, root: Path = ROOT) -> dict:
    """Run this script's ``--child`` part in a fresh process, from ``root``'s checkout
    (another checkout's ``bench/export.py`` measures that code on the same project)."""
    out = subprocess.run([sys.executable, str(root / "bench" / "export.py"), *args],
                         cwd=root, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=300_000)
    parser.add_argument("--documents", type=int, default=30_000)
    parser.add_argument("--setup-only", action="store_true",
                        help="build (or find) the project and stop")
    parser.add_argument("--baseline", type=Path, metavar="CHECKOUT",
                        help="also export the same project with the code of another checkout "
                             "(e.g. `git archive addba2c | tar -x -C /tmp/base`), first, and "
                             "report the ratio")
    parser.add_argument("--processes", type=int,
                        help="the build's CROWDQA_RELEASE_PROCESSES (1: one process)")
    parser.add_argument("--skip-naive", action="store_true",
                        help="leave out the naive in-memory SQuAD export")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        print("bench/export.py needs DATABASE_URL=postgres://... (it refuses SQLite)",
              file=sys.stderr)
        return 2
    if args.child:
        kind, *rest = args.child
        if kind == "export":
            export_child(int(rest[0]), rest[1], int(rest[2]) if len(rest) > 2 else None)
        else:
            naive_child(int(rest[0]), int(rest[1]))
        return 0

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    project_id = setup(args.questions, args.documents)
    if args.setup_only:
        print(f"project {project_id} ready")
        return 0
    # Versions from the time of day; whole numbers without leading zeros (semantic
    # versions: "9.08.…" is refused).
    stamp = time.strftime("%H%M%S")
    hour, minute_second = int(stamp[:2]), int(stamp[2:])
    base = None
    if args.baseline is not None:
        base = child("--child", "export", str(project_id), f"9.{hour}.{minute_second}0",
                     root=args.baseline.resolve())
    load = os.getloadavg()[0]
    built = child("--child", "export", str(project_id), f"9.{hour}.{minute_second}",
                  *([str(args.processes)] if args.processes else []))
    print(f"questions={args.questions:,} documents={args.documents:,} (PostgreSQL), load "
          f"average {load:.1f} -> {os.getloadavg()[0]:.1f}")
    # Seconds in each writer, both processes' halves added (the wall time is less).
    squad_s = built["squad-v2_s"] + built.get("child_squad-v2_s", 0.0)
    newsqa_s = built["newsqa-json_s"] + built.get("child_newsqa-json_s", 0.0)
    print(f"one release, both formats: {built['total_s']:.1f} s in all, CPU "
          f"{built['cpu_s']:.1f} s, peak RSS {built['peak_rss_mb']:.0f} MB + "
          f"{built.get('child_peak_rss_mb', 0):.0f} MB of the forked writer = "
          f"{built.get('peak_rss_total_mb', built['peak_rss_mb']):.0f} MB "
          f"(target {TARGET_RSS_MB:.0f} MB)")
    if "one_pass_s" in built:
        def phases(prefix: str) -> str:
            return (f"reading and building the records {built[prefix + 'read_s']:.1f} s, "
                    f"datasheet figures {built[prefix + 'datasheet_s']:.1f} s, SQuAD v2.0 "
                    f"{built[prefix + 'squad-v2_s']:.1f} s, NewsQA JSON "
                    f"{built[prefix + 'newsqa-json_s']:.1f} s")

        print(f"  one pass over the rows: {built['one_pass_s']:.1f} s; "
              f"{'first half of the documents: ' if 'child_s' in built else ''}"
              f"{phases('')}")
        if "child_s" in built:
            print(f"  forked process, second half: {built['child_s']:.1f} s: {phases('child_')}"
                  f"; waited for it {built['child_wait_s']:.1f} s, joining the halves "
                  f"{built['join_s']:.1f} s")
        print(f"  rest of the datasheet {built['datasheet_rest_s']:.1f} s; files: SQuAD v2.0 "
              f"{built['sizes']['squad-v2'] / 1e6:.0f} MB, NewsQA JSON "
              f"{built['sizes']['newsqa-json'] / 1e6:.0f} MB")
    else:
        print(f"  datasheet: {built['datasheet_s']:.1f} s, SQuAD v2.0: {squad_s:.1f} s, "
              f"NewsQA JSON: {newsqa_s:.1f} s")
    if base is not None:
        print(f"baseline ({args.baseline}), same project just before: {base['total_s']:.1f} s "
              f"(datasheet {base['datasheet_s']:.1f} s, SQuAD v2.0 {base['squad-v2_s']:.1f} "
              f"s, NewsQA JSON {base['newsqa-json_s']:.1f} s), CPU {base['cpu_s']:.1f} s, "
              f"peak RSS {base['peak_rss_mb']:.0f} MB; baseline/new time "
              f"{base['total_s'] / built['total_s']:.2f}, CPU "
              f"{base['cpu_s'] / built['cpu_s']:.2f}")
    if not args.skip_naive:
        naive = child("--child", "naive", str(project_id), str(args.questions // 10))
        naive_full_s = naive["seconds"] * 10
        print(f"naive in-memory SQuAD v2.0 export on {args.questions // 10:,} questions: "
              f"{naive['seconds']:.1f} s (x10 = {naive_full_s:.0f} s for all), peak RSS "
              f"{naive['peak_rss_mb']:.0f} MB for a tenth of the data")
    print(f"vs target: whole release {built['total_s'] / WHOLE_TARGET_S:.2f}x of "
          f"{WHOLE_TARGET_S:.0f} s (lower is better)")
    ratio = f" baseline_s={base['total_s']:.1f} ratio={base['total_s'] / built['total_s']:.2f}" \
        if base is not None else ""
    print(f"RESULT export total_s={built['total_s']:.1f} squad_v2_s={squad_s:.1f} "
          f"newsqa_json_s={newsqa_s:.1f} cpu_s={built['cpu_s']:.1f} "
          f"peak_rss_mb={built.get('peak_rss_total_mb', built['peak_rss_mb']):.0f}{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
