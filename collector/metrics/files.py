"""Score a predictions file against gold data as the official scripts do, with warnings.

Shared by ``python -m collector.metrics`` and ``manage.py score_predictions``. Ids follow
the official scripts by default:

========== ============================= =============================================
format     prediction for an unknown id  question without a prediction
========== ============================= =============================================
squad-v1   ignored (warning)             scores 0 (warning), as ``evaluate-v1.1.py``
squad-v2   ignored (warning)             error: ``evaluate-v2.0.py`` crashes on it
dureader   ignored (warning)             scores the empty answer (warning), as
                                         ``mrc_eval.py`` / ``dureader_eval.py``
msmarco    error                         error: ``ms_marco_eval.py`` asserts that both
                                         files share the same query ids
========== ============================= =============================================

``strict=True`` refuses unknown ids in every format and missing predictions in SQuAD
v1.1 as well. DuReader predictions none of whose ids is in the references are refused
(nothing of them would be scored), saying when an id is written as another JSON type
(the string "7" where the reference file has the number 7). Gold and prediction files may be
names or open files (a release's gold file is read through Django's storage API).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collector.metrics.errors import MetricsInputError, id_type_hint
from collector.metrics.jsonio import Source, load_json

SCORED = ("squad-v1", "squad-v2", "msmarco", "dureader")
IDS_HELP = (
    "Ids follow the official scripts: predictions for ids not in the gold data are "
    "ignored (warning with their count); a question without a prediction scores 0 in "
    "SQuAD v1.1 and DuReader (warning), is an error in SQuAD v2.0 (the official script "
    "crashes) and MS MARCO (the official script asserts equal id sets). --strict refuses "
    "unknown ids, and SQuAD v1.1 questions without a prediction."
)


def _id_warnings(unknown: int, missing: int, *, example_unknown: Any = None,
                 example_missing: Any = None, missing_means: str = "scored 0",
                 unknown_hint: str = "") -> list[str]:
    out = []
    if unknown:
        eg = f", e.g. {example_unknown!r}" if example_unknown is not None else ""
        if unknown_hint:
            eg += f" ({unknown_hint})"
        out.append(f"{unknown} prediction(s) for ids not in the gold data ignored{eg}")
    if missing:
        eg = f", e.g. {example_missing!r}" if example_missing is not None else ""
        out.append(f"{missing} unanswered question(s) {missing_means}{eg}")
    return out


def _squad(fmt: str, gold: Source, predictions: Source, *, strict: bool,
           na_prob_file: Source | None, na_prob_thresh: float
           ) -> tuple[dict[str, Any], list[str]]:
    from collector.metrics import squad

    data = squad._load_dataset(gold)
    preds = load_json(predictions)
    try:
        squad._check_predictions(preds)
    except MetricsInputError as exc:
        raise MetricsInputError(str(exc), source=str(predictions)) from None
    known = [qid for qid, _ in squad.iter_questions(data)]
    known_set = set(known)
    unknown = [qid for qid in preds if qid not in known_set]
    missing = [qid for qid in known if qid not in preds]
    if strict and unknown:
        raise MetricsInputError(f"{len(unknown)} prediction(s) for unknown question ids, "
                                f"e.g. {unknown[0]!r} (--strict)", source=str(predictions))
    if fmt == "squad-v1":
        if strict and missing:
            raise MetricsInputError(f"{len(missing)} question(s) without a prediction, e.g. "
                                    f"{missing[0]!r} (--strict)", source=str(predictions))
        result = squad.squad_v1_score(data, preds, dataset_source=str(gold))
    else:
        na_probs = None
        if na_prob_file is not None:
            na_probs = load_json(na_prob_file)
            if not isinstance(na_probs, Mapping):
                raise MetricsInputError("must be a JSON object id -> probability",
                                        source=str(na_prob_file))
        try:
            result = squad.squad_v2_score(data, preds, na_probs=na_probs,
                                          na_prob_thresh=na_prob_thresh,
                                          dataset_source=str(gold))
        except MetricsInputError as exc:
            if exc.source is not None:  # already names its file
                raise
            if na_prob_file is not None and "probabilit" in str(exc):
                raise MetricsInputError(str(exc), source=str(na_prob_file)) from None
            if "prediction" in str(exc):
                raise MetricsInputError(str(exc), source=str(predictions)) from None
            raise
    return result, _id_warnings(len(unknown), len(missing),
                                example_unknown=unknown[0] if unknown else None,
                                example_missing=missing[0] if missing else None)


def score_files(fmt: str, *, gold: Source, predictions: Source, strict: bool = False,
                scorer: str = "mrc2018", alpha: float | None = None,
                beta: float | None = None, gamma: float = 1.2, level: str = "char",
                na_prob_file: Source | None = None, na_prob_thresh: float = 1.0,
                ) -> tuple[dict[str, Any], list[str]]:
    """``(scores, warnings)`` of ``predictions`` against ``gold`` in format ``fmt``
    (:data:`SCORED`); ``MetricsInputError`` names the file and line of bad input.
    DuReader: ``scorer`` is ``mrc2018`` (bonuses ``alpha`` / ``beta``, 1.0 by default) or
    ``dureader2`` (no bonuses), see :data:`collector.metrics.dureader.SCORERS`."""
    if fmt in ("squad-v1", "squad-v2"):
        return _squad(fmt, gold, predictions, strict=strict, na_prob_file=na_prob_file,
                      na_prob_thresh=na_prob_thresh)
    if fmt == "msmarco":
        from collector.metrics.msmarco import msmarco_score_files

        return msmarco_score_files(gold, predictions), []
    if fmt == "dureader":
        from collector.metrics import dureader

        a, b = dureader.scorer_weights(scorer, alpha, beta)
        preds = dureader.read_predictions(predictions, level=level)
        refs = dureader.read_references(gold, level=level)
        unknown, missing = dureader.id_report(preds, refs, scorer)
        hint = id_type_hint(unknown[0], refs, where="the gold data") if unknown else ""
        if strict and unknown:
            raise MetricsInputError(f"{len(unknown)} prediction(s) with a question_id not in "
                                    f"the reference file, e.g. {unknown[0]!r}"
                                    + (f" ({hint})" if hint else "") + " (--strict)",
                                    source=str(predictions))
        result = dureader.score_parsed(preds, refs, alpha=a, beta=b, gamma=gamma,
                                       by_type=True, scorer=scorer,
                                       pred_source=str(predictions), ref_source=str(gold))
        result = {"scorer": scorer, **result}
        return result, _id_warnings(len(unknown), len(missing),
                                    example_unknown=unknown[0] if unknown else None,
                                    example_missing=missing[0] if missing else None,
                                    missing_means="scored as the empty answer",
                                    unknown_hint=hint)
    raise MetricsInputError(f"format {fmt!r} cannot be scored; use one of {', '.join(SCORED)}")
