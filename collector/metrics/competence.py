"""Worker competence: how far each worker can be trusted, estimated from the work alone.

Every estimator reads *judgments*, one per (item, worker): mappings with the string fields
``item`` and ``worker`` and the judgment itself (``label`` or ``answer``). A worker judging
the same item twice, a missing field or a value of the wrong type is a
:class:`MetricsInputError` naming the row (or the file and line, for
:func:`read_judgments`) and the field. Results do not depend on the order of the rows:
items, workers and classes are processed and reported in sorted order.

Categorical labels (yes/no/uncertain, query judgment types, validation choices)
    :func:`labels_competence` (and :func:`dawid_skene` for the whole fit): the EM algorithm
    of Dawid & Skene (1979), *Maximum likelihood estimation of observer error-rates using
    the EM algorithm*, Applied Statistics 28(1). With ``T[i, j]`` the probability that
    item *i* is of class *j* and ``n[i, w, l]`` = 1 when worker *w* gave item *i* label *l*:

    - initial ``T[i, j]`` = the share of item *i*'s labels that are *j* (the paper's pooled
      responses, a soft majority vote);
    - M-step (paper eq. 2.3-2.4): class priors ``p[j] = Σ_i T[i, j] / I`` and confusion
      matrices ``π[w, j, l] = c[w, j, l] / Σ_l c[w, j, l]`` with the expected counts
      ``c[w, j, l] = Σ_i T[i, j] n[i, w, l]``. Smoothing, so that a worker seen on few
      items never gets probabilities of 0 or 1: each worker's row *j* gets ``smoothing``
      (default 1) pseudo-judgments distributed as the crowd's pooled row,
      ``π[w, j, l] = (c[w, j, l] + s q[j, l]) / (Σ_l c[w, j, l] + s)`` with
      ``q[j, l] = (Σ_w c[w, j, l] + 1) / (Σ_w Σ_l c[w, j, l] + K)`` (a MAP estimate under
      a Dirichlet prior centred on the pooled matrix). A worker with little data thus
      looks like the average worker rather than like a random labeller; a prior centred
      on the uniform matrix (plain add-one) pulls small data sets into the uninformative
      fixed point where every posterior equals the prior. The class counts of the prior
      get ``smoothing`` added as well;
    - E-step (eq. 2.5): ``T[i, j] ∝ p[j] Π_w Π_l π[w, j, l] ** n[i, w, l]``, in logs;
    - stop when no posterior moves by more than ``tol`` (default 1e-6) or after
      ``max_iter`` iterations (default 100); the reported parameters come from a last
      M-step on the final posteriors.

    A worker's ``accuracy`` is ``Σ_j p[j] π[w, j, j]``: the probability, under the
    estimate, that the worker labels correctly an item whose true class is drawn from the
    class priors (the prior-weighted diagonal of their confusion matrix). An item's label
    is the class of highest posterior; posteriors within 1e-9 of the maximum tie, and a tie
    goes to the tied class with the most raw votes on the item, then to the first class in
    sorted order. crowd-kit was considered and not used: it requires ``transformers``.

Spans (extractive answers, ``""`` for no answer)
    :func:`spans_competence`: each worker's leave-one-out agreement. On every item with at
    least two answers, the worker's answer is compared with the consensus of the *other*
    workers' answers by SQuAD v2.0 token F1 (:func:`collector.metrics.squad.f1_v2`: SQuAD
    normalisation; 1 when both answers are empty, 0 when only one is). The consensus is
    the medoid of the other answers: the other answer with the highest mean F1 to the
    remaining other answers. With a single other answer it is that answer; when several
    other answers tie for the highest mean (always the case with exactly two others, F1
    being symmetric) the worker's score is their mean F1 against the tied answers. A
    worker's ``f1`` is the mean over their items; ``low``/``high`` is a percentile
    bootstrap interval of that mean over the worker's items (``resamples`` draws,
    ``confidence`` 0.95, generator seeded by ``seed`` and the worker id, so a worker's
    interval does not depend on the other workers). Workers who share no item with
    another worker get no score and are left out of ``workers``.

Free text (MS MARCO answer distillation)
    :func:`freetext_competence`: a worker's mean pa-metric weight over the items they
    answered. On every item with at least two answers, ``Imp(Ref_i)`` (Eq. 2 of the
    pa-metrics paper, :class:`collector.metrics.pa.PaScorer`: pa-BLEU or pa-METEOR
    similarity, j = i included by default as in :mod:`collector.metrics.pa`) is normalised
    as in Eq. 1, ``Imp(Ref_i) / Σ_k Imp(Ref_k)``; ``weight`` is the mean of that share
    over the worker's items. Because the share is 1/n on average on an item with n
    answers, ``relative`` (the share times n, so 1.0 is the item's average answer) is
    reported as well for comparing workers who answered items with different numbers of
    editors. Items whose weights are all 0 (no two answers share a 4-gram under BLEU)
    carry no information and are skipped.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from collector.metrics.errors import MetricsInputError
from collector.metrics.jsonio import iter_jsonl
from collector.metrics.squad import f1_v2

Kind = Literal["labels", "spans", "freetext"]
Judgment = tuple[str, str, str]  # (item, worker, label or answer)

# The field that holds the judgment, per kind of input.
VALUE_FIELD: dict[str, str] = {"labels": "label", "spans": "answer", "freetext": "answer"}

_TIE = 1e-9


# --------------------------------------------------------------------------- input
def _short(value: str, limit: int = 60) -> str:
    return repr(value if len(value) <= limit else value[: limit - 1] + "…")


def _error(message: str, source: str | None, line: int) -> MetricsInputError:
    if source is None:
        return MetricsInputError(f"row {line}: {message}")
    return MetricsInputError(message, source=source, line=line)


def _judgments(
    numbered: Iterable[tuple[int, Any]], value_field: str, *, source: str | None = None
) -> list[Judgment]:
    """Check ``(line, row)`` pairs and return ``(item, worker, value)`` triples."""
    out: list[Judgment] = []
    seen: dict[tuple[str, str], int] = {}
    for line, row in numbered:
        if not isinstance(row, Mapping):
            raise _error(f"expected a JSON object, got {type(row).__name__}", source, line)
        for key in ("item", "worker", value_field):
            if key not in row:
                raise _error(f"missing field '{key}'", source, line)
        for key in ("item", "worker"):
            if not isinstance(row[key], str) or not row[key]:
                raise _error(f"field '{key}' must be a non-empty string", source, line)
        value = row[value_field]
        if value_field == "label" and (not isinstance(value, str) or not value):
            raise _error("field 'label' must be a non-empty string", source, line)
        if not isinstance(value, str):
            raise _error(f"field '{value_field}' must be a string (\"\" for no answer)",
                         source, line)
        key_pair = (row["item"], row["worker"])
        if key_pair in seen:
            raise _error(
                f"field 'worker': worker {_short(row['worker'])} already judged item "
                f"{_short(row['item'])} ({'line' if source else 'row'} {seen[key_pair]})",
                source, line)
        seen[key_pair] = line
        out.append((row["item"], row["worker"], value))
    if not out:
        raise MetricsInputError("no judgments" if source is None else "file has no judgments",
                                source=source)
    return sorted(out)


def _rows(rows: Iterable[Mapping[str, Any]], value_field: str) -> list[Judgment]:
    return _judgments(enumerate(rows, start=1), value_field)


def read_judgments(path: str | Path, *, kind: Kind) -> list[dict[str, str]]:
    """Read and check a JSON-lines file of ``{"item", "worker", "label" | "answer"}``.

    Blank lines are skipped; any other problem names the file, the line and the field.
    """
    value_field = VALUE_FIELD[kind]
    triples = _judgments(iter_jsonl(path, skip_blank=True), value_field, source=str(path))
    return [{"item": i, "worker": w, value_field: v} for i, w, v in triples]


def _positive(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 \
            or not math.isfinite(value):
        raise MetricsInputError(f"{name} must be a positive number, got {value!r}")


# --------------------------------------------------------------------------- labels
@dataclass(frozen=True, eq=False)
class DawidSkeneFit:
    """A Dawid-Skene estimate; arrays are indexed in the order of the tuples."""

    classes: tuple[str, ...]  # sorted
    items: tuple[str, ...]  # sorted
    workers: tuple[str, ...]  # sorted
    priors: np.ndarray  # (K,) p[j]
    confusion: np.ndarray  # (W, K, K) π[w, true class, given label]
    posteriors: np.ndarray  # (I, K) T[i, j]
    labels: tuple[str, ...]  # per item, after tie-breaking
    iterations: int
    converged: bool

    @property
    def accuracy(self) -> np.ndarray:
        """Per worker, Σ_j p[j] π[w, j, j]."""
        return np.einsum("k,wkk->w", self.priors, self.confusion)


def _m_step(
    post: np.ndarray, ii: np.ndarray, ww: np.ndarray, ll: np.ndarray,
    n_workers: int, smoothing: float,
) -> tuple[np.ndarray, np.ndarray]:
    n_items, k = post.shape
    priors = (post.sum(axis=0) + smoothing) / (n_items + k * smoothing)
    counts = np.empty((n_workers, k, k))
    cell = ww * k + ll
    for j in range(k):
        counts[:, j, :] = np.bincount(cell, weights=post[ii, j],
                                      minlength=n_workers * k).reshape(n_workers, k)
    pooled = counts.sum(axis=0) + 1.0
    pooled /= pooled.sum(axis=1, keepdims=True)
    confusion = (counts + smoothing * pooled) / (counts.sum(axis=2, keepdims=True) + smoothing)
    return priors, confusion


def _e_step(
    priors: np.ndarray, confusion: np.ndarray,
    ii: np.ndarray, ww: np.ndarray, ll: np.ndarray, n_items: int,
) -> np.ndarray:
    k = priors.size
    contrib = np.log(confusion)[ww, :, ll]  # (J, K): log π[w, j, l] of every judgment
    log_post = np.tile(np.log(priors), (n_items, 1))
    for j in range(k):
        log_post[:, j] += np.bincount(ii, weights=contrib[:, j], minlength=n_items)
    log_post -= log_post.max(axis=1, keepdims=True)
    post = np.exp(log_post)
    return post / post.sum(axis=1, keepdims=True)


def dawid_skene(
    rows: Iterable[Mapping[str, Any]],
    *,
    smoothing: float = 1.0,
    tol: float = 1e-6,
    max_iter: int = 100,
) -> DawidSkeneFit:
    """Fit Dawid & Skene (1979) by EM to ``{"item", "worker", "label"}`` rows (see the
    module docstring for the formulas, the smoothing and the tie-breaking)."""
    _positive("smoothing", smoothing)
    _positive("tol", tol)
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise MetricsInputError(f"max_iter must be a positive integer, got {max_iter!r}")
    triples = _rows(rows, "label")
    items = tuple(sorted({t[0] for t in triples}))
    workers = tuple(sorted({t[1] for t in triples}))
    classes = tuple(sorted({t[2] for t in triples}))
    item_ix = {v: n for n, v in enumerate(items)}
    worker_ix = {v: n for n, v in enumerate(workers)}
    class_ix = {v: n for n, v in enumerate(classes)}
    ii = np.array([item_ix[t[0]] for t in triples], dtype=np.intp)
    ww = np.array([worker_ix[t[1]] for t in triples], dtype=np.intp)
    ll = np.array([class_ix[t[2]] for t in triples], dtype=np.intp)
    n_items, k = len(items), len(classes)

    votes = np.bincount(ii * k + ll, minlength=n_items * k).reshape(n_items, k).astype(float)
    post = votes / votes.sum(axis=1, keepdims=True)
    iterations = 0
    converged = False
    while not converged and iterations < max_iter:
        iterations += 1
        priors, confusion = _m_step(post, ii, ww, ll, len(workers), smoothing)
        new_post = _e_step(priors, confusion, ii, ww, ll, n_items)
        converged = float(np.abs(new_post - post).max()) <= tol
        post = new_post
    priors, confusion = _m_step(post, ii, ww, ll, len(workers), smoothing)

    tied = post >= post.max(axis=1, keepdims=True) - _TIE
    best = np.argmax(np.where(tied, votes, -1.0), axis=1)  # argmax: first = sorted order
    return DawidSkeneFit(
        classes=classes, items=items, workers=workers, priors=priors, confusion=confusion,
        posteriors=post, labels=tuple(classes[b] for b in best),
        iterations=iterations, converged=converged,
    )


def labels_competence(
    rows: Iterable[Mapping[str, Any]],
    *,
    smoothing: float = 1.0,
    tol: float = 1e-6,
    max_iter: int = 100,
) -> dict[str, Any]:
    """``{"method": "dawid-skene", "workers": {worker: {"accuracy"}}, "items": {item:
    label}}`` from ``{"item", "worker", "label"}`` rows (the ``competence --kind labels``
    output)."""
    fit = dawid_skene(rows, smoothing=smoothing, tol=tol, max_iter=max_iter)
    return {
        "method": "dawid-skene",
        "workers": {w: {"accuracy": float(a)}
                    for w, a in zip(fit.workers, fit.accuracy, strict=True)},
        "items": dict(zip(fit.items, fit.labels, strict=True)),
    }


# --------------------------------------------------------------------------- spans
def _by_item(triples: Sequence[Judgment]) -> dict[str, list[tuple[str, str]]]:
    grouped: dict[str, list[tuple[str, str]]] = {}
    for item, worker, value in triples:  # sorted, so each list is in worker order
        grouped.setdefault(item, []).append((worker, value))
    return grouped


def leave_one_out_f1(answers: Sequence[str]) -> list[float]:
    """Each answer's F1 against the medoid of the other answers (module docstring)."""
    n = len(answers)
    if n < 2:
        raise MetricsInputError("leave-one-out agreement needs at least two answers")
    f1 = np.ones((n, n))
    for a in range(n):
        for b in range(a + 1, n):
            f1[a, b] = f1[b, a] = float(f1_v2(answers[a], answers[b]))
    scores = []
    for w in range(n):
        others = [j for j in range(n) if j != w]
        if len(others) == 1:
            scores.append(float(f1[w, others[0]]))
            continue
        means = [sum(f1[j, r] for r in others if r != j) / (len(others) - 1) for j in others]
        top = max(means)
        tied = [j for j, m in zip(others, means, strict=True) if m >= top - _TIE]
        scores.append(float(sum(f1[w, j] for j in tied) / len(tied)))
    return scores


