"""Text analysis shared by the search backends: the analyzers (English stemming, Chinese
segmented by jieba), query terms and highlighting. Every backend indexes and queries
through these, so a passage is found by the same terms whichever backend holds it.
"""

from __future__ import annotations

import html
import logging
import re
from collections import Counter
from functools import cache
from typing import Any

from whoosh import highlight
from whoosh.analysis import (
    Analyzer,
    LowercaseFilter,
    RegexTokenizer,
    StemFilter,
    StemmingAnalyzer,
    StopFilter,
)

MAX_QUERY_TERMS = 64
WARM_UP_TEXT = {"zh": "中文搜索", "en": "searching"}


# Full-width ASCII (U+FF01-U+FF5E: ＰＰＳＵ, ２０１８, ？) and the ideographic space, as
# Chinese input methods type them, to their ASCII forms: one character for one, so the
# analysed tokens keep their places in the text (highlighting marks the original text).
FULL_WIDTH = {**{code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}, 0x3000: 0x20}


class WidthFoldingAnalyzer(Analyzer):
    """An analyzer that reads full-width ASCII as ASCII, then analyses as ``inner`` does:
    ``ＰＰＳＵ奶瓶`` and ``PPSU奶瓶`` give the same terms, in the index and in a query."""

    def __init__(self, inner: Analyzer) -> None:
        self.inner = inner

    def __call__(self, value: str, **kwargs: Any) -> Any:
        return self.inner(value.translate(FULL_WIDTH), **kwargs)


@cache
def analyzer_for(language: str) -> Analyzer:
    if language == "zh":
        import jieba
        from jieba.analyse import ChineseAnalyzer

        jieba.setLogLevel(logging.WARNING)
        return WidthFoldingAnalyzer(ChineseAnalyzer())
    return StemmingAnalyzer()


_WORD_CACHE_SIZE = 500_000


@cache
def _word_analyzer(language: str) -> tuple[re.Pattern[str], dict[str, str | None]] | None:
    """For an analyzer that is a regex tokenizer followed only by filters that look at one
    token at a time (the English stemming analyzer), its word pattern and a memo of what
    the filters make of each word: analysing word by word through the memo gives the same
    terms as the analyzer, without its per-token Python objects."""
    analyzer = analyzer_for(language)
    items = getattr(analyzer, "items", None)
    if (not items or not isinstance(items[0], RegexTokenizer) or items[0].gaps
            or not all(isinstance(f, LowercaseFilter | StopFilter | StemFilter)
                       for f in items[1:])):
        return None
    return _without_groups(items[0].expression), {}


def _without_groups(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` with its capturing groups made non-capturing, so that ``findall`` yields
    whole matches (the tokens); ``pattern`` itself when that cannot be done safely."""
    source = pattern.pattern
    if pattern.groups == 0 or not isinstance(source, str) or re.search(r"\\\d|\(\?P=", source):
        return pattern  # nothing to do, or backreferences to the groups
    out, escaped, in_set = [], False, False
    for i, ch in enumerate(source):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_set:
            in_set = ch != "]" or source[i - 1] == "["
        elif ch == "[":
            in_set = True
        elif ch == "(" and not source.startswith("?", i + 1):
            ch = "(?:"
        out.append(ch)
    try:
        plain = re.compile("".join(out), pattern.flags)
    except re.error:
        return pattern
    return plain if plain.groups == 0 else pattern


def _term_of(language: str, memo: dict[str, str | None], word: str) -> str | None:
    term = memo.get(word, "")
    if term == "":
        if len(memo) >= _WORD_CACHE_SIZE:
            memo.clear()
        terms = [token.text for token in analyzer_for(language)(word) if token.text]
        term = memo[word] = terms[0] if terms else None
    return term


def index_terms(language: str, text: str) -> tuple[Counter[str], int]:
    """The terms of ``text`` as the index sees them (what ``analyzer_for(language)``
    yields), with their frequencies, and the field length (how many terms, as Whoosh
    counts it)."""
    fast = _word_analyzer(language)
    if fast is None:
        counts: Counter[str] = Counter(
            token.text for token in analyzer_for(language)(text) if token.text)
    else:
        # Count the words first (in C), then look each distinct word up once.
        pattern, memo = fast
        counts = Counter()
        get = memo.get
        words = (pattern.findall(text) if pattern.groups == 0
                 else [match.group(0) for match in pattern.finditer(text)])
        for word, n in Counter(words).items():
            term = get(word, "")
            if term == "":
                term = _term_of(language, memo, word)
            if term:
                counts[term] += n
    return counts, sum(counts.values())


def index_terms_many(language: str, texts: list[str], vocabulary: dict[str, int]
                     ) -> tuple[list[int], list[int], list[int], list[int]]:
    """``index_terms`` of several texts at once, terms numbered by ``vocabulary`` (new terms
    added to it): the term numbers of every text in turn, their frequencies, and per text
    how many distinct terms it has and its field length. A word is analysed and numbered
    once per call (the analysis of many texts is mostly looking words up)."""
    terms: list[int] = []
    tfs: list[int] = []
    distinct: list[int] = []
    lengths: list[int] = []
    fast = _word_analyzer(language)
    if fast is None:
        for text in texts:
            counts, length = index_terms(language, text)
            terms.extend(vocabulary.setdefault(term, len(vocabulary)) for term in counts)
            tfs.extend(counts.values())
            distinct.append(len(counts))
            lengths.append(length)
        return terms, tfs, distinct, lengths
    pattern, memo = fast
    numbered: dict[str, int | None] = {}  # word → its term's number (None: no term)
    for text in texts:
        words = (pattern.findall(text) if pattern.groups == 0
                 else [match.group(0) for match in pattern.finditer(text)])
        counts: dict[int, int] = {}
        for word, n in Counter(words).items():
            number = numbered.get(word, -1)
            if number == -1:
                term = memo.get(word, "")
                if term == "":
                    term = _term_of(language, memo, word)
                number = numbered[word] = (vocabulary.setdefault(term, len(vocabulary))
                                           if term else None)
            if number is not None:
                counts[number] = counts.get(number, 0) + n
        terms.extend(counts)
        tfs.extend(counts.values())
        distinct.append(len(counts))
        lengths.append(sum(counts.values()))
    return terms, tfs, distinct, lengths


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
