"""``{% load crowdqa_links %}``: links to documents' sources, made only for http(s) URLs.

A document's ``url`` comes from imported data. The importers accept only http(s) URLs,
but rows imported earlier, or written some other way, may hold anything; every template
that shows a document's URL renders it through :func:`source_link`, never
``href="{{ document.url }}"``.
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from collector.importers import http_url_problem

register = template.Library()


@register.filter
def source_link(url: object, length: int = 60) -> SafeString | str:
    """A link to ``url`` if it is an http(s) URL (text cut to ``length`` characters);
    any other value is shown as plain text, not clickable; nothing for no URL."""
    text = str(url or "").strip()
    if not text:
        return ""
    shown = Truncator(text).chars(int(length))
    if http_url_problem(text) is None:
        return format_html('<a href="{}" rel="noreferrer noopener nofollow" target="_blank">'
                           "{}</a>", text, shown)
    return format_html('<span class="muted" title="not an http(s) link">{}</span>', shown)
