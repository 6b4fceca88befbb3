"""The embedded default under load, as `make demo` runs it: one SQLite file, web requests
(here: threads calling the same services the views call) submitting as fast as they can
while the job thread runs the automatic stages they trigger, and a second project started
in the middle. Prints a JSON report; ``tests/collector/test_sqlite_concurrency.py`` runs
it in a subprocess against a fresh database file and requires no failed job.

    DATABASE_URL=sqlite:////tmp/x.sqlite3 .venv/bin/python tests/collector/sqlite_scenario.py
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

QUESTIONS = ["Which official spoke to reporters afterwards?",
             "What amount did the officials mention?"]


def setup(articles: int) -> tuple[list, dict]:
    from django.core.management import call_command

    from annotation import engine
    from annotation.roles import Role
    from collector.models import Corpus, Document
    from tests.annotation.conftest import ARTICLES
    from tests.factories import user_with_roles

    call_command("migrate", verbosity=0)
    corpus = Corpus.objects.create(name="load-news", language="en")
    Document.objects.bulk_create([
        Document(corpus=corpus, source_type="news", external_id=f"{a['external_id']}-{n}",
                 title=a["title"], body=a["body"], highlights=a["highlights"])
        for n in range(articles // 2) for a in ARTICLES
    ])
    admin = user_with_roles("load-admin", Role.ADMIN)
    people = {name: user_with_roles(name, Role.ANNOTATOR)
              for name in ("q1", "q2", "a1", "a2", "a3")}
    projects = []
    for n in (1, 2):
        project = engine.project_create(name=f"Load {n}", recipe="newsqa", corpus=corpus,
                                        user=admin)
        for user in people.values():
            engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
        projects.append(project)
    return projects, {"admin": admin, **people}


def work(worker, kinds: set[str], stop: threading.Event, errors: list, counts: dict) -> None:
    """A worker's browser: claim, submit, claim... until ``stop`` and nothing is left."""
    from django.db import connection

    from annotation import engine

    try:
        while True:
            task = engine.task_claim(worker=worker)
            if task is None or task.stage.kind not in kinds:
                if task is not None:
                    engine.task_release(assignment_id=task.pk, worker=worker)
                if stop.is_set():
                    return
                stop.wait(0.05)  # nothing for this worker yet: the stages are still running
                continue
            kind = task.stage.kind
            payload = ({"questions": QUESTIONS} if kind == "newsqa_question"
                       else {"no_answer": True})
            engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload)
            counts[kind] = counts.get(kind, 0) + 1
    except Exception:
        errors.append(f"{worker.username}: {traceback.format_exc()}")
    finally:
        connection.close()


def wait_until(condition, *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:.0f} s for {what}")
        time.sleep(0.05)


def main() -> int:
    import django

    django.setup()
    from django.db import connection

    from annotation import engine
    from annotation.models import Assignment, Item
    from collector.models import Job

    articles = int(os.environ.get("SCENARIO_ARTICLES", "16"))
    (first, second), people = setup(articles)
    started = time.perf_counter()
    engine.project_start(project=first, actor=people["admin"])
    stop = threading.Event()
    errors: list[str] = []
    counts: dict[str, int] = {}
    threads = [threading.Thread(target=work, args=(people[name], kinds, stop, errors, counts))
               for name, kinds in (("q1", {"newsqa_question"}), ("q2", {"newsqa_question"}),
                                   ("a1", {"newsqa_answer"}), ("a2", {"newsqa_answer"}),
                                   ("a3", {"newsqa_answer"}))]
    for thread in threads:
        thread.start()

    def done_questions() -> int:
        return Item.objects.filter(stage__kind="newsqa_question", status="done").count()

    # The second project starts while the first one's submits and stage runs go on.
    wait_until(lambda: done_questions() >= 3, timeout=120, what="the first questions")
    engine.project_start(project=second, actor=people["admin"])

    def finished() -> bool:
        live_jobs = Job.objects.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
        open_slots = Assignment.objects.filter(status__in=["open", "active"])
        return (not live_jobs.exists() and not open_slots.exists()
                and not Item.objects.filter(status="pending").exists()
                and done_questions() == 2 * articles) or bool(errors)

    try:
        wait_until(finished, timeout=float(os.environ.get("SCENARIO_TIMEOUT_S", "300")),
                   what="both projects to finish")
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    report = {
        "seconds": round(time.perf_counter() - started, 1),
        "errors": errors,
        "submits": counts,
        "jobs": dict(Job.objects.values_list("status").annotate(
            n=__import__("django.db.models", fromlist=["Count"]).Count("id")).order_by()),
        "failed_jobs": [f"{job.kind} #{job.pk} {job.params}: {job.error}"
                        for job in Job.objects.filter(status=Job.Status.FAILED)],
        "pending_items": Item.objects.filter(status="pending").count(),
        "consolidated": {project.name: Item.objects.filter(
            project=project, stage__kind="newsqa_consolidate", status="done").count()
            for project in (first, second)},
        "journal_mode": _journal_mode(connection),
    }
    print(json.dumps(report))
    return 0


def _journal_mode(connection) -> str:
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        return cursor.fetchone()[0]


if __name__ == "__main__":
    sys.exit(main())
