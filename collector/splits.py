"""Reproducible train/dev/test splits by unit (an article, a query): pure Python."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

DEFAULT_RATIOS: tuple[tuple[str, float], ...] = (("train", 0.90), ("dev", 0.05), ("test", 0.05))


def split_assign(
    unit_ids: Iterable[str | int],
    *,
    seed: int,
    ratios: Sequence[tuple[str, float]] = DEFAULT_RATIOS,
) -> dict[str | int, str]:
    """Assign each unit to a split: shuffle the sorted ids with ``seed``, then cut.

    The same ids and seed always give the same assignment, whatever order they come in.
    Split sizes are rounded so every unit gets exactly one split; the last split takes the
    remainder.
    """
    total_ratio = sum(r for _, r in ratios)
    if not ratios or total_ratio <= 0 or any(r < 0 for _, r in ratios):
        raise ValueError("ratios must be non-negative and sum to more than 0")
    ids = sorted(set(unit_ids), key=lambda x: (str(type(x)), x))
    random.Random(seed).shuffle(ids)  # noqa: S311 - a reproducible shuffle, not security
    result: dict[str | int, str] = {}
    start = 0
    for i, (name, ratio) in enumerate(ratios):
        end = len(ids) if i == len(ratios) - 1 else start + round(len(ids) * ratio / total_ratio)
        for unit in ids[start:end]:
            result[unit] = name
        start = end
    return result
