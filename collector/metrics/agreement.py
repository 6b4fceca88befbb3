"""Agreement and correlation statistics for judgment studies and double annotation.

- :func:`pearson`, :func:`spearman` — scipy's coefficients with p-values and confidence
  intervals (Pearson: scipy's Fisher-z interval; Spearman: Fisher z with the
  Fieller-Hartley-Pearson standard error sqrt(1.06 / (n - 3))).
- :func:`cohen_kappa` — two raters, optionally linear or quadratic weighted.
- :func:`fleiss_kappa` — any fixed number of raters per item (Fleiss 1971).
- :func:`krippendorff_alpha` — the ``krippendorff`` package; missing ratings allowed.
- :func:`paired_bootstrap` — Koehn (2004) paired bootstrap resampling: draw the items with
  replacement, recompute both statistics on the same draw, count how often A beats B.
  The adapted-metrics paper compares the Pearson correlations of two metrics with human
  judgment this way (100 resamples): :func:`compare_correlations`.
- :func:`bootstrap_ci` (percentile interval) and :func:`mean_ci` (Student t interval).

The adapted-metrics paper (``../shared/papers/adapted-rouge-bleu-for-mrc.md``, Tables 1-3)
reports Pearson correlations between two raters and between metrics and the mean rating.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import krippendorff
import numpy as np
from scipy import stats

from collector.metrics.errors import MetricsInputError

ArrayLike = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class Correlation:
    coefficient: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int


def _pair(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise MetricsInputError("the two samples must be 1-D and of the same length")
    if len(a) < 3:
        raise MetricsInputError("a correlation needs at least 3 pairs")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        raise MetricsInputError("a sample is constant, so its correlation is undefined")
    return a, b


def pearson(x: ArrayLike, y: ArrayLike, *, confidence: float = 0.95) -> Correlation:
    """Pearson's r (scipy.stats.pearsonr) with a two-sided p-value and a Fisher-z CI."""
    a, b = _pair(x, y)
    res = stats.pearsonr(a, b)
    ci = res.confidence_interval(confidence_level=confidence)
    return Correlation(float(res.statistic), float(res.pvalue), float(ci.low), float(ci.high),
                       len(a))


def spearman(x: ArrayLike, y: ArrayLike, *, confidence: float = 0.95) -> Correlation:
    """Spearman's rho (scipy.stats.spearmanr) with a Fisher-z CI (SE sqrt(1.06/(n-3)))."""
    a, b = _pair(x, y)
    res = stats.spearmanr(a, b)
    rho = float(res.statistic)
    n = len(a)
    if n > 3 and abs(rho) < 1:
        z = math.atanh(rho)
        half = stats.norm.ppf(0.5 + confidence / 2) * math.sqrt(1.06 / (n - 3))
        low, high = math.tanh(z - half), math.tanh(z + half)
    else:
        low = high = rho
    return Correlation(rho, float(res.pvalue), low, high, n)


def cohen_kappa(
    rater_a: Sequence[Hashable],
    rater_b: Sequence[Hashable],
    *,
    weights: str | None = None,
    labels: Sequence[Hashable] | None = None,
) -> float:
    """Cohen's kappa = 1 - Σ w·O / Σ w·E; ``weights`` None, "linear" or "quadratic"
    (weighted kappa needs ordered ``labels`` or sortable ratings)."""
    if len(rater_a) != len(rater_b):
        raise MetricsInputError("both raters must rate the same items")
    if not rater_a:
        raise MetricsInputError("no items rated")
    cats = list(labels) if labels is not None else sorted(set(rater_a) | set(rater_b))
    index = {c: i for i, c in enumerate(cats)}
    k = len(cats)
    observed = np.zeros((k, k))
    for a, b in zip(rater_a, rater_b, strict=True):
        if a not in index or b not in index:
            raise MetricsInputError(f"rating not among the labels: {a!r} / {b!r}")
        observed[index[a], index[b]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "linear":
        w = np.abs(i - j).astype(float)
    elif weights == "quadratic":
        w = ((i - j) ** 2).astype(float)
    else:
        raise MetricsInputError(f"unknown kappa weights {weights!r}")
    denom = float((w * expected).sum())
    if denom == 0:
        return 1.0 if float((w * observed).sum()) == 0 else 0.0
    return 1.0 - float((w * observed).sum()) / denom


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float:
    """Fleiss' kappa for items each rated by the same number of raters.

    ``ratings`` holds one list of category labels per item.
    """
    if not ratings:
        raise MetricsInputError("no items rated")
    n_raters = len(ratings[0])
    if n_raters < 2 or any(len(r) != n_raters for r in ratings):
        raise MetricsInputError("Fleiss' kappa needs the same number (>= 2) of ratings per item")
    cats = sorted({c for item in ratings for c in item}, key=repr)
    index = {c: i for i, c in enumerate(cats)}
    table = np.zeros((len(ratings), len(cats)))
    for row, item in enumerate(ratings):
        for c in item:
            table[row, index[c]] += 1
    n_items = len(ratings)
    p_j = table.sum(axis=0) / (n_items * n_raters)
    p_i = ((table**2).sum(axis=1) - n_raters) / (n_raters * (n_raters - 1))
    p_bar = p_i.mean()
    p_e = float((p_j**2).sum())
    if p_e == 1:
        return 1.0
    return float((p_bar - p_e) / (1 - p_e))


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Any]], *, level: str = "nominal"
) -> float:
    """Krippendorff's alpha; rows are raters, columns units, ``None`` / NaN = missing.

    ``level`` is "nominal", "ordinal", "interval" or "ratio". Non-numeric nominal labels
    are mapped to integers first.
    """
    rows = [list(r) for r in reliability_data]
    if len(rows) < 2 or not rows[0]:
        raise MetricsInputError("Krippendorff's alpha needs at least 2 raters and 1 unit")
    values = {v for r in rows for v in r if v is not None and not _is_nan(v)}
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    if not numeric:
        if level != "nominal":
            raise MetricsInputError(f"{level} alpha needs numeric ratings")
        codes = {v: i for i, v in enumerate(sorted(values, key=repr))}
        rows = [[None if v is None else codes[v] for v in r] for r in rows]
    data = np.array([[np.nan if v is None else float(v) for v in r] for r in rows])
    if len(values) < 2:
        raise MetricsInputError("all ratings are the same value; alpha is undefined")
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


