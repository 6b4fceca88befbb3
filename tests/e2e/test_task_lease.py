"""A task page open longer than the task's lease: while the worker is at work the page
keeps the task (it renews the lease), and when the task cannot be kept it says so at once
instead of letting the worker write an answer the submit will refuse."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotation import engine
from annotation.models import Assignment
from annotation.roles import Role
from tests.e2e.pages import task_next
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)

MINUTE_MS = 60_000


@pytest.fixture
def project(settings):
    from collector.models import Corpus, Document

    settings.CELERY_TASK_ALWAYS_EAGER = True
    corpus = Corpus.objects.create(name="e2e-lease", language="en")
    for n in range(2):
        Document.objects.create(
            corpus=corpus, source_type="news", external_id=f"lease{n}", title=f"Article {n}",
            body="PORTVALE (CNN) -- The city council voted 7-2 to build a public library.",
            highlights=["The council voted for a library"])
    admin = user_with_roles("boss", Role.ADMIN)
    project = engine.project_create(name="Lease", recipe="newsqa", corpus=corpus, user=admin)
    engine.project_member_add(project=project, user=user_with_roles("asker", Role.ANNOTATOR),
                              role=Role.ANNOTATOR)
    engine.project_start(project=project, actor=admin)
    return project


def test_the_task_page_keeps_the_task_while_the_worker_works(page, login, project):
    renewals = []
    page.on("request", lambda request: renewals.append(request.url)
            if request.url.endswith("/renew/") else None)
    page.clock.install()
    login("asker")
    task_next(page, "#task-form")
    task = Assignment.objects.get(worker__username="asker", status="active")
    first_lease = task.lease_expires_at
    # Twenty minutes of thinking and typing: the page renews the lease on its own.
    page.fill('[data-testid="question-1"]', "Who voted for the library?")
    with page.expect_response("**/renew/") as renewed:
        page.clock.run_for(11 * MINUTE_MS)
    assert renewed.value.status == 200
    task.refresh_from_db()
    assert task.lease_expires_at > first_lease
    expect(page.get_by_test_id("lease-lost")).to_be_hidden()
    # A page left alone renews nothing (its task goes back to the pool in time).
    sent = len(renewals)
    page.clock.run_for(11 * MINUTE_MS)
    assert len(renewals) == sent
    # The task is lost meanwhile (its time ran out): the next renewal says so on the page.
    Assignment.objects.filter(pk=task.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1))
    page.keyboard.press("End")
    with page.expect_response("**/renew/") as refused:
        page.clock.run_for(11 * MINUTE_MS)
    assert refused.value.status == 409
    expect(page.get_by_test_id("lease-lost")).to_have_text(
        "This answer can no longer be saved: your time for this task ran out; "
        "take the next task.")
