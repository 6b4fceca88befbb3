"""BLEU-4 and ROUGE-L with the yes-no opinion and entity bonuses.

Yang et al., *Adaptations of ROUGE and BLEU to Better Evaluate Machine Reading
Comprehension Task* (``../shared/papers/adapted-rouge-bleu-for-mrc.md``), as implemented by
the MRC2018 / DuReader bonus scorer (``mrc_eval.py`` + ``bleu.py`` + ``rouge.py``), whose
exact behaviour is the specification here:

BLEU (paper Eq. 1-5), pooled over the corpus
    For every order n the clipped matches (Eq. 2 numerator, clipped by the maximum count
    in any single reference) and the candidate n-gram count are summed over questions. The
    yes-no bonus (Eq. 4) adds ``alpha * Count_clip-s`` — the candidate n-grams clipped by
    the references that carry the *same* opinion label — to numerator **and** denominator;
    the entity bonus (Eq. 5) adds ``beta * Count_clip-e``, clipped by the single gold
    entity strings. Only one bonus applies to a question: yes-no when the candidate has a
    label, otherwise entity. The brevity penalty (Eq. 3) uses the summed candidate length
    and the summed closest reference lengths (ties to the shorter), without any bonus.
    BLEU-n is the geometric mean of P1..Pn times the penalty.
ROUGE-L (paper Eq. 6-8), mean over questions
    Per reference: P = (LCS + bonus) / (|c| + bonus), R = (LCS + bonus) / (|r| + bonus),
    with bonus ``alpha * LCS`` when the reference has the candidate's label, or
    ``beta * Σ len(e)`` over the gold entities that occur in the candidate. The maxima of P
    and of R over the references, taken separately, give
    F = (1 + γ²) P R / (R + γ² P) with γ = 1.2.

Questions whose reference answer list is empty are skipped; a question without a
prediction scores the empty answer; only a prediction's first answer and first yes-no
label are used. The official defaults are α = β = 1.0; the paper's study uses α = 2.0,
β = 1.0. Tokens are characters with whitespace removed (:func:`char_tokens`), or English
words with ``level="word"`` (used for the paper's worked examples).

DuReader 2.0's ``utils/dureader_eval.py`` (task ``main``, scorer ``dureader2``) is a
different program: no bonuses, and coco-caption's ``Bleu`` and ``Rouge`` (the files its
``download_thirdparty.sh`` fetches) on the answers' characters joined by spaces
(:class:`DuReader2Scorer`). So BLEU has coco-caption's 1e-15 / 1e-9 terms and never fails
(an order without n-grams gives a precision of 1e-6, not a division by zero), an empty
answer is one empty token to ROUGE-L, and a question is left out when its reference
answers are ``[]`` or exactly ``[""]``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from collector.metrics.errors import MetricsInputError, id_type_hint
from collector.metrics.jsonio import iter_jsonl
from collector.metrics.lcs import lcs_length, lcs_lengths
from collector.metrics.msmarco import CocoBleu, coco_rouge_l
from collector.metrics.ngrams import (
    StringGrams,
    clipped_matches,
    ngram_counts,
    ngram_counts_up_to,
)
from collector.metrics.tokenize import tokenize

Seq = Sequence[Hashable]
YES_NO = "YES_NO"
ENTITY = "ENTITY"
OPINION_LABELS = ("Yes", "No", "Depends")


# --------------------------------------------------------------------------- instances
class BleuInstanceStats(NamedTuple):
    """What one question adds to the corpus BLEU sums (per order 1..n)."""

    matches: tuple[int, ...]
    candidates: tuple[int, ...]
    bonus_matches: tuple[int, ...]  # Count_clip-s or Count_clip-e, before alpha / beta
    bonus_kind: str | None  # "yesno", "entity" or None
    cand_len: int
    ref_len: int  # closest reference length


class RougeReferenceDetail(NamedTuple):
    """ROUGE-L parts for one reference (precision and recall with the bonus)."""

    lcs: int
    yesno_bonus: float
    entity_bonus: float
    precision: float
    recall: float


class RougeInstanceDetail(NamedTuple):
    """ROUGE-L of one question: per-reference parts, the two maxima and the score."""

    references: tuple[RougeReferenceDetail, ...]
    precision: float  # max over references
    recall: float  # max over references
    score: float


def _contains(seq: Seq, sub: Seq) -> bool:
    """``sub`` occurs contiguously in ``seq`` (substring test for strings)."""
    if isinstance(seq, str) and isinstance(sub, str):
        return sub in seq
    n = len(sub)
    if n == 0:
        return True
    seq, sub = tuple(seq), tuple(sub)
    return any(seq[i : i + n] == sub for i in range(len(seq) - n + 1))


def _unique(entities: Iterable[Seq]) -> list[Seq]:
    """Gold entities as the official scorer holds them: a set (duplicates count once)."""
    return list(dict.fromkeys(e if isinstance(e, str) else tuple(e) for e in entities))


def closest_ref_length(cand_len: int, ref_lens: Iterable[int]) -> int:
    """Reference length closest to ``cand_len``; the shorter one on ties."""
    return min((abs(cand_len - r), r) for r in ref_lens)[1]


def _same_label_refs(
    references: Sequence[Seq], labels: Sequence[Any], yesno_label: Any
) -> list[int]:
    if len(labels) != len(references):
        raise MetricsInputError(
            f"{len(labels)} yes-no labels for {len(references)} reference answers; the "
            "official scorer indexes them pairwise and fails"
        )
    return [i for i, lab in enumerate(labels) if lab == yesno_label]


# --------------------------------------------------------------------------- BLEU
class AdaptedBleu:
    """Corpus BLEU-1..n with bonuses, accumulated question by question."""

    def __init__(self, n: int = 4, *, alpha: float = 1.0, beta: float = 1.0) -> None:
        self.n = n
        self.alpha = alpha
        self.beta = beta
        self.match: list[float] = [0] * n
        self.total: list[float] = [0] * n
        self.bp_c = 0
        self.bp_r = 0
        self.instances = 0

    def add(
        self,
        candidate: Seq,
        references: Sequence[Seq],
        *,
        yesno_label: Any = None,
        reference_labels: Sequence[Any] | None = None,
        entities: Collection[Seq] | None = None,
    ) -> BleuInstanceStats:
        """Add one question; returns its counts (the bonus is not yet weighted)."""
        if not references:
            raise MetricsInputError("a question needs at least one reference answer")
        n = self.n
        length = len(candidate)
        totals = tuple(max(0, length - k) for k in range(n))
        use_yesno = yesno_label is not None and reference_labels is not None
        same = _same_label_refs(references, reference_labels, yesno_label) if use_yesno else []
        bonus_kind: str | None = None
        bonus = (0,) * n
        weight = 0.0
        if isinstance(candidate, str) and all(isinstance(r, str) for r in references):
            grams = StringGrams(candidate, n)
            matches = tuple(grams.clipped(references))
            if use_yesno:
                bonus = tuple(grams.clipped([references[i] for i in same]))
                bonus_kind, weight = "yesno", self.alpha
            elif entities is not None:
                bonus = tuple(grams.clipped(_unique(entities)))  # type: ignore[arg-type]
                bonus_kind, weight = "entity", self.beta
        else:
            ref_counts = [ngram_counts_up_to(r, n) for r in references]
            cand_by_order = [ngram_counts(candidate, k) for k in range(1, n + 1)]
            matches = tuple(clipped_matches(c, ref_counts) for c in cand_by_order)
            if use_yesno:
                subset = [ref_counts[i] for i in same]
                bonus = tuple(clipped_matches(c, subset) for c in cand_by_order)
                bonus_kind, weight = "yesno", self.alpha
            elif entities is not None:
                ent_counts = [ngram_counts_up_to(e, n) for e in _unique(entities)]
                bonus = tuple(clipped_matches(c, ent_counts) for c in cand_by_order)
                bonus_kind, weight = "entity", self.beta
        ref_len = closest_ref_length(length, (len(r) for r in references))
        for k in range(n):
            self.match[k] += matches[k]
            self.total[k] += totals[k]
            if bonus_kind is not None:
                self.match[k] += weight * bonus[k]
                self.total[k] += weight * bonus[k]
        self.bp_c += length
        self.bp_r += ref_len
        self.instances += 1
        return BleuInstanceStats(matches, totals, bonus, bonus_kind, length, ref_len)

    def precisions(self) -> list[float]:
        """Pooled (bonus-adapted) n-gram precisions P1..Pn."""
        for k in range(self.n):
            if not self.total[k]:
                raise MetricsInputError(
                    f"no candidate has {k + 1}-grams, so corpus BLEU-{k + 1} divides by "
                    "zero (the official scorer crashes here)"
                )
        return [self.match[k] / float(self.total[k]) for k in range(self.n)]

    def brevity_penalty(self) -> float:
        """BP = exp(min(1 - r / c, 0)) over the summed lengths (Eq. 3)."""
        return math.exp(min(1 - self.bp_r / float(self.bp_c), 0))

    def score(self) -> list[float]:
        """Cumulative BLEU-1..n (Eq. 1), in the official order of operations."""
        if not self.instances:
            raise MetricsInputError("no question with reference answers to score")
        probs = self.precisions()
        cumulative = [probs[0]]
        for k in range(1, self.n):
            cumulative.append(cumulative[-1] * probs[k])
        bleus = [cumulative[k] ** (1.0 / float(k + 1)) for k in range(self.n)]
        bp = self.brevity_penalty()
        return [b * bp for b in bleus]


# --------------------------------------------------------------------------- ROUGE-L
def rouge_l_f(precision: float, recall: float, gamma: float = 1.2) -> float:
    """F = (1 + γ²) P R / (R + γ² P) (paper Eq. 6); 0 when P or R is 0."""
    if precision != 0 and recall != 0:
        return ((1 + gamma**2) * precision * recall) / float(recall + gamma**2 * precision)
    return 0.0


def entity_bonus_length(candidate: Seq, entities: Iterable[Seq]) -> float:
    """Σ len(e) over gold entities e that occur in the candidate (``I(e ⊆ c)``)."""
    total = 0.0
    for ent in entities:
        if _contains(candidate, ent):
            total += len(ent)
    return total


class AdaptedRougeL:
    """ROUGE-L with bonuses, averaged over questions."""

    def __init__(self, *, alpha: float = 1.0, beta: float = 1.0, gamma: float = 1.2) -> None:
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.scores: list[float] = []

    def add(
        self,
        candidate: Seq,
        references: Sequence[Seq],
        *,
        yesno_label: Any = None,
        reference_labels: Sequence[Any] | None = None,
        entities: Collection[Seq] | None = None,
        lcs: Sequence[int] | None = None,
    ) -> RougeInstanceDetail:
        """Score one question and remember its score; returns the per-reference detail."""
        if not references:
            raise MetricsInputError("a question needs at least one reference answer")
        if lcs is None:
            lcs = lcs_lengths(candidate, references)
        use_yesno = yesno_label is not None and reference_labels is not None
        if use_yesno and len(reference_labels) < len(references):  # type: ignore[arg-type]
            raise MetricsInputError(
                f"{len(reference_labels)} yes-no labels for {len(references)} reference "  # type: ignore[arg-type]
                "answers; the official scorer indexes them pairwise and fails"
            )
        ent_bonus = 0.0
        if not use_yesno and entities is not None:
            ent_bonus = entity_bonus_length(candidate, _unique(entities))
        a, b = self.alpha, self.beta
        details = []
        for i, ref in enumerate(references):
            basic = lcs[i]
            yn = 0.0
            if use_yesno and yesno_label == reference_labels[i]:  # type: ignore[index]
                yn = float(basic)
            p_denom = len(candidate) + a * yn + b * ent_bonus
            r_denom = len(ref) + a * yn + b * ent_bonus
            num = basic + a * yn + b * ent_bonus
            prec = num / p_denom if p_denom > 0.0 else 0.0
            rec = num / r_denom if r_denom > 0.0 else 0.0
            details.append(RougeReferenceDetail(basic, yn, ent_bonus, prec, rec))
        p_max = max(d[3] for d in details)
        r_max = max(d[4] for d in details)
        score = rouge_l_f(p_max, r_max, self.gamma)
        self.scores.append(score)
        return RougeInstanceDetail(tuple(details), p_max, r_max, score)

    def score(self) -> float:
        """Mean of the per-question scores."""
        if not self.scores:
            raise MetricsInputError("no question with reference answers to score")
        return 1.0 * sum(self.scores) / len(self.scores)


# --------------------------------------------------------------------------- one-call API
@dataclass
class AdaptedScorer:
    """Adapted BLEU-4 and ROUGE-L together, sharing the per-question work."""

    alpha: float = 1.0
    beta: float = 1.0
    gamma: float = 1.2
    n: int = 4
    bleu: AdaptedBleu = field(init=False)
    rouge: AdaptedRougeL = field(init=False)

    def __post_init__(self) -> None:
        self.bleu = AdaptedBleu(self.n, alpha=self.alpha, beta=self.beta)
        self.rouge = AdaptedRougeL(alpha=self.alpha, beta=self.beta, gamma=self.gamma)

    def add(
        self,
        candidate: Seq,
        references: Sequence[Seq],
        *,
        yesno_label: Any = None,
        reference_labels: Sequence[Any] | None = None,
        entities: Collection[Seq] | None = None,
    ) -> float:
        """Add one tokenised question to both metrics; returns its ROUGE-L."""
        self.bleu.add(candidate, references, yesno_label=yesno_label,
                      reference_labels=reference_labels, entities=entities)
        detail = self.rouge.add(candidate, references, yesno_label=yesno_label,
                                reference_labels=reference_labels, entities=entities)
        return detail.score

    @property
    def instances(self) -> int:
        return self.bleu.instances

    def bleu_scores(self) -> list[float]:
        return self.bleu.score()

    def rouge_score(self) -> float:
        return self.rouge.score()

    def result(self) -> dict[str, float]:
        """Raw (0-1) BLEU-1..n and ROUGE-L."""
        out = {f"BLEU-{k + 1}": v for k, v in enumerate(self.bleu_scores())}
        out["ROUGE-L"] = self.rouge_score()
        return out


def adapted_bleu(
    candidate: Seq,
    references: Sequence[Seq],
    *,
    yesno_label: Any = None,
    reference_labels: Sequence[Any] | None = None,
    entities: Collection[Seq] | None = None,
    alpha: float = 1.0,
    beta: float = 1.0,
    n: int = 4,
) -> float:
    """Adapted cumulative BLEU-n of a single tokenised question."""
    acc = AdaptedBleu(n, alpha=alpha, beta=beta)
    acc.add(candidate, references, yesno_label=yesno_label,
            reference_labels=reference_labels, entities=entities)
    return acc.score()[-1]


def adapted_rouge_l(
    candidate: Seq,
    references: Sequence[Seq],
    *,
    yesno_label: Any = None,
    reference_labels: Sequence[Any] | None = None,
    entities: Collection[Seq] | None = None,
    alpha: float = 1.0,
    beta: float = 1.0,
    gamma: float = 1.2,
) -> RougeInstanceDetail:
    """Adapted ROUGE-L of a single tokenised question, with its per-reference detail."""
    acc = AdaptedRougeL(alpha=alpha, beta=beta, gamma=gamma)
    return acc.add(candidate, references, yesno_label=yesno_label,
                   reference_labels=reference_labels, entities=entities)


class DuReader2Scorer:
    """BLEU-1..n and ROUGE-L of DuReader 2.0's ``dureader_eval.py``: coco-caption's
    ``Bleu`` (option ``closest``) and ``Rouge`` on the tokens joined by spaces, as its
    ``normalize`` joins the characters; no bonuses."""

    def __init__(self, *, gamma: float = 1.2, n: int = 4) -> None:
        self.gamma = gamma
        self.bleu = CocoBleu(n)
        self.scores: list[float] = []

    @property
    def instances(self) -> int:
        return len(self.scores)

    def add(self, candidate: Seq, references: Sequence[Seq], **_: Any) -> float:
        """Add one tokenised question (bonus arguments are ignored); returns its ROUGE-L."""
        cand = " ".join(candidate)
        refs = [" ".join(r) for r in references]
        self.bleu.add(cand, refs)
        score = coco_rouge_l(cand, refs, beta=self.gamma)
        self.scores.append(score)
        return score

    def bleu_scores(self) -> list[float]:
        if not self.scores:
            raise MetricsInputError("no question with reference answers to score")
        return self.bleu.score()

    def rouge_score(self) -> float:
        if not self.scores:
            raise MetricsInputError("no question with reference answers to score")
        return float(np.mean(np.array(self.scores)))

    def result(self) -> dict[str, float]:
        """Raw (0-1) BLEU-1..n and ROUGE-L."""
        out = {f"BLEU-{k + 1}": v for k, v in enumerate(self.bleu_scores())}
        out["ROUGE-L"] = self.rouge_score()
        return out


# --------------------------------------------------------------------------- scorers
SCORERS = {
    "mrc2018": "the MRC2018 / DuReader bonus scorer (mrc_eval.py): BLEU-4 and ROUGE-L with "
               "the yes-no and entity bonuses, alpha = beta = 1.0 unless given (the default)",
    "dureader2": "DuReader 2.0's dureader_eval.py: coco-caption BLEU-4 and ROUGE-L without "
                 "bonuses (with coco-caption's 1e-15 / 1e-9 terms, so answers shorter than "
                 "4 characters do not fail), questions whose reference answers are [\"\"] "
                 "left out",
}


def check_weight(name: str, value: float | None) -> None:
    """Refuse a bonus weight that is not a finite number >= 0 (``None`` = the default)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MetricsInputError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise MetricsInputError(f"{name} must be a finite number >= 0, got {value!r}")


