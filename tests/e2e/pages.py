"""Steps the browser tests share."""

from __future__ import annotations

from typing import Any


def task_next(page: Any, ready: str | None = None) -> None:
    """Press "n" for the next task and wait until its page has loaded (and ``ready`` is
    there). Task pages bind their keys in deferred scripts: a key pressed before the load
    event can be lost (CI lost two arrow presses that way)."""
    with page.expect_navigation(wait_until="load"):
        page.keyboard.press("n")
    if ready:
        page.wait_for_selector(ready)


def submit(page: Any, target: str | None = None, *, key: str | None = None) -> None:
    """Click ``target`` (or press ``key``) to submit the page's form, and wait until the
    next page has loaded. Waiting for "networkidle" after the click is a race: it can
    return before the browser has even sent the form (it did, on a loaded machine)."""
    with page.expect_navigation(wait_until="load"):
        if key is not None:
            page.keyboard.press(key)
        else:
            page.click(target)
