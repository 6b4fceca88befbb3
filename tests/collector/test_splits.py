from __future__ import annotations

from collections import Counter

import pytest

from collector.splits import split_assign


def test_ninety_five_five_and_reproducible():
    ids = [f"story-{n:04d}" for n in range(1000)]
    first = split_assign(ids, seed=7)
    assert Counter(first.values()) == {"train": 900, "dev": 50, "test": 50}
    assert split_assign(list(reversed(ids)), seed=7) == first
    other = split_assign(ids, seed=8)
    assert other != first and Counter(other.values()) == Counter(first.values())


def test_small_sets_give_every_unit_a_split():
    result = split_assign(["a", "b", "c"], seed=1)
    assert sorted(result) == ["a", "b", "c"]
    assert set(result.values()) <= {"train", "dev", "test"}


def test_bad_ratios_refused():
    with pytest.raises(ValueError):
        split_assign(["a"], seed=1, ratios=(("train", 0.0),))