def scorer_weights(scorer: str, alpha: float | None, beta: float | None
                   ) -> tuple[float, float]:
    """``(alpha, beta)`` of a named scorer (:data:`SCORERS`); ``None`` = its default."""
    if scorer not in SCORERS:
        raise MetricsInputError(f"unknown DuReader scorer {scorer!r}; use one of "
                                f"{', '.join(SCORERS)}")
    check_weight("alpha", alpha)
    check_weight("beta", beta)
    if scorer == "dureader2":
        if alpha or beta:
            raise MetricsInputError("the dureader2 scorer has no bonuses (alpha = beta = 0); "
                                    "leave out --alpha and --beta, or use mrc2018")
        return 0.0, 0.0
    return (1.0 if alpha is None else alpha), (1.0 if beta is None else beta)


# --------------------------------------------------------------------------- DuReader data
def _norm_answers(value: Any, *, what: str, level: str) -> list[Seq]:
    """Normalise an ``answers`` list; ``None`` counts as empty, as in the official code."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise MetricsInputError(f"field '{what}' must be a list of strings")
    return [tokenize(a, level=level) for a in value]


def _check_labels(value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise MetricsInputError(
            f"field '{what}' must be a list (empty when the question is not YES_NO)"
        )
    if not all(isinstance(v, str) for v in value):
        raise MetricsInputError(f"field '{what}' must hold strings such as Yes / No / Depends")
    return value


def _norm_entities(value: Any, *, level: str) -> list[list[Seq]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise MetricsInputError("field 'entity_answers' must be a list of lists of strings")
    groups = []
    for group in value:
        if group is None:
            groups.append([])
            continue
        if not isinstance(group, list) or not all(isinstance(e, str) for e in group):
            raise MetricsInputError("field 'entity_answers' must be a list of lists of strings")
        groups.append([tokenize(e, level=level) for e in group])
    return groups


def _question_key(obj: Mapping[str, Any]) -> Hashable:
    if "question_id" not in obj:
        raise MetricsInputError("missing field 'question_id'")
    qid = obj["question_id"]
    if isinstance(qid, (list, dict)):
        raise MetricsInputError("field 'question_id' must be a number or a string")
    return qid


@dataclass(frozen=True)
class DuReaderPrediction:
    answer: Seq  # first answer, normalised ('' when none)
    yesno_label: str | None


@dataclass(frozen=True)
class DuReaderReference:
    question_type: str
    answers: list[Seq]
    yesno_labels: list[Any]
    entities: list[Seq]  # flattened, deduplicated entity list
    only_empty_answer: bool = False  # answers is exactly [""] (dureader_eval.py skips it)

    def scored(self, scorer: str = "mrc2018") -> bool:
        """Whether the question is scored: ``mrc_eval.py`` skips an empty answer list,
        ``dureader_eval.py`` (``dureader2``) also an answer list that is exactly [""]."""
        return bool(self.answers) and not (scorer == "dureader2" and self.only_empty_answer)


def prediction_from_obj(obj: Mapping[str, Any], *, level: str = "char") -> DuReaderPrediction:
    """One prediction record as the official ``read_file`` + ``calc_metrics`` see it."""
    if "answers" not in obj:
        raise MetricsInputError("missing field 'answers'")
    answers = _norm_answers(obj["answers"], what="answers", level=level)
    labels = _check_labels(obj.get("yesno_answers"), "yesno_answers")
    return DuReaderPrediction(answers[0] if answers else "", labels[0] if labels else None)


def reference_from_obj(obj: Mapping[str, Any], *, level: str = "char") -> DuReaderReference:
    """One reference record; ``source``, ``question_type`` and ``answers`` are required.

    A record in DuReader's data layout (raw or preprocessed: it has ``documents``, as
    DuReader's own files and CrowdQA's ``dureader.<split>.jsonl`` release files have, and no
    ``source``) is converted on read: its ``answers``, ``question_type``,
    ``yesno_answers`` and ``entity_answers`` are what the evaluation layout carries, and
    ``source`` (which only splits the official report by search / zhidao) is not needed.
    """
    if "documents" in obj and "source" not in obj:
        obj = {**obj, "source": None}
    for key in ("source", "answers", "question_type"):
        if key not in obj:
            raise MetricsInputError(f"missing field '{key}'")
    answers = _norm_answers(obj["answers"], what="answers", level=level)
    labels = _check_labels(obj.get("yesno_answers"), "yesno_answers")
    groups = _norm_entities(obj.get("entity_answers"), level=level)
    qtype = obj["question_type"]
    entities: list[Seq] = list(dict.fromkeys(chain.from_iterable(groups)))
    return DuReaderReference(qtype, answers, labels, entities,
                             only_empty_answer=obj["answers"] == [""])


def _read(path: str | Path, parse: Any, *, level: str) -> dict[Hashable, Any]:
    out: dict[Hashable, Any] = {}
    for line, obj in iter_jsonl(path):
        try:
            qid = _question_key(obj)
            if qid in out:
                raise MetricsInputError(f"duplicate question_id {qid!r}")
            out[qid] = parse(obj, level=level)
        except MetricsInputError as exc:
            raise MetricsInputError(str(exc), source=str(path), line=line) from None
    return out


def read_predictions(path: str | Path, *, level: str = "char") -> dict[Hashable, Any]:
    """Read a DuReader prediction file (JSON lines)."""
    return _read(path, prediction_from_obj, level=level)


def read_references(path: str | Path, *, level: str = "char") -> dict[Hashable, Any]:
    """Read a DuReader reference file (JSON lines)."""
    return _read(path, reference_from_obj, level=level)


def id_report(
    preds: Mapping[Hashable, Any], refs: Mapping[Hashable, DuReaderReference],
    scorer: str = "mrc2018",
) -> tuple[list[Hashable], list[Hashable]]:
    """``(unknown, missing)``: prediction ids not in the references, and scored questions
    (:meth:`DuReaderReference.scored`) without a prediction."""
    unknown = [q for q in preds if q not in refs]
    missing = [q for q, r in refs.items() if r.scored(scorer) and q not in preds]
    return unknown, missing


def _check_some_id_matches(
    preds: Mapping[Hashable, Any], refs: Mapping[Hashable, Any], source: str | None
) -> None:
    """Refuse predictions none of whose ids is in the references: nothing of them would
    be scored (every question would score the empty answer)."""
    if not preds or any(q in refs for q in preds):
        return
    example = next(iter(preds))
    hint = id_type_hint(example, refs, where="the reference file")
    raise MetricsInputError(
        f"no question_id of the {len(preds)} prediction(s) is in the reference file, e.g. "
        f"{example!r}; the ids do not match" + (f": {hint}" if hint else ""), source=source)


def score_parsed(
    preds: Mapping[Hashable, DuReaderPrediction],
    refs: Mapping[Hashable, DuReaderReference],
    *,
    alpha: float,
    beta: float,
    gamma: float,
    by_type: bool,
    scorer: str = "mrc2018",
    pred_source: str | None = None,
    ref_source: str | None = None,
) -> dict[str, Any]:
    """Score parsed records with ``scorer``: ``mrc2018``, the bonus scorer at ``alpha`` /
    ``beta``, or ``dureader2`` (``alpha`` and ``beta`` unused). ``pred_source`` and
    ``ref_source`` name the files in errors."""
    _check_some_id_matches(preds, refs, pred_source)

    def new_scorer() -> AdaptedScorer | DuReader2Scorer:
        if scorer == "dureader2":
            return DuReader2Scorer(gamma=gamma)
        return AdaptedScorer(alpha=alpha, beta=beta, gamma=gamma)

    overall = new_scorer()
    typed: dict[str, AdaptedScorer | DuReader2Scorer] = {}
    skipped = 0
    for qid, ref in refs.items():
        if not ref.scored(scorer):
            skipped += 1
            continue
        pred = preds.get(qid)
        cand: Seq = pred.answer if pred is not None else ""
        label = None
        if ref.question_type == YES_NO and pred is not None:
            label = pred.yesno_label
        entities = ref.entities if ref.question_type == ENTITY and ref.entities else None
        kwargs = {
            "yesno_label": label,
            "reference_labels": ref.yesno_labels if ref.question_type == YES_NO else None,
            "entities": entities,
        }
        try:
            overall.add(cand, ref.answers, **kwargs)
        except MetricsInputError as exc:
            raise MetricsInputError(f"question_id {qid!r}: {exc}", source=ref_source) from None
        if by_type:
            key = str(ref.question_type)
            typed.setdefault(key, new_scorer())
            typed[key].add(cand, ref.answers, **kwargs)
    try:
        raw = overall.result()
    except MetricsInputError as exc:
        # No question to score (the references), or every predicted answer too short for
        # some n-gram order, where mrc2018 divides by zero (the predictions).
        source = pred_source if overall.instances else ref_source
        raise MetricsInputError(str(exc), source=source) from None
    result: dict[str, Any] = {
        "ROUGE-L": round(raw["ROUGE-L"] * 100, 2),
        "BLEU-4": round(raw["BLEU-4"] * 100, 2),
    }
    for k in range(1, 4):
        result[f"BLEU-{k}"] = round(raw[f"BLEU-{k}"] * 100, 2)
    unknown, missing = id_report(preds, refs, scorer)
    result["questions"] = overall.instances
    result["skipped_empty_references"] = skipped
    result["unknown_prediction_ids"] = len(unknown)
    result["missing_prediction_ids"] = len(missing)
    result["alpha"], result["beta"], result["gamma"] = alpha, beta, gamma
    if by_type:
        result["by_type"] = {t: _rounded_or_none(s) for t, s in sorted(typed.items())}
    return result


def _rounded_or_none(scorer: AdaptedScorer | DuReader2Scorer) -> dict[str, float | None]:
    out: dict[str, float | None] = {"ROUGE-L": round(scorer.rouge_score() * 100, 2)}
    try:
        out["BLEU-4"] = round(scorer.bleu_scores()[-1] * 100, 2)
    except MetricsInputError:
        out["BLEU-4"] = None  # too few characters in this type for corpus BLEU-4 (mrc2018)
    out["questions"] = scorer.instances
    return out


def dureader_score(
    predictions: Mapping[Hashable, Mapping[str, Any]],
    references: Mapping[Hashable, Mapping[str, Any]],
    *,
    alpha: float | None = None,
    beta: float | None = None,
    gamma: float = 1.2,
    by_type: bool = True,
    level: str = "char",
    scorer: str = "mrc2018",
) -> dict[str, Any]:
    """Score DuReader-format records (question id -> record) like ``mrc_eval.py``
    (``scorer="mrc2018"``, bonuses ``alpha`` / ``beta``, 1.0 by default) or DuReader 2.0's
    ``dureader_eval.py`` (``scorer="dureader2"``, no bonuses).

    Predictions need ``answers`` (and ``yesno_answers`` for YES_NO questions); references
    need ``answers``, ``question_type``, ``yesno_answers`` and ``entity_answers``. Returns
    ``"ROUGE-L"`` and ``"BLEU-4"`` on the official x100 scale rounded to 2 decimals, plus
    BLEU-1..3, counts and a per-question-type breakdown. ``level="word"`` scores English
    word tokens instead of Chinese characters.
    """
    alpha, beta = scorer_weights(scorer, alpha, beta)
    preds = {}
    for qid, obj in predictions.items():
        try:
            preds[qid] = prediction_from_obj(obj, level=level)
        except MetricsInputError as exc:
            raise MetricsInputError(f"prediction {qid!r}: {exc}") from None
    refs = {}
    for qid, obj in references.items():
        try:
            refs[qid] = reference_from_obj({"source": None, **obj}, level=level)
        except MetricsInputError as exc:
            raise MetricsInputError(f"reference {qid!r}: {exc}") from None
    return score_parsed(preds, refs, alpha=alpha, beta=beta, gamma=gamma, by_type=by_type,
                        scorer=scorer)


def dureader_score_files(
    pred_path: str | Path,
    ref_path: str | Path,
    *,
    alpha: float | None = None,
    beta: float | None = None,
    gamma: float = 1.2,
    by_type: bool = True,
    level: str = "char",
    scorer: str = "mrc2018",
) -> dict[str, Any]:
    """Score a prediction file against a reference file (both JSON lines) with
    ``scorer`` (see :func:`dureader_score`)."""
    alpha, beta = scorer_weights(scorer, alpha, beta)
    preds = read_predictions(pred_path, level=level)
    refs = read_references(ref_path, level=level)
    return score_parsed(preds, refs, alpha=alpha, beta=beta, gamma=gamma, by_type=by_type,
                        scorer=scorer, pred_source=str(pred_path), ref_source=str(ref_path))


__all__ = [
    "SCORERS",
    "AdaptedBleu",
    "AdaptedRougeL",
    "AdaptedScorer",
    "BleuInstanceStats",
    "DuReader2Scorer",
    "RougeInstanceDetail",
    "adapted_bleu",
    "adapted_rouge_l",
    "closest_ref_length",
    "dureader_score",
    "dureader_score_files",
    "entity_bonus_length",
    "id_report",
    "lcs_length",
    "rouge_l_f",
    "score_parsed",
    "scorer_weights",
]
