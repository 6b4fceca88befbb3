"""The browser tests' waits hold while a stage job is still on the job thread (the embedded
mode's background work), and give up with a message naming what was missing."""

from __future__ import annotations

import threading

import pytest

from annotation import engine
from annotation.models import Item
from annotation.roles import Role
from collector.jobs import _eager_executor
from collector.models import Corpus, Document, Job
from tests.annotation.conftest import ARTICLES
from tests.e2e.pages import jobs_settled, row
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def job_thread_held(settings):
    """Jobs go to the embedded mode's job thread, which first waits for the event: every
    job started meanwhile stays queued until the test sets it."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CROWDQA_JOBS_IN_THREAD = True
    release = threading.Event()
    held = _eager_executor().submit(release.wait, 60)
    yield release
    release.set()
    held.result(timeout=60)


def test_row_waits_for_the_stage_job_that_makes_it(job_thread_held):
    corpus = Corpus.objects.create(name="e2e-news", language="en")
    Document.objects.create(corpus=corpus, source_type="news", **ARTICLES[0])
    admin = user_with_roles("boss", Role.ADMIN)
    project = engine.project_create(name="waits", recipe="newsqa", corpus=corpus, user=admin)
    engine.project_start(project=project, actor=admin)
    questions = Item.objects.filter(stage__project=project, stage__kind="newsqa_question")
    job = Job.objects.get(kind="stage_run")
    assert job.status == Job.Status.QUEUED and not questions.exists()

    with pytest.raises(pytest.fail.Exception) as busy:
        row(questions, what="the question item", timeout=0.3)
    assert "waiting for the question item: jobs still busy" in str(busy.value)
    assert f"({job.pk}, 'stage_run', 'queued')" in str(busy.value)

    job_thread_held.set()
    item = row(questions, what="the question item")
    assert item.document.title == ARTICLES[0]["title"]
    job.refresh_from_db()
    assert job.status == Job.Status.DONE


def test_a_failed_job_fails_the_wait_with_its_error(db):
    Job.objects.create(kind="stage_run", params={"stage_id": 9}, status=Job.Status.FAILED,
                       error="stage 9 no longer exists")
    with pytest.raises(pytest.fail.Exception, match="waiting for the records: job \\d+ "
                       r"\(stage_run, \{'stage_id': 9\}\) failed: stage 9 no longer exists"):
        jobs_settled(what="the records")


def test_a_row_that_never_comes_is_named(db):
    with pytest.raises(pytest.fail.Exception,
                       match="the validation item: not there after 0 s, and no job is running"):
        row(Item.objects.filter(stage__kind="newsqa_validate"), what="the validation item",
            timeout=0.2)
