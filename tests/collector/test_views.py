"""Pages: who may search and import, htmx fragments, highlighted hits, the import job."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from collector.models import Corpus, Document, Job
from collector.services import corpus_import
from tests.collector.corpus_support import NEWSQA_CSV, SQUAD_V1, indexed

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_storage")]


@pytest.fixture
def squad(db):
    corpus_import(path=SQUAD_V1, corpus="squad", language="en", format="squad")
    return Corpus.objects.get(name="squad")


def _search_url(**params) -> str:
    return f"{reverse('collector:search')}?{urlencode(params)}"


def test_anonymous_cannot_search(client, squad):
    response = client.get(_search_url(corpus="squad", q="Warsaw"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("role", ["checker", "admin_user"])
def test_checkers_and_admins_can_search_and_sees_highlighted_hits(request, client_for, squad, role):
    client = client_for(request.getfixturevalue(role))
    response = client.get(_search_url(corpus="squad", q="Maria Skłodowska-Curie"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" in html
    assert "<mark>Maria</mark> <mark>Skłodowska</mark>-<mark>Curie</mark>" in html
    assert 'data-testid="search-hit"' in html


def test_htmx_search_returns_the_results_fragment_with_paging(client_for, checker, squad):
    client = client_for(checker)
    first = client.get(_search_url(corpus="squad", q="was"), HTTP_HX_REQUEST="true")
    html = first.content.decode()
    assert "<html" not in html and html.lstrip().startswith('<section id="search-results"')
    total = int(html.split('data-testid="search-total">')[1].split()[0])
    assert 10 < total <= 20
    assert html.count('data-testid="search-hit"') == 10
    next_url = f'{reverse("collector:search")}?corpus=squad&amp;q=was&amp;page=2'
    assert f'href="{next_url}"' in html and f'hx-get="{next_url}"' in html
    second = client.get(_search_url(corpus="squad", q="was", page=2), HTTP_HX_REQUEST="true")
    html = second.content.decode()
    assert 'rel="prev"' in html and "page 2 of 2" in html and 'rel="next"' not in html
    assert html.count('data-testid="search-hit"') == total - 10
    assert '<ol class="hits" start="11">' in html


def test_search_escapes_html_in_texts(client_for, checker, tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"id": "x", "body": "<script>alert(1)</script> stadium tickets"}\n',
                    encoding="utf-8")
    corpus_import(path=path, corpus="xss", language="en", format="jsonl")
    html = client_for(checker).get(_search_url(corpus="xss", q="stadium")).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; <mark>stadium</mark>" in html


def test_no_hits_and_unknown_corpus(client_for, checker, squad):
    client = client_for(checker)
    html = client.get(_search_url(corpus="squad", q="xylophone")).content.decode()
    assert 'data-testid="no-hits"' in html
    response = client.get(_search_url(corpus="nope", q="x"))
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()


def test_corpus_pages_do_not_load_bodies(client_for, checker, squad):
    client = client_for(checker)
    assert client.get(reverse("collector:corpus_list")).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        response = client.get(reverse("collector:corpus_detail", args=["squad"]))
    assert response.status_code == 200
    assert "Super_Bowl_50#0" in response.content.decode()
    document_queries = [q["sql"] for q in captured.captured_queries
                        if 'FROM "collector_document"' in q["sql"]]
    assert document_queries and not any('"body"' in sql for sql in document_queries)
    document = Document.objects.get(external_id="Warsaw#0")
    page = client.get(reverse("collector:document_detail", args=[document.pk]))
    assert document.passages.first().text[:40] in page.content.decode()


def test_only_admins_import(client, client_for, annotator, checker):
    url = reverse("collector:import")
    assert client.get(url).status_code == 302
    assert client_for(annotator).get(url).status_code == 403
    assert client_for(checker).get(url).status_code == 403


def test_admin_uploads_a_file_and_follows_the_job(django_capture_on_commit_callbacks, client_for,
                                                  admin_user, settings):
    client = client_for(admin_user)
    assert client.get(reverse("collector:import")).status_code == 200
    with NEWSQA_CSV.open("rb") as upload, django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("collector:import"), {
            "file": upload, "corpus": "uploaded", "language": "en", "format": "newsqa-csv",
        })
    job = Job.objects.get(kind="corpus_import")
    assert response.status_code == 302
    assert response["Location"] == reverse("collector:job_detail", args=[job.pk])
    assert job.status == Job.Status.DONE, job.error  # tests run jobs inline
    assert job.result["documents_created"] == 1 and job.result["questions_created"] == 4
    assert job.created_by == admin_user
    corpus = Corpus.objects.get(name="uploaded")
    assert indexed(corpus) == 4
    page = client.get(reverse("collector:job_detail", args=[job.pk])).content.decode()
    assert 'value="100"' in page and 'data-testid="search-corpus"' in page
    # The upload is not kept once the job is over.
    assert not list((Path(settings.MEDIA_ROOT) / "imports").rglob("*.csv"))


def test_a_bad_upload_fails_its_job_with_the_readable_error(django_capture_on_commit_callbacks,
                                                            client_for, admin_user, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a"}\n', encoding="utf-8")
    client = client_for(admin_user)
    with bad.open("rb") as upload, django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("collector:import"), {
            "file": upload, "corpus": "badc", "language": "en", "format": "jsonl",
        })
    job = Job.objects.get(kind="corpus_import")
    assert job.status == Job.Status.FAILED
    assert job.error == "bad.jsonl: line 1: field 'body': is missing (column 'body')"
    assert not Corpus.objects.filter(name="badc").exists()
    page = client.get(reverse("collector:job_detail", args=[job.pk])).content.decode()
    assert "field &#x27;body&#x27;: is missing" in page
    # A refused upload is not kept, so no Retry is offered, nor taken.
    assert 'data-testid="job-retry"' not in page
    answer = client.post(reverse("collector:job_retry", args=[job.pk]), follow=True)
    assert "cannot run again" in answer.content.decode()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.attempts == 1


def test_import_form_checks_before_starting_a_job(client_for, admin_user, squad, settings):
    client = client_for(admin_user)
    cases = [
        ({"format": "squad", "mapping": "id=x"}, "Only the jsonl, csv and tsv formats"),
        ({"format": "jsonl", "mapping": "nope"}, "is not field=column"),
        ({"format": "squad", "corpus": "squad", "language": "zh"}, "Corpus squad is in English"),
        ({"format": "squad", "corpus": "bad name!"}, "Use letters, digits"),
    ]
    for extra, message in cases:
        with SQUAD_V1.open("rb") as upload:
            data = {"file": upload, "corpus": "new", "language": "en", **extra}
            response = client.post(reverse("collector:import"), data)
        assert response.status_code == 200
        assert message in response.content.decode()
    settings.CROWDQA_IMPORT_MAX_BYTES = 100
    with SQUAD_V1.open("rb") as upload:
        response = client.post(reverse("collector:import"), {
            "file": upload, "corpus": "new", "language": "en", "format": "squad"})
    assert "over the import limit of 100" in response.content.decode()
    assert not Job.objects.exists()


def test_admin_rebuilds_an_index_from_the_corpus_page(django_capture_on_commit_callbacks,
                                                      client_for, admin_user, annotator, squad):
    url = reverse("collector:corpus_rebuild", args=["squad"])
    assert client_for(annotator).post(url).status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(admin_user).post(url)
    job = Job.objects.get(kind="index_rebuild")
    assert response["Location"] == reverse("collector:job_detail", args=[job.pk])
    assert job.status == Job.Status.DONE and job.result["passages_indexed"] == 18


def test_django_admin_document_list_leaves_bodies_out(client_for, admin_user, squad):
    client = client_for(admin_user)
    with CaptureQueriesContext(connection) as captured:
        response = client.get(reverse("admin:collector_document_changelist"))
    assert response.status_code == 200 and "Super_Bowl_50#0" in response.content.decode()
    document_queries = [q["sql"] for q in captured.captured_queries
                        if 'FROM "collector_document"' in q["sql"]]
    assert document_queries and not any('"body"' in sql for sql in document_queries)
    document = Document.objects.get(external_id="Warsaw#0")
    page = client.get(reverse("admin:collector_document_change", args=[document.pk]))
    assert page.status_code == 200 and document.body[:50] in page.content.decode()
    assert 'rel="icon" href="/static/img/favicon.svg"' in page.content.decode()
    passages = client.get(reverse("admin:collector_passage_changelist"))
    assert passages.status_code == 200
    # Shown, not changed or deleted one at a time: the index and the items point into them
    # (a document deleted here left its passages in the search index).
    delete = reverse("admin:collector_document_delete", args=[document.pk])
    assert client.get(delete).status_code == 403
    assert client.post(delete, {"post": "yes"}).status_code == 403
    change = client.post(reverse("admin:collector_document_change", args=[document.pk]),
                         {"body": "changed", "corpus": document.corpus_id})
    assert change.status_code == 403
    assert Document.objects.get(pk=document.pk).body == document.body
