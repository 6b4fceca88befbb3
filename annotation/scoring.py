"""Score a predictions file against a release (the official scorers of collector.metrics).

The release's own file of the chosen format is the gold data: SQuAD v1.1 / v2.0 JSON for
``squad-v1`` / ``squad-v2`` (predictions: ``{question id: answer text}``), the MS MARCO
JSONL (candidates: ``{"query_id", "answers": [one answer]}`` per line) and the DuReader
JSONL (predictions: ``{"question_id", "answers", "yesno_answers", ...}`` per line).
Bad input raises ``MetricsInputError`` naming the file, line and field; predictions for
question ids the release does not have are refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from annotation.models import Release
from annotation.releases import release_path
from collector.metrics import MetricsInputError

SCORED_FORMATS = ("squad-v1", "squad-v2", "msmarco", "dureader")


def release_score(*, release: Release, format: str, predictions: Path,  # noqa: A002
                  alpha: float = 1.0, beta: float = 1.0) -> dict[str, Any]:
    if format not in SCORED_FORMATS:
        raise MetricsInputError(f"format {format!r} cannot be scored; use one of "
                                f"{', '.join(SCORED_FORMATS)}")
    entry = release.files.filter(format=format).first()
    if entry is None:
        raise MetricsInputError(f"release {release.version} has no {format} file; it has "
                                f"{', '.join(sorted(set(release.formats)))}")
    gold = release_path(release) / entry.path
    if predictions.stat().st_size == 0:
        raise MetricsInputError("the predictions file is empty", source=str(predictions))
    if format == "squad-v1":
        from collector.metrics.squad import squad_v1_score_files

        return squad_v1_score_files(gold, predictions, strict=True)
    if format == "squad-v2":
        from collector.metrics.squad import squad_v2_score_files

        return squad_v2_score_files(gold, predictions, strict=True)
    if format == "msmarco":
        from collector.metrics.msmarco import msmarco_score_files

        return msmarco_score_files(gold, predictions)
    from collector.metrics.dureader import dureader_score_files

    result = dureader_score_files(predictions, gold, alpha=alpha, beta=beta)
    if result.get("unknown_prediction_ids"):
        raise MetricsInputError(f"{result['unknown_prediction_ids']} prediction(s) with a "
                                "question_id not in the release", source=str(predictions))
    return result
