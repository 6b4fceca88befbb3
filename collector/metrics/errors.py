"""The one exception type of the metrics library.

Every problem with the caller's input (a malformed prediction file, an unknown question id,
an empty corpus, a case where the official script would crash) is raised as
:class:`MetricsInputError` with a one-line message that names the file, the line and the
field where that is known. The command line prints that line and exits non-zero.
"""

from __future__ import annotations


class MetricsInputError(ValueError):
    """Input that cannot be scored; the message is one line meant for a person."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        where = ""
        if source is not None:
            where = source if line is None else f"{source}, line {line}"
            where += ": "
        super().__init__(where + " ".join(str(message).split()))
        self.source = source
        self.line = line
