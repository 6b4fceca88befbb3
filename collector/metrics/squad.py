"""SQuAD exact match and F1, as the official v1.1 and v2.0 evaluation scripts compute them.

v1.1 (``evaluate-v1.1.py``)
    Per question: the maximum over the gold answers of EM and of token F1 between
    :func:`squad_normalize`-d strings; a question without a prediction scores 0 and counts
    in the total. Both are reported x100.
v2.0 (``evaluate-v2.0.py``)
    Gold answers that normalise to the empty string are dropped; a question left with no
    gold answer is unanswerable and only the empty prediction is right (F1 is 1 when both
    token lists are empty). A question is answerable when its ``answers`` list is not
    empty (even if those answers normalise to nothing). With no-answer probabilities, a
    prediction whose probability exceeds the threshold (default 1.0) is read as "no
    answer"; ``best_*`` sweeps the threshold over the probabilities. Every question must
    have a prediction: the official script crashes otherwise, and this refuses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from collector.metrics.errors import MetricsInputError
from collector.metrics.jsonio import load_json
from collector.metrics.tokenize import squad_normalize

Articles = Sequence[Mapping[str, Any]]


# --------------------------------------------------------------------------- per answer
def exact_match(prediction: str, ground_truth: str) -> int:
    """1 when the normalised strings are equal."""
    return exact_match_tokens(squad_tokens(prediction), squad_tokens(ground_truth))


def f1_v1(prediction: str, ground_truth: str) -> float:
    """v1.1 token F1 (0 when nothing is shared, including two empty answers)."""
    return f1_v1_tokens(squad_tokens(prediction), squad_tokens(ground_truth))


def squad_tokens(text: str) -> list[str]:
    """The tokens EM and F1 compare: the :func:`squad_normalize`-d text split on spaces.
    Normalise each text once with it and score pairs with :func:`exact_match_tokens` and
    :func:`f1_v1_tokens` (the same results as :func:`exact_match` and :func:`f1_v1`)."""
    return squad_normalize(text).split()


def exact_match_tokens(prediction: list[str], ground_truth: list[str]) -> int:
    """:func:`exact_match` of two texts from their :func:`squad_tokens` (the normalised
    texts are the tokens joined by single spaces, so equal tokens = equal texts, as the
    official script compares them)."""
    return int(prediction == ground_truth)


def f1_v1_tokens(prediction: list[str], ground_truth: list[str]) -> float:
    """:func:`f1_v1` of two texts from their :func:`squad_tokens`: the official v1.1
    script's arithmetic (0 when nothing is shared, including two empty answers)."""
    if prediction == ground_truth:
        # Everything shared: 2 * 1.0 * 1.0 / (1.0 + 1.0), exactly; or no tokens at all.
        return 1.0 if prediction else 0
    common = Counter(prediction) & Counter(ground_truth)
    same = sum(common.values())
    if same == 0:
        return 0
    precision = 1.0 * same / len(prediction)
    recall = 1.0 * same / len(ground_truth)
    return (2 * precision * recall) / (precision + recall)


def f1_v2(prediction: str, ground_truth: str) -> float:
    """v2.0 token F1: if either side has no tokens, 1 when both have none, else 0."""
    gold = squad_normalize(ground_truth).split() if ground_truth else []
    pred = squad_normalize(prediction).split() if prediction else []
    common = Counter(gold) & Counter(pred)
    same = sum(common.values())
    if not gold or not pred:
        return int(gold == pred)
    if same == 0:
        return 0
    precision = 1.0 * same / len(pred)
    recall = 1.0 * same / len(gold)
    return (2 * precision * recall) / (precision + recall)


# --------------------------------------------------------------------------- dataset walk
def _articles(dataset: Any) -> Articles:
    if isinstance(dataset, Mapping):
        if "data" not in dataset:
            raise MetricsInputError("missing field 'data' (the list of articles)")
        dataset = dataset["data"]
    if not isinstance(dataset, list):
        raise MetricsInputError("field 'data' must be a list of articles")
    return dataset


def iter_questions(dataset: Any) -> list[tuple[str, list[str]]]:
    """``(question id, gold answer texts)`` in dataset order, checking the structure."""
    out = []
    for a, article in enumerate(_articles(dataset)):
        paragraphs = article.get("paragraphs") if isinstance(article, Mapping) else None
        if not isinstance(paragraphs, list):
            raise MetricsInputError(f"data[{a}]: missing or invalid field 'paragraphs'")
        for p, para in enumerate(paragraphs):
            qas = para.get("qas") if isinstance(para, Mapping) else None
            if not isinstance(qas, list):
                raise MetricsInputError(f"data[{a}].paragraphs[{p}]: missing field 'qas'")
            for q, qa in enumerate(qas):
                where = f"data[{a}].paragraphs[{p}].qas[{q}]"
                if not isinstance(qa, Mapping) or "id" not in qa:
                    raise MetricsInputError(f"{where}: missing field 'id'")
                answers = qa.get("answers")
                if not isinstance(answers, list):
                    raise MetricsInputError(f"{where}: missing or invalid field 'answers'")
                texts = []
                for ans in answers:
                    if not isinstance(ans, Mapping) or not isinstance(ans.get("text"), str):
                        raise MetricsInputError(f"{where}: every answer needs a 'text' string")
                    texts.append(ans["text"])
                out.append((qa["id"], texts))
    return out


