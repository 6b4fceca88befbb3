"""Browser tests: Playwright for Python driving Debian's chromium (never a downloaded one).

Run with ``make e2e``; set ``CROWDQA_SCREENSHOTS=1`` to save screenshots into
``docs/screenshots/``. Without /usr/bin/chromium these tests skip, unless
``CROWDQA_REQUIRE_BROWSER=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import skip_or_fail
from tests.e2e.pages import submit
from tests.factories import PASSWORD

# Playwright's sync API runs an event loop in this thread; Django's ORM must still be
# usable from the test body (pytest-django's live_server runs the site in another thread).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CROWDQA_CHROMIUM", "/usr/bin/chromium")
SCREENSHOT_DIR = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]


def pytest_collection_modifyitems(config, items):
    """Every test under tests/e2e is a browser test (``-m "not e2e"`` leaves them out)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def browser() -> Iterator:
    if not Path(CHROMIUM).exists() and not shutil.which(CHROMIUM):
        skip_or_fail(f"no chromium at {CHROMIUM} (apt-get install chromium)",
                     required_by="CROWDQA_REQUIRE_BROWSER")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=CHROMIUM_ARGS,
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def csp_violations() -> Iterator[list[str]]:
    """Content-Security-Policy violations reported by any page of the test (chromium logs
    each as a console error); the test fails if there is one."""
    violations: list[str] = []
    yield violations
    assert not violations, "Content-Security-Policy violations:\n" + "\n".join(violations)


def watch_csp(context, violations: list[str]) -> None:
    def on_console(message) -> None:
        if message.type == "error" and "Content Security Policy" in message.text:
            violations.append(f"{message.location.get('url')}: {message.text}")

    context.on("console", on_console)


@pytest.fixture
def page(browser, live_server, csp_violations) -> Iterator:
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 800})
    watch_csp(context, csp_violations)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture
def login(page) -> Callable[[str, str], None]:
    """``login(username, password=PASSWORD)`` signs in through the login form."""

    def do_login(username: str, password: str = PASSWORD) -> None:
        page.goto("/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        submit(page, "button[type=submit]")

    return do_login


@pytest.fixture
def screenshot(page) -> Callable[..., None]:
    """``screenshot(name, of=page, element=None)`` saves docs/screenshots/<name>.png when
    CROWDQA_SCREENSHOTS=1 (of the test's ``page`` unless another page is given; the whole
    page, or only the ``element`` a selector names)."""

    def take(name: str, of=None, element: str | None = None) -> None:
        if os.environ.get("CROWDQA_SCREENSHOTS") in ("1", "true"):
            SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
            path = str(SCREENSHOT_DIR / f"{name}.png")
            if element is not None:
                (of or page).locator(element).screenshot(path=path)
            else:
                (of or page).screenshot(path=path, full_page=True)

    return take


@pytest.fixture
def as_user(browser, live_server, csp_violations) -> Iterator[Callable[..., Any]]:
    """``as_user(username, password=PASSWORD, **context)``: a new browser context logged in
    as that user (several users side by side in one test); ``context``: Playwright's context
    options over a laptop's viewport (a phone's, touch)."""
    contexts = []

    def open_as(username: str, password: str = PASSWORD, **options: Any):
        context = browser.new_context(**{"base_url": live_server.url,
                                         "viewport": {"width": 1280, "height": 900},
                                         **options})
        watch_csp(context, csp_violations)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto("/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        submit(page, "button[type=submit]")
        return page

    yield open_as
    for context in contexts:
        context.close()

