"""A terminal progress bar (tqdm on stderr) with the shape of ``ProgressSink``."""

from __future__ import annotations

from typing import IO, Any

from tqdm import tqdm


class TerminalProgress:
    """Each ``start()`` begins a new bar (reading a file, then indexing its passages)."""

    def __init__(self, *, stream: IO[str], enabled: bool = True, byte_phase: bool = True) -> None:
        self.stream = stream
        self.enabled = enabled
        self.byte_phase = byte_phase
        self.bar: tqdm | None = None
        self.phase = 0

    def start(self, *, total: int | None, message: str = "") -> None:
        self.close()
        self.phase += 1
        in_bytes = self.byte_phase and self.phase == 1
        options: dict[str, Any] = (
            {"unit": "B", "unit_scale": True, "unit_divisor": 1024} if in_bytes
            else {"unit": " passages", "unit_scale": True}
        )
        self.bar = tqdm(total=total, desc=str(message), file=self.stream,
                        disable=not self.enabled,
                        dynamic_ncols=True, leave=True, **options)

    def advance(self, n: int = 1, *, message: str | None = None) -> None:
        if self.bar is not None:
            self.bar.update(n)
            if message:
                self.bar.set_postfix_str(str(message), refresh=False)

    def set(self, done: int, *, total: int | None = None, message: str | None = None) -> None:
        if self.bar is None:
            return
        if total is not None:
            self.bar.total = total
        self.bar.update(done - self.bar.n)
        if message:
            self.bar.set_postfix_str(str(message), refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
