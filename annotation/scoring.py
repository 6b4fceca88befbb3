"""Score a predictions file against a release (the official scorers of collector.metrics).

The release's own file of the chosen format is the gold data, read through the release
storage (``releases.release_open``): SQuAD v1.1 / v2.0 JSON for ``squad-v1`` /
``squad-v2`` (predictions: ``{question id: answer text}``), the MS MARCO JSONL
(candidates: ``{"query_id", "answers": [one answer]}`` per line) and the DuReader JSONL,
DuReader's data layout converted on read (predictions: ``{"question_id", "answers",
"yesno_answers", ...}`` per line). Bad input raises ``MetricsInputError`` naming the file,
line and field. Ids follow the official scripts unless ``strict``
(``collector.metrics.files``); the warnings come back with the scores.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from annotation.models import Release
from annotation.releases import release_open
from collector.metrics import MetricsInputError
from collector.metrics.files import SCORED, score_files

SCORED_FORMATS = SCORED


def release_score(*, release: Release, format: str,  # noqa: A002
                  predictions: Path | IO[bytes], strict: bool = False, scorer: str = "mrc2018",
                  alpha: float | None = None, beta: float | None = None
                  ) -> tuple[dict[str, Any], list[str]]:
    """``(scores, warnings)`` of ``predictions`` (a file name or an open file) against
    the release's file of ``format``."""
    if format not in SCORED_FORMATS:
        raise MetricsInputError(f"format {format!r} cannot be scored; use one of "
                                f"{', '.join(SCORED_FORMATS)}")
    entry = release.files.filter(format=format).first()
    if entry is None:
        raise MetricsInputError(f"release {release.version} has no {format} file; it has "
                                f"{', '.join(sorted(set(release.formats)))}")
    if isinstance(predictions, Path) and predictions.stat().st_size == 0:
        raise MetricsInputError("the predictions file is empty", source=str(predictions))
    try:
        gold = release_open(release, entry.path)
    except FileNotFoundError as exc:
        raise MetricsInputError(str(exc)) from None
    with gold:
        return score_files(format, gold=gold, predictions=predictions, strict=strict,
                           scorer=scorer, alpha=alpha, beta=beta)
