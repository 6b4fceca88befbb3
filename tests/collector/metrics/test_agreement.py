"""Agreement statistics against textbook values and library results."""

from __future__ import annotations

import numpy as np
import pytest

from collector.metrics.agreement import (
    bootstrap_ci,
    cohen_kappa,
    compare_correlations,
    fleiss_kappa,
    krippendorff_alpha,
    mean_ci,
    paired_bootstrap,
    pearson,
    spearman,
)
from collector.metrics.errors import MetricsInputError


def test_pearson_and_spearman():
    x = [1, 2, 3, 4, 5, 6, 7, 8]
    y = [2, 1, 4, 3, 6, 5, 8, 9]
    r = pearson(x, y)
    assert r.coefficient == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert r.ci_low < r.coefficient < r.ci_high and r.n == 8
    rho = spearman(x, y)
    assert rho.coefficient == pytest.approx(0.9285714285714286)
    assert rho.ci_low < rho.coefficient < rho.ci_high
    with pytest.raises(MetricsInputError, match="constant"):
        pearson([1, 1, 1], [1, 2, 3])


def test_cohen_kappa_textbook():
    # Wikipedia's example: 50 items, agreement 0.7, chance 0.5 -> kappa 0.4
    a = ["y"] * 20 + ["y"] * 5 + ["n"] * 10 + ["n"] * 15
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa([1, 2, 3], [1, 2, 3]) == 1.0
    # weighted: near misses on an ordinal 1-5 scale cost less
    r1, r2 = [1, 2, 3, 4, 5, 5], [1, 3, 3, 5, 4, 5]
    assert cohen_kappa(r1, r2, weights="quadratic") > cohen_kappa(r1, r2)


def test_fleiss_kappa_textbook():
    # Fleiss (1971) style example from Wikipedia: 10 items, 14 raters, 5 categories.
    counts = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
              [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
              [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    ratings = [[cat for cat, n in enumerate(row) for _ in range(n)] for row in counts]
    assert fleiss_kappa(ratings) == pytest.approx(0.2099, abs=1e-4)


def test_krippendorff_alpha_textbook():
    # Krippendorff (2011) reliability data example with missing values: nominal 0.743
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    assert krippendorff_alpha(data, level="nominal") == pytest.approx(0.743, abs=1e-3)
    assert krippendorff_alpha([["a", "b", "a"], ["a", "b", "a"]]) == pytest.approx(1.0)


def test_paired_bootstrap_detects_the_better_metric():
    rng = np.random.default_rng(1)
    human = rng.normal(size=300)
    good = human + rng.normal(scale=0.5, size=300)
    bad = human + rng.normal(scale=2.0, size=300)
    result = compare_correlations(good, bad, human, n_resamples=100, seed=3)
    assert result.wins_a == 100 and result.a_better and result.p_value == 0.0
    assert result.delta_ci[0] > 0
    same = compare_correlations(good, good, human, n_resamples=50)
    assert same.ties == 50 and not same.a_better
    again = paired_bootstrap(300, lambda i: float(good[i].mean()), lambda i: float(bad[i].mean()),
                             n_resamples=20, seed=9)
    assert again == paired_bootstrap(300, lambda i: float(good[i].mean()),
                                     lambda i: float(bad[i].mean()), n_resamples=20, seed=9)


def test_confidence_intervals():
    values = [4.0, 5.0, 3.0, 4.0, 5.0, 4.0, 3.0, 5.0]
    mean, low, high = mean_ci(values)
    assert mean == 4.125 and low < mean < high
    b_low, b_high = bootstrap_ci(values, seed=1)
    assert low - 0.5 < b_low < mean < b_high < high + 0.5
    assert mean_ci([2.0, 2.0]) == (2.0, 2.0, 2.0)
