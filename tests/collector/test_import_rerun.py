"""A corpus import whose worker died after its import committed, while it indexed: the
re-run finds every document there, catches the index up, and reports what the job
imported, not "0 imported, nothing new"."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from django.utils.functional import Promise

from collector.job_handlers import corpus_import_job
from collector.jobs import Progress, job_describe, job_run, jobs_recover
from collector.models import Corpus, Document, ImportRun, Job
from collector.services.uploads import upload_store
from tests.collector.corpus_support import SQUAD_V1, indexed


class _WorkerKilled(BaseException):
    """What a SIGKILL is to the job: nothing after it runs."""


class _DiesWhileIndexing(Progress):
    def __init__(self, job: Job) -> None:
        super().__init__(job)
        self.messages: list[object] = []

    def start(self, *, total: int | None, message: str = "") -> None:
        self.messages.append(message)
        if str(message).startswith("indexing"):
            raise _WorkerKilled
        super().start(total=total, message=message)

    def set(self, done: int, *, total: int | None = None, message: str | None = None) -> None:
        if message is not None:
            self.messages.append(message)
        super().set(done, total=total, message=message)


@pytest.mark.usefixtures("isolated_storage")
def test_a_rerun_after_the_import_committed_reports_what_the_job_imported(db, settings,
                                                                          admin_user):
    settings.CROWDQA_JOB_LOST_AFTER_S = 60
    relative, original = upload_store(upload=SimpleUploadedFile(
        SQUAD_V1.name, SQUAD_V1.read_bytes()))
    beat = timezone.now() - timedelta(seconds=120)
    job = Job.objects.create(
        kind="corpus_import", created_by=admin_user, status=Job.Status.RUNNING,
        params={"upload": relative, "filename": original, "corpus": "rerun", "language": "en",
                "format": "squad"},
        started_at=beat, heartbeat_at=beat, claim=uuid.uuid4(), worker="gone:4242", attempts=1)
    progress = _DiesWhileIndexing(job)
    with pytest.raises(_WorkerKilled):
        corpus_import_job(job, progress)
    corpus = Corpus.objects.get(name="rerun")
    documents = Document.objects.filter(corpus=corpus).count()
    assert documents > 0 and indexed(corpus) == 0  # committed, never indexed
    # The live progress is said in the job page reader's language.
    imported = [m for m in progress.messages if str(m).endswith("documents imported")]
    assert imported and all(isinstance(m, Promise) for m in imported)

    assert jobs_recover()["requeued"] == 1
    job = job_run(job_id=job.pk)
    assert job.status == Job.Status.DONE, job.error
    assert job.attempts == 2
    run = ImportRun.objects.get(corpus=corpus)
    assert job.result["run"] == run.pk
    assert job.result["documents_created"] == documents == run.documents_created
    assert job.result["documents_skipped"] == 0
    assert job.result["passages_indexed"] == indexed(corpus) > 0
    summary = " ".join(job_describe(job)["summary"])
    assert f"{documents} documents imported into rerun (0 skipped: already present)" in summary
    assert "Nothing new" not in summary


@pytest.mark.usefixtures("isolated_storage")
def test_a_job_importing_only_what_the_corpus_had_still_says_nothing_new(db, admin_user):
    def upload_job() -> Job:
        relative, original = upload_store(upload=SimpleUploadedFile(
            SQUAD_V1.name, SQUAD_V1.read_bytes()))
        return Job.objects.create(kind="corpus_import", created_by=admin_user, params={
            "upload": relative, "filename": original, "corpus": "twice", "language": "en",
            "format": "squad"})

    first = job_run(job_id=upload_job().pk)
    assert first.status == Job.Status.DONE and first.result["documents_created"] > 0
    second = job_run(job_id=upload_job().pk)
    assert second.status == Job.Status.DONE, second.error
    assert second.result["documents_created"] == 0 and second.result["run"] is None
    assert "Nothing new: every record was in the corpus already." in job_describe(
        second)["summary"]
