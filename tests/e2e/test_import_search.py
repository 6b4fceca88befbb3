"""An admin imports a file from the UI, watches the job's progress bar finish, then searches."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from collector.models import Corpus, Job
from tests.collector.corpus_support import DUREADER_DEV, indexed, isolated_storage  # noqa: F401
from tests.factories import user_with_roles

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("isolated_storage")]


@pytest.fixture
def background_jobs(settings):
    # As in the embedded mode (whatever broker CI configured): the job runs on its own
    # thread in the server process while the page polls.
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CROWDQA_JOBS_IN_THREAD = True


def test_the_browser_tests_share_a_database_file_not_memory():
    """The live server's threads, the job thread and the test share the database: on
    SQLite it must be a file in WAL mode (an in-memory database shared between threads
    fails a writer at once with "database table is locked"), in a run of these tests alone
    and in a whole-suite run where another test set the database up first."""
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("only SQLite's in-memory test database locks whole tables")
    name = connection.settings_dict["NAME"]
    assert "mode=memory" not in name and name != ":memory:", name
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"


def test_admin_imports_watches_progress_and_searches(page, login, screenshot, background_jobs):
    from annotation.roles import Role

    user_with_roles("boss", Role.ADMIN)
    login("boss")
    page.click("nav >> text=Import")
    assert page.locator("h1").inner_text() == "Import a file"
    page.set_input_files("#id_file", str(DUREADER_DEV))
    page.fill("#id_corpus", "dureader-ui")
    page.select_option("#id_language", "zh")
    assert page.locator("#id_format").input_value() == ""  # detect it from the file
    screenshot("import-form")
    page.get_by_test_id("import-preview-button").click()
    detected = page.get_by_test_id("detected-format")
    expect(detected).to_contain_text("Detected format: dureader")
    rows = page.get_by_test_id("preview-records").locator("tbody tr")
    assert rows.count() >= 5  # the first five questions' retrieved documents
    assert page.locator("#id_format").input_value() == "dureader"
    assert Job.objects.count() == 0  # nothing imported yet
    screenshot("import-preview")
    page.get_by_test_id("import-button").click()

    page.wait_for_url(re.compile(r"/collector/jobs/\d+/$"))
    progress = page.locator("#job-progress")
    assert progress.locator("progress").count() == 1
    progress_done = page.locator('#job-progress[data-status="done"]')
    progress_done.wait_for(timeout=60_000)  # htmx polls every second until the job ends
    assert page.locator("#job-progress progress").get_attribute("value") == "100"
    assert page.get_by_test_id("job-status").inner_text() == "Done"
    screenshot("import-job-done")
    job = Job.objects.get(kind="corpus_import")
    assert job.status == Job.Status.DONE and job.result["documents_created"] == 74
    assert indexed(Corpus.objects.get(name="dureader-ui")) == 657

    page.get_by_test_id("search-corpus").click()
    page.fill("#id_q", "海信电视怎么样")
    page.press("#id_q", "Enter")
    first_hit = page.get_by_test_id("search-hit").first
    first_hit.wait_for()
    assert "dureader-ui" in page.get_by_test_id("search-total").inner_text()
    assert first_hit.locator("mark").count() >= 1
    assert "海信" in first_hit.locator("mark").first.inner_text()
    assert "q=" in page.url  # htmx pushed the search into the address bar
    screenshot("search-results")
    # Paging swaps the results in place.
    page.get_by_test_id("next-page").click()
    page.wait_for_selector("text=page 2 of")
    assert page.get_by_test_id("search-hit").count() == 10
