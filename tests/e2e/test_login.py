"""Each demo user logs in through the browser and lands on its own home page."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tests.e2e.pages import submit

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

HOMES = [
    ("admin", "/manage/", "Projects and releases"),
    ("checker", "/review/", "Batches to review"),
    ("annotator1", "/tasks/", "My tasks"),
    ("annotator2", "/tasks/", "My tasks"),
    ("annotator3", "/tasks/", "My tasks"),
]


@pytest.fixture
def demo_users(settings):
    call_command("load_demo", "--no-projects", verbosity=0)
    return settings.CROWDQA_DEMO_PASSWORD


@pytest.mark.parametrize(("username", "path", "heading"), HOMES)
def test_demo_user_logs_in_and_sees_its_home(
    page, login, screenshot, demo_users, username, path, heading
):
    login(username, demo_users)
    assert page.url.endswith(path)
    assert page.locator("h1").first.inner_text() == heading
    assert page.get_by_test_id("username").inner_text() == username
    screenshot(f"home-{username}")
    # Navigation shows only what the role may open.
    nav = page.locator("nav.nav").inner_text()
    assert ("Projects and releases" in nav) == (username == "admin")
    assert ("My tasks" in nav) == username.startswith("annotator")


def test_wrong_password_is_refused(page, login, demo_users):
    login("annotator1", "not-the-password")
    assert "/accounts/login/" in page.url
    assert page.locator(".error").inner_text().startswith("Your username and password")


def test_logout_returns_to_login(page, login, demo_users):
    login("checker", demo_users)
    submit(page, "text=Log out")
    assert "/accounts/login/" in page.url
    page.goto("/review/")
    assert "/accounts/login/?next=/review/" in page.url
