"""Template filters of the task pages."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from annotation.stages.newsqa import ArticleTokens, token_spans_html

register = template.Library()


@register.filter
def at(mapping: dict[Any, Any] | None, key: Any) -> Any:
    """``mapping[key]``, or None: ``field_errors.question_by_number|at:n``."""
    return (mapping or {}).get(key)


@register.filter(is_safe=True)
def token_spans(tokens: list[dict[str, Any]]) -> SafeString:
    """An article's tokens (``newsqa.article_tokens``) as the spans the selection script
    reads (index, start and end offsets), each followed by the text after it; escaped as
    the template would, in one join instead of a template loop over every token (a
    600-word article has ~900), made once per article (``ArticleTokens.spans_html``)."""
    if isinstance(tokens, ArticleTokens):
        return mark_safe(tokens.spans_html)  # noqa: S308 -- escaped by spans_html
    return mark_safe(token_spans_html(tokens))  # noqa: S308 -- escaped there


@register.filter(is_safe=True)
def exact_text(text: str) -> SafeString:
    """``text`` escaped so that the page's DOM holds it verbatim: the HTML parser turns a
    carriage return (CR LF or a lone CR) into a line feed, which would shift every offset
    the browser counts after it, so each CR is written as the reference ``&#13;``, which
    the parser keeps as a CR (the ReCO evidence form counts offsets in the DOM's text)."""
    return mark_safe(escape(text).replace("\r", "&#13;"))  # noqa: S308 -- escaped here
