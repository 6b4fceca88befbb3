"""BLEU-1..4, ROUGE-L and answerability F1 as the MS MARCO Q&A evaluation script computes them.

The script (``Evaluation/ms_marco_eval.py`` with its vendored coco-caption scorers) does:

1. Normalise every answer with spaCy's blank English tokenizer (tokens stripped and
   lower-cased, joined by spaces; see :func:`msmarco_normalize_many`). An answer list that
   contains ``"No Answer Present."`` marks a no-answer query and becomes ``[""]``.
2. Answerability F1 from the reference and candidate no-answer sets.
3. Drop the queries whose *reference* is no-answer; every remaining reference query must
   have exactly one candidate answer (and no other candidate query may remain).
4. BLEU (coco-caption ``BleuScorer``, option ``closest``): tokens from ``str.split()``;
   clipped n-gram matches and candidate n-gram counts summed over the corpus; effective
   reference length = the reference length closest to the candidate's (ties to the
   shorter), summed; BLEU-n = (Π_k (correct_k + 1e-15) / (guess_k + 1e-9))^(1/n), times
   exp(1 - 1/ratio) when ratio = (c + 1e-15) / (r + 1e-9) < 1.
5. ROUGE-L (coco-caption ``Rouge``, β = 1.2): tokens from ``split(" ")`` (so a double space
   gives an empty token and an empty answer is one empty token); maximum precision and
   maximum recall over the references, taken separately; mean over queries.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from collector.metrics.errors import MetricsInputError, id_type_hint
from collector.metrics.jsonio import iter_jsonl
from collector.metrics.lcs import lcs_length
from collector.metrics.ngrams import max_counts, ngram_counts_up_to
from collector.metrics.tokenize import msmarco_normalize_many

NO_ANSWER = "No Answer Present."
MAX_BLEU_ORDER = 4
_TINY = 1e-15
_SMALL = 1e-9


# --------------------------------------------------------------------------- coco BLEU
class CocoBleu:
    """Corpus BLEU-1..n of coco-caption's ``BleuScorer`` with ``option="closest"``."""

    def __init__(self, n: int = MAX_BLEU_ORDER) -> None:
        self.n = n
        self.testlen = 0
        self.reflen = 0
        self.guess = [0] * n
        self.correct = [0] * n

    def add(self, candidate: str, references: Sequence[str]) -> None:
        """Add one pair of a candidate string and its reference strings."""
        if not references:
            raise MetricsInputError("a query needs at least one reference answer")
        n = self.n
        ref_tokens = [tuple(r.split()) for r in references]
        refmax = max_counts([ngram_counts_up_to(r, n) for r in ref_tokens])
        cand = tuple(candidate.split())
        counts = ngram_counts_up_to(cand, n)
        testlen = len(cand)
        self.testlen += testlen
        self.reflen += min((abs(len(r) - testlen), len(r)) for r in ref_tokens)[1]
        for k in range(n):
            self.guess[k] += max(0, testlen - k)
        for gram, count in counts.items():
            self.correct[len(gram) - 1] += min(refmax.get(gram, 0), count)

    def ratio(self) -> float:
        return (self.testlen + _TINY) / (self.reflen + _SMALL)

    def score(self) -> list[float]:
        """BLEU-1..n in coco-caption's order of operations."""
        bleus = []
        bleu = 1.0
        for k in range(self.n):
            bleu *= float(self.correct[k] + _TINY) / (self.guess[k] + _SMALL)
            bleus.append(bleu ** (1.0 / (k + 1)))
        ratio = self.ratio()
        if ratio < 1:
            for k in range(self.n):
                bleus[k] *= math.exp(1 - 1 / ratio)
        return bleus

    def verbose(self) -> str:
        """The ``totalcomps`` line the official scorer prints."""
        return str({"testlen": self.testlen, "reflen": self.reflen,
                    "guess": self.guess, "correct": self.correct})


# --------------------------------------------------------------------------- coco ROUGE-L
def coco_rouge_l(candidate: str, references: Sequence[str], beta: float = 1.2) -> float:
    """coco-caption ``Rouge.calc_score`` for one candidate string."""
    if not references:
        raise MetricsInputError("a query needs at least one reference answer")
    token_c = candidate.split(" ")
    precs, recs = [], []
    for ref in references:
        token_r = ref.split(" ")
        lcs = lcs_length(token_r, token_c)
        precs.append(lcs / float(len(token_c)))
        recs.append(lcs / float(len(token_r)))
    p_max, r_max = max(precs), max(recs)
    if p_max != 0 and r_max != 0:
        return ((1 + beta**2) * p_max * r_max) / float(r_max + beta**2 * p_max)
    return 0.0


# --------------------------------------------------------------------------- loading
def _collect(
    records: Sequence[tuple[Hashable, Any]], *, what: str = "answers"
) -> tuple[dict[Hashable, list[str]], set[Hashable]]:
    """Group raw answers by query id and normalise them, like ``load_file``."""
    texts: list[str] = []
    owners: list[Hashable] = []
    no_answer: set[Hashable] = set()
    for qid, answers in records:
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise MetricsInputError(f"query {qid!r}: field '{what}' must be a list of strings")
        if NO_ANSWER in answers:
            no_answer.add(qid)
            answers = [""]
        texts.extend(answers)
        owners.extend([qid] * len(answers))
    grouped: dict[Hashable, list[str]] = {}
    for qid, norm in zip(owners, msmarco_normalize_many(texts), strict=True):
        grouped.setdefault(qid, []).append(norm)
    return grouped, no_answer


