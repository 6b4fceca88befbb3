"""The collector API: corpora, document lists without bodies, passage search."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from collector.services import corpus_import
from tests.collector.corpus_support import DUREADER_DEV, SQUAD_V1

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_storage")]


@pytest.fixture
def corpora(db):
    corpus_import(path=SQUAD_V1, corpus="squad", language="en", format="squad")
    corpus_import(path=DUREADER_DEV, corpus="dureader", language="zh", format="dureader")


def test_anonymous_and_roleless_users_are_refused(client, client_for, django_user_model, corpora):
    url = reverse("api_corpus_search", args=["squad"]) + "?q=Warsaw"
    assert client.get(url).status_code == 401
    nobody = django_user_model.objects.create_user("nobody", password="pw-0123456789")
    assert client_for(nobody).get(url).status_code == 403


def test_corpus_list_counts(client_for, checker, corpora):
    data = client_for(checker).get(reverse("api_corpus_list")).json()
    by_name = {row["name"]: row for row in data["results"]}
    assert by_name["squad"]["documents"] == 16 and by_name["squad"]["questions"] == 186
    assert by_name["dureader"]["language"] == "zh" and by_name["dureader"]["passages"] == 657


def test_document_list_leaves_bodies_out(client_for, checker, corpora):
    client = client_for(checker)
    with CaptureQueriesContext(connection) as captured:
        data = client.get(reverse("api_corpus_documents", args=["squad"])).json()
    assert data["count"] == 16
    assert set(data["results"][0]) == {"id", "external_id", "title", "url", "source_type"}
    assert not any('"body"' in q["sql"] for q in captured.captured_queries)


def test_search_passages_and_documents(client_for, checker, corpora):
    client = client_for(checker)
    url = reverse("api_corpus_search", args=["squad"])
    data = client.get(url, {"q": "Genghis Khan Mongol empire", "k": 3}).json()
    assert data["unit"] == "passage" and len(data["hits"]) == 3
    hit = data["hits"][0]
    assert hit["document"].startswith("Genghis_Khan#") and hit["end"] > hit["start"]
    zh = client.get(reverse("api_corpus_search", args=["dureader"]),
                    {"q": "海信电视怎么样", "k": 2, "unit": "document"}).json()
    assert len(zh["hits"]) == 2 and zh["hits"][0]["passages"]
    assert "海信" in zh["hits"][0]["passages"][0]["text"]
    assert client.get(url, {"k": 3}).status_code == 400
    assert client.get(url, {"q": "x", "k": 500}).status_code == 400
    assert client.get(reverse("api_corpus_search", args=["nope"]), {"q": "x"}).status_code == 404