def _bootstrap_mean(
    values: np.ndarray, *, resamples: int, confidence: float, rng: np.random.Generator
) -> tuple[float, float]:
    n = values.size
    if n == 1:
        return float(values[0]), float(values[0])
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // n)
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        means[start:stop] = values[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def spans_competence(
    rows: Iterable[Mapping[str, Any]],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    memo: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``{"workers": {worker: {"f1", "low", "high"}}}`` from ``{"item", "worker",
    "answer"}`` rows (the ``competence --kind spans`` output); leave-one-out F1 against
    the other workers' consensus, bootstrap interval over items (module docstring).

    ``memo``: a dict the caller keeps between calls (in a cache, say). It holds each
    item's leave-one-out scores under its answers and each worker's interval under their
    scores, so a call after a few new answers computes again only the items and workers
    those change, with the same results; it is left holding only what this call used."""
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise MetricsInputError(f"resamples must be a positive integer, got {resamples!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise MetricsInputError(f"seed must be a non-negative integer, got {seed!r}")
    if not 0 < confidence < 1:
        raise MetricsInputError(f"confidence must be between 0 and 1, got {confidence!r}")
    known_scores = memo.get("loo", {}) if memo is not None else {}
    known_bounds = memo.get("bootstrap", {}) if memo is not None else {}
    used_scores: dict[tuple[str, ...], list[float]] = {}
    used_bounds: dict[tuple[Any, ...], tuple[float, float]] = {}
    per_worker: dict[str, list[float]] = {}
    for answered in _by_item(_rows(rows, "answer")).values():
        if len(answered) < 2:
            continue
        answers = tuple(answer for _, answer in answered)
        scores = used_scores.get(answers) or known_scores.get(answers)
        if scores is None:
            scores = leave_one_out_f1(answers)
        used_scores[answers] = scores
        for (worker, _), score in zip(answered, scores, strict=True):
            per_worker.setdefault(worker, []).append(score)
    out: dict[str, dict[str, float]] = {}
    for worker in sorted(per_worker):
        values = np.array(per_worker[worker])
        key = (worker, values.tobytes(), resamples, seed, confidence)
        bounds = known_bounds.get(key)
        if bounds is None:
            rng = np.random.default_rng([seed, zlib.crc32(worker.encode("utf-8"))])
            bounds = _bootstrap_mean(values, resamples=resamples, confidence=confidence,
                                     rng=rng)
        used_bounds[key] = bounds
        out[worker] = {"f1": float(values.mean()), "low": bounds[0], "high": bounds[1]}
    if memo is not None:
        memo["loo"], memo["bootstrap"] = used_scores, used_bounds
    return {"workers": out}


# --------------------------------------------------------------------------- free text
def freetext_competence(
    rows: Iterable[Mapping[str, Any]],
    *,
    metric: Literal["bleu", "meteor"] = "bleu",
    include_self: bool = True,
) -> dict[str, Any]:
    """``{"metric": "pa-bleu" | "pa-meteor", "include_self", "workers": {worker:
    {"weight", "relative", "items"}}}`` from ``{"item", "worker", "answer"}`` rows: the
    mean normalised pa weight ``Imp(Ref_i) / Σ Imp`` of each worker's answers, and that
    share times the item's number of answers (module docstring)."""
    from collector.metrics.pa import PaScorer

    if metric not in ("bleu", "meteor"):
        raise MetricsInputError(f"unknown pa metric {metric!r}; use 'bleu' or 'meteor'")
    shares: dict[str, list[tuple[float, int]]] = {}
    for answered in _by_item(_rows(rows, "answer")).values():
        if len(answered) < 2:
            continue
        scorer = PaScorer([answer for _, answer in answered], metric=metric,
                          include_self=include_self)
        total = sum(scorer.weights)
        if total <= 0:
            continue
        for (worker, _), weight in zip(answered, scorer.weights, strict=True):
            shares.setdefault(worker, []).append((weight / total, len(answered)))
    workers = {}
    for worker in sorted(shares):
        got = shares[worker]
        workers[worker] = {
            "weight": sum(s for s, _ in got) / len(got),
            "relative": sum(s * n for s, n in got) / len(got),
            "items": len(got),
        }
    return {"metric": f"pa-{metric}", "include_self": include_self, "workers": workers}

