"""An upload imported by a real Celery worker on the index queue (CI: PostgreSQL + Redis)."""

from __future__ import annotations

import time

import pytest
from django.db import transaction

from collector.models import Corpus, Job
from collector.services import retrieve
from collector.services.uploads import upload_store
from tests.collector.corpus_support import SQUAD_V2, indexed


class _Upload:
    """The part of an UploadedFile that upload_store reads."""

    def __init__(self, path):
        self.name = path.name
        self._path = path

    def chunks(self):
        yield self._path.read_bytes()


@pytest.mark.celery_worker
@pytest.mark.usefixtures("isolated_storage")
def test_import_job_runs_on_the_worker_and_the_corpus_is_searchable(celery_worker_process):
    from collector.jobs import job_create

    relative, original = upload_store(upload=_Upload(SQUAD_V2))
    with transaction.atomic():
        job = job_create(kind="corpus_import", params={
            "upload": relative, "filename": original, "corpus": "by-worker", "language": "en",
            "format": "squad",
        })
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.finished:
            break
        time.sleep(0.3)
    assert job.status == Job.Status.DONE, job.error
    assert job.result["documents_created"] == 15 and job.result["passages_indexed"] == 15
    corpus = Corpus.objects.get(name="by-worker")
    # The worker wrote the index the web process reads.
    assert indexed(corpus) == 15
    assert retrieve(corpus=corpus, text="Normandy Rollo Vikings", k=1)[0].external_id.startswith(
        "Normans#")
