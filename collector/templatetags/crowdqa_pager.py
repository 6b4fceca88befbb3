"""``{% load crowdqa_pager %}``: the links of ``templates/_pager.html``.

A page may hold more than one paged list (the project page: outlier answers, people to
add), each with its own query parameter, and a list may be an htmx partial fetched with
``?part=<name>``: ``page_query`` writes the link to one of its pages.
"""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.simple_tag(takes_context=True)
def page_query(context: Any, number: int, param: str = "", part: str = "") -> str:
    """The current query string with ``param`` (``page`` when empty) set to ``number``,
    the other parameters kept; ``part`` set to ``part`` for an htmx partial's link, and
    dropped otherwise (a link to the whole page)."""
    query = context.request.GET.copy()
    query[param or "page"] = number
    query.pop("part", None)
    if part:
        query["part"] = part
    return f"?{query.urlencode()}"
