"""Texts written to the database when something happens and read later by people in their own
language: an import's failure, a stage run's notes, why a worker is paused.

What is stored is the English msgid (marked with ``gettext_noop`` where it is written, so the
catalogue has it) and its parameters, as JSON: ``{"msgid": "line %(line)s", "params":
{"line": 3}}``. A parameter is a plain value, shown exactly as stored (a file name, a line
number, a field), or a stored text itself, translated in turn. The reader's page renders it
in the language active then; a plain string (a row written before, or words a person typed)
is shown as it is.
"""

from __future__ import annotations

from typing import Any

from django.utils import translation
from django.utils.translation import gettext

Param = Any  # str | int | float | StoredText


class StoredText:
    """A msgid and its parameters: ``str()`` is the text in the active language."""

    __slots__ = ("msgid", "params")

    def __init__(self, msgid: str, /, **params: Param) -> None:
        self.msgid = msgid
        self.params = params

    def __str__(self) -> str:
        text = gettext(self.msgid)
        if not self.params:
            return text
        return text % {name: str(value) if isinstance(value, StoredText) else value
                       for name, value in self.params.items()}

    def __repr__(self) -> str:
        return f"StoredText({self.msgid!r}, **{self.params!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, StoredText) and other.msgid == self.msgid
                and other.params == self.params)

    def __hash__(self) -> int:
        return hash(self.msgid)

    def english(self) -> str:
        """The text in English, whatever language is active (what a row keeps for machines,
        logs and readers of old versions)."""
        with translation.override("en"):
            return str(self)

    def as_json(self) -> dict[str, Any]:
        return {"msgid": self.msgid,
                "params": {name: value.as_json() if isinstance(value, StoredText) else value
                           for name, value in self.params.items()}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StoredText:
        params = data.get("params") or {}
        return cls(str(data["msgid"]), **{
            name: cls.from_json(value) if _is_stored(value) else value
            for name, value in params.items()})


def _is_stored(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("msgid"), str)


def stored_text_json(text: str | StoredText | None) -> dict[str, Any]:
    """What a JSON field keeps of ``text``: its msgid and parameters, or ``{}`` for a plain
    string (shown as it is, from the text field beside)."""
    return text.as_json() if isinstance(text, StoredText) else {}


def stored_text_english(text: str | StoredText | None) -> str:
    """The English of ``text`` for a text field (a plain string as it is)."""
    if isinstance(text, StoredText):
        return text.english()
    return text or ""


def stored_text_render(stored: Any, fallback: str = "") -> str:
    """A stored text in the active language: ``{"msgid", "params"}`` (or a ``StoredText``)
    rendered; anything else (an old row's English, a person's words) as ``fallback`` or as
    it is. A msgid whose parameters no longer fit its translation falls back too."""
    if isinstance(stored, StoredText):
        text = stored
    elif _is_stored(stored):
        text = StoredText.from_json(stored)
    else:
        return fallback or ("" if stored in (None, {}) else str(stored))
    try:
        return str(text)
    except (KeyError, TypeError, ValueError):
        return fallback or text.msgid


def stored_label(label: Any) -> StoredText:
    """A lazy label (a choice's ``gettext_lazy`` name) as a stored text: its msgid, which is
    its English."""
    with translation.override("en"):
        return StoredText(str(label))
