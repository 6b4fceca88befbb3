"""The embedded default (SQLite file, jobs on a thread of the web process) under concurrent
submits and stage runs: no job fails, no item is left pending (see sqlite_scenario.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCENARIO = Path(__file__).with_name("sqlite_scenario.py")


def test_concurrent_submits_and_stage_runs_on_sqlite_fail_no_job(tmp_path):
    env = {key: value for key, value in os.environ.items()
           if key not in ("CELERY_BROKER_URL", "CROWDQA_REQUIRE_WORKER")}
    env.update({
        "DATABASE_URL": f"sqlite:///{tmp_path / 'crowdqa.sqlite3'}",
        "SEARCH_INDEX_DIR": str(tmp_path / "index"),
        "CACHE_URL": f"filecache://{tmp_path / 'cache'}",
        "MEDIA_ROOT": str(tmp_path / "media"),
        "SCENARIO_ARTICLES": "16",
    })
    run = subprocess.run([sys.executable, str(SCENARIO)], env=env, capture_output=True,
                         text=True, timeout=600, cwd=SCENARIO.parents[2])
    assert run.returncode == 0, run.stderr[-4000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["journal_mode"] == "wal"
    assert report["errors"] == [], "\n".join(report["errors"])[-4000:]
    assert report["failed_jobs"] == []
    assert report["pending_items"] == 0
    # 16 articles x 2 questions in each project, every one answered twice and consolidated.
    assert report["consolidated"] == {"Load 1": 32, "Load 2": 32}
    assert report["submits"] == {"newsqa_question": 32, "newsqa_answer": 128}
    assert set(report["jobs"]) == {"done"}
