"""Integrity: annotators see only what their tasks show. Corpora, search and source
questions (with their gold answers) are for checkers and admins, unless an admin opens a
corpus to annotators; even then its source questions stay hidden from them."""

from __future__ import annotations

import pytest
from django.urls import reverse

from collector.models import Corpus, Document
from collector.services import corpus_import
from tests.collector.corpus_support import SQUAD_V1

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_storage")]


@pytest.fixture
def squad(db):
    corpus_import(path=SQUAD_V1, corpus="squad", language="en", format="squad")
    return Corpus.objects.get(name="squad")


def _pages(squad_doc):
    return {
        "corpus_detail": reverse("collector:corpus_detail", args=["squad"]),
        "document": reverse("collector:document_detail", args=[squad_doc.pk]),
        "search": reverse("collector:search") + "?corpus=squad&q=Normans",
        "api_documents": reverse("api_corpus_documents", args=["squad"]),
        "api_search": reverse("api_corpus_search", args=["squad"]) + "?q=Normans",
    }


def test_annotators_see_no_closed_corpus_in_pages_or_api(client_for, annotator, checker,
                                                         squad):
    doc = Document.objects.filter(corpus__name="squad", questions__isnull=False).first()
    client = client_for(annotator)
    for name, url in _pages(doc).items():
        if name == "search":  # the search form offers no such corpus: no hits
            page = client.get(url).content.decode()
            assert "<mark>Normans</mark>" not in page
        else:
            assert client.get(url).status_code == 404, name
    page = client.get(reverse("collector:corpus_list")).content.decode()
    assert "No corpus is open to annotators" in page and ">squad<" not in page
    assert client.get(reverse("api_corpus_list")).json()["results"] == []
    # Checkers see it all, source questions and their gold answers included.
    client = client_for(checker)
    for name, url in _pages(doc).items():
        assert client.get(url).status_code == 200, name
    page = client.get(reverse("collector:document_detail", args=[doc.pk])).content.decode()
    question = doc.questions.first()
    assert question.text in page


def test_an_admin_opens_a_corpus_to_annotators_without_its_questions(
        client_for, annotator, admin_user, squad):
    doc = Document.objects.filter(corpus__name="squad", questions__isnull=False).first()
    url = reverse("collector:corpus_visibility", args=["squad"])
    assert client_for(annotator).post(url, {"open": "1"}).status_code == 403
    response = client_for(admin_user).post(url, {"open": "1"})
    assert response.status_code == 302
    assert Corpus.objects.get(name="squad").open_to_annotators
    client = client_for(annotator)
    for name, target in _pages(doc).items():
        assert client.get(target).status_code == 200, name
    assert [c["name"] for c in client.get(reverse("api_corpus_list")).json()["results"]] == [
        "squad"]
    page = client.get(reverse("collector:document_detail", args=[doc.pk])).content.decode()
    assert doc.questions.first().text not in page  # gold answers stay hidden
    client_for(admin_user).post(url, {"open": "0"})
    client = client_for(annotator)
    assert client.get(reverse("collector:corpus_detail", args=["squad"])).status_code == 404
