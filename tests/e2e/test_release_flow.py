"""An admin creates a release in the browser, sees it built, and downloads a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation import engine
from annotation.models import Item, Release
from annotation.roles import Role
from tests.annotation.conftest import ARTICLES
from tests.annotation.test_newsqa_flow import claim_item
from tests.e2e.conftest import watch_csp
from tests.e2e.pages import jobs_settled, row, submit
from tests.factories import PASSWORD, user_with_roles

BUILD_TIMEOUT_MS = 180_000

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def finished(settings, tmp_path):
    """A NewsQA project run to the end through the services (one article, one question)."""
    from collector.models import Corpus, Document

    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.MEDIA_ROOT = tmp_path / "media"
    corpus = Corpus.objects.create(name="e2e-release", language="en")
    Document.objects.create(corpus=corpus, source_type="news", **ARTICLES[0])
    admin = user_with_roles("boss", Role.ADMIN)
    project = engine.project_create(name="Release demo", recipe="newsqa", corpus=corpus,
                                    user=admin)
    names = ("asker", "reader1", "reader2")
    people = {n: user_with_roles(n, Role.ANNOTATOR) for n in names}
    for user in people.values():
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    engine.project_start(project=project, actor=admin)
    jobs_settled(what="the first stage run")
    task = engine.task_claim(worker=people["asker"], project=project)
    engine.task_submit(assignment_id=task.pk, worker=people["asker"],
                       payload={"questions": ["Who opposed the plan?"]})
    item = row(Item.objects.filter(stage__kind="newsqa_answer"), what="the answer item")
    body = item.document.body
    span = [body.index("Dario Weiss"), body.index("Dario Weiss") + len("Dario Weiss")]
    for name in ("reader1", "reader2"):
        task = claim_item(people[name], project, item)
        engine.task_submit(assignment_id=task.pk, worker=people[name], payload={"spans": [span]})
    row(Item.objects.filter(stage__kind="newsqa_consolidate", status="done"),
        what="the consolidated record")
    return project


def test_admin_creates_watches_and_downloads_a_release(finished, browser, live_server,
                                                       screenshot, csp_violations):
    context = browser.new_context(base_url=live_server.url, accept_downloads=True)
    watch_csp(context, csp_violations)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto("/accounts/login/")
    page.fill("#id_username", "boss")
    page.fill("#id_password", PASSWORD)
    submit(page, "button[type=submit]")  # the login, before leaving the page
    page.goto(f"/manage/projects/{finished.pk}/")
    page.fill("#release-version", "1.0.0")
    # The build is a job (run within the request here, on a thread or a worker otherwise):
    # on a loaded machine it takes far longer than a click, so the waits for its page and
    # for its "Ready" get a build's deadline, not a click's.
    with page.expect_navigation(wait_until="load", timeout=BUILD_TIMEOUT_MS):
        page.click('[data-testid="create-release"]', no_wait_after=True)
    page.wait_for_selector('[data-testid="release-status"]')
    page.wait_for_function(
        "document.querySelector('[data-testid=\"release-status\"]').textContent.trim()"
        " === 'Ready'", timeout=BUILD_TIMEOUT_MS)
    screenshot("release-ready", of=page)
    files = page.locator('[data-testid="release-files"] a').all_inner_texts()
    assert "train-v2.0.json" in files and "SHA256SUMS" not in files
    with page.expect_download() as download_info:
        page.click('text="train-v2.0.json"')
    path = download_info.value.path()
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    qa = data["data"][0]["paragraphs"][0]["qas"][0]
    assert qa["question"] == "Who opposed the plan?"
    assert qa["answers"][0]["text"] == "Dario Weiss"
    release = Release.objects.get()
    assert release.status == "ready" and release.files.filter(format="squad-v2").exists()
    context.close()
