"""Longest common subsequence length.

:func:`lcs_length` is the bit-parallel algorithm of Allison & Dix (1986) in the form of
Hyyrö (2004): one machine-word-style update per symbol of the second sequence, with Python's
unbounded integers as the bit vector. It returns exactly the value of the textbook dynamic
programme (:func:`lcs_length_dp`, the full-table recurrence the official ROUGE-L scripts
use), in O(|b| * ceil(|a| / wordsize)) instead of O(|a| * |b|) interpreted steps.

Recurrence (bit i of ``V`` is 0 where the LCS row increases at position i of ``a``)::

    U = V & M[c]            # M[c]: bits of the positions of symbol c in a
    V = (V + U) | (V - U)   # = (V + (V & M)) | (V & ~M)
    LCS = |a| - popcount(V restricted to the low |a| bits)
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

Seq = Sequence[Hashable]


def match_masks(a: Seq) -> dict[Hashable, int]:
    """Bit masks of the positions of each symbol of ``a`` (bit i set where ``a[i] == c``)."""
    masks: dict[Hashable, int] = {}
    get = masks.get
    bit = 1
    for sym in a:
        masks[sym] = get(sym, 0) | bit
        bit <<= 1
    return masks


def lcs_with_masks(masks: dict[Hashable, int], length: int, b: Seq) -> int:
    """LCS length of the sequence that produced ``masks`` (of ``length``) and ``b``."""
    if not length:
        return 0
    full = (1 << length) - 1
    v = full
    for m in filter(None, map(masks.get, b)):  # symbols absent from a change nothing
        u = v & m
        v = (v + u) | (v - u)  # carries only move up: the low bits stay exact
    return length - (v & full).bit_count()


def lcs_length(a: Seq, b: Seq) -> int:
    """Length of the longest common subsequence of ``a`` and ``b`` (strings or tuples)."""
    if len(a) > len(b):
        a, b = b, a  # the shorter one becomes the bit vector
    return lcs_with_masks(match_masks(a), len(a), b)


def lcs_lengths(a: Seq, others: Sequence[Seq]) -> list[int]:
    """LCS length of ``a`` with each sequence in ``others``, building ``a``'s masks once."""
    masks = match_masks(a)
    n = len(a)
    return [lcs_with_masks(masks, n, b) for b in others]


def lcs_length_dp(a: Seq, b: Seq) -> int:
    """Reference implementation: the full (|a|+1) x (|b|+1) table, as the official
    DuReader and coco-caption ROUGE-L code fill it (used by tests and the benchmark)."""
    if len(a) < len(b):
        a, b = b, a
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for j in range(1, len(b) + 1):
        for i in range(1, len(a) + 1):
            if a[i - 1] == b[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    return table[len(a)][len(b)]
