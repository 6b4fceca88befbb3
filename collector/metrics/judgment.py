"""The human judgment study of the adapted-metrics paper (section 4): how well ROUGE-L and
BLEU-4, with and without the yes-no / entity bonuses, agree with people's 1-5 scores.

Inputs: DuReader-layout references and predictions (one record per question id, as the
``dureader`` command reads them) and ratings ``{question_id, system, rater, score}``. A
*candidate* is one system's answer to one question; its human score is the mean of its
ratings.

- Table 1: Pearson r between the raters of each candidate (per question type and
  overall). A candidate's ratings are taken in rater order (rater ids sorted as
  strings) and every pair of them, in that order, is one (x, y) point: a candidate rated
  twice gives one point, so with two fixed raters this is the paper's
  annotator-against-annotator PCC; one rated k times gives k(k-1)/2 points, so every
  rating counts whatever the overlap (with fixed raters A, B, C: the A-B, A-C and B-C
  points pooled). Counting each pair in both orders would make r independent of the
  rater order but would change the two-rater figure (it is then an intraclass
  correlation, not the paper's PCC); the order-free figure is the next one.
  ``table1_krippendorff_alpha``: Krippendorff's alpha with the interval metric
  (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"), chance-corrected
  agreement over every rating, for any number of raters per candidate, computed by the
  ``krippendorff`` package (:func:`collector.metrics.agreement.krippendorff_alpha`).
  Both leave out candidates with a single rating (a rater left): alpha cannot pair them
  and r has no pair; ``table1_one_rating`` counts them, ``table1_n`` counts the
  candidates rated at least twice and ``table1_pairs`` the points of r.
- Human score: the mean of a candidate's ratings, also for a candidate rated once. The
  paper's human judgment is the mean of the scores its annotators gave (every candidate
  had both); one score is the same estimate of the candidate's quality with more noise,
  while leaving the candidate out would drop it from Table 2 and every system's answer
  to its question from Table 3 (which needs all systems), and make both tables depend
  on which raters left.
- Table 2 (single-question level): per candidate ROUGE-L (γ = 1.2) and sentence BLEU-4,
  each original (α = β = 0) and adapted (paper: α = 2.0, β = 1.0), from
  :mod:`collector.metrics.dureader`; Pearson r of each with the mean human score, with a
  percentile bootstrap interval; Koehn's paired bootstrap (``compare_correlations``)
  between each original / adapted pair: the share of resamples in which the adapted r is
  higher.
- Table 3 (overall level): ``sample`` questions (of the type, or of all) rated for every
  system are drawn without replacement, ``resamples`` times; per draw and system the
  corpus metric (ROUGE-L: mean; BLEU-4: pooled counts, as the official scorer) and the
  mean human score make one pair; Pearson r over the draws × systems pairs. When a type
  has no more such questions than ``sample``, every draw would be the same: one draw is
  made (one pair per system; r undefined with fewer than 3 systems).
- Sweeps (paper figures 1 and 2): the single-question PCC of adapted ROUGE-L and BLEU-4
  on yes-no candidates as α goes 0..5 (β fixed), and on entity candidates as β goes 0..5
  (α fixed).

No Django: the platform's study stage and ``python -m collector.metrics judgment`` call
:func:`judgment_study`.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from collector.metrics.dureader import (
    ENTITY,
    YES_NO,
    AdaptedBleu,
    AdaptedRougeL,
    BleuInstanceStats,
    DuReaderPrediction,
    DuReaderReference,
    prediction_from_obj,
    reference_from_obj,
)
from collector.metrics.errors import MetricsInputError
from collector.metrics.jsonio import iter_jsonl
from collector.metrics.lcs import lcs_lengths

TYPES = ("YES_NO", "ENTITY", "DESCRIPTION")
METRICS = ("rouge_l", "bleu_4", "adapted_rouge_l", "adapted_bleu_4")
PAIRS = {"rouge_l": ("adapted_rouge_l", "rouge_l"), "bleu_4": ("adapted_bleu_4", "bleu_4")}
SWEEP = tuple(x / 2 for x in range(11))  # 0, 0.5, ... 5
SCORES = (1, 2, 3, 4, 5)
BLEU_N = 4


@dataclass
class Candidate:
    """One system's answer to one question, tokenised, with its ratings and metric parts."""

    question_id: Hashable
    system: str
    question_type: str
    prediction: DuReaderPrediction
    reference: DuReaderReference
    ratings: list[tuple[str, int]] = field(default_factory=list)  # (rater, score)
    lcs: list[int] = field(default_factory=list)
    bleu: BleuInstanceStats | None = None

    @property
    def human(self) -> float:
        return sum(s for _, s in self.ratings) / len(self.ratings)

    def kwargs(self) -> dict[str, Any]:
        """The bonus inputs, chosen as the official scorer chooses them."""
        ref = self.reference
        yes_no = self.question_type == YES_NO
        return {
            "yesno_label": self.prediction.yesno_label if yes_no else None,
            "reference_labels": ref.yesno_labels if yes_no else None,
            "entities": ref.entities if self.question_type == ENTITY and ref.entities else None,
        }


