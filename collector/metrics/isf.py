"""The inverse-sentence-frequency (isf) sentence baseline of NewsQA (section 6.3).

Trischler et al., *NewsQA* (``../shared/papers/newsqa.md``): every sentence of the article
is a "document" for an idf computation, ``isf(w) = log(N / n_w)`` with N sentences of which
n_w contain w. A sentence scores the sum of the isf of the distinct words it shares with the
question, and the best-scoring sentence is the predicted answer sentence::

    S* = argmax_i Σ_{w ∈ S_i ∩ Q} isf(w)

Ties go to the earliest sentence. Words are lower-cased ``\\w+`` runs (punctuation is not a
word). The prediction is right when the chosen sentence contains the start of the answer
span, which is how sentence-level accuracy (79.4% SQuAD dev, 35.4% NewsQA dev in the paper)
is counted here.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from collector.metrics.errors import MetricsInputError

_WORD_RE = re.compile(r"\w+")
# A sentence ends after . ! ? (and closing quotes or brackets) before whitespace, or at a
# line break.
_SENTENCE_END_RE = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s)|\n+")

Tokenizer = Callable[[str], Iterable[str]]


def isf_words(text: str) -> set[str]:
    """The distinct lower-cased words of ``text``."""
    return set(_WORD_RE.findall(text.lower()))


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences of ``text`` (whitespace trimmed)."""
    spans = []
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        spans.append((start, match.end()))
        start = match.end()
    spans.append((start, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            out.append((s, e))
    return out


def isf_weights(sentences: Sequence[set[str]]) -> dict[str, float]:
    """isf(w) = log(N / n_w) over the sentences' word sets."""
    n = len(sentences)
    counts: Counter[str] = Counter()
    for words in sentences:
        counts.update(words)
    return {w: math.log(n / c) for w, c in counts.items()}


def isf_scores(
    sentences: Sequence[str], question: str, *, tokenizer: Tokenizer = isf_words
) -> list[float]:
    """The isf score of every sentence for ``question``."""
    sets = [set(tokenizer(s)) for s in sentences]
    weights = isf_weights(sets)
    q = set(tokenizer(question))
    return [sum(weights[w] for w in s & q) for s in sets]


def isf_select(
    sentences: Sequence[str], question: str, *, tokenizer: Tokenizer = isf_words
) -> int:
    """Index of the sentence with the highest isf score (first on ties)."""
    if not sentences:
        raise MetricsInputError("the article has no sentence")
    scores = isf_scores(sentences, question, tokenizer=tokenizer)
    return max(range(len(scores)), key=lambda i: (scores[i], -i))


@dataclass(frozen=True)
class IsfPrediction:
    index: int
    span: tuple[int, int]
    sentence: str


def isf_answer_sentence(article: str, question: str) -> IsfPrediction:
    """Split ``article`` into sentences and pick the isf answer sentence."""
    spans = split_sentences(article)
    if not spans:
        raise MetricsInputError("the article is empty")
    texts = [article[s:e] for s, e in spans]
    idx = isf_select(texts, question)
    return IsfPrediction(idx, spans[idx], texts[idx])


def isf_accuracy(examples: Iterable[tuple[str, str, int]]) -> float:
    """Sentence-level accuracy over ``(article, question, answer_start)`` examples.

    A prediction is right when its sentence span contains the answer's first character.
    """
    total = right = 0
    for article, question, answer_start in examples:
        pred = isf_answer_sentence(article, question)
        total += 1
        start, end = pred.span
        right += int(start <= answer_start < end)
    if not total:
        raise MetricsInputError("no examples to score")
    return right / total
