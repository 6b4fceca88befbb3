"""CrowdQA metrics and agreement: pure Python, no Django, equal to the official scorers.

Command line: ``python -m collector.metrics <command> ...`` prints one JSON object
(commands ``squad-v1``, ``squad-v2``, ``dureader``, ``msmarco``, ``pa``, ``competence``,
``judgment``; see
:mod:`collector.metrics.cli` or ``--help``). Bad input raises :class:`MetricsInputError`
(one line naming file, line and field); the CLI prints it and exits with status 2.

Python API (all importable from ``collector.metrics``)

SQuAD (:mod:`.squad`, official v1.1 / v2.0 evaluate scripts)
    ``squad_v1_score(dataset, predictions, *, strict=False) -> {"exact_match", "f1"}``
    ``squad_v2_score(dataset, predictions, *, na_probs=None, na_prob_thresh=1.0,
    strict=False) -> {"exact", "f1", "total", "HasAns_*", "NoAns_*", "best_*"}``
    ``dataset`` is the SQuAD JSON (or its ``data`` list); ``predictions`` maps question id
    to answer text. Per-answer helpers: ``exact_match``, ``f1_v1``, ``f1_v2``,
    ``squad_normalize``.
MS MARCO (:mod:`.msmarco`, ``ms_marco_eval.py`` with coco-caption BLEU and ROUGE-L)
    ``msmarco_score(references, candidates) -> {"bleu_1".."bleu_4", "rouge_l", "F1", ...}``
    with query id -> list of answer strings (``"No Answer Present."`` marks no answer).
    Building blocks: ``CocoBleu``, ``coco_rouge_l``, ``answerability_f1``.
DuReader / adapted metrics (:mod:`.dureader`, the MRC2018 bonus scorer)
    ``dureader_score(predictions, references, *, alpha=1.0, beta=1.0, gamma=1.2,
    scorer="mrc2018") -> {"ROUGE-L", "BLEU-4", "BLEU-1".."BLEU-3", "by_type", ...}`` (x100,
    2 decimals) on DuReader-format records keyed by question id; ``scorer="dureader2"`` is
    DuReader 2.0's ``dureader_eval.py`` (coco-caption BLEU and ROUGE-L, no bonuses).
    Tokenised building blocks with every count exposed: ``AdaptedBleu``,
    ``AdaptedRougeL``, ``AdaptedScorer``, ``DuReader2Scorer``, ``adapted_bleu(candidate,
    references, *, yesno_label, reference_labels, entities, alpha, beta)``,
    ``adapted_rouge_l(...)``; tokenisers ``char_tokens`` (Chinese) and ``word_tokens``
    (English).
pa-metrics (:mod:`.pa`, answer-distillation paper Eq. 1-9)
    ``pa_metric(candidate, references, similarity, *, include_self=True) -> PaResult``
    (score, similarities, reference weights Imp(Ref_i)); ``pa_bleu``, ``pa_meteor``,
    ``PaScorer`` (weights computed once per query), ``flag_outliers(weights, ratio=0.5)``,
    ``pairwise_bleu``, ``multi_reference_bleu``, ``meteor``.
LCS (:mod:`.lcs`)
    ``lcs_length(a, b)`` bit-parallel; ``lcs_length_dp`` the full-table reference.
isf baseline (:mod:`.isf`, NewsQA section 6.3)
    ``isf_select(sentences, question)``, ``isf_answer_sentence(article, question)``,
    ``isf_accuracy(examples)``, ``split_sentences``.
Human judgment study (:mod:`.judgment`, adapted-metrics paper section 4)
    ``judgment_study(references, predictions, ratings, *, alpha=2.0, beta=1.0,
    resamples=100, sample=30, seed=0) -> {"table1", "table2", "table3", "bootstrap",
    "candidates", "sweeps", "table1_krippendorff_alpha", "table1_one_rating", ...}``;
    ``judgment_study_files``.
Agreement (:mod:`.agreement`)
    ``pearson``, ``spearman`` (coefficient, p-value, CI), ``cohen_kappa``,
    ``fleiss_kappa``, ``krippendorff_alpha``, ``paired_bootstrap`` and
    ``compare_correlations`` (Koehn 2004), ``bootstrap_ci``, ``mean_ci``.
"""

from importlib import import_module
from typing import Any

from collector.metrics.dureader import (
    AdaptedBleu,
    AdaptedRougeL,
    AdaptedScorer,
    adapted_bleu,
    adapted_rouge_l,
    dureader_score,
    dureader_score_files,
    rouge_l_f,
)
from collector.metrics.errors import MetricsInputError
from collector.metrics.isf import isf_accuracy, isf_answer_sentence, isf_select, split_sentences
from collector.metrics.lcs import lcs_length, lcs_length_dp
from collector.metrics.msmarco import (
    CocoBleu,
    answerability_f1,
    coco_rouge_l,
    msmarco_score,
    msmarco_score_files,
)
from collector.metrics.pa import (
    PaResult,
    PaScorer,
    flag_outliers,
    meteor,
    multi_reference_bleu,
    pa_bleu,
    pa_meteor,
    pa_metric,
    pa_score,
    pairwise_bleu,
)
from collector.metrics.squad import (
    exact_match,
    f1_v1,
    f1_v2,
    squad_v1_score,
    squad_v1_score_files,
    squad_v2_score,
    squad_v2_score_files,
)
from collector.metrics.tokenize import char_tokens, pa_tokens, squad_normalize, word_tokens

# The agreement functions pull in scipy (about a second to import), which the scorers and
# the command line do not need: load them on first use.
_LAZY = {
    name: "collector.metrics.agreement"
    for name in (
        "BootstrapComparison", "Correlation", "bootstrap_ci", "cohen_kappa",
        "compare_correlations", "fleiss_kappa", "krippendorff_alpha", "mean_ci",
        "paired_bootstrap", "pearson", "spearman",
    )
}
_LAZY.update({name: "collector.metrics.judgment"
              for name in ("judgment_study", "judgment_study_files")})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'collector.metrics' has no attribute {name!r}")


__all__ = [
    "AdaptedBleu",
    "AdaptedRougeL",
    "AdaptedScorer",
    "BootstrapComparison",
    "CocoBleu",
    "Correlation",
    "MetricsInputError",
    "PaResult",
    "PaScorer",
    "adapted_bleu",
    "adapted_rouge_l",
    "answerability_f1",
    "bootstrap_ci",
    "char_tokens",
    "coco_rouge_l",
    "cohen_kappa",
    "compare_correlations",
    "dureader_score",
    "dureader_score_files",
    "exact_match",
    "f1_v1",
    "f1_v2",
    "flag_outliers",
    "fleiss_kappa",
    "isf_accuracy",
    "isf_answer_sentence",
    "isf_select",
    "judgment_study",
    "judgment_study_files",
    "krippendorff_alpha",
    "lcs_length",
    "lcs_length_dp",
    "mean_ci",
    "meteor",
    "msmarco_score",
    "msmarco_score_files",
    "multi_reference_bleu",
    "pa_bleu",
    "pa_metric",
    "pa_meteor",
    "pa_score",
    "pa_tokens",
    "paired_bootstrap",
    "pairwise_bleu",
    "pearson",
    "rouge_l_f",
    "spearman",
    "split_sentences",
    "squad_normalize",
    "squad_v1_score",
    "squad_v1_score_files",
    "squad_v2_score",
    "squad_v2_score_files",
    "word_tokens",
]