# --------------------------------------------------------------------------- inputs
def read_ratings(path: str | Path) -> list[dict[str, Any]]:
    """Rating lines ``{"question_id", "system", "rater", "score": 1-5}``."""
    rows = []
    for line, obj in iter_jsonl(path):
        try:
            rows.append({**clean_rating(obj), "line": line})
        except MetricsInputError as exc:
            raise MetricsInputError(str(exc), source=str(path), line=line) from None
    return rows


def clean_rating(obj: Mapping[str, Any]) -> dict[str, Any]:
    for key in ("question_id", "system", "rater", "score"):
        if key not in obj:
            raise MetricsInputError(f"missing field '{key}'")
    score = obj["score"]
    if isinstance(score, bool) or not isinstance(score, int) or score not in SCORES:
        raise MetricsInputError(f"field 'score': {score!r} is not an integer from 1 to 5")
    for key in ("system", "rater"):
        if not isinstance(obj[key], (str, int)) or isinstance(obj[key], bool) or obj[key] == "":
            raise MetricsInputError(f"field '{key}' must be a non-empty string")
    if isinstance(obj["question_id"], (list, dict, bool)) or obj["question_id"] is None:
        raise MetricsInputError("field 'question_id' must be a number or a string")
    return {"question_id": obj["question_id"], "system": str(obj["system"]),
            "rater": str(obj["rater"]), "score": score}


def read_dureader_file(path: str | Path, parse: Callable[..., Any], *, level: str
                       ) -> dict[Hashable, Any]:
    """Question id -> parsed record; ``source`` is not required of references."""
    out: dict[Hashable, Any] = {}
    for line, obj in iter_jsonl(path):
        try:
            if "question_id" not in obj:
                raise MetricsInputError("missing field 'question_id'")
            qid = obj["question_id"]
            if isinstance(qid, (list, dict, bool)) or qid is None:
                raise MetricsInputError("field 'question_id' must be a number or a string")
            if qid in out:
                raise MetricsInputError(f"duplicate question_id {qid!r}")
            out[qid] = parse(obj, level=level)
        except MetricsInputError as exc:
            raise MetricsInputError(str(exc), source=str(path), line=line) from None
    return out


def parse_reference(obj: Mapping[str, Any], *, level: str = "char") -> DuReaderReference:
    ref = reference_from_obj({"source": None, **obj}, level=level)
    if ref.question_type not in TYPES:
        raise MetricsInputError(f"field 'question_type': {ref.question_type!r} is not one of "
                                f"{', '.join(TYPES)}")
    if not ref.answers:
        raise MetricsInputError("field 'answers': no reference answer to compare with")
    if ref.question_type == YES_NO and ref.yesno_labels and len(ref.yesno_labels) != len(
            ref.answers):
        raise MetricsInputError(f"field 'yesno_answers': {len(ref.yesno_labels)} labels for "
                                f"{len(ref.answers)} answers")
    return ref


def parse_prediction(obj: Mapping[str, Any], *, level: str = "char") -> DuReaderPrediction:
    return prediction_from_obj(obj, level=level)