# --------------------------------------------------------------------------- bootstrap
@dataclass(frozen=True)
class BootstrapComparison:
    """Outcome of a paired bootstrap test of statistic A against statistic B."""

    observed_a: float
    observed_b: float
    wins_a: int
    wins_b: int
    ties: int
    n_resamples: int
    p_value: float  # share of resamples in which A is not better than B
    delta_ci: tuple[float, float]  # percentile CI of A - B

    @property
    def a_better(self) -> bool:
        """A beats B in at least 95% of the resamples (Koehn's criterion at p < 0.05)."""
        return self.p_value < 0.05


def paired_bootstrap(
    n_items: int,
    statistic_a: Callable[[np.ndarray], float],
    statistic_b: Callable[[np.ndarray], float],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapComparison:
    """Koehn (2004) paired bootstrap: each statistic takes an index array of items.

    Both statistics see the same resampled indices in every round; the p-value is the
    share of rounds in which A did not beat B.
    """
    if n_items < 2:
        raise MetricsInputError("bootstrap needs at least 2 items")
    if n_resamples < 1:
        raise MetricsInputError("n_resamples must be positive")
    rng = np.random.default_rng(seed)
    everything = np.arange(n_items)
    obs_a, obs_b = statistic_a(everything), statistic_b(everything)
    wins_a = wins_b = ties = 0
    deltas = np.empty(n_resamples)
    for r in range(n_resamples):
        idx = rng.integers(0, n_items, n_items)
        a, b = statistic_a(idx), statistic_b(idx)
        deltas[r] = a - b
        if a > b:
            wins_a += 1
        elif b > a:
            wins_b += 1
        else:
            ties += 1
    tail = (1 - confidence) / 2 * 100
    low, high = np.nanpercentile(deltas, [tail, 100 - tail])
    return BootstrapComparison(float(obs_a), float(obs_b), wins_a, wins_b, ties, n_resamples,
                               (n_resamples - wins_a) / n_resamples, (float(low), float(high)))


def _safe_corr(fn: Callable[..., Any], x: np.ndarray, y: np.ndarray) -> float:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(fn(x, y).statistic)


def compare_correlations(
    metric_a: ArrayLike,
    metric_b: ArrayLike,
    human: ArrayLike,
    *,
    method: str = "pearson",
    n_resamples: int = 100,
    seed: int = 0,
) -> BootstrapComparison:
    """Does metric A correlate better with human judgment than metric B?

    The adapted-metrics paper (section 4.2): bootstrap the samples 100 times, recompute
    both PCCs on each draw and compare. A resample on which a correlation is undefined
    (constant values) counts as a non-win for both.
    """
    a = np.asarray(metric_a, dtype=float)
    b = np.asarray(metric_b, dtype=float)
    h = np.asarray(human, dtype=float)
    if not (a.shape == b.shape == h.shape) or a.ndim != 1:
        raise MetricsInputError("metric scores and human scores must be 1-D, same length")
    fn = {"pearson": stats.pearsonr, "spearman": stats.spearmanr}.get(method)
    if fn is None:
        raise MetricsInputError(f"unknown correlation {method!r}")
    return paired_bootstrap(
        len(h),
        lambda idx: _safe_corr(fn, a[idx], h[idx]),
        lambda idx: _safe_corr(fn, b[idx], h[idx]),
        n_resamples=n_resamples,
        seed=seed,
    )


def bootstrap_ci(
    values: ArrayLike,
    statistic: Callable[[np.ndarray], float] = np.mean,
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of ``statistic(values)``."""
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        raise MetricsInputError("bootstrap needs at least 2 values")
    rng = np.random.default_rng(seed)
    draws = np.array([statistic(data[rng.integers(0, data.size, data.size)])
                      for _ in range(n_resamples)])
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return float(low), float(high)


def mean_ci(values: ArrayLike, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)`` with a Student t interval."""
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        raise MetricsInputError("a confidence interval needs at least 2 values")
    mean = float(data.mean())
    sem = float(stats.sem(data))
    if sem == 0:
        return mean, mean, mean
    low, high = stats.t.interval(confidence, data.size - 1, loc=mean, scale=sem)
    return mean, float(low), float(high)
