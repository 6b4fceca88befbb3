"""A release built by a real Celery worker into the release storage the web process reads
(CI: PostgreSQL + Redis)."""

from __future__ import annotations

import hashlib
import time

import pytest
from django.db import transaction

from annotation import releases
from annotation.models import Release
from tests.annotation.test_releases import _marco_project
from tests.collector.corpus_support import isolated_storage  # noqa: F401 (fixture)


@pytest.mark.celery_worker
@pytest.mark.usefixtures("isolated_storage")
def test_the_worker_builds_the_release_into_the_storage(celery_worker_process, admin_user):
    project, sample = _marco_project(admin_user)
    with transaction.atomic():
        release = releases.release_create(project=project, version="1.0.0", user=admin_user,
                                          formats=["msmarco", "dureader", "hf"])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        release.job.refresh_from_db()
        if release.job.finished:
            break
        time.sleep(0.3)
    release.refresh_from_db()
    assert release.status == Release.Status.READY, (release.error, release.job.error)
    files = list(release.files.all())
    assert {f.format for f in files} == {"msmarco", "dureader", "hf", "datasheet"}
    for f in files:  # written by the worker, read here through the storage
        with releases.release_open(release, f.path) as handle:
            data = handle.read()
        assert (hashlib.sha256(data).hexdigest(), len(data)) == (f.sha256, f.bytes), f.path
    assert any(f.path.startswith("marco-release-1.0.0/") for f in files)
    with releases.release_open(release, "train_v2.1.jsonl") as handle:
        assert len(handle.read().splitlines()) == len(sample)
