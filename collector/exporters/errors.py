"""Errors raised by the exporters. A writer that raises leaves no file behind."""

from __future__ import annotations


class ExportError(Exception):
    """Base class: the export was refused or failed; nothing was written."""


class InvalidRecordError(ExportError, ValueError):
    """A record breaks the format's rules (an offset that does not match its text, a
    missing field, an unknown label). The message names the record (question id, query id,
    story id) so the offending row can be found in the database."""


class RecordOrderError(ExportError):
    """Grouped input arrived out of order (e.g. SQuAD rows of one article not contiguous)."""