# --------------------------------------------------------------------------- metrics
def candidates_build(
    references: Mapping[Hashable, DuReaderReference],
    predictions: Mapping[str, Mapping[Hashable, DuReaderPrediction]],
    ratings: Sequence[Mapping[str, Any]],
    *,
    where: str = "ratings",
) -> list[Candidate]:
    """One candidate per rated (question, system), in first-rating order; a rating of an
    unknown question or system, or of a question the system did not answer, is an error
    (``where`` names the ratings in it, with a row's ``line``)."""
    by_key: dict[tuple[Hashable, str], Candidate] = {}
    for number, row in enumerate(ratings, start=1):
        n = row.get("line", number)
        qid, system = row["question_id"], row["system"]
        if (qid not in references and isinstance(qid, str) and qid.lstrip("-").isascii()
                and qid.lstrip("-").isdigit()):
            qid = int(qid)  # JSON lines often carry DuReader's integer ids as strings
        key = (qid, system)
        cand = by_key.get(key)
        if cand is None:
            ref = references.get(qid)
            if ref is None:
                raise MetricsInputError(f"{where}, line {n}: question_id {row['question_id']!r}"
                                        " is not in the references")
            if system not in predictions:
                raise MetricsInputError(f"{where}, line {n}: system {system!r} has no "
                                        f"predictions; known: {', '.join(sorted(predictions))}")
            pred = predictions[system].get(qid)
            if pred is None:
                raise MetricsInputError(f"{where}, line {n}: system {system!r} has no "
                                        f"prediction for question_id {qid!r}")
            cand = by_key[key] = Candidate(qid, system, ref.question_type, pred, ref)
        if any(r == row["rater"] for r, _ in cand.ratings):
            raise MetricsInputError(f"{where}, line {n}: rater {row['rater']!r} rated "
                                    f"question_id {qid!r} of {system!r} twice")
        cand.ratings.append((row["rater"], row["score"]))
    for cand in by_key.values():
        cand.ratings.sort(key=lambda r: r[0])
    return list(by_key.values())


def _measure(cand: Candidate) -> None:
    """The weight-free parts: LCS with each reference, BLEU counts with the raw bonus."""
    ref, answer = cand.reference, cand.prediction.answer
    cand.lcs = lcs_lengths(answer, ref.answers)
    acc = AdaptedBleu(BLEU_N, alpha=1.0, beta=1.0)
    cand.bleu = acc.add(answer, ref.answers, **cand.kwargs())


def rouge_of(cand: Candidate, *, alpha: float, beta: float, gamma: float) -> float:
    """The candidate's ROUGE-L with bonus weights ``alpha`` / ``beta`` (0, 0: original)."""
    acc = AdaptedRougeL(alpha=alpha, beta=beta, gamma=gamma)
    return acc.add(cand.prediction.answer, cand.reference.answers, lcs=cand.lcs,
                   **cand.kwargs()).score


def bleu_of(stats: Sequence[BleuInstanceStats], *, alpha: float, beta: float) -> float:
    """Cumulative BLEU-4 of pooled counts (one candidate: sentence BLEU-4), with the bonus
    weighted by ``alpha`` (yes-no) or ``beta`` (entity); 0 when an order has no n-grams
    (the official scorer would divide by zero)."""
    acc = AdaptedBleu(BLEU_N, alpha=alpha, beta=beta)
    for s in stats:
        weight = alpha if s.bonus_kind == "yesno" else beta if s.bonus_kind == "entity" else 0
        for k in range(BLEU_N):
            acc.match[k] += s.matches[k] + weight * s.bonus_matches[k]
            acc.total[k] += s.candidates[k] + weight * s.bonus_matches[k]
        acc.bp_c += s.cand_len
        acc.bp_r += s.ref_len
        acc.instances += 1
    if not acc.bp_c:
        return 0.0
    try:
        return acc.score()[-1]
    except (MetricsInputError, ZeroDivisionError):
        return 0.0


