"""Text analysis shared by the search backends: the analyzers (English stemming, Chinese
segmented by jieba), query terms and highlighting. Every backend indexes and queries
through these, so a passage is found by the same terms whichever backend holds it.
"""

from __future__ import annotations

import html
import logging
from collections import Counter
from functools import cache
from typing import Any

from whoosh import highlight
from whoosh.analysis import Analyzer, StemmingAnalyzer

MAX_QUERY_TERMS = 64
WARM_UP_TEXT = {"zh": "中文搜索", "en": "searching"}


@cache
def analyzer_for(language: str) -> Analyzer:
    if language == "zh":
        import jieba
        from jieba.analyse import ChineseAnalyzer

        jieba.setLogLevel(logging.WARNING)
        return ChineseAnalyzer()
    return StemmingAnalyzer()


def index_terms(language: str, text: str) -> tuple[Counter[str], int]:
    """The terms of ``text`` as the index sees them, with their frequencies, and the field
    length (how many terms, as Whoosh counts it)."""
    counts: Counter[str] = Counter(
        token.text for token in analyzer_for(language)(text) if token.text)
    return counts, sum(counts.values())


def query_terms(language: str, text: str) -> list[str]:
    """The distinct terms a query is searched by, in query order."""
    analyzer = analyzer_for(language)
    terms = dict.fromkeys(token.text for token in analyzer(text, mode="query"))
    return [term for term in terms if term][:MAX_QUERY_TERMS]


def warm_up(language: str) -> None:
    """Analyse a word, which loads the analyzer's dictionary (jieba's for Chinese: about a
    second of CPU, far more on a busy machine) once per process."""
    query_terms(language, WARM_UP_TEXT.get(language, "search"))


def fragments(*, language: str, text: str, query: str, html: bool, max_chars: int = 300) -> str:
    """The best part(s) of ``text`` for ``query``, matches marked (see
    ``SearchBackend.fragments``)."""
    terms = query_terms(language, query)
    formatter = _MarkFormatter() if html else _PlainFormatter()
    fragmenter = (highlight.WholeFragmenter() if len(text) <= max_chars
                  else highlight.ContextFragmenter(maxchars=max_chars, surround=60))
    marked = ""
    if terms:
        marked = highlight.highlight(text, terms, analyzer_for(language), fragmenter,
                                     formatter, top=2)
    if marked:
        return marked
    head = text[:max_chars] + ("…" if len(text) > max_chars else "")
    return formatter._text(head)


class _MarkFormatter(highlight.Formatter):
    between = " … "

    def _text(self, text: str) -> str:
        return html.escape(text, quote=False)

    def format_token(self, text: str, token: Any, replace: bool = False) -> str:
        return f"<mark>{self._text(highlight.get_text(text, token, replace))}</mark>"


class _PlainFormatter(highlight.Formatter):
    between = " … "

    def format_token(self, text: str, token: Any, replace: bool = False) -> str:
        return highlight.get_text(text, token, replace)