def _check_predictions(predictions: Any, what: str = "predictions") -> Mapping[str, str]:
    if not isinstance(predictions, Mapping):
        raise MetricsInputError(f"{what} must be a JSON object mapping question id to answer")
    for qid, value in predictions.items():
        if not isinstance(value, str):
            raise MetricsInputError(f"{what}[{qid!r}] must be a string answer")
    return predictions


# --------------------------------------------------------------------------- v1.1
def squad_v1_score(
    dataset: Any, predictions: Mapping[str, str], *, strict: bool = False,
    dataset_source: str | None = None,
) -> dict[str, float]:
    """``{"exact_match", "f1"}`` x100 like ``evaluate-v1.1.py``.

    ``dataset`` is the dataset JSON (or its ``data`` list). With ``strict`` a missing
    prediction or a prediction for an unknown id is an error instead of a zero / ignored.
    ``dataset_source`` names the dataset file in errors about the dataset.
    """
    predictions = _check_predictions(predictions)
    questions = iter_questions(dataset)
    if not questions:
        raise MetricsInputError("the dataset has no questions", source=dataset_source)
    known = {qid for qid, _ in questions}
    if strict:
        _strict_ids(known, predictions)
    em = f1 = 0.0
    for qid, golds in questions:
        if qid not in predictions:
            continue
        if not golds:
            raise MetricsInputError(
                f"question {qid!r} has no gold answer; SQuAD v1.1 needs one (use squad-v2)",
                source=dataset_source)
        pred = predictions[qid]
        em += max(exact_match(pred, g) for g in golds)
        f1 += max(f1_v1(pred, g) for g in golds)
    total = len(questions)
    return {"exact_match": 100.0 * em / total, "f1": 100.0 * f1 / total}


def missing_predictions(dataset: Any, predictions: Mapping[str, str]) -> list[str]:
    """Question ids of the dataset without a prediction."""
    return [qid for qid, _ in iter_questions(dataset) if qid not in predictions]


def _strict_ids(known: set[str], predictions: Mapping[str, Any]) -> None:
    unknown = [q for q in predictions if q not in known]
    if unknown:
        raise MetricsInputError(
            f"{len(unknown)} prediction(s) for unknown question ids, e.g. {unknown[0]!r}"
        )
    missing = [q for q in known if q not in predictions]
    if missing:
        raise MetricsInputError(
            f"{len(missing)} question(s) without a prediction, e.g. {missing[0]!r}"
        )


# --------------------------------------------------------------------------- v2.0
def _raw_scores_v2(
    questions: list[tuple[str, list[str]]], predictions: Mapping[str, str]
) -> tuple[dict[str, float], dict[str, float]]:
    exact: dict[str, float] = {}
    f1: dict[str, float] = {}
    for qid, texts in questions:
        golds = [t for t in texts if squad_normalize(t)] or [""]
        if qid not in predictions:
            raise MetricsInputError(
                f"question {qid!r} has no prediction (the official v2.0 script crashes); "
                "predict \"\" for no answer"
            )
        pred = predictions[qid]
        exact[qid] = max(exact_match(g, pred) for g in golds)
        f1[qid] = max(f1_v2(g, pred) for g in golds)
    return exact, f1


def _apply_threshold(
    scores: Mapping[str, float],
    na_probs: Mapping[str, float],
    has_ans: Mapping[str, bool],
    thresh: float,
) -> dict[str, float]:
    out = {}
    for qid, s in scores.items():
        out[qid] = float(not has_ans[qid]) if na_probs[qid] > thresh else s
    return out


def _eval_dict(
    exact: Mapping[str, float], f1: Mapping[str, float], qids: Sequence[str] | None = None
) -> dict[str, float]:
    if not qids:
        total = len(exact)
        return {
            "exact": 100.0 * sum(exact.values()) / total,
            "f1": 100.0 * sum(f1.values()) / total,
            "total": total,
        }
    total = len(qids)
    return {
        "exact": 100.0 * sum(exact[k] for k in qids) / total,
        "f1": 100.0 * sum(f1[k] for k in qids) / total,
        "total": total,
    }


def _best_thresh(
    predictions: Mapping[str, str],
    scores: Mapping[str, float],
    na_probs: Mapping[str, float],
    has_ans: Mapping[str, bool],
) -> tuple[float, float]:
    """Sweep the threshold over the sorted probabilities (stable sort, file order)."""
    cur = best = sum(1 for k in has_ans if not has_ans[k])
    best_thresh = 0.0
    for qid in sorted(na_probs, key=lambda k: na_probs[k]):
        if qid not in scores:
            continue
        if has_ans[qid]:
            cur += scores[qid]
        elif predictions[qid]:
            cur -= 1
        if cur > best:
            best = cur
            best_thresh = na_probs[qid]
    return 100.0 * best / len(scores), best_thresh