def _pcc(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson r (scipy), None when undefined (fewer than 3 pairs or a constant side)."""
    from scipy import stats

    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(stats.pearsonr(x, y).statistic)


def _pcc_interval(x: np.ndarray, y: np.ndarray, *, resamples: int, seed: int
                  ) -> list[float | None]:
    """95% percentile bootstrap interval of Pearson r (``agreement.bootstrap_ci`` over the
    candidates); None when a draw leaves r undefined."""
    from collector.metrics.agreement import bootstrap_ci

    if len(x) < 3:
        return [None, None]

    def r_of(drawn: np.ndarray) -> float:
        at = drawn.astype(int)
        value = _pcc(x[at], y[at])
        return float("nan") if value is None else value

    low, high = bootstrap_ci(np.arange(len(x), dtype=float), r_of, n_resamples=resamples,
                             seed=seed)
    return [_r(low), _r(high)]


def _adapted_wins(adapted: np.ndarray, original: np.ndarray, human: np.ndarray, *,
                  resamples: int, seed: int) -> float | None:
    """Koehn's paired bootstrap (``agreement.compare_correlations``): the share of
    resamples in which the adapted metric's r is higher than the original's."""
    from collector.metrics.agreement import compare_correlations

    if len(human) < 3:
        return None
    result = compare_correlations(adapted, original, human, n_resamples=resamples, seed=seed)
    return round(result.wins_a / result.n_resamples, 4)


def _r(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(value, 4)


# --------------------------------------------------------------------------- the study
def judgment_study(
    references: Mapping[Hashable, DuReaderReference],
    predictions: Mapping[str, Mapping[Hashable, DuReaderPrediction]],
    ratings: Sequence[Mapping[str, Any]],
    *,
    alpha: float = 2.0,
    beta: float = 1.0,
    gamma: float = 1.2,
    resamples: int = 100,
    sample: int = 30,
    seed: int = 0,
    sweep: Sequence[float] = SWEEP,
    progress: Callable[[str], None] | None = None,
    where: str = "ratings",
) -> dict[str, Any]:
    """Tables 1-3, the bootstrap tests, the sweeps, score distributions and the
    per-candidate values; see the module docstring."""
    if resamples < 1:
        raise MetricsInputError("resamples must be at least 1")
    if sample < 1:
        raise MetricsInputError("sample must be at least 1")
    step = progress or (lambda message: None)
    cands = candidates_build(references, predictions, ratings, where=where)
    if not cands:
        raise MetricsInputError("no ratings: nothing to study")
    step("metrics per candidate")
    for cand in cands:
        _measure(cand)
    values = {
        "rouge_l": [rouge_of(c, alpha=0.0, beta=0.0, gamma=gamma) for c in cands],
        "adapted_rouge_l": [rouge_of(c, alpha=alpha, beta=beta, gamma=gamma) for c in cands],
        "bleu_4": [bleu_of([c.bleu], alpha=0.0, beta=0.0) for c in cands],
        "adapted_bleu_4": [bleu_of([c.bleu], alpha=alpha, beta=beta) for c in cands],
    }
    arrays = {m: np.asarray(v, dtype=float) for m, v in values.items()}
    human = np.asarray([c.human for c in cands], dtype=float)
    types = np.asarray([c.question_type for c in cands])
    subsets = {t: np.flatnonzero(types == t) for t in TYPES}
    subsets = {t: idx for t, idx in subsets.items() if len(idx)}
    subsets["overall"] = np.arange(len(cands))

    step("rater agreement")
    agreement = {name: _rater_agreement([cands[i] for i in idx])
                 for name, idx in subsets.items()}
    table1 = {name: a["pcc"] for name, a in agreement.items()}
    table1_n = {name: a["candidates"] for name, a in agreement.items()}
    table1_pairs = {name: a["pairs"] for name, a in agreement.items()}
    table1_one_rating = {name: a["one_rating"] for name, a in agreement.items()}
    table1_alpha = {name: a["alpha"] for name, a in agreement.items()}

    step("single-question correlations and bootstrap")
    table2: dict[str, dict[str, float | None]] = {m: {} for m in METRICS}
    table2_ci: dict[str, dict[str, list[float | None]]] = {m: {} for m in METRICS}
    bootstrap: dict[str, dict[str, float | None]] = {}
    for name, idx in subsets.items():
        h = human[idx]
        for metric in METRICS:
            x = arrays[metric][idx]
            table2[metric][name] = _r(_pcc(x, h))
            table2_ci[metric][name] = _pcc_interval(x, h, resamples=resamples, seed=seed)
        bootstrap[name] = {
            pair: _adapted_wins(arrays[adapted][idx], arrays[original][idx], h,
                                resamples=resamples, seed=seed)
            for pair, (adapted, original) in PAIRS.items()}

    step("overall-level correlations")
    table3, table3_n = _overall_level(cands, arrays, human, subsets, resamples=resamples,
                                      sample=sample, seed=seed, alpha=alpha, beta=beta)

    step("bonus weight sweeps")
    sweeps = {
        "alpha": _sweep(cands, human, subsets.get(YES_NO), sweep, gamma=gamma,
                        weights=lambda w: (w, beta), fixed={"beta": beta}),
        "beta": _sweep(cands, human, subsets.get(ENTITY), sweep, gamma=gamma,
                       weights=lambda w: (alpha, w), fixed={"alpha": alpha}),
    }

    for name in TYPES:  # a type without candidates: every figure undefined
        if name not in subsets:
            table1[name], table1_n[name], table3_n[name] = None, 0, 0
            table1_pairs[name] = table1_one_rating[name] = 0
            table1_alpha[name] = None
            bootstrap[name] = dict.fromkeys(PAIRS)
            for metric in METRICS:
                table2[metric][name] = table3[metric][name] = None
                table2_ci[metric][name] = [None, None]

    distribution: dict[str, dict[str, dict[str, int]]] = defaultdict(
        lambda: {t: dict.fromkeys(map(str, SCORES), 0) for t in (*TYPES, "overall")})
    for cand in cands:
        for _, score in cand.ratings:
            for where in (cand.question_type, "overall"):
                distribution[cand.system][where][str(score)] += 1
    counts = Counter(c.question_type for c in cands)
    return {
        "table1": table1,
        "table2": table2,
        "table3": table3,
        "bootstrap": bootstrap,
        "table1_n": table1_n,
        "table1_pairs": table1_pairs,
        "table1_one_rating": table1_one_rating,
        "table1_krippendorff_alpha": table1_alpha,
        "table2_ci": table2_ci,
        "table3_n": table3_n,
        "sweeps": sweeps,
        "distribution": {s: distribution[s] for s in sorted(distribution)},
        "counts": {"candidates": len(cands), "ratings": sum(len(c.ratings) for c in cands),
                   "questions": len({c.question_id for c in cands}),
                   "systems": sorted({c.system for c in cands}),
                   "by_type": {t: counts.get(t, 0) for t in TYPES}},
        "parameters": {"alpha": alpha, "beta": beta, "gamma": gamma, "resamples": resamples,
                       "sample": sample, "seed": seed, "bleu": "cumulative BLEU-4",
                       "sweep": list(sweep)},
        "candidates": [
            {"question_id": c.question_id, "system": c.system, "type": c.question_type,
             **{m: round(values[m][i], 6) for m in METRICS}, "human": round(c.human, 4),
             "scores": [s for _, s in c.ratings]}
            for i, c in enumerate(cands)
        ],
    }


def _rater_agreement(cands: Sequence[Candidate]) -> dict[str, Any]:
    """Table 1 over some candidates: Pearson r over every pair of a candidate's ratings in
    rater order, Krippendorff's interval alpha, and the counts (see the module
    docstring); candidates rated once are counted and left out."""
    rated = [[score for _, score in c.ratings] for c in cands if len(c.ratings) >= 2]
    pairs = [pair for scores in rated for pair in combinations(scores, 2)]
    a = np.asarray([p[0] for p in pairs], dtype=float)
    b = np.asarray([p[1] for p in pairs], dtype=float)
    return {"pcc": _r(_pcc(a, b)), "candidates": len(rated), "pairs": len(pairs),
            "one_rating": len(cands) - len(rated), "alpha": _r(_interval_alpha(rated))}


def _interval_alpha(units: Sequence[Sequence[int]]) -> float | None:
    """Krippendorff's alpha (interval) of units each holding its ratings; None when
    undefined (no unit, or one value throughout). Alpha does not depend on who gave a
    rating, so row j holds each unit's j-th rating (missing where a unit has fewer)."""
    from collector.metrics.agreement import krippendorff_alpha

    if not units:
        return None
    width = max(len(u) for u in units)
    rows = [[u[j] if j < len(u) else None for u in units] for j in range(width)]
    try:
        return krippendorff_alpha(rows, level="interval")
    except MetricsInputError:
        return None


