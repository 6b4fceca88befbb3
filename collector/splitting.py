"""Passage splitting: character spans of a document body. Plain Python, no Django.

Two modes, chosen per corpus:

* ``paragraph``: one passage per paragraph. Paragraphs are the source's own when it
  gives them (DuReader), otherwise the lines of the body; surrounding blanks are left
  out of each span and blank paragraphs give no passage.
* ``window``: windows of ``size`` tokens, each starting ``size - overlap`` tokens after
  the previous one; the last window ends at the last token. English tokens are runs of
  non-blank characters; in Chinese every Han character is a token (and runs of other
  non-blank characters, such as Latin words or numbers, are one token each).

Spans are ``(start, end)`` with ``body[start:end]`` the passage text, always exact.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

PARAGRAPH = "paragraph"
WINDOW = "window"
MODES = (PARAGRAPH, WINDOW)

_LINE = re.compile(r"[^\n]+")
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKENS = {
    "en": re.compile(r"\S+"),
    "zh": re.compile(rf"[{_HAN}]|[^\s{_HAN}]+"),
}


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    segment = text[start:end]
    stripped = segment.strip()
    if not stripped:
        return None
    lead = len(segment) - len(segment.lstrip())
    return start + lead, start + lead + len(stripped)


def paragraph_spans(text: str, paragraphs: Sequence[tuple[int, int]] | None = None
                    ) -> list[tuple[int, int]]:
    """Spans of the non-blank paragraphs (given ones, or the lines of ``text``)."""
    if paragraphs is None:
        if "\n" not in text:
            span = _trimmed(text, 0, len(text))
            return [span] if span is not None else []
        paragraphs = [(m.start(), m.end()) for m in _LINE.finditer(text)]
    spans = []
    for start, end in paragraphs:
        span = _trimmed(text, start, end)
        if span is not None:
            spans.append(span)
    return spans


def window_spans(text: str, *, size: int, overlap: int, language: str = "en"
                 ) -> list[tuple[int, int]]:
    """Spans of token windows of ``size`` tokens overlapping by ``overlap`` tokens."""
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"window of {size} tokens with overlap {overlap}: need "
                         "size >= 1 and 0 <= overlap < size")
    tokens = [(m.start(), m.end()) for m in _TOKENS.get(language, _TOKENS["en"]).finditer(text)]
    spans = []
    step = size - overlap
    for first in range(0, len(tokens), step):
        last = min(first + size, len(tokens)) - 1
        spans.append((tokens[first][0], tokens[last][1]))
        if first + size >= len(tokens):
            break
    return spans


def passage_spans(text: str, *, mode: str, size: int = 100, overlap: int = 20,
                  language: str = "en",
                  paragraphs: Sequence[tuple[int, int]] | None = None) -> list[tuple[int, int]]:
    if mode == PARAGRAPH:
        return paragraph_spans(text, paragraphs)
    if mode == WINDOW:
        return window_spans(text, size=size, overlap=overlap, language=language)
    raise ValueError(f"unknown split mode {mode!r} (modes: {', '.join(MODES)})")
