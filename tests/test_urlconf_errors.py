"""The server errors of issue 15, each answered with a 4xx (JSON under /api/)."""
# ruff: noqa: F811 (fixtures imported from tests/annotation/conftest.py are arguments here)

from __future__ import annotations

import pytest

from annotation import engine
from tests.annotation.conftest import (  # noqa: F401 - fixtures, used as arguments
    committed,
    news_corpus,
    newsqa_project,
    workers,
)

pytestmark = pytest.mark.django_db


def _json(response) -> dict:
    assert response["Content-Type"] == "application/json", response["Content-Type"]
    return response.json()


def test_releasing_an_unknown_task_is_refused(client_for, annotator):
    response = client_for(annotator).post("/api/v1/tasks/999999/release/")
    assert response.status_code == 404
    assert _json(response)["detail"] == "this task does not exist"


def test_releasing_another_workers_task_is_refused_and_leaves_it(
        client_for, newsqa_project, workers):
    task = engine.task_claim(worker=workers["questioner"], project=newsqa_project)
    response = client_for(workers["ann1"]).post(f"/api/v1/tasks/{task.pk}/release/")
    assert response.status_code == 403 and _json(response)["detail"] == "this task is not yours"
    task.refresh_from_db()
    assert task.status == "active" and task.worker == workers["questioner"]
    mine = client_for(workers["questioner"]).post(f"/api/v1/tasks/{task.pk}/release/")
    assert mine.status_code == 204
    task.refresh_from_db()
    assert task.status == "released"


def test_options_on_project_releases_describes_the_create_fields(client_for, admin_user,
                                                                  annotator, newsqa_project):
    project = newsqa_project
    response = client_for(admin_user).options(f"/api/v1/projects/{project.pk}/releases/")
    assert response.status_code == 200
    fields = _json(response)["actions"]["POST"]
    assert set(fields) == {"version", "formats", "omit_workers", "unagreed_questions"}
    assert fields["version"]["required"] is True
    unknown = client_for(annotator).options("/api/v1/projects/999999/releases/")
    assert unknown.status_code == 200 and _json(unknown)["name"] == "Project Releases Api"


@pytest.mark.parametrize("url", ["/api/v1/corpora/%00/documents/",
                                 "/api/v1/corpora/%00/search/?q=x",
                                 "/api/v1/tasks/%00/release/"])
def test_a_nul_byte_in_an_api_path_is_a_json_400(client_for, annotator, url):
    response = client_for(annotator).get(url)
    assert response.status_code == 400
    assert _json(response)["detail"] == (
        "The URL path contains a NUL character (%00), which no URL here accepts.")


def test_a_nul_byte_in_a_query_parameter_is_a_400_naming_it(client_for, annotator):
    response = client_for(annotator).get("/api/v1/corpora/squad/search/?q=a%00b")
    assert response.status_code == 400
    assert "query parameter 'q'" in _json(response)["detail"]


def test_a_nul_byte_in_a_page_path_is_a_400(client_for, admin_user):
    client = client_for(admin_user)
    for url in ("/collector/corpora/%00/", "/collector/search/?q=%00"):
        response = client.get(url)
        assert response.status_code == 400, url
        assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("url", ["/api/v1/tasks/not-a-number/", "/api/v1/projects/1x/releases/",
                                 "/api/v1/no-such-endpoint/", "/api/v1/corpora/x/nothing/"])
def test_unmatched_api_urls_are_a_json_404(client_for, annotator, url):
    response = client_for(annotator).get(url)
    assert response.status_code == 404
    assert _json(response)["detail"] == f"Not found: no API endpoint or object at {url}."


def test_unknown_api_objects_are_a_404_naming_the_kind_of_object(client_for, admin_user):
    response = client_for(admin_user).get("/api/v1/projects/999999/")
    assert response.status_code == 404
    assert _json(response)["detail"] == "No project with id 999999."
    response = client_for(admin_user).get("/api/v1/corpora/no-such-corpus/search/?q=a")
    assert response.status_code == 404
    assert _json(response)["detail"] == "No corpus with name 'no-such-corpus'."


def test_pages_keep_the_html_404(client_for, annotator):
    response = client_for(annotator).get("/tasks/not-a-number/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