def _overall_level(cands: list[Candidate], arrays: dict[str, np.ndarray], human: np.ndarray,
                   subsets: dict[str, np.ndarray], *, resamples: int, sample: int, seed: int,
                   alpha: float, beta: float) -> tuple[dict, dict]:
    """Table 3: draws of ``sample`` questions answered by every system; per draw and
    system one (corpus metric, mean human score) pair; Pearson r over all pairs."""
    systems = sorted({c.system for c in cands})
    table3: dict[str, dict[str, float | None]] = {m: {} for m in METRICS}
    table3_n: dict[str, int] = {}
    for name, idx in subsets.items():
        at: dict[Hashable, dict[str, int]] = defaultdict(dict)
        for i in idx:
            at[cands[i].question_id][cands[i].system] = int(i)
        questions = [q for q, by in at.items() if len(by) == len(systems)]
        if not questions:
            for metric in METRICS:
                table3[metric][name] = None
            table3_n[name] = 0
            continue
        size = min(sample, len(questions))
        # With no more questions than a draw takes, every draw is the same set: one draw,
        # one pair per system (repeating it would make two systems' pairs an r of ±1).
        draws = 1 if size == len(questions) else resamples
        rng = np.random.default_rng(seed)
        rows = {m: [] for m in METRICS}
        people = []
        grid = np.asarray([[at[q][s] for s in systems] for q in questions])  # question x system
        for _ in range(draws):
            drawn = grid[rng.choice(len(questions), size, replace=False)]
            for col in range(len(systems)):
                members = drawn[:, col]
                people.append(float(human[members].mean()))
                rows["rouge_l"].append(float(arrays["rouge_l"][members].mean()))
                rows["adapted_rouge_l"].append(float(arrays["adapted_rouge_l"][members].mean()))
                stats = [cands[i].bleu for i in members]
                rows["bleu_4"].append(bleu_of(stats, alpha=0.0, beta=0.0))
                rows["adapted_bleu_4"].append(bleu_of(stats, alpha=alpha, beta=beta))
        h = np.asarray(people)
        for metric in METRICS:
            table3[metric][name] = _r(_pcc(np.asarray(rows[metric]), h))
        table3_n[name] = len(people)
    return table3, table3_n


