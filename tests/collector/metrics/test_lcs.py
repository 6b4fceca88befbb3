"""The bit-parallel LCS equals the full-table dynamic programme."""

from __future__ import annotations

import random

from collector.metrics.lcs import lcs_length, lcs_length_dp, lcs_lengths


def test_known_values():
    assert lcs_length("", "abc") == 0
    assert lcs_length("abcbdab", "bdcaba") == 4
    assert lcs_length(("the", "cat", "sat"), ("a", "cat", "sat", "down")) == 2
    assert lcs_length("跳绳是有氧运动", "跳绳是一种低强度的有氧运动") == 7


def test_random_strings_and_tuples_agree_with_the_table():
    rng = random.Random(2024)  # noqa: S311 - reproducible test data
    for _ in range(2000):
        alphabet = "abcdefg"[: rng.randint(1, 7)]
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 90)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 90)))
        expected = lcs_length_dp(a, b)
        assert lcs_length(a, b) == expected
        assert lcs_length(tuple(b), list(a)) == expected


def test_long_inputs_beyond_one_machine_word():
    rng = random.Random(5)  # noqa: S311 - reproducible test data
    a = "".join(rng.choice("ab") for _ in range(300))
    b = "".join(rng.choice("abc") for _ in range(250))
    assert lcs_length(a, b) == lcs_length_dp(a, b)
    assert lcs_lengths(a, [b, a, ""]) == [lcs_length_dp(a, b), 300, 0]
