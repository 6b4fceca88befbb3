"""The release datasheet: a plain dict (filled by the release job from the database)
rendered to Markdown, written as ``DATASHEET.md`` and embedded in the dataset card.

Every key is optional; sections without data are left out, ``None`` values read "not
defined" (e.g. κ for a stage with one rater). Keys the renderer does not know are listed
under "Other" rather than dropped. Worker references (``annotator`` of a batch
inspection) are database ids, shown only through the release's
:class:`~collector.exporters.pseudonyms.Pseudonymizer`; without one (or with
``omit=True``) the column is left out.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from collector.exporters.pseudonyms import Pseudonymizer
from collector.exporters.records import WorkerRef
from collector.exporters.stream import AtomicOutput, ManifestEntry

__all__ = [
    "BatchInspection",
    "Datasheet",
    "HumanPerformance",
    "Licence",
    "StageInfo",
    "render_datasheet",
    "write_datasheet",
]


class StageInfo(TypedDict, total=False):
    """One pipeline stage, in pipeline order."""

    name: str  # "answer sourcing"
    kind: str  # the registered stage kind, e.g. "newsqa.answer_sourcing"
    automatic: bool
    description: str
    parameters: Mapping[str, Any]  # the exact validated stage parameters


class BatchInspection(TypedDict, total=False):
    batch: str | int
    annotator: WorkerRef  # worker id; rendered as a pseudonym, never a username
    round: int  # 1 = first inspection, 2 = after the first relabelling, ...
    sampled: int
    errors: float  # strict errors count 1.0, loose ones 0.5
    accuracy: float
    passed: bool


class HumanPerformance(TypedDict, total=False):
    """EM/F1 of one held-out human answer against the others (NewsQA section 6.1)."""

    exact_match: float
    f1: float
    questions: int
    method: str
    by_split: Mapping[str, Mapping[str, float | int]]  # split -> exact_match, f1, questions


class Licence(TypedDict, total=False):
    name: str  # e.g. "CC BY-SA 4.0"
    spdx: str  # e.g. "cc-by-sa-4.0" (the dataset card's licence tag)
    source: str  # the source corpus
    url: str
    attribution: str


class ReleasedFile(TypedDict, total=False):
    """A file of the release: which split of which format it holds."""

    path: str  # relative to the release
    format: str
    split: str  # "" for a file of every split (NewsQA's combined files, a dataset card)
    records: int


class Datasheet(TypedDict, total=False):
    title: str
    version: str
    created: str  # ISO 8601
    recipe: str
    description: str
    protocol: str  # prose summary of the collection protocol
    stages: Sequence[StageInfo]
    counts: Mapping[str, Mapping[str, int]]  # stage name -> split -> items
    splits: Mapping[str, int]  # released records per split
    agreement: Mapping[str, float | int | str | None]
    batch_inspections: Sequence[BatchInspection]
    median_time_on_task_s: float | Mapping[str, float | None] | None  # overall or per stage
    licence: Licence | str
    human_performance: HumanPerformance
    files: Sequence[ReleasedFile]
    notes: Sequence[str]


_KNOWN = ("title", "version", "created", "recipe", "description", "protocol", "stages",
          "counts", "splits", "agreement", "batch_inspections", "median_time_on_task_s",
          "licence", "human_performance", "files", "notes")

_AGREEMENT_LABELS = {
    "share_agreed": "Share agreed without validation",
    "share_validated": "Share needing validation",
    "share_no_agreement": "Share without agreement after validation",
    "cohen_kappa": "Cohen's κ",
    "fleiss_kappa": "Fleiss' κ",
    "krippendorff_alpha": "Krippendorff's α",
    # The judgment study's raters (Table 1, all question types).
    "rater_pearson_r": "Pearson r between two raters of a candidate (every pair)",
    "krippendorff_alpha_interval": "Krippendorff's α (interval), all ratings",
    "candidates_rated_twice_or_more": "Candidates rated at least twice",
    "rating_pairs": "Rating pairs behind r",
    "candidates_rated_once_left_out": "Candidates rated once, left out of the agreement",
    "consensus_differs": "Questions where the platform's and the official NewsQA consensus "
                         "differ",
    "consensus_differs_span": "… both spans, different ones",
    "consensus_differs_answerable": "… only one of the two a span",
}
_SPLIT_ORDER = {"train": 0, "dev": 1, "validation": 1, "test": 2}


def _fmt(value: Any) -> str:
    if value is None:
        return "not defined"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "not defined"
        return f"{value:,.1f}" if abs(value) >= 1000 else f"{value:.4g}"
    return str(value)


def _cell(value: Any) -> str:
    text = _fmt(value)
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split())


def _code(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    text = " ".join(text.split()).replace("|", "\\|")
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _seconds(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "not recorded"
    if value < 60:
        return f"{value:.0f} s"
    minutes, seconds = divmod(round(value), 60)
    return f"{minutes} min {seconds} s"


def _splits_of(mappings: Sequence[Mapping[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for mapping in mappings:
        for name in mapping:
            names.setdefault(name, None)
    return sorted(names, key=lambda n: (_SPLIT_ORDER.get(n, 3), n))


def render_datasheet(sheet: Mapping[str, Any], *, pseudonyms: Pseudonymizer | None = None,
                     heading_level: int = 1) -> str:
    """Markdown for ``sheet`` (see :class:`Datasheet`); the top heading has
    ``heading_level`` ``#`` marks, sections one more."""
    h1 = "#" * heading_level
    h2 = "#" * (heading_level + 1)
    h3 = "#" * (heading_level + 2)
    out: list[str] = []
    title = sheet.get("title") or "Dataset"
    version = sheet.get("version")
    out.append(f"{h1} Datasheet: {title}" + (f" (version {version})" if version else ""))
    out.append("")
    meta = [(label, sheet.get(key)) for key, label in
            (("recipe", "Recipe"), ("created", "Created"), ("version", "Version"))]
    meta = [(label, value) for label, value in meta if value]
    if meta:
        out += [f"- **{label}:** {_fmt(value)}" for label, value in meta]
        out.append("")
    if sheet.get("description"):
        out += [str(sheet["description"]).strip(), ""]

    if sheet.get("protocol") or sheet.get("stages"):
        out += [f"{h2} Collection protocol", ""]
        if sheet.get("protocol"):
            out += [str(sheet["protocol"]).strip(), ""]
        for number, stage in enumerate(sheet.get("stages") or (), start=1):
            name = stage.get("name") or stage.get("kind") or f"stage {number}"
            kind = f" (`{stage['kind']}`)" if stage.get("kind") else ""
            mode = ""
            if "automatic" in stage:
                mode = ", automatic" if stage["automatic"] else ", by people"
            out += [f"{h3} {number}. {name}{kind}{mode}", ""]
            if stage.get("description"):
                out += [str(stage["description"]).strip(), ""]
            params = stage.get("parameters") or {}
            if params:
                out += _table(("parameter", "value"),
                              [(_cell(key), _code(value)) for key, value in params.items()])
            else:
                out.append("No parameters.")
            out.append("")

    counts = sheet.get("counts") or {}
    splits = sheet.get("splits") or {}
    if counts or splits:
        out += [f"{h2} Counts", ""]
        if splits:
            names = _splits_of([splits])
            out += _table(("split", "records"), [(_cell(n), _cell(splits[n])) for n in names])
            out += [f"| **total** | {_cell(sum(splits.values()))} |", ""]
        if counts:
            names = _splits_of(list(counts.values()))
            rows = [[_cell(stage)] + [_cell(per_split.get(n, 0)) for n in names]
                    + [_cell(sum(per_split.values()))]
                    for stage, per_split in counts.items()]
            out += ["Items per stage and split:", ""]
            out += _table(("stage", *names, "total"), rows)
            out.append("")

    agreement = sheet.get("agreement") or {}
    if agreement:
        out += [f"{h2} Agreement", ""]
        out += _table(("statistic", "value"),
                      [(_cell(_AGREEMENT_LABELS.get(key, key)), _cell(value))
                       for key, value in agreement.items()])
        out.append("")

    inspections = sheet.get("batch_inspections") or ()
    if inspections:
        out += [f"{h2} Batch inspection", ""]
        passed = sum(1 for i in inspections if i.get("passed"))
        out += [f"{len(inspections)} inspection(s), {passed} passed.", ""]
        shown = pseudonyms if pseudonyms is not None and not pseudonyms.omit else None
        header = ["batch"] + (["annotator"] if shown is not None else []) + [
            "round", "sampled", "errors", "accuracy", "passed"]
        rows = []
        for item in inspections:
            row = [_cell(item.get("batch"))]
            if shown is not None:
                row.append(_cell(shown(item.get("annotator"))))
            row += [_cell(item.get(key)) for key in
                    ("round", "sampled", "errors", "accuracy", "passed")]
            rows.append(row)
        out += _table(header, rows)
        out.append("")

    if "median_time_on_task_s" in sheet and sheet["median_time_on_task_s"] is not None:
        out += [f"{h2} Time on task", ""]
        times = sheet["median_time_on_task_s"]
        if isinstance(times, Mapping):
            out += _table(("stage", "median time on task"),
                          [(_cell(stage), _seconds(value)) for stage, value in times.items()])
        else:
            out.append(f"Median time on task: {_seconds(times)}.")
        out.append("")

    human = sheet.get("human_performance") or {}
    if human:
        out += [f"{h2} Human performance", ""]
        if human.get("method"):
            out += [str(human["method"]).strip(), ""]
        rows = []
        by_split = human.get("by_split") or {}
        for name in _splits_of([by_split]):
            values = by_split[name]
            rows.append((_cell(name), _cell(values.get("questions")),
                         _cell(values.get("exact_match")), _cell(values.get("f1"))))
        if any(key in human for key in ("exact_match", "f1", "questions")):
            rows.append(("all", _cell(human.get("questions")), _cell(human.get("exact_match")),
                         _cell(human.get("f1"))))
        if rows:
            out += _table(("split", "questions", "EM", "F1"), rows)
            out.append("")

    files = sheet.get("files") or ()
    if files:
        out += [f"{h2} Files", ""]
        out += ["Each split of a format is in a file of its own, except where a file's "
                "split is \"all\" (its records carry their split, or it describes them "
                "all).", ""]
        out += _table(("file", "format", "split", "records"),
                      [(_cell(f"`{f.get('path')}`"), _cell(f.get("format")),
                        _cell(f.get("split") or "all"), _cell(f.get("records")))
                       for f in files])
        out.append("")

    licence = sheet.get("licence")
    if licence:
        out += [f"{h2} Licence", ""]
        if isinstance(licence, Mapping):
            for key, label in (("name", "Licence"), ("spdx", "Identifier"),
                               ("source", "Source corpus"), ("url", "URL"),
                               ("attribution", "Attribution")):
                if licence.get(key):
                    out.append(f"- **{label}:** {licence[key]}")
        else:
            out.append(str(licence))
        out.append("")

    notes = sheet.get("notes") or ()
    if notes:
        out += [f"{h2} Notes", ""]
        out += [f"- {' '.join(str(note).split())}" for note in notes]
        out.append("")

    other = {key: value for key, value in sheet.items() if key not in _KNOWN}
    if other:
        out += [f"{h2} Other", ""]
        out += [f"- **{_cell(key)}:** {_code(value)}" for key, value in other.items()]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def write_datasheet(path: str | os.PathLike[str], sheet: Mapping[str, Any], *,
                    pseudonyms: Pseudonymizer | None = None,
                    overwrite: bool = False) -> ManifestEntry:
    """Write ``DATASHEET.md``; ``records`` is 1."""
    with AtomicOutput(path, overwrite=overwrite) as out:
        out.write(render_datasheet(sheet, pseudonyms=pseudonyms))
    return out.entry(1)
