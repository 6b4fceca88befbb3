"""An MTurk worker does the HIT the way MTurk shows it: inside an iframe on MTurk's page,
ending with the completion form posted to MTurk's externalSubmit. The site must let MTurk's
page frame it and let the form go to MTurk, which its default policy refuses."""

from __future__ import annotations

import html
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode

import pytest

from annotation import engine, studies
from annotation.roles import Role
from annotation.stages import Emit
from tests.annotation.conftest import ARTICLES
from tests.e2e.conftest import watch_csp
from tests.e2e.pages import jobs_settled
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)

SUBMIT_TO = "https://workersandbox.mturk.com"


@pytest.fixture
def project(settings):
    from collector.models import Corpus, Document

    settings.CELERY_TASK_ALWAYS_EAGER = True
    corpus = Corpus.objects.create(name="e2e-mturk", language="en")
    doc = Document.objects.create(corpus=corpus, source_type="news", **ARTICLES[0])
    admin = user_with_roles("boss", Role.ADMIN)
    project = engine.project_create(name="MTurk in a frame", recipe="newsqa", corpus=corpus,
                                    user=admin)
    engine.project_start(project=project, actor=admin)
    jobs_settled(what="the first stage run")
    engine.items_emit(source_stage=project.stages.get(kind="newsqa_question"), emits=[
        Emit(kind="newsqa_answer", key="q0", data={"question": "Who opposed the plan?"},
             document_id=doc.pk)])
    return project


@pytest.fixture
def hit_page() -> Iterator[tuple[str, dict[str, str]]]:
    """MTurk's HIT page, played by a local server on another port (another origin of the
    same site: the browser sends the site's Lax cookies into the frame over plain http,
    as it sends SameSite=None ones into MTurk's https page): its origin, and the iframe
    address to set before the browser opens ``/hit``."""
    frame: dict[str, str] = {}

    class Hit(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the handler's name)
            body = (f'<!doctype html><title>HIT</title><iframe id="hit" '
                    f'src="{html.escape(frame["src"])}" width="1240" height="960"></iframe>')
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("localhost", 0), Hit)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}", frame
    finally:
        server.shutdown()
        server.server_close()


def test_an_mturk_worker_works_the_hit_in_mturks_frame_and_submits_it_to_mturk(
        project, browser, live_server, settings, hit_page, csp_violations):
    study = studies.study_create(project=project, platform="mturk", completion_code="MT9",
                                 quota=1)
    hit_origin, frame = hit_page
    assert live_server.url.startswith("http://localhost:")  # the same site as the HIT page
    settings.CROWDQA_MTURK_FRAME_ANCESTORS = [hit_origin, SUBMIT_TO]
    frame["src"] = f"{live_server.url}{studies.study_path(study)}?" + urlencode({
        "workerId": "A1FRAMED", "assignmentId": "3AFRAMED", "hitId": "3HIT",
        "turkSubmitTo": SUBMIT_TO})
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    watch_csp(context, csp_violations)
    # MTurk's submit endpoint, answered by the test.
    posted: list[dict[str, list[str]]] = []

    def mturk_submit(route) -> None:
        posted.append(parse_qs(route.request.post_data or ""))
        route.fulfill(status=200, content_type="text/html",
                      body='<!doctype html><p id="thanks">HIT submitted</p>')

    context.route(f"{SUBMIT_TO}/mturk/externalSubmit", mturk_submit)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(f"{hit_origin}/hit")
        page.wait_for_timeout(3000)
        hit = page.frame_locator("#hit")
        hit.locator('[data-testid="consent"]').wait_for()
        hit.locator('[data-testid="agree"]').click()
        hit.locator('[data-testid="article"]').wait_for()
        hit.locator('[data-testid="no-answer"]').click()
        hit.locator('[data-testid="completion"]').wait_for()
        assert hit.locator('[data-testid="completion-code"]').inner_text() == "MT9"
        hit.locator('[data-testid="mturk-submit"] button').click()
        hit.locator("#thanks").wait_for()
    finally:
        context.close()
    assert posted == [{"assignmentId": ["3AFRAMED"], "completion_code": ["MT9"]}]
    worker = studies.ExternalAccount.objects.get(external_id="A1FRAMED").user
    assert worker.submissions.count() == 1
