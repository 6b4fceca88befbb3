"""The official-script test vectors shipped in the repository (never ../shared)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
VECTORS = REPO / "data" / "datasets" / "metric-vectors"
SUITES = ("squad-v1", "squad-v2", "dureader", "msmarco")


def cases(suite: str | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """``(case folder, expected.json)`` for every case of ``suite`` (or of all suites)."""
    out = []
    for name in SUITES if suite is None else (suite,):
        for expected in sorted((VECTORS / name).glob("*/expected.json")):
            out.append((expected.parent, json.loads(expected.read_text(encoding="utf-8"))))
    return out


def runs(suite: str | None = None, *, errors: bool = False) -> list[tuple[Path, dict, dict]]:
    """Every official invocation ``(case folder, expected.json, run)``."""
    return [
        (folder, exp, run)
        for folder, exp in cases(suite)
        if bool(exp.get("expected_error")) == errors
        for run in exp["runs"]
    ]


def run_id(item: tuple[Path, dict, dict]) -> str:
    folder, _, run = item
    return f"{folder.parent.name}/{folder.name}:{' '.join(run['cli_args'][3:]) or 'default'}"


def compared_keys(exp: dict[str, Any], run: dict[str, Any]) -> list[str]:
    """The keys a reimplementation must match for this run."""
    extra = [k for k in exp.get("compare_if_printed", []) if k in run["expected"]]
    return list(exp["compare_keys"]) + extra


def agrees(exp: dict[str, Any], expected: float, got: float) -> bool:
    """0.01 on the x100 two-decimal scale, 1e-6 relative otherwise (README 'Comparing')."""
    tol = exp["tolerance"]
    if "abs" in tol:
        return abs(got - expected) <= tol["abs"] + 1e-9
    return abs(got - expected) <= tol["rel"] * abs(expected) or got == expected
