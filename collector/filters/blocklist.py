"""Inappropriate-content blocklists, matched on tokens (ReCO query filter, step 2).

The ReCO paper (``reco-opinion-dataset.md``, "Data Collection", Intent Analysis) drops
"queries that contain sex, violence and other inappropriate content". CrowdQA ships one
editable list per language (``blocklists/en.txt``, ``blocklists/zh.txt``: one term a line,
``#`` comments) and matches terms on *tokens*, never on raw substrings:

- English: word tokens (:func:`~collector.filters.text.en_words`); a term of several
  words matches those words in sequence (``"child porn"`` matches ``child-porn``), and
  ``"sex"`` never matches ``Sussex``.
- Chinese: jieba dictionary tokens (:func:`~collector.filters.text.zh_words`). A term
  matches when it equals a token, the concatenation of consecutive tokens (``"约炮"``
  in ``约/炮``), or a dictionary word inside a longer token (``"强奸"`` in ``强奸罪``, as
  jieba's search-engine mode expands it); ``"大麻"`` does not match ``大/麻花``.

Every Chinese token match is also a substring of the query, so a substring scan over
all terms (one compiled regular expression) runs first and jieba runs only for the few
queries it flags: an exact shortcut, the verdicts are the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from collector.filters.text import check_language, en_words, normalize, zh_subwords, zh_words

BLOCKLIST_DIR = Path(__file__).resolve().parent / "blocklists"
"""Folder of the shipped default lists, ``<language>.txt``."""


def parse_terms(text: str) -> list[str]:
    """Terms of a blocklist file: one per line, blank lines and ``#`` comments skipped."""
    out = []
    for line in text.splitlines():
        term = line.strip()
        if term and not term.startswith("#"):
            out.append(term)
    return out


class Blocklist:
    """A per-language set of blocklisted terms with token-level matching.

    ``terms`` are normalised like queries (:func:`~collector.filters.text.normalize`);
    duplicates collapse; :attr:`terms` keeps the first-seen order for editing forms.
    """

    def __init__(self, language: str, terms: Iterable[str]) -> None:
        self.language = check_language(language)
        seen: dict[str, None] = {}
        for raw in terms:
            norm = normalize(raw)
            key = " ".join(en_words(norm)) if language == "en" else "".join(norm.split())
            if key:
                seen.setdefault(key, None)
        self.terms: tuple[str, ...] = tuple(seen)
        self._set = frozenset(self.terms)
        if language == "en":
            split = [t.split(" ") for t in self.terms]
            self._first = frozenset(parts[0] for parts in split)
            self._max_words = max((len(parts) for parts in split), default=0)
            self._prefilter = None
        else:
            self._max_chars = max((len(t) for t in self.terms), default=0)
            alternatives = sorted(self.terms, key=len, reverse=True)
            self._prefilter = (
                re.compile("|".join(map(re.escape, alternatives))) if alternatives else None
            )

    def __len__(self) -> int:
        return len(self.terms)

    def __repr__(self) -> str:
        return f"Blocklist({self.language!r}, {len(self.terms)} terms)"

    @classmethod
    def from_text(cls, language: str, text: str) -> Blocklist:
        """A blocklist from the text of a list file (one term a line, ``#`` comments)."""
        return cls(language, parse_terms(text))

    @classmethod
    def from_file(cls, language: str, path: str | Path) -> Blocklist:
        """A blocklist read from a UTF-8 list file."""
        return cls.from_text(language, Path(path).read_text(encoding="utf-8"))

    @classmethod
    def default(cls, language: str) -> Blocklist:
        """The shipped list ``blocklists/<language>.txt`` (read once per process)."""
        return _default_blocklist(check_language(language))

    def to_text(self) -> str:
        """The terms as a list file (one a line), for an editing form or an export."""
        return "".join(f"{t}\n" for t in self.terms)

    def match(self, text: str, words: list[str] | None = None) -> str | None:
        """The first blocklisted term in ``text`` (normalised), longest at its position.

        ``words`` may pass the text's tokens when the caller already has them (English
        word tokens, or jieba tokens for Chinese); otherwise they are computed here.
        """
        if not self._set:
            return None
        if self.language == "en":
            return self._match_en(en_words(text) if words is None else words)
        if self._prefilter is None or self._prefilter.search(text) is None:
            return None
        return self._match_zh(zh_words(text) if words is None else words)

    def _match_en(self, words: list[str]) -> str | None:
        terms, first, max_words = self._set, self._first, self._max_words
        n = len(words)
        for i, word in enumerate(words):
            if word not in first:
                continue
            best = word if word in terms else None
            cand = word
            for j in range(i + 1, min(n, i + max_words)):
                cand = f"{cand} {words[j]}"
                if cand in terms:
                    best = cand
            if best is not None:
                return best
        return None

    def _match_zh(self, words: list[str]) -> str | None:
        terms, max_chars = self._set, self._max_chars
        n = len(words)
        for i, word in enumerate(words):
            best = word if word in terms else None
            cand = word
            for j in range(i + 1, n):
                cand += words[j]
                if len(cand) > max_chars:
                    break
                if cand in terms:
                    best = cand
            if best is None:
                best = next((sub for sub in zh_subwords(word) if sub in terms), None)
            if best is not None:
                return best
        return None


@cache
def _default_blocklist(language: str) -> Blocklist:
    return Blocklist.from_file(language, BLOCKLIST_DIR / f"{language}.txt")
