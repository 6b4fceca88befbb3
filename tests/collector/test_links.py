"""Document URLs are links only when they are http(s): the ``source_link`` filter, and every
template that shows a document's URL uses it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from collector.models import Corpus, Document
from collector.templatetags.crowdqa_links import source_link

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("url", [
    "javascript:alert(4)", "JAVASCRIPT:alert(4)", " javascript:alert(4)", "java\tscript:alert(4)",
    "data:text/html,<script>alert(4)</script>", "vbscript:msgbox", "//example.org/", "x",
])
def test_anything_but_http_is_plain_text(url):
    html = source_link(url)
    assert "<a" not in html and "href" not in html
    assert "<script>" not in html
    assert 'title="not an http(s) link"' in html


def test_http_urls_are_links_that_leak_nothing():
    html = source_link('https://example.org/a?b=1&c="2"')
    assert html == ('<a href="https://example.org/a?b=1&amp;c=&quot;2&quot;" '
                    'rel="noreferrer noopener nofollow" target="_blank">'
                    'https://example.org/a?b=1&amp;c=&quot;2&quot;</a>')
    assert source_link("HTTP://EXAMPLE.ORG/" + "x" * 100, 30).endswith("…</a>")
    assert source_link("") == source_link(None) == ""


@pytest.mark.django_db
def test_the_document_page_links_only_http_urls(client_for, annotator):
    # Annotators see documents of corpora opened to them only.
    corpus = Corpus.objects.create(name="old", language="en", open_to_annotators=True)
    # Rows written before imports checked URLs (or by other means) are rendered safely.
    bad = Document.objects.create(corpus=corpus, external_id="bad", body="Text.",
                                  url="javascript:alert(4)")
    good = Document.objects.create(corpus=corpus, external_id="good", body="Text.",
                                   url="https://example.org/page")
    client = client_for(annotator)
    page = client.get(reverse("collector:document_detail", args=[bad.pk])).content.decode()
    assert "javascript:alert(4)" in page and 'href="javascript' not in page
    page = client.get(reverse("collector:document_detail", args=[good.pk])).content.decode()
    assert '<a href="https://example.org/page" rel="noreferrer noopener nofollow"' in page


def test_the_reco_label_fragment_links_only_http_urls():
    label = {"doc_number": 1, "title": "T", "url": "javascript:alert(4)", "before": "",
             "evidence": "e", "after": "", "alternatives": ["a", "b", "c"], "answer": "a"}
    html = render_to_string("annotation/tasks/reco_label.html", {"label": label})
    assert "javascript:alert(4)" in html and 'href="javascript' not in html
    label["url"] = "http://example.org/"
    html = render_to_string("annotation/tasks/reco_label.html", {"label": label})
    assert '<a href="http://example.org/"' in html


def test_no_template_puts_a_document_url_in_an_href():
    """Document URLs (``document.url``, ``doc.url``, ``label.url``, passages' ``p.url``) go
    through ``source_link``; a raw ``href="{{ ….url }}"`` for them fails here."""
    raw = re.compile(r'href="\{\{\s*(document|doc|label|p|passage|hit|result)\.url\b')
    offenders = [str(path.relative_to(REPO))
                 for folder in ("collector", "annotation", "templates")
                 for path in (REPO / folder).rglob("*.html") if raw.search(path.read_text())]
    assert offenders == []