def _sweep(cands: list[Candidate], human: np.ndarray, idx: np.ndarray | None,
           points: Sequence[float], *, gamma: float,
           weights: Callable[[float], tuple[float, float]], fixed: dict[str, float]
           ) -> dict[str, Any]:
    out: dict[str, Any] = {"values": list(points), **fixed, "candidates": 0,
                           "adapted_rouge_l": [], "adapted_bleu_4": []}
    if idx is None or not len(idx):
        return out
    out["candidates"] = len(idx)
    h = human[idx]
    for w in points:
        a, b = weights(w)
        rouge = np.asarray([rouge_of(cands[i], alpha=a, beta=b, gamma=gamma) for i in idx])
        bleu = np.asarray([bleu_of([cands[i].bleu], alpha=a, beta=b) for i in idx])
        out["adapted_rouge_l"].append(_r(_pcc(rouge, h)))
        out["adapted_bleu_4"].append(_r(_pcc(bleu, h)))
    return out


def judgment_study_files(
    ref_path: str | Path,
    preds: Sequence[tuple[str, str | Path]],
    ratings_path: str | Path,
    *,
    level: str = "char",
    **options: Any,
) -> dict[str, Any]:
    """The study from files: references, ``(system name, prediction file)`` pairs and the
    ratings file (the command line's ``judgment``)."""
    names = [name for name, _ in preds]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise MetricsInputError(f"--preds: system name {duplicates[0]!r} given twice")
    refs = read_dureader_file(ref_path, parse_reference, level=level)
    predictions = {name: read_dureader_file(path, parse_prediction, level=level)
                   for name, path in preds}
    ratings = read_ratings(ratings_path)
    return judgment_study(refs, predictions, ratings, where=str(ratings_path), **options)
