"""pa-Metric, pa-BLEU and pa-METEOR (Mitra et al., *A Proposal for Evaluating Answer
Distillation from Web Data*, ``../shared/papers/answer-distillation-pa-metrics.md``).

Eq. 1-3::

    pa-Metric(Res) = Σ_i Sim(Res, Ref_i) Imp(Ref_i) / Σ_i Imp(Ref_i)
    Imp(Ref_i)     = Σ_j Sim(Ref_i, Ref_j)

The sum in Imp includes j = i by default: candidate #4 of the paper's Table 2 decides it
(its only non-zero similarity is with reference 19, which has BLEU 0 with every other
reference, so without j = i its pa-BLEU would be exactly 0.00 instead of the printed 0.01;
see ``data/datasets/metric-vectors/pa_table2/README.md``). ``include_self=False`` gives
the other reading. The weights Imp(Ref_i) are returned so that references far from the
consensus can be flagged (:func:`flag_outliers`).

Similarities (tokens: :func:`pa_tokens`, lower-cased words and punctuation, each CJK
character a token of its own; exact matching):

- BLEU (Eq. 5-7): BLEU-4 of one answer against one other, uniform weights, clipped
  counts, brevity penalty exp(1 - r/c) when c < r, no smoothing (0 when an order has no
  match or the candidate has fewer than 4 tokens). Eq. 7 prints the exponent as
  1 - l1/l2; the standard penalty (Papineni et al.) is used, as the paper says it follows.
- METEOR (Eq. 9): M = (1 - γ (ch/m)^θ) · m / (α l1 + (1 - α) l2) with α 0.1, γ 0.5, θ 3,
  l1 the candidate's and l2 the reference's length, m exactly matched unigrams and ch the
  chunks of the alignment. The alignment maps the most unigrams and, among those, has the
  fewest crossings (Banerjee & Lavie 2005), then the fewest chunks: exactly while the
  choices of which repeated words to match are at most 512 combinations, beyond that a
  local optimum found in polynomial time (:func:`meteor_alignment`).

The plain multi-reference scores of Table 2 are :func:`multi_reference_bleu` (clipped by
the maximum count in any reference, closest reference length, shorter on ties) and the
maximum METEOR over the references (:func:`max_meteor`).

Command-line input format (``python -m collector.metrics pa``): see :data:`CLI_FORMAT_HELP`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, product
from pathlib import Path
from statistics import median
from typing import Any

import numpy as np

from collector.metrics.errors import MetricsInputError
from collector.metrics.jsonio import load_json
from collector.metrics.ngrams import clipped_matches, ngram_counts
from collector.metrics.tokenize import pa_tokens

Tokens = Sequence[Hashable]
Similarity = Callable[[Any, Any], float]

CLI_FORMAT_HELP = """\
REFS.json is either a JSON object mapping each query id to its list of reference answers,
    {"q1": ["ref answer 1", "ref answer 2", ...], "q2": [...]}
or, for a single query, just the list ["ref answer 1", "ref answer 2", ...].

CANDS.json maps the same query ids to the candidate answers to score: a string, a list of
strings, or a list of {"id": ..., "text": ...} objects,
    {"q1": ["candidate a", "candidate b"], "q2": "candidate c"}
or, when REFS.json is a single list, a list of strings or {"id", "text"} objects.

