"""Guidelines are written in Markdown by admins and shown as sanitised HTML."""

from __future__ import annotations

import functools
from typing import Any

import markdown as md
import nh3
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language


@functools.lru_cache(maxsize=256)
def render_markdown(text: str) -> SafeString:
    """Markdown to sanitised HTML; kept for the texts rendered last (a stage's guidelines
    are on every task page: ~3 ms each time)."""
    html = md.markdown(text or "", extensions=["extra", "sane_lists"])
    return mark_safe(nh3.clean(html))  # noqa: S308 - sanitised by nh3 just above


def stage_guidelines_html(stage: Any) -> SafeString:
    """A stage's guidelines in the interface's language: the Chinese ones for zh-hans when the
    stage has them, otherwise the English ones (and the Chinese when only they exist)."""
    chinese = getattr(stage, "guidelines_zh_hans", "")
    if get_language() == "zh-hans" and chinese:
        return render_markdown(chinese)
    return render_markdown(stage.guidelines or chinese)
