"""Messages of the filters for their readers (plain Python, no Django).

A filter's refusal of a stage parameter and a verdict's reason are written here in English,
as a msgid and its parameters (:class:`Message`): ``str()`` is the English, ``as_json()``
the ``{"msgid", "params"}`` that :mod:`collector.stored_text` renders in the reader's
language (the Django layer translates at display time, as with the importers' messages).
A parameter is a plain value, shown as it is, or a :class:`Message`, translated in turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def gettext_noop(msgid: str) -> str:
    """Marks ``msgid`` for the catalogue (``makemessages`` collects this name) and returns it."""
    return msgid


class Message:
    """A msgid and its parameters; ``str()`` is the English text."""

    __slots__ = ("msgid", "params")

    def __init__(self, msgid: str, /, **params: Any) -> None:
        self.msgid = msgid
        self.params: Mapping[str, Any] = params

    def __str__(self) -> str:
        if not self.params:
            return self.msgid
        return self.msgid % {name: str(value) if isinstance(value, Message) else value
                             for name, value in self.params.items()}

    def __repr__(self) -> str:
        return f"Message({self.msgid!r}, **{dict(self.params)!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Message) and other.msgid == self.msgid
                and dict(other.params) == dict(self.params))

    def __hash__(self) -> int:
        return hash(self.msgid)

    def as_json(self) -> dict[str, Any]:
        """``{"msgid", "params"}``, the stored-text form (nested messages nested)."""
        return {"msgid": self.msgid,
                "params": {name: value.as_json() if isinstance(value, Message) else value
                           for name, value in self.params.items()}}


class FilterParamError(ValueError):
    """A filter parameter refused: ``str()`` is the English; ``message`` the
    :class:`Message` to show a reader in their language."""

    def __init__(self, msgid: str, /, **params: Any) -> None:
        self.message = Message(msgid, **params)
        super().__init__(str(self.message))


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters (what a refusal quotes of bad input)."""
    return f"{value!r:.{limit}}"