Output: {"metric": "pa-bleu"|"pa-meteor", "include_self": true, "queries": [{"query_id",
"reference_weights" (Imp(Ref_i), Eq. 2), "reference_weight_shares" (weights / their sum),
"outlier_references" (indices whose weight is below --outlier-ratio x the median),
"candidates": [{"id", "pa_score" (Eq. 3), "plain_score" (multi-reference BLEU-4 or the
maximum METEOR), "similarities" (Sim(Res, Ref_i) per reference)}]}]}.
Text is lower-cased and split into words and punctuation, each Chinese or Japanese
character a token of its own; matching is exact.
"""


# --------------------------------------------------------------------------- BLEU
@dataclass(frozen=True)
class BleuRef:
    """A tokenised reference with its n-gram counters, reusable across candidates."""

    tokens: tuple[Hashable, ...]
    counts: tuple[Counter, ...]

    @classmethod
    def of(cls, tokens: Tokens, n: int = 4) -> BleuRef:
        toks = tuple(tokens)
        return cls(toks, tuple(ngram_counts(toks, k) for k in range(1, n + 1)))


def _bleu_from_counts(matches: Sequence[int], totals: Sequence[int], c: int, r: int) -> float:
    if c == 0 or any(t == 0 for t in totals) or any(m == 0 for m in matches):
        return 0.0
    log_p = sum(math.log(m / t) for m, t in zip(matches, totals, strict=True)) / len(totals)
    bp = 1.0 if c >= r else math.exp(1.0 - r / c)
    return bp * math.exp(log_p)


def _bleu_refs(cand: BleuRef, refs: Sequence[BleuRef]) -> float:
    n = len(cand.counts)
    c = len(cand.tokens)
    matches = [clipped_matches(cand.counts[k], [ref.counts[k] for ref in refs])
               for k in range(n)]
    totals = [max(0, c - k) for k in range(n)]
    r = min((abs(len(ref.tokens) - c), len(ref.tokens)) for ref in refs)[1]
    return _bleu_from_counts(matches, totals, c, r)


def multi_reference_bleu(
    candidate: Tokens | BleuRef, references: Sequence[Tokens | BleuRef], n: int = 4
) -> float:
    """Sentence BLEU-n against several references (Table 2's BLEU column), unsmoothed."""
    refs = [r if isinstance(r, BleuRef) else BleuRef.of(r, n) for r in references]
    if not refs:
        raise MetricsInputError("BLEU needs at least one reference")
    cand = candidate if isinstance(candidate, BleuRef) else BleuRef.of(candidate, n)
    return _bleu_refs(cand, refs)


def pairwise_bleu(
    candidate: Tokens | BleuRef, reference: Tokens | BleuRef, n: int = 4
) -> float:
    """BLEU(r1, r2) of Eq. 5: ``candidate`` scored against the single ``reference``."""
    return multi_reference_bleu(candidate, [reference], n)


# --------------------------------------------------------------------------- METEOR
def _crossings(pairs: Sequence[tuple[int, int]]) -> int:
    """Pairs of matches that cross (i1 < i2 but j1 > j2), in O(m log m)."""
    js = [j for _, j in sorted(pairs)]
    rank = {j: r for r, j in enumerate(sorted(js), start=1)}
    tree = [0] * (len(js) + 1)  # Fenwick tree over the ranks of the j seen so far
    crossed = 0
    for seen, j in enumerate(js):
        r = rank[j]
        k, below = r, 0
        while k:
            below += tree[k]
            k &= k - 1
        crossed += seen - below
        k = r
        while k < len(tree):
            tree[k] += 1
            k += k & -k
    return crossed


def count_chunks(pairs: Sequence[tuple[int, int]]) -> int:
    """Chunks: runs of matches adjacent and identically ordered in both texts."""
    if not pairs:
        return 0
    ordered = sorted(pairs)
    chunks = 1
    for (i0, j0), (i1, j1) in zip(ordered, ordered[1:], strict=False):
        if not (i1 == i0 + 1 and j1 == j0 + 1):
            chunks += 1
    return chunks


def _type_options(cpos: list[int], rpos: list[int]) -> list[list[tuple[int, int]]]:
    """Order-preserving matchings of one word type using min(|cpos|, |rpos|) pairs."""
    k = min(len(cpos), len(rpos))
    if len(cpos) == len(rpos):
        return [list(zip(cpos, rpos, strict=True))]
    if len(cpos) > len(rpos):
        return [list(zip(sub, rpos, strict=True)) for sub in combinations(cpos, k)]
    return [list(zip(cpos, sub, strict=True)) for sub in combinations(rpos, k)]


def _cost(pairs: list[tuple[int, int]]) -> tuple[int, int]:
    return _crossings(pairs), count_chunks(pairs)


@dataclass(frozen=True)
class _WordType:
    """A word type with more occurrences on one side: its choice is which k of the n
    occurrences on the longer side to match, in order, with the k on the shorter side."""

    cpos: list[int]
    rpos: list[int]

    @property
    def candidate_longer(self) -> bool:
        return len(self.cpos) > len(self.rpos)

    @property
    def short(self) -> list[int]:
        return self.rpos if self.candidate_longer else self.cpos

    @property
    def long(self) -> list[int]:
        return self.cpos if self.candidate_longer else self.rpos

    def pairs(self, pick: Sequence[int]) -> list[tuple[int, int]]:
        """The matches when the longer side's occurrences ``pick`` (indices) are used."""
        long, short = self.long, self.short
        if self.candidate_longer:
            return [(long[p], short[q]) for q, p in enumerate(pick)]
        return [(short[q], long[p]) for q, p in enumerate(pick)]


def _best_pick(
    wt: _WordType, pick: tuple[int, ...], others: list[tuple[int, int]], weight: int
) -> tuple[int, ...]:
    """The best choice for one word type with every other match held fixed.

    Exactly what scanning all C(n, k) choices in ``itertools.combinations`` order and
    keeping each strictly better one gives (the current ``pick`` when nothing beats it,
    else the first choice of least cost), without enumerating them. With the other matches
    fixed, the cost of a choice is a sum over its k matches (crossings with the other
    matches, adjacency to them) plus a term for each two consecutive matches of the type
    that are adjacent to each other, so a dynamic programme over (match q, occurrence p)
    finds the least cost: O(k (n + M) log M) steps, M the other matches.
    Cost = ``weight`` x crossings - links; chunks = matches - links, and ``weight`` is
    larger than any number of links, so this orders as (crossings, chunks) does.
    """
    short = np.array(wt.short, dtype=np.int64)
    long = np.array(wt.long, dtype=np.int64)
    k, n = len(short), len(long)
    span = n - k + 1  # match q uses occurrence p = q + x of the longer side, 0 <= x < span
    # grid[q, x]: the positions (i, j) of match q at occurrence q + x
    moving = np.lib.stride_tricks.sliding_window_view(long, span)  # moving[q] = long[q:q+span]
    fixed_pos = np.broadcast_to(short[:, None], (k, span))
    if wt.candidate_longer:
        gi, gj = moving, fixed_pos
    else:
        gi, gj = fixed_pos, moving
    oi = np.array([i for i, _ in others], dtype=np.int64)
    oj = np.array([j for _, j in others], dtype=np.int64)
    # crossings of (i, j) with the others = #(i' < i) + #(j' < j) - 2 #(i' < i and j' < j)
    # (no other match shares a position with this type's matches)
    crossed = np.searchsorted(np.sort(oi), gi) + np.searchsorted(np.sort(oj), gj)
    for q in range(k):  # #(i' < i, j' < j) along row q, where i or j is fixed
        if wt.candidate_longer:
            lower = np.sort(oi[oj < short[q]])
            crossed[q] -= 2 * np.searchsorted(lower, gi[q])
        else:
            lower = np.sort(oj[oi < short[q]])
            crossed[q] -= 2 * np.searchsorted(lower, gj[q])
    # links with the others: (i - 1, j - 1) or (i + 1, j + 1) is another match
    stride = max(int(gj.max()), int(oj.max(initial=0))) + 3  # j + 2 < stride: unique keys
    keys = np.append(np.sort((oi + 1) * stride + (oj + 1)), -1)  # -1: never a key
    grid_keys = (gi + 1) * stride + (gj + 1)
    links = np.zeros((k, span), dtype=np.int64)
    for neighbour in (grid_keys - stride - 1, grid_keys + stride + 1):
        links += keys[np.searchsorted(keys[:-1], neighbour)] == neighbour
    value = weight * crossed - links
    # chain[q, x]: match q at q + x and match q + 1 at q + x + 1 are adjacent (a link)
    chain = np.zeros((k, span), dtype=np.int64)
    if k > 1:
        long_adjacent = (long[1:] == long[:-1] + 1).astype(np.int64)  # p -> p + 1
        short_adjacent = (short[1:] == short[:-1] + 1).astype(np.int64)
        chain[:-1] = short_adjacent[:, None] * np.lib.stride_tricks.sliding_window_view(
            long_adjacent, span)[: k - 1]
    # best[q, x]: least cost of matches q.. with match q at occurrence q + x
    best = np.empty((k, span), dtype=np.int64)
    best[k - 1] = value[k - 1]
    for q in range(k - 2, -1, -1):
        nxt = best[q + 1]  # match q + 1 at q + 1 + x'
        # match q at q + x: match q + 1 at q + x + 1 (x' = x) or later (x' > x)
        later = np.minimum.accumulate(nxt[::-1])[::-1]  # later[x'] = min(nxt[x'..])
        step = nxt - chain[q]
        step[:-1] = np.minimum(step[:-1], later[1:])
        best[q] = value[q] + step

    def cost_of(sel: Sequence[int]) -> int:
        xs = [p - q for q, p in enumerate(sel)]
        total = int(sum(value[q, x] for q, x in enumerate(xs)))
        return total - sum(int(chain[q, xs[q]]) for q in range(k - 1) if xs[q + 1] == xs[q])

    least = int(best[0].min())
    if cost_of(pick) == least:
        return pick
    # The first least-cost choice in combinations order: at each step the smallest
    # occurrence that can still complete a least-cost choice.
    x = int(np.flatnonzero(best[0] == least)[0])
    chosen = [x]  # as p - q
    remaining = least - int(value[0, x])
    for q in range(1, k):
        x_prev = chosen[-1]  # previous match at (q - 1) + x_prev; this one at q + x, x >= x_prev
        tail = best[q, x_prev:].copy()
        tail[0] -= chain[q - 1, x_prev]
        x = x_prev + int(np.flatnonzero(tail == remaining)[0])
        link = int(chain[q - 1, x_prev]) if x == x_prev else 0
        chosen.append(x)
        remaining -= int(value[q, x]) - link
    return tuple(q + x for q, x in enumerate(chosen))


def meteor_alignment(
    candidate: Tokens, reference: Tokens, *, max_exhaustive: int = 512
) -> list[tuple[int, int]]:
    """Exact-match alignment with the most matches, then fewest crossings, then chunks.

    Every word type is matched min(count in candidate, count in reference) times, in
    order (matches of one type never cross each other in a least-crossing alignment); the
    only choice is which occurrences a type with more of them on one side uses. While
    there are at most ``max_exhaustive`` combinations of these choices, all are tried
    (the exact optimum; the first in ``itertools.product`` order on ties). Beyond that,
    coordinate descent from the in-order choice: type by type, the best choice for that
    type with the others fixed (:func:`_best_pick`, a polynomial dynamic programme), until
    no type improves: the same alignment as trying every choice of one type in turn, in
    polynomial time, a local optimum never worse than the in-order choice. The exact
    optimum is not attempted there: one type's choice changes its crossings with every
    other type, so the choices interact pairwise, not only through the chunk count, and
    no polynomial exact method is known to us; with fewest chunks as the first criterion
    (Meteor 1.3+) the exact optimum is even NP-hard (Minimum Common String Partition,
    when every word has the same count on both sides).
    """
    cpos: dict[Hashable, list[int]] = {}
    rpos: dict[Hashable, list[int]] = {}
    for i, tok in enumerate(candidate):
        cpos.setdefault(tok, []).append(i)
    for j, tok in enumerate(reference):
        rpos.setdefault(tok, []).append(j)
    fixed: list[tuple[int, int]] = []
    types: list[_WordType] = []
    for tok, ci in cpos.items():
        if tok not in rpos:
            continue
        if len(ci) == len(rpos[tok]):
            fixed.extend(zip(ci, rpos[tok], strict=True))
        else:
            types.append(_WordType(ci, rpos[tok]))
    if not types:
        return sorted(fixed)
    n_combos = math.prod(math.comb(len(t.long), len(t.short)) for t in types)
    if n_combos <= max_exhaustive:
        choices = [_type_options(t.cpos, t.rpos) for t in types]
        best = min((fixed + [p for part in combo for p in part] for combo in product(*choices)),
                   key=_cost)
        return sorted(best)
    picks = [tuple(range(len(t.short))) for t in types]
    parts = [t.pairs(p) for t, p in zip(types, picks, strict=True)]
    weight = len(fixed) + sum(len(t.short) for t in types) + 1
    improved = True
    while improved:
        improved = False
        for t, wt in enumerate(types):
            others = fixed + [p for u, part in enumerate(parts) if u != t for p in part]
            pick = _best_pick(wt, picks[t], others, weight)
            if pick != picks[t]:
                picks[t], parts[t], improved = pick, wt.pairs(pick), True
    return sorted(fixed + [p for part in parts for p in part])


def meteor(
    candidate: Tokens,
    reference: Tokens,
    *,
    alpha: float = 0.1,
    gamma: float = 0.5,
    theta: float = 3.0,
) -> float:
    """METEOR of Eq. 9 with exact unigram matching (0 when nothing matches)."""
    pairs = meteor_alignment(candidate, reference)
    m = len(pairs)
    if m == 0:
        return 0.0
    ch = count_chunks(pairs)
    l1, l2 = len(candidate), len(reference)
    return (1 - gamma * (ch / m) ** theta) * (m / (alpha * l1 + (1 - alpha) * l2))


def max_meteor(candidate: Tokens, references: Sequence[Tokens], **params: float) -> float:
    """Plain METEOR with several references: the maximum over them."""
    return max(meteor(candidate, r, **params) for r in references)


# --------------------------------------------------------------------------- pa-Metric
@dataclass(frozen=True)
class PaResult:
    """A pa-score with what it was made of."""

    score: float
    similarities: tuple[float, ...]  # Sim(Res, Ref_i)
    weights: tuple[float, ...]  # Imp(Ref_i)


def reference_weights(
    references: Sequence[Any], similarity: Similarity, *, include_self: bool = True
) -> list[float]:
    """Imp(Ref_i) = Σ_j Sim(Ref_i, Ref_j) (Eq. 2), with or without j = i."""
    return [
        sum(similarity(ri, rj) for j, rj in enumerate(references) if include_self or i != j)
        for i, ri in enumerate(references)
    ]


def pa_from_weights(similarities: Sequence[float], weights: Sequence[float]) -> float:
    """Eq. 1; 0 when every weight is 0 (no consensus to weight by)."""
    total = sum(weights)
    if total == 0:
        return 0.0
    return sum(s * w for s, w in zip(similarities, weights, strict=True)) / total


def pa_metric(
    candidate: Any,
    references: Sequence[Any],
    similarity: Similarity,
    *,
    include_self: bool = True,
    weights: Sequence[float] | None = None,
) -> PaResult:
    """pa-Metric (Eq. 1-3) of ``candidate`` for any pairwise ``similarity(a, b)``.

    ``similarity(a, b)`` scores ``a`` against reference ``b``. Pass precomputed
    ``weights`` (from :func:`reference_weights`) when scoring many candidates.
    """
    if not references:
        raise MetricsInputError("pa-Metric needs at least one reference")
    if weights is None:
        weights = reference_weights(references, similarity, include_self=include_self)
    sims = tuple(similarity(candidate, r) for r in references)
    return PaResult(pa_from_weights(sims, weights), sims, tuple(weights))


def flag_outliers(weights: Sequence[float], *, ratio: float = 0.5) -> list[int]:
    """Indices of references whose weight is below ``ratio`` x the median weight."""
    if not weights:
        return []
    mid = median(weights)
    return [i for i, w in enumerate(weights) if w < ratio * mid]


class PaScorer:
    """pa-BLEU or pa-METEOR for one query: tokenises the references and computes their
    weights once, then scores any number of candidates."""

    def __init__(
        self, references: Sequence[str], *, metric: str = "bleu", include_self: bool = True,
        level: str = "word",
    ) -> None:
        if metric not in ("bleu", "meteor"):
            raise MetricsInputError(f"unknown pa metric {metric!r}; use 'bleu' or 'meteor'")
        if not references:
            raise MetricsInputError("pa-Metric needs at least one reference")
        self.metric = metric
        self.level = level
        self.ref_tokens = [pa_tokens(r, level=level) for r in references]
        if metric == "bleu":
            self._refs: list[Any] = [BleuRef.of(t) for t in self.ref_tokens]
        else:
            self._refs = self.ref_tokens
        self.weights = reference_weights(self._refs, self._sim, include_self=include_self)

    def _sim(self, cand: Any, ref: Any) -> float:
        if self.metric == "bleu":
            return _bleu_refs(cand, [ref])
        return meteor(cand, ref)

    def score(self, candidate: str) -> PaResult:
        tokens: Any = pa_tokens(candidate, level=self.level)
        if self.metric == "bleu":
            tokens = BleuRef.of(tokens)  # the candidate's n-grams are counted once
        sims = tuple(self._sim(tokens, ref) for ref in self._refs)
        return PaResult(pa_from_weights(sims, self.weights), sims, tuple(self.weights))

    def plain_score(self, candidate: str) -> float:
        """Multi-reference BLEU-4, or the maximum METEOR (Table 2's plain columns)."""
        tokens = pa_tokens(candidate, level=self.level)
        if self.metric == "bleu":
            return multi_reference_bleu(tokens, self._refs)
        return max_meteor(tokens, self.ref_tokens)


def pa_bleu(candidate: str, references: Sequence[str], *, include_self: bool = True) -> PaResult:
    """pa-BLEU (Eq. 4) of a candidate string against reference strings."""
    return PaScorer(references, metric="bleu", include_self=include_self).score(candidate)


def pa_meteor(
    candidate: str, references: Sequence[str], *, include_self: bool = True
) -> PaResult:
    """pa-METEOR (Eq. 8) of a candidate string against reference strings."""
    return PaScorer(references, metric="meteor", include_self=include_self).score(candidate)


# --------------------------------------------------------------------------- files
def _candidate_list(value: Any, where: str) -> list[tuple[Any, str]]:
    if isinstance(value, str):
        return [(0, value)]
    if not isinstance(value, list) or not value:
        raise MetricsInputError(f"{where}: expected a candidate string or a non-empty list")
    out = []
    for k, item in enumerate(value):
        if isinstance(item, str):
            out.append((k, item))
        elif isinstance(item, Mapping) and isinstance(item.get("text"), str):
            out.append((item.get("id", k), item["text"]))
        else:
            raise MetricsInputError(
                f"{where}[{k}]: expected a string or an object with a 'text' string")
    return out


def _reference_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(r, str) for r in value):
        raise MetricsInputError(f"{where}: expected a non-empty list of reference strings")
    return value


