"""Waiting in a test for a state it needs (a job finished, a row present, a process
listening) by polling the product's own signals, never by a fixed sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest


def wait_until(condition: Callable[[], Any], *, timeout: float, what: str,
               interval: float = 0.05, detail: Callable[[], str] = lambda: "") -> Any:
    """Poll ``condition`` until it returns something true, and return that; after
    ``timeout`` seconds fail the test naming ``what``, with ``detail()`` (the state seen)."""
    deadline = time.monotonic() + timeout
    while True:
        if result := condition():
            return result
        if time.monotonic() > deadline:
            seen = detail()
            pytest.fail(f"waited {timeout:.0f} s for {what}" + (f"\n{seen}" if seen else ""))
        time.sleep(interval)
