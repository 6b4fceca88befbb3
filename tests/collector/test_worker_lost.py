"""A worker killed with SIGKILL in the middle of an import and a release build: a new
worker (with the periodic check, ``celery worker -B``) finishes both, and every document,
release row and release file exists exactly once (CI: PostgreSQL + Redis)."""

from __future__ import annotations

import hashlib
import json
import random
import signal
from pathlib import Path

import pytest
from django.db import transaction

from annotation import releases
from annotation.models import Project, Release, ReleaseFile
from bench.export import WORDS
from bench.export import setup as export_project_setup
from collector.jobs import WORKER_LOST, job_create, job_progress
from collector.models import Corpus, Document, ImportRun, Job, Passage
from collector.services.uploads import upload_store
from tests.collector.corpus_support import indexed
from tests.polling import wait_until

# Fast detection for the test: a heartbeat every 0.5 s, lost after 5 s of silence, the
# periodic check every second.
WORKER_ENV = {"CROWDQA_JOB_HEARTBEAT_S": "0.5", "CROWDQA_JOB_LOST_AFTER_S": "5",
              "CROWDQA_PERIODIC_S": "1"}
DOCUMENTS = 30_000
QUESTIONS, ARTICLES = 40_000, 2_000


class _Upload:
    def __init__(self, path: Path) -> None:
        self.name, self._path = path.name, path

    def chunks(self):
        yield self._path.read_bytes()


def _corpus_file(path: Path) -> Path:
    rng = random.Random(15)  # noqa: S311 (test data)
    with path.open("w", encoding="utf-8") as out:
        for n in range(DOCUMENTS):
            body = " ".join(rng.choice(WORDS) for _ in range(80))
            out.write(json.dumps({"id": f"doc-{n}", "title": f"Story {n}", "body": body}) + "\n")
    return path


def _mid_job(job: Job) -> bool:
    """Running on a live worker: claimed and heartbeating (the job row), and past its
    start where its live progress is visible."""
    job.refresh_from_db()
    if job.status != Job.Status.RUNNING or job.heartbeat_at is None:
        return False
    progress = job_progress(job)
    return progress["done"] < (progress["total"] or 1)


@pytest.mark.celery_worker
@pytest.mark.worker_kill
@pytest.mark.usefixtures("isolated_storage")
def test_an_import_and_a_release_build_survive_a_worker_killed_mid_job(celery_workers,
                                                                       tmp_path):
    project = Project.objects.get(pk=export_project_setup(QUESTIONS, ARTICLES))
    relative, original = upload_store(upload=_Upload(_corpus_file(tmp_path / "big.jsonl")))
    # Two threads: the import (index queue) and the build (default queue) run at once.
    first = celery_workers(args=("--pool", "threads", "--concurrency", "2"), env=WORKER_ENV)
    with transaction.atomic():
        imported = job_create(kind="corpus_import", params={
            "upload": relative, "filename": original, "corpus": "killed-mid-import",
            "language": "en", "format": "jsonl"})
        release = releases.release_create(project=project, version="1.0.1",
                                          formats=["squad-v2", "newsqa-json"])
    build = release.job

    def states() -> str:
        rows = Job.objects.filter(pk__in=[imported.pk, build.pk]).values_list(
            "kind", "status", "attempts", "error")
        return f"jobs: {list(rows)}"

    wait_until(lambda: _mid_job(imported) and _mid_job(build), timeout=240, interval=0.1,
               what="both jobs to be under way", detail=states)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    for job in (imported, build):
        job.refresh_from_db()
        assert job.status == Job.Status.RUNNING and job.attempts == 1

    # A new worker with the periodic check: the silent jobs are found and run again.
    celery_workers(args=("--pool", "solo", "-B", "-s", str(tmp_path / "beat-schedule")),
                   env=WORKER_ENV)
    wait_until(lambda: all(Job.objects.get(pk=job.pk).finished for job in (imported, build)),
               timeout=480, interval=0.1, what="both jobs to finish on the new worker",
               detail=states)

    for job in (imported, build):
        job.refresh_from_db()
        assert job.status == Job.Status.DONE, job.error
        assert job.attempts == 2
        assert job.history[0]["event"].startswith(WORKER_LOST)

    # The import: every document, passage and index entry exactly once, one import run.
    corpus = Corpus.objects.get(name="killed-mid-import")
    documents = Document.objects.filter(corpus=corpus)
    assert documents.count() == DOCUMENTS
    assert documents.values("external_id").distinct().count() == DOCUMENTS
    assert ImportRun.objects.filter(corpus=corpus).count() == 1
    passages = Passage.objects.filter(document__corpus=corpus).count()
    assert indexed(corpus) == passages
    # Killed before its commit, the re-run imports everything; after it (while indexing),
    # the re-run finds every document there and only catches the index up.
    assert (imported.result["documents_created"] + imported.result["documents_skipped"]
            == DOCUMENTS)

    # The release: ready under its version, each file recorded once and stored once,
    # nothing else under its directory in the release storage, every checksum right.
    release.refresh_from_db()
    assert release.status == Release.Status.READY, release.error
    files = list(ReleaseFile.objects.filter(release=release))
    paths = [f.path for f in files]
    assert len(paths) == len(set(paths))
    # squad-v2 a file per split; newsqa-json its combined file and the story-id lists.
    by_format = {fmt: sorted(f.path for f in files if f.format == fmt)
                 for fmt in {f.format for f in files}}
    assert set(by_format) == {"squad-v2", "newsqa-json", "datasheet"}
    assert by_format["datasheet"] == ["DATASHEET.md"]
    assert {f.split for f in files if f.format == "squad-v2"} == set(release.split_counts)
    assert len([p for p in by_format["newsqa-json"] if p.endswith("_story_ids.csv")]) == 3
    stored = sorted(releases._storage_names(releases.release_storage(), release.directory))
    assert stored == sorted(releases.release_file_name(release, path)
                            for path in [*paths, releases.CHECKSUMS])
    for f in files:
        with releases.release_open(release, f.path) as handle:
            assert hashlib.sha256(handle.read()).hexdigest() == f.sha256
    assert Release.objects.filter(project=project, version="1.0.1").count() == 1