def pa_score(
    references: Mapping[str, Sequence[str]] | Sequence[str],
    candidates: Mapping[str, Any] | Sequence[Any],
    *,
    metric: str = "bleu",
    include_self: bool = True,
    outlier_ratio: float = 0.5,
    level: str = "word",
) -> dict[str, Any]:
    """Score candidates of one or many queries; the CLI's JSON result (see the help);
    tokens at ``level`` (``pa_tokens``)."""
    if isinstance(references, list):
        references, candidates = {"": references}, {"": candidates}
    if not isinstance(references, Mapping) or not references:
        raise MetricsInputError("references: expected a non-empty object or list")
    if not isinstance(candidates, Mapping):
        raise MetricsInputError("candidates: expected an object keyed by query id "
                                "(or a list when the references are a single list)")
    unknown = [q for q in candidates if q not in references]
    if unknown:
        raise MetricsInputError(f"candidates for unknown query id {unknown[0]!r}")
    queries = []
    for qid, refs in references.items():
        ref_list = _reference_list(refs, f"references[{qid!r}]")
        scorer = PaScorer(ref_list, metric=metric, include_self=include_self, level=level)
        cands = []
        if qid in candidates:
            for cid, text in _candidate_list(candidates[qid], f"candidates[{qid!r}]"):
                res = scorer.score(text)
                cands.append({"id": cid, "pa_score": res.score,
                              "plain_score": scorer.plain_score(text),
                              "similarities": list(res.similarities)})
        total = sum(scorer.weights)
        queries.append({
            "query_id": qid,
            "reference_weights": list(scorer.weights),
            "reference_weight_shares": [w / total if total else 0.0 for w in scorer.weights],
            "outlier_references": flag_outliers(scorer.weights, ratio=outlier_ratio),
            "candidates": cands,
        })
    return {"metric": f"pa-{metric}", "include_self": include_self, "queries": queries}


def pa_score_files(
    refs_path: str | Path,
    cands_path: str | Path,
    *,
    metric: str = "bleu",
    include_self: bool = True,
    outlier_ratio: float = 0.5,
    level: str = "word",
) -> dict[str, Any]:
    """Read REFS.json and CANDS.json (format in :data:`CLI_FORMAT_HELP`) and score them."""
    refs = load_json(refs_path)
    cands = load_json(cands_path)
    if isinstance(refs, list) and not isinstance(cands, list):
        raise MetricsInputError("REFS.json is a single list, so CANDS.json must be a list",
                                source=str(cands_path))
    if isinstance(refs, Mapping) and not isinstance(cands, Mapping):
        raise MetricsInputError("REFS.json is keyed by query id, so CANDS.json must be too",
                                source=str(cands_path))
    try:
        return pa_score(refs, cands, metric=metric, include_self=include_self,
                        outlier_ratio=outlier_ratio, level=level)
    except MetricsInputError as exc:
        source = refs_path if str(exc).startswith("references") else cands_path
        raise MetricsInputError(str(exc), source=str(source)) from None
