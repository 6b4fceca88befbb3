"""Tokenisers and answer normalisers, each one matching the scorer that uses it.

- :func:`char_tokens` — DuReader / MRC2018: drop every whitespace character and keep the
  rest as one-character tokens (the scorer works on the resulting string).
- :func:`word_tokens` — English word level: runs of word characters or single punctuation
  characters (regex ``\\w+|[^\\w\\s]``), optionally lower-cased. The adapted-metrics paper's
  worked examples count the period as a token (its footnote 1), which this reproduces; the
  pa-metrics paper's Table 2 is reproduced with the lower-cased variant (:func:`pa_tokens`).
- :func:`pa_tokens` — lower-cased :func:`word_tokens`, except that each CJK character
  (Han ideographs, kana) is a token of its own, as DuReader scores Chinese by character:
  Chinese is written without spaces, so ``\\w+`` would make a whole sentence one token.
- :func:`squad_normalize` — the SQuAD v1.1 / v2.0 answer normalisation.
- :func:`msmarco_normalize` — the MS MARCO evaluation script's normalisation: spaCy's blank
  English tokenizer, each token stripped and lower-cased, joined by single spaces.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from collector.metrics.errors import MetricsInputError

Tokens = Sequence[str]

_WORD_RE = re.compile(r"\w+|[^\w\s]")
# CJK Unified Ideographs (with extension A, compatibility ideographs and the supplementary
# planes' extensions) and Hiragana / Katakana: one token per character.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_PA_RE = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]")
_ARTICLES_RE = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)
_DROP_PUNCTUATION = str.maketrans("", "", string.punctuation)


def char_tokens(text: str) -> str:
    """DuReader normalisation: the text without its whitespace characters.

    The MRC2018 scorer keeps every character ``c`` with ``c.strip() != ''``; for a single
    character that is exactly ``not c.isspace()`` (full-width U+3000 included).
    """
    return "".join(text.split())  # str.split() splits on exactly the isspace() characters


def word_tokens(text: str, *, lowercase: bool = False) -> tuple[str, ...]:
    """English word-level tokens: ``\\w+`` runs and single punctuation characters."""
    if lowercase:
        text = text.lower()
    return tuple(_WORD_RE.findall(text))


def pa_tokens(text: str, *, level: str = "word") -> tuple[str, ...]:
    """Tokens used for pa-BLEU / pa-METEOR: lower-cased :func:`word_tokens` (Table 2), with
    each CJK character a token of its own (``"年龄12岁"`` is ``年, 龄, 12, 岁``); at
    ``level="char"`` (a Chinese project) every character but whitespace is a token, as
    DuReader's scorer counts (:func:`char_tokens`, lower-cased)."""
    if level == "char":
        return tuple(char_tokens(text.lower()))
    return tuple(_PA_RE.findall(text.lower()))


def tokenize(text: str, *, level: str = "char", lowercase: bool = False) -> Sequence[str]:
    """Tokenise ``text`` at ``level`` ``"char"`` (Chinese, DuReader) or ``"word"`` (English).

    Character level returns a ``str`` (a sequence of one-character tokens), which the
    n-gram and LCS code handle faster than a tuple; word level returns a tuple.
    """
    if level == "char":
        return char_tokens(text.lower() if lowercase else text)
    if level == "word":
        return word_tokens(text, lowercase=lowercase)
    raise ValueError(f"unknown tokenisation level {level!r}; use 'char' or 'word'")


def squad_normalize(text: str) -> str:
    """SQuAD answer normalisation: lower-case, drop ASCII punctuation, drop the articles
    *a*, *an*, *the*, and collapse whitespace (same order as the official scripts)."""
    text = text.lower()
    # str.translate deletes exactly the characters the official scripts skip one by one
    # (``"".join(ch for ch in text if ch not in exclude)``), in one C loop.
    text = text.translate(_DROP_PUNCTUATION)
    text = _ARTICLES_RE.sub(" ", text)
    return " ".join(text.split())


@lru_cache(maxsize=1)
def _spacy_english() -> Any:
    try:
        from spacy.lang.en import English
    except ImportError as exc:  # pragma: no cover - spaCy is in requirements.txt
        raise MetricsInputError(
            "the MS MARCO scorer needs spaCy's English tokenizer (pip install spacy)"
        ) from exc
    return English()


def msmarco_normalize_many(texts: Iterable[str]) -> list[str]:
    """Normalise answers as ``ms_marco_eval.normalize_batch`` does.

    Every spaCy token is ``str(token).strip().lower()``; whitespace tokens become empty
    strings, so a double space survives as two spaces, which matters to ROUGE-L's
    ``split(" ")``.
    """
    nlp = _spacy_english()
    return [" ".join(str(tok).strip().lower() for tok in doc) for doc in nlp.pipe(texts)]


def msmarco_normalize(text: str) -> str:
    """Normalise one answer like the MS MARCO evaluation script."""
    return msmarco_normalize_many([text])[0]