def _check_na_probs(na_probs: Any, qids: Sequence[str]) -> Mapping[str, float]:
    if not isinstance(na_probs, Mapping):
        raise MetricsInputError("no-answer probabilities must be a JSON object id -> number")
    for qid, value in na_probs.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise MetricsInputError(f"no-answer probability for {qid!r} must be a number")
    for qid in qids:
        if qid not in na_probs:
            raise MetricsInputError(f"no no-answer probability for question {qid!r}")
    return na_probs


def squad_v2_score(
    dataset: Any,
    predictions: Mapping[str, str],
    *,
    na_probs: Mapping[str, float] | None = None,
    na_prob_thresh: float = 1.0,
    strict: bool = False,
    dataset_source: str | None = None,
) -> dict[str, float]:
    """The ``evaluate-v2.0.py`` result: ``exact``, ``f1``, ``total``, ``HasAns_*``,
    ``NoAns_*`` and, when ``na_probs`` is given, ``best_exact``/``best_f1`` with their
    thresholds. ``dataset_source`` names the dataset file in errors about the dataset."""
    predictions = _check_predictions(predictions)
    questions = iter_questions(dataset)
    if not questions:
        raise MetricsInputError("the dataset has no questions", source=dataset_source)
    has_ans = {qid: bool(texts) for qid, texts in questions}
    if strict:
        _strict_ids(set(has_ans), predictions)
    exact_raw, f1_raw = _raw_scores_v2(questions, predictions)
    probs = (
        _check_na_probs(na_probs, list(exact_raw)) if na_probs is not None
        else dict.fromkeys(predictions, 0.0)
    )
    exact = _apply_threshold(exact_raw, probs, has_ans, na_prob_thresh)
    f1 = _apply_threshold(f1_raw, probs, has_ans, na_prob_thresh)
    out = _eval_dict(exact, f1)
    has_ids = [k for k, v in has_ans.items() if v]
    no_ids = [k for k, v in has_ans.items() if not v]
    if has_ids:
        out.update({f"HasAns_{k}": v for k, v in _eval_dict(exact, f1, has_ids).items()})
    if no_ids:
        out.update({f"NoAns_{k}": v for k, v in _eval_dict(exact, f1, no_ids).items()})
    if na_probs is not None:
        out["best_exact"], out["best_exact_thresh"] = _best_thresh(
            predictions, exact_raw, probs, has_ans)
        out["best_f1"], out["best_f1_thresh"] = _best_thresh(predictions, f1_raw, probs, has_ans)
    return out


# --------------------------------------------------------------------------- files
def _load_dataset(path: str | Path) -> Any:
    data = load_json(path)
    try:
        iter_questions(data)
    except MetricsInputError as exc:
        raise MetricsInputError(str(exc), source=str(path)) from None
    return data


def _with_source(exc: MetricsInputError, path: str | Path) -> MetricsInputError:
    return MetricsInputError(str(exc), source=str(path))


def squad_v1_score_files(
    data_path: str | Path, pred_path: str | Path, *, strict: bool = False
) -> dict[str, float]:
    """Score SQuAD v1.1 files: dataset JSON and ``{question id: answer}`` predictions."""
    data = _load_dataset(data_path)
    preds = load_json(pred_path)
    try:
        _check_predictions(preds)
    except MetricsInputError as exc:
        raise _with_source(exc, pred_path) from None
    return squad_v1_score(data, preds, strict=strict, dataset_source=str(data_path))


def squad_v2_score_files(
    data_path: str | Path,
    pred_path: str | Path,
    *,
    na_prob_path: str | Path | None = None,
    na_prob_thresh: float = 1.0,
    strict: bool = False,
) -> dict[str, float]:
    """Score SQuAD v2.0 files, optionally with a no-answer probability file."""
    data = _load_dataset(data_path)
    preds = load_json(pred_path)
    try:
        _check_predictions(preds)
    except MetricsInputError as exc:
        raise _with_source(exc, pred_path) from None
    na_probs = None
    if na_prob_path is not None:
        na_probs = load_json(na_prob_path)
        if not isinstance(na_probs, Mapping):
            raise MetricsInputError("must be a JSON object id -> probability",
                                    source=str(na_prob_path))
    try:
        return squad_v2_score(data, preds, na_probs=na_probs, na_prob_thresh=na_prob_thresh,
                              strict=strict, dataset_source=str(data_path))
    except MetricsInputError as exc:
        if exc.source is not None:  # already names its file
            raise
        if na_prob_path is not None and "probabilit" in str(exc):
            raise _with_source(exc, na_prob_path) from None
        if "prediction" in str(exc):
            raise _with_source(exc, pred_path) from None
        raise
