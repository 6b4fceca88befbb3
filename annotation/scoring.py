"""Score a predictions file against a release (the official scorers of collector.metrics).

The release's own file of the chosen format is the gold data, read through the release
storage (``releases.release_open``): SQuAD v1.1 / v2.0 JSON for ``squad-v1`` /
``squad-v2`` (predictions: ``{question id: answer text}``), the MS MARCO JSONL
(candidates: ``{"query_id", "answers": [one answer]}`` per line) and the DuReader JSONL,
DuReader's data layout converted on read (predictions: ``{"question_id", "answers",
"yesno_answers", ...}`` per line). Bad input raises ``MetricsInputError`` naming the file,
line and field. Ids follow the official scripts unless ``strict``
(``collector.metrics.files``); the warnings come back with the scores.

A release has one file of a format per split: the predictions are scored against one
split's file, ``split`` or by default the evaluation split (dev, else test;
``releases.release_split_file``), and the scores say which (``split``, ``file``).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from annotation.models import Release
from annotation.releases import release_open, release_split_file
from collector.metrics import MetricsInputError
from collector.metrics.files import SCORED, score_files

SCORED_FORMATS = SCORED


def release_score(*, release: Release, format: str,  # noqa: A002
                  predictions: Path | IO[bytes], strict: bool = False, scorer: str = "mrc2018",
                  alpha: float | None = None, beta: float | None = None,
                  split: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """``(scores, warnings)`` of ``predictions`` (a file name or an open file) against
    the release's file of ``format`` for ``split`` (None: the evaluation split, dev
    else test); the scores end with the ``split`` scored ("all" for a file of every
    split, from a release built before files were per split) and its ``file``."""
    if format not in SCORED_FORMATS:
        raise MetricsInputError(f"format {format!r} cannot be scored; use one of "
                                f"{', '.join(SCORED_FORMATS)}")
    try:
        entry = release_split_file(release, format, split)
    except LookupError as exc:
        raise MetricsInputError(str(exc.args[0])) from None
    if isinstance(predictions, Path) and predictions.stat().st_size == 0:
        raise MetricsInputError("the predictions file is empty", source=str(predictions))
    try:
        gold = release_open(release, entry.path)
    except FileNotFoundError as exc:
        raise MetricsInputError(str(exc)) from None
    with gold:
        scores, warnings = score_files(format, gold=gold, predictions=predictions,
                                       strict=strict, scorer=scorer, alpha=alpha, beta=beta)
    return {**scores, "split": entry.split or "all", "file": entry.path}, warnings
