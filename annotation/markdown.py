"""Guidelines are written in Markdown by admins and shown as sanitised HTML."""

from __future__ import annotations

import markdown as md
import nh3
from django.utils.safestring import SafeString, mark_safe


def render_markdown(text: str) -> SafeString:
    html = md.markdown(text or "", extensions=["extra", "sane_lists"])
    return mark_safe(nh3.clean(html))  # noqa: S308 - sanitised by nh3 just above
