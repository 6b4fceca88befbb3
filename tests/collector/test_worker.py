"""A task round-trip through a real Celery worker and broker (CI: PostgreSQL + Redis)."""

from __future__ import annotations

import socket
import time

import pytest
from django.db import transaction

from collector.jobs import job_create
from collector.models import Job


@pytest.mark.celery_worker
def test_job_round_trip_through_a_real_worker(celery_worker_process, django_user_model):
    django_user_model.objects.create_user("someone", password="pw-0123456789")
    with transaction.atomic():
        job = job_create(kind="selfcheck", params={"echo": "hello"})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.finished:
            break
        time.sleep(0.2)
    assert job.status == Job.Status.DONE, job.error
    # The worker read the row by id from the same database and wrote its result back.
    assert job.result["users"] == 1
    assert job.result["echo"] == "hello"
    assert job.result["host"] == socket.gethostname()
    assert job.attempts == 1
