"""A submitted payload shown as the task form showed it: spans highlighted in their text,
labels as labels, free text as text, chosen options by their text.

``StageKind.payload_display`` returns a list of :class:`Block`; the generic reading here
suits most kinds (``StageKind.payload_labels`` names the fields that are labels), and kinds
whose payload points into their item (a choice among options, passages by rank, evidence in
one of several documents) say what it points at. ``annotation/_payload.html`` draws them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext, gettext_lazy

#: Characters of text kept around highlighted spans (the rest is elided).
CONTEXT = 200


@dataclass
class Block:
    """One field of a payload: ``kind`` is ``text``, ``labels``, ``list``, ``spans``
    (``segments`` of (text, highlighted)) or ``rows`` (``value`` is a list of Blocks)."""

    label: str
    kind: str
    value: Any = None
    segments: list[tuple[str, bool]] = field(default_factory=list)


#: The label of each field the stage kinds' payloads (and items' data) hold, in the reader's
#: language; a field not named here is shown by its key, humanized.
FIELD_LABELS: dict[str, Any] = {
    "accepted": gettext_lazy("Accepted"),
    "agreed": gettext_lazy("Agreed"),
    "alternatives": gettext_lazy("Alternatives"),
    "answer": gettext_lazy("Answer"),
    "answers": gettext_lazy("Answers"),
    "choice": gettext_lazy("Choice"),
    "conflict": gettext_lazy("Conflict"),
    "conflict_reason": gettext_lazy("Conflict reason"),
    "consensus": gettext_lazy("Consensus"),
    "decision": gettext_lazy("Decision"),
    "decisions": gettext_lazy("Decisions"),
    "doc": gettext_lazy("Document"),
    "document": gettext_lazy("Document"),
    "document_id": gettext_lazy("Document id"),
    "documents": gettext_lazy("Documents"),
    "dropped": gettext_lazy("Dropped"),
    "entities": gettext_lazy("Entities"),
    "evidence": gettext_lazy("Evidence"),
    "evidence_text": gettext_lazy("Evidence text"),
    "exclusions": gettext_lazy("Exclusions"),
    "external_id": gettext_lazy("External id"),
    "failed_step": gettext_lazy("Failed step"),
    "intent": gettext_lazy("Intent"),
    "kept": gettext_lazy("Kept"),
    "language": gettext_lazy("Language"),
    "matched": gettext_lazy("Matched"),
    "no_answer": gettext_lazy("No answer"),
    "note": gettext_lazy("Note"),
    "outcome": gettext_lazy("Outcome"),
    "passage": gettext_lazy("Passage"),
    "passage_text": gettext_lazy("Passage text"),
    "passages": gettext_lazy("Passages"),
    "passed": gettext_lazy("Passed"),
    "query": gettext_lazy("Query"),
    "query_id": gettext_lazy("Query id"),
    "query_type": gettext_lazy("Query type"),
    "question": gettext_lazy("Question"),
    "question_type": gettext_lazy("Question type"),
    "questions": gettext_lazy("Questions"),
    "rank": gettext_lazy("Rank"),
    "reason": gettext_lazy("Reason"),
    "reasons": gettext_lazy("Reasons"),
    "reject": gettext_lazy("Rejected"),
    "rule": gettext_lazy("Rule"),
    "score": gettext_lazy("Score"),
    "scores": gettext_lazy("Scores"),
    "selected": gettext_lazy("Selected"),
    "source": gettext_lazy("Source"),
    "spans": gettext_lazy("Spans"),
    "split": gettext_lazy("Split"),
    "step": gettext_lazy("Step"),
    "steps": gettext_lazy("Steps"),
    "text": gettext_lazy("Text"),
    "title": gettext_lazy("Title"),
    "unanswerable": gettext_lazy("Unanswerable"),
    "validated": gettext_lazy("Validated"),
    "yesno": gettext_lazy("Yes / no label"),
}


def humanize(key: str) -> str:
    """The label of payload field ``key`` in the active language (a field without one: its
    key, humanized)."""
    label = FIELD_LABELS.get(key)
    return str(label) if label is not None else key.replace("_", " ").capitalize()


def highlighted(text: str, spans: list[list[int]], *, context: int = CONTEXT
                ) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, highlighted) around ``spans`` (character offsets), with
    ``context`` characters kept on each side of them and the rest elided."""
    segments: list[tuple[str, bool]] = []
    cursor = 0
    for start, end in sorted(spans):
        start, end = max(start, cursor), min(end, len(text))
        if start >= end:
            continue
        gap = text[cursor:start]
        if cursor == 0 and len(gap) > context:
            gap = "…" + gap[-context:]
        elif len(gap) > 2 * context:
            gap = gap[:context] + " … " + gap[-context:]
        if gap:
            segments.append((gap, False))
        segments.append((text[start:end], True))
        cursor = end
    rest = text[cursor:]
    if len(rest) > context:
        rest = rest[:context] + "…"
    if rest:
        segments.append((rest, False))
    return segments


def generic_blocks(payload: dict[str, Any], *, labels: tuple[str, ...] = (),
                   text: str | None = None) -> list[Block]:
    """Each field of ``payload``: ``spans`` highlighted in ``text`` (the item's document),
    flags (true booleans) and ``labels`` fields as labels, strings as text, lists as
    lists, objects as nested rows. Empty and false fields are left out."""
    blocks: list[Block] = []
    flags = [humanize(key) for key, value in payload.items() if value is True]
    if flags:
        blocks.append(Block(gettext("Marked"), "labels", flags))
    for key, value in payload.items():
        if value in (None, "", [], {}) or isinstance(value, bool):
            continue
        name = humanize(key)
        if key == "spans" and text is not None:
            blocks.append(Block(name, "spans", segments=highlighted(text, value)))
        elif key in labels:
            blocks.append(Block(name, "labels", value if isinstance(value, list) else [value]))
        elif isinstance(value, dict):
            blocks.append(Block(name, "rows", generic_blocks(value, labels=labels)))
        elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
            blocks.append(Block(name, "rows", [
                Block(str(n), "rows", generic_blocks(v, labels=labels))
                for n, v in enumerate(value, start=1)]))
        elif isinstance(value, list):
            blocks.append(Block(name, "list", [
                v if isinstance(v, str) else ", ".join(map(str, v)) if isinstance(v, list)
                else str(v) for v in value]))
        else:
            blocks.append(Block(name, "text", str(value)))
    return blocks
