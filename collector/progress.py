"""Progress reporting for long work, whoever shows it (job page, terminal bar, nobody).

``collector.jobs.Progress`` (the job page's live progress) has this shape; the
management commands pass a tqdm adapter; services default to ``NullProgress``.
"""

from __future__ import annotations

from typing import Protocol


class ProgressSink(Protocol):
    def start(self, *, total: int | None, message: str = "") -> None: ...

    def advance(self, n: int = 1, *, message: str | None = None) -> None: ...

    def set(self, done: int, *, total: int | None = None,
            message: str | None = None) -> None: ...


class NullProgress:
    def start(self, *, total: int | None, message: str = "") -> None:
        pass

    def advance(self, n: int = 1, *, message: str | None = None) -> None:
        pass

    def set(self, done: int, *, total: int | None = None, message: str | None = None) -> None:
        pass
