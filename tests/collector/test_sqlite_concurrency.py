"""The embedded default (SQLite file, jobs on a thread of the web process) under concurrent
submits and stage runs: no job fails, no item is left pending (see sqlite_scenario.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCENARIO = Path(__file__).with_name("sqlite_scenario.py")
CLAIMS_SCENARIO = Path(__file__).with_name("sqlite_claims_scenario.py")


def scenario_run(script: Path, tmp_path: Path, **extra: str) -> dict:
    """Run a scenario script against a fresh SQLite file (jobs on the web process's
    thread, as `make demo` runs); its JSON report."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("CELERY_BROKER_URL", "CROWDQA_REQUIRE_WORKER")}
    env.update({
        "DATABASE_URL": f"sqlite:///{tmp_path / 'crowdqa.sqlite3'}",
        "SEARCH_INDEX_DIR": str(tmp_path / "index"),
        "CACHE_URL": f"filecache://{tmp_path / 'cache'}",
        "MEDIA_ROOT": str(tmp_path / "media"),
        **extra,
    })
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=600, cwd=script.parents[2])
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_concurrent_submits_and_stage_runs_on_sqlite_fail_no_job(tmp_path):
    report = scenario_run(SCENARIO, tmp_path, SCENARIO_ARTICLES="16")
    assert report["journal_mode"] == "wal"
    assert report["errors"] == [], "\n".join(report["errors"])[-4000:]
    assert report["failed_jobs"] == []
    assert report["pending_items"] == 0
    # 16 articles x 2 questions in each project, every one answered twice and consolidated.
    assert report["consolidated"] == {"Load 1": 32, "Load 2": 32}
    assert report["submits"] == {"newsqa_question": 32, "newsqa_answer": 128}
    assert set(report["jobs"]) == {"done"}


def test_one_workers_claims_at_once_on_sqlite_give_one_task(tmp_path):
    """Four claims of one worker at once (tabs, a double click): before the claim ran in
    one transaction, each could take its own slot, and the worker held up to four tasks."""
    report = scenario_run(CLAIMS_SCENARIO, tmp_path)
    assert report["errors"] == [], "\n".join(report["errors"])[-4000:]
    for each in report["rounds"]:
        assert len(each["live"]) == 1, report["rounds"]
        assert each["claimed"] == each["live"] * len(each["claimed"]), report["rounds"]
