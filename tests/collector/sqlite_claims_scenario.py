"""One worker's claims at once on the embedded default (two tabs, a double click, a
script): each round, four threads of one worker claim together; every one must get the same
task and the worker must hold one live task. Prints a JSON report;
``tests/collector/test_sqlite_concurrency.py`` runs it in a subprocess against a fresh
database file.

    DATABASE_URL=sqlite:////tmp/x.sqlite3 .venv/bin/python tests/collector/sqlite_claims_scenario.py
"""

from __future__ import annotations

import json
import os
import sys
import threading
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

ROUNDS = 10
CLAIMS = 4


def main() -> int:
    import django

    django.setup()
    from django.db import connection

    from annotation import engine
    from annotation.models import Assignment
    from tests.collector.sqlite_scenario import setup, wait_until

    (project, _), people = setup(articles=16)
    engine.project_start(project=project, actor=people["admin"])
    wait_until(lambda: Assignment.objects.filter(status="open").count() >= CLAIMS,
               timeout=120, what="the first stage's open slots")
    worker = people["q1"]
    rounds, errors = [], []
    for _ in range(ROUNDS):
        barrier = threading.Barrier(CLAIMS)
        got: list = []

        def claim(barrier: threading.Barrier = barrier, got: list = got) -> None:
            try:
                barrier.wait()
                task = engine.task_claim(worker=worker)
                got.append(task.pk if task is not None else None)
            except Exception:
                errors.append(traceback.format_exc())
            finally:
                connection.close()

        threads = [threading.Thread(target=claim) for _ in range(CLAIMS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        live = sorted(Assignment.objects.filter(worker=worker, status="active")
                      .values_list("pk", flat=True))
        rounds.append({"claimed": sorted(got, key=str), "live": live})
        for pk in live:
            engine.task_release(assignment_id=pk, worker=worker)
    print(json.dumps({"rounds": rounds, "errors": errors}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
