"""n-gram counting and clipped matching shared by the BLEU variants.

Sequences are strings (character tokens: an n-gram is a substring) or tuples of word tokens
(an n-gram is a sub-tuple). n-grams of different orders never collide as dictionary keys,
so one :class:`~collections.Counter` can hold every order of a reference.

The counting loops run in C (``map`` over cached ``slice`` objects); this is what makes the
adapted BLEU of :mod:`collector.metrics.dureader` fast without changing a single count.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Hashable, Sequence
from functools import lru_cache
from itertools import compress, repeat

Seq = Sequence[Hashable]


@lru_cache(maxsize=8192)
def _slices(length: int, n: int) -> tuple[slice, ...]:
    return tuple(slice(i, i + n) for i in range(length - n + 1))


@lru_cache(maxsize=8192)
def _slices_up_to(length: int, max_n: int) -> tuple[slice, ...]:
    return tuple(s for n in range(1, max_n + 1) for s in _slices(length, n))


def ngram_counts(seq: Seq, n: int) -> Counter:
    """Counts of the n-grams of order ``n`` of ``seq``."""
    return Counter(map(seq.__getitem__, _slices(len(seq), n)))


def ngram_counts_up_to(seq: Seq, max_n: int) -> Counter:
    """Counts of every n-gram of order 1..``max_n`` of ``seq``, in one counter."""
    return Counter(map(seq.__getitem__, _slices_up_to(len(seq), max_n)))


def ngram_total(length: int, n: int) -> int:
    """Number of n-grams of order ``n`` in a sequence of ``length`` tokens."""
    return max(0, length - n + 1)


def clipped_matches(cand: Counter, refs: Sequence[Counter]) -> int:
    """Σ over the candidate's n-grams of min(count in candidate, max count in any ref)
    (Papineni et al. 2002, Eq. 2 numerator; ``Count_clip`` of the adapted-metrics paper)."""
    if not refs or not cand:
        return 0
    keys = cand.keys()
    if len(refs) == 1:
        best = map(refs[0].get, keys, repeat(0))
    else:
        best = map(max, *(map(ref.get, keys, repeat(0)) for ref in refs))
    return sum(map(min, cand.values(), best))


def max_counts(refs: Sequence[Counter]) -> Counter:
    """Element-wise maximum of reference counters (coco-caption's ``maxcounts``)."""
    out: Counter = Counter()
    for ref in refs:
        out |= ref
    return out


# --------------------------------------------------------------------------- strings
def _occurrences(text: str, gram: str) -> int:
    """Occurrences of ``gram`` in ``text``, overlapping ones included."""
    if len(gram) == 1:
        return text.count(gram)
    count, start = 0, text.find(gram)
    while start >= 0:
        count += 1
        start = text.find(gram, start + 1)
    return count


class StringGrams:
    """Every n-gram (orders 1..``max_n``) of a candidate string, for fast clipped matching.

    Clipped count of an n-gram g = min(c(g), max over references of r(g)). When c(g) = 1
    that is 1 exactly when g occurs in some reference, so an order's sum is the number of
    the candidate's distinct n-grams found in the references — a substring test on the
    references joined by a character the candidate does not contain (so no n-gram can
    straddle two references). Only the candidate's repeated n-grams need reference counts.
    Same numbers as :func:`clipped_matches`, with far fewer interpreted steps.
    """

    __slots__ = ("counts", "max_n", "separator")

    def __init__(self, text: str, max_n: int) -> None:
        self.max_n = max_n
        self.counts = Counter(map(text.__getitem__, _slices_up_to(len(text), max_n)))
        self.separator = next(c for c in map(chr, range(0x110000)) if c not in text)

    def clipped(self, refs: Sequence[str]) -> list[int]:
        """Clipped matches per order against the reference strings ``refs``."""
        max_n = self.max_n
        if not refs or not self.counts:
            return [0] * max_n
        joined = self.separator.join(refs)
        # The counter was filled order by order, so the hits come sorted by length.
        hits = list(filter(joined.__contains__, self.counts))
        lengths = list(map(len, hits))
        edges = [bisect_right(lengths, k) for k in range(max_n + 1)]
        per = [edges[k + 1] - edges[k] for k in range(max_n)]
        counts = self.counts
        repeated = list(compress(hits, map((1).__lt__, map(counts.__getitem__, hits))))
        if repeated:
            if len(refs) == 1:
                best = list(map(refs[0].count, repeated))
            else:
                best = list(map(max, *(map(r.count, repeated) for r in refs)))
            for gram, b in zip(repeated, best, strict=True):
                if len(gram) > 1 and _self_overlapping(gram):
                    b = max(_occurrences(r, gram) for r in refs)  # str.count skips overlaps
                per[len(gram) - 1] += min(counts[gram], b) - 1
        return per


def _self_overlapping(gram: str) -> bool:
    """True when two occurrences of ``gram`` can overlap (it has a proper border)."""
    return any(gram[:k] == gram[-k:] for k in range(1, len(gram)))