def read_answers_file(path: str | Path) -> tuple[dict[Hashable, list[str]], set[Hashable]]:
    """Read a MS MARCO JSON-lines file of ``{"query_id", "answers"}`` records."""
    records = []
    for line, obj in iter_jsonl(path):
        for key in ("query_id", "answers"):
            if key not in obj:
                raise MetricsInputError(f"missing field '{key}'", source=str(path), line=line)
        qid = obj["query_id"]
        if isinstance(qid, (list, dict)):
            raise MetricsInputError("field 'query_id' must be a number or a string",
                                    source=str(path), line=line)
        answers = obj["answers"]
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise MetricsInputError("field 'answers' must be a list of strings",
                                    source=str(path), line=line)
        records.append((qid, answers))
    return _collect(records)


# --------------------------------------------------------------------------- scoring
def answerability_f1(
    ref_ids: set[Hashable], ref_no_answer: set[Hashable],
    cand_ids: set[Hashable], cand_no_answer: set[Hashable],
) -> float:
    """F1 of "this query has an answer" (answerable queries are the positives)."""
    answerable = ref_ids - ref_no_answer
    cand_answerable = cand_ids - cand_no_answer
    tp = len(cand_answerable & answerable)
    fn = len(answerable) - tp
    tn = len(cand_no_answer & ref_no_answer)
    fp = len(ref_no_answer) - tn
    precision = float(tp) / (tp + fp) if (tp + fp) > 0 else 1.0
    recall = float(tp) / (tp + fn) if (tp + fn) > 0 else 1.0
    if precision + recall == 0:
        raise MetricsInputError(
            "answerability precision and recall are both 0, so F1 is undefined (the "
            "official script divides by zero): no answerable query was answered"
        )
    return 2 * ((precision * recall) / (precision + recall))


def _score_normalised(
    refs: Mapping[Hashable, list[str]], ref_no: set[Hashable],
    cands: Mapping[Hashable, list[str]], cand_no: set[Hashable],
    *, ref_source: str | None = None, cand_source: str | None = None,
) -> dict[str, Any]:
    """Score normalised answers; errors name ``cand_source`` or, when the reference file
    is what is wrong, ``ref_source``."""
    if not any(qid not in ref_no for qid in refs):
        why = f" (every query is {NO_ANSWER!r})" if refs else ""
        raise MetricsInputError(f"no answerable reference query to score{why}",
                                source=ref_source)
    try:
        f1 = answerability_f1(set(refs), ref_no, set(cands), cand_no)
    except MetricsInputError as exc:
        raise MetricsInputError(str(exc), source=cand_source) from None
    f_refs = {k: v for k, v in refs.items() if k not in ref_no}
    f_cands = {k: v for k, v in cands.items() if k not in ref_no}
    for qid, answers in f_cands.items():
        if len(answers) > 1:
            raise MetricsInputError(
                f"query {qid!r} has {len(answers)} answers in the candidate file; one allowed",
                source=cand_source)
    missing = [q for q in f_refs if q not in f_cands]
    extra = [q for q in f_cands if q not in f_refs]
    if missing or extra:
        detail = (f"{len(missing)} answerable reference queries without a candidate, "
                  f"e.g. {missing[0]!r}" if missing
                  else f"{len(extra)} candidate queries not in the reference file, "
                  f"e.g. {extra[0]!r}")
        hint = (id_type_hint(missing[0], cands, where="the candidate file") if missing
                else id_type_hint(extra[0], refs, where="the reference file"))
        if hint:
            detail += f" ({hint})"
        raise MetricsInputError("reference and candidate files must share the same query "
                                f"ids: {detail}", source=cand_source)
    bleu = CocoBleu()
    rouge = []
    for qid, ref_answers in f_refs.items():
        cand = f_cands[qid][0]
        bleu.add(cand, ref_answers)
        rouge.append(coco_rouge_l(cand, ref_answers))
    scores = bleu.score()
    out: dict[str, Any] = {"F1": f1}
    out.update({f"bleu_{k + 1}": s for k, s in enumerate(scores)})
    out["rouge_l"] = float(np.mean(np.array(rouge)))
    out["queries"] = len(f_refs)
    out["bleu_totals"] = {"testlen": bleu.testlen, "reflen": bleu.reflen,
                          "guess": list(bleu.guess), "correct": list(bleu.correct),
                          "ratio": bleu.ratio()}
    return out


def msmarco_score(
    references: Mapping[Hashable, Sequence[str]],
    candidates: Mapping[Hashable, Sequence[str]],
) -> dict[str, Any]:
    """Score raw answers (query id -> answer strings) like ``ms_marco_eval.py``.

    Returns ``bleu_1``..``bleu_4``, ``rouge_l``, the answerability ``F1`` and the BLEU
    totals. Use ``"No Answer Present."`` as the answer of a no-answer query.
    """
    refs, ref_no = _collect(
        [(q, list(a)) for q, a in references.items() if len(a)], what="references")
    cands, cand_no = _collect(
        [(q, list(a)) for q, a in candidates.items() if len(a)], what="candidates")
    return _score_normalised(refs, ref_no, cands, cand_no)


def msmarco_score_files(ref_path: str | Path, cand_path: str | Path) -> dict[str, Any]:
    """Score a reference file against a candidate file (reference first, as officially)."""
    refs, ref_no = read_answers_file(ref_path)
    cands, cand_no = read_answers_file(cand_path)
    return _score_normalised(refs, ref_no, cands, cand_no, ref_source=str(ref_path),
                             cand_source=str(cand_path))
