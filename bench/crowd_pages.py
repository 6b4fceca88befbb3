"""Benchmark: the pages an admin and a checker use while a crowd of hundreds works.

Run from the repository root on a database holding a crowd project (bench/crowd_build.py
builds one through the product's services: ~500 workers from Prolific studies, a members
CSV and invite links, ~20,000 answers with gold checks, paused and blocked members, a
payments export)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/qa_scale \\
        .venv/bin/python bench/crowd_pages.py --project ID [--small ID] [--repeat 3]

Each page is requested in this process with Django's test client (signed in as the admin,
the checker for the checker's pages), once to warm up and ``--repeat`` more times: the
median time, the SQL queries of a request (``CaptureQueriesContext``) and the response
size. Every view finds new work (``--idle``: none), as while the crowd works: the workers
pages' competence estimate is never the one cached by the previous view. **Baseline, same
run**: the same page of ``--small`` (by default the demo's finished
NewsQA project, a handful of workers); ``ratio`` = crowd time / small time: near 1 when a
page's cost does not grow with the crowd.

The last line is ``RESULT crowd_pages pages=N slowest_ms=… slowest=… max_queries=…
max_ratio=… total_ms=…``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def pages_of(project, *, checker: bool, marco=None) -> list[tuple[str, str, str]]:
    """(name, who, url) of the pages measured on ``project`` (and on the MS MARCO project
    ``marco``, when given)."""
    from annotation.models import PaymentExport, Stage, Study, Submission
    from collector.models import Job

    pk = project.pk
    worker = (Submission.objects.filter(stage__project=project).values_list("worker_id",
                                                                           flat=True)
              .order_by("worker_id").first())
    stage = Stage.objects.filter(project=project, params__has_key="gold_rate").first() or \
        Stage.objects.filter(project=project, kind__in=("newsqa_answer", "reco_evidence",
                                                        "marco_distill")).first()
    export = PaymentExport.objects.filter(project=project).order_by("-id").first()
    study = Study.objects.filter(project=project).first()
    job = Job.objects.order_by("-id").first()
    out = [
        ("project", "admin", f"/manage/projects/{pk}/"),
        ("workers", "admin", f"/manage/projects/{pk}/workers/"),
        ("workers_table_htmx", "admin", f"/manage/projects/{pk}/workers/?sort=gold&page=2"),
        ("workers_stage", "admin", f"/manage/projects/{pk}/workers/?stage={stage.pk}"
         if stage else f"/manage/projects/{pk}/workers/"),
        ("worker", "admin", f"/manage/projects/{pk}/workers/{worker}/"),
        ("gold", "admin", f"/manage/stages/{stage.pk}/gold/"),
        ("pay", "admin", f"/manage/projects/{pk}/pay/"),
        ("pay_page2", "admin", f"/manage/projects/{pk}/pay/?page=2"),
        ("members", "admin", f"/manage/projects/{pk}/members/"),
        ("studies", "admin", f"/manage/projects/{pk}/studies/"),
        ("admin_home", "admin", "/manage/"),
        ("releases", "admin", "/manage/releases/"),
        ("batches", "admin", "/review/batches/"),
        ("jobs", "admin", "/collector/jobs/"),
        ("api_workers", "admin", "/api/v1/workers/"),
        ("api_users", "admin", "/api/v1/users/"),
        ("api_projects", "admin", "/api/v1/projects/"),
        ("api_project", "admin", f"/api/v1/projects/{pk}/"),
        ("api_records", "admin", f"/api/v1/projects/{pk}/records/"),
    ]
    if export is not None:
        out.append(("payment_csv", "admin", f"/manage/payments/{export.pk}.csv"))
    if study is not None and export is not None:
        out.append(("prolific_txt", "admin",
                    f"/manage/payments/{export.pk}/prolific.txt?study=STUDY0"))
    if job is not None:
        out.append(("job", "admin", f"/collector/jobs/{job.pk}/"))
    if marco is not None:  # the MS MARCO page (the crowd's people may all join it as
        # annotators or checkers): a search of them, and a page of its outlier answers
        out += [("marco_project", "admin", f"/manage/projects/{marco.pk}/"),
                ("marco_people_htmx", "admin",
                 f"/manage/projects/{marco.pk}/?part=people&people=8-&people_page=2"),
                ("marco_outliers_htmx", "admin",
                 f"/manage/projects/{marco.pk}/?part=outliers&outliers_page=2")]
    if checker:
        out += [("checker_home", "checker", "/review/"),
                ("checker_workers", "checker", f"/manage/projects/{pk}/workers/"),
                ("checker_worker", "checker", f"/manage/projects/{pk}/workers/{worker}/"),
                ("checker_api_workers", "checker", "/api/v1/workers/")]
    return out


def measure(client, url: str, *, repeat: int, htmx: bool) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    headers = {"HX-Request": "true"} if htmx else {}
    times, queries, size, status = [], 0, 0, None
    for n in range(repeat + 1):
        with CaptureQueriesContext(connection) as seen:
            start = time.perf_counter()
            response = client.get(url, headers=headers)
            body = b"".join(response) if response.streaming else response.content
            elapsed = (time.perf_counter() - start) * 1000
        if n:
            times.append(elapsed)
        queries, size, status = len(seen), len(body), response.status_code
    return {"ms": statistics.median(times), "queries": queries, "kb": size / 1024,
            "status": status}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--project", type=int, required=True)
    ap.add_argument("--small", type=int, default=None,
                    help="the baseline project (default: the demo's finished NewsQA one)")
    ap.add_argument("--marco", type=int, default=None,
                    help="an MS MARCO project whose page is measured too (default: the "
                         "demo's finished one; 0: none)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated page names")
    ap.add_argument("--idle", action="store_true",
                    help="no new work between views (cached competence estimates hold)")
    args = ap.parse_args()

    import django
    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotation.models import Project, ProjectMember

    settings.ALLOWED_HOSTS = ["*"]
    if not args.idle:
        # The crowd at work: every view finds new submissions (the competence estimate's
        # fingerprint changes between views), as it does while hundreds of workers submit.
        import itertools

        from annotation import worker_stats

        views = itertools.count()
        fingerprint = worker_stats._fingerprint
        worker_stats._fingerprint = lambda *a, **k: (*fingerprint(*a, **k), next(views))
    User = get_user_model()
    crowd = Project.objects.get(pk=args.project)
    small = (Project.objects.get(pk=args.small) if args.small else
             Project.objects.filter(recipe="newsqa").exclude(pk=crowd.pk).order_by("id").first())
    marco = (None if args.marco == 0 else Project.objects.get(pk=args.marco) if args.marco
             else Project.objects.filter(recipe="marco").order_by("id").first())
    clients = {}
    for who in ("admin", "checker"):
        client = Client()
        client.force_login(User.objects.get(username=who))
        clients[who] = client
    checks = {p.pk: ProjectMember.objects.filter(project=p, user__username="checker",
                                                 role="checker").exists()
              for p in (crowd, small)}
    only = {n for n in args.only.split(",") if n}
    members = {p.pk: ProjectMember.objects.filter(project=p).count() for p in (crowd, small)}
    from annotation.models import Submission

    done = Submission.objects.filter(stage__project=crowd).count()
    print(f"crowd project {crowd.pk} ({members[crowd.pk]} members, {done} submissions) "
          f"against baseline project {small.pk} ({members[small.pk]} members), median of "
          f"{args.repeat}, {'idle' if args.idle else 'new work between views'}")
    print(f"{'page':22} {'ms':>8} {'queries':>8} {'KiB':>8} | {'base ms':>8} "
          f"{'base q':>7} | {'ratio':>6}")
    rows = []
    base_urls = {name: url for name, _, url in pages_of(small, checker=checks[small.pk])}
    nothing = {"ms": float("nan"), "queries": -1}
    for name, who, url in pages_of(crowd, checker=checks[crowd.pk], marco=marco):
        if only and name not in only:
            continue
        htmx = name.endswith("_htmx")
        got = measure(clients[who], url, repeat=args.repeat, htmx=htmx)
        base = (measure(clients[who], base_urls[name], repeat=args.repeat, htmx=htmx)
                if name in base_urls else nothing)
        ratio = got["ms"] / base["ms"] if base["ms"] else float("nan")
        rows.append((name, got, base, ratio))
        flag = "" if got["status"] == 200 else f"  HTTP {got['status']}"
        print(f"{name:22} {got['ms']:8.1f} {got['queries']:8d} {got['kb']:8.1f} | "
              f"{base['ms']:8.1f} {base['queries']:7d} | {ratio:6.2f}{flag}", flush=True)
    slowest = max(rows, key=lambda r: r[1]["ms"])
    print(f"RESULT crowd_pages pages={len(rows)} members={members[crowd.pk]} "
          f"slowest_ms={slowest[1]['ms']:.1f} slowest={slowest[0]} "
          f"max_queries={max(r[1]['queries'] for r in rows)} "
          f"max_ratio={max(r[3] for r in rows if r[3] == r[3]):.2f} "
          f"total_ms={sum(r[1]['ms'] for r in rows):.1f}")


if __name__ == "__main__":
    main()
