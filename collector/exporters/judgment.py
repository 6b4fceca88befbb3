"""The judgment study's release files: the per-candidate rows (JSON lines) and the whole
report (JSON), written atomically with their checksums like every release file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from collector.exporters.stream import (
    DEFAULT_PROGRESS_EVERY,
    AtomicOutput,
    ManifestEntry,
    Progress,
    ProgressCallback,
)


def write_judgment_candidates(path: str | os.PathLike[str], rows: Iterable[dict[str, Any]], *,
                              progress: ProgressCallback | None = None,
                              progress_every: int = DEFAULT_PROGRESS_EVERY,
                              overwrite: bool = False) -> ManifestEntry:
    """One line per rated candidate: question, system, type, metrics, scores."""
    counter = Progress(progress, progress_every)
    with AtomicOutput(path, overwrite=overwrite) as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
            counter.tick()
    counter.finish()
    return out.entry(counter.count)


def write_judgment_report(path: str | os.PathLike[str], report: dict[str, Any], *,
                          overwrite: bool = False) -> ManifestEntry:
    """The study report without its candidate list (that is the JSON-lines file)."""
    body = {k: v for k, v in report.items() if k != "candidates"}
    with AtomicOutput(path, overwrite=overwrite) as out:
        out.write(json.dumps(body, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    return out.entry(1)
