"""n-gram counting and clipped matching shared by the BLEU variants.

Sequences are strings (character tokens: an n-gram is a substring) or tuples of word tokens
(an n-gram is a sub-tuple). n-grams of different orders never collide as dictionary keys,
so one :class:`~collections.Counter` can hold every order of a reference.

The counting loops run in C (``map`` over cached ``slice`` objects); this is what makes the
adapted BLEU of :mod:`collector.metrics.dureader` fast without changing a single count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from functools import lru_cache
from itertools import repeat

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
