"""Text helpers shared by the query and document filters (pure Python, no Django).

ReCO (``reco-opinion-dataset.md``, "Data Collection") filters raw search-engine queries
and retrieved documents in Chinese; CrowdQA runs the same recipe in English too. Every
filter works on the same normalised form of a text:

- :func:`normalize` — Unicode NFKC (full-width ``？`` becomes ``?``, full-width Latin
  letters and digits become ASCII), typographic apostrophes folded to ``'``, lower case,
  runs of whitespace collapsed to one space, ends stripped.
- :func:`detect_language` — ``"zh"`` when the text holds a CJK ideograph, else ``"en"``
  (Chinese queries often carry Latin product names, ``"三星s8值得买吗"``).
- :func:`en_words` — English word tokens: runs of letters/digits, keeping in-word
  apostrophes (``what's``, ``can't``) so contractions stay one token.
- :func:`zh_words` — Chinese word tokens from jieba's dictionary segmentation (HMM off:
  unknown words fall apart into single characters instead of being glued to their
  neighbours, which keeps token boundaries predictable for the blocklist). jieba's
  dictionary is loaded once per process, on first use (about a second).
- :func:`content_chars` — the letters and digits of a text, punctuation and whitespace
  dropped (character-level view used for Chinese surface overlap).
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from typing import Any

from collector.filters.messages import FilterParamError, gettext_noop

LANGUAGES: tuple[str, ...] = ("en", "zh")
"""Languages with rules, blocklists and default features."""

_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_SPACE_RE = re.compile(r"\s+")
_EN_WORD_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_NON_CONTENT_RE = re.compile(r"[\W_]+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})

_jieba_lock = threading.Lock()
_jieba: Any = None


def word_set(text: str) -> frozenset[str]:
    """The space-separated words of ``text`` as a frozenset (for word-list constants)."""
    return frozenset(text.split())


def normalize(text: str) -> str:
    """NFKC, apostrophes folded, lower case, whitespace collapsed and stripped."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES)
    return _SPACE_RE.sub(" ", text.lower()).strip()


def detect_language(text: str) -> str:
    """``"zh"`` when ``text`` contains a CJK ideograph, else ``"en"``."""
    if text.isascii():
        return "en"
    return "zh" if _CJK_RE.search(text) else "en"


def check_language(language: str, *, allow_auto: bool = False) -> str:
    """Return ``language`` when supported, else raise ``ValueError`` naming the choices."""
    choices = (*LANGUAGES, "auto") if allow_auto else LANGUAGES
    if language not in choices:
        raise FilterParamError(gettext_noop("language must be one of %(known)s; got %(value)s"),
                               known=", ".join(choices), value=repr(language))
    return language


def en_words(text: str) -> list[str]:
    """English word tokens of an already normalised text (``what's`` stays one token)."""
    return _EN_WORD_RE.findall(text)


def content_chars(text: str) -> str:
    """Letters and digits only: punctuation, symbols, underscores and whitespace dropped."""
    return _NON_CONTENT_RE.sub("", text)


def jieba_tokenizer() -> Any:
    """jieba's default tokenizer, its dictionary loaded once per process (thread-safe)."""
    global _jieba
    if _jieba is None:
        with _jieba_lock:
            if _jieba is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                jieba.dt.initialize()
                _jieba = jieba.dt
    return _jieba


def zh_words(text: str) -> list[str]:
    """jieba dictionary tokens of a normalised text (HMM off).

    Whitespace stays in the token list (as its own tokens), so nothing built by joining
    consecutive tokens spans a space that the text has.
    """
    return jieba_tokenizer().lcut(text, HMM=False)


def zh_subwords(token: str) -> list[str]:
    """Dictionary words of two or three characters inside a longer jieba token.

    The same expansion jieba applies in its search-engine mode: ``"强奸罪"`` yields
    ``"强奸"``; only strings that are themselves dictionary words are returned.
    """
    if len(token) <= 2:
        return []
    freq = jieba_tokenizer().FREQ
    out = []
    for size in (2, 3):
        if len(token) <= size:
            break
        for i in range(len(token) - size + 1):
            gram = token[i : i + size]
            if freq.get(gram):
                out.append(gram)
    return out
