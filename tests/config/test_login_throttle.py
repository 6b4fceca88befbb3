"""Login throttling (django-axes): per account and per address, on by default.

Contract: after 10 failed logins for one username within 15 minutes the next attempts are
refused (HTTP 429 with a message) even with the right password, until a cool-down passes.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import Client
from django.utils import timezone

from annotation.roles import Role
from tests.factories import PASSWORD, user_with_roles

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"


def _post(client: Client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post(LOGIN, {"username": username, "password": password},
                       REMOTE_ADDR=address)


def _logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def _fail(client: Client, username: str, times: int, address: str = "10.0.0.1",
          *, counted: int = 0) -> None:
    """``times`` wrong passwords, ``counted`` failures already counted against the same
    username or address: the form again with its error, except that the failure reaching
    the limit (the 10th) is answered with the lock already."""
    for n in range(counted + 1, counted + times + 1):
        response = _post(client, username, "wrong-password", address)
        if n >= 10:
            assert response.status_code == 429, n
        else:
            assert response.status_code == 200, n
            assert b"did not match" in response.content


def test_throttling_is_on_by_default(settings):
    assert settings.AXES_ENABLED is True
    assert settings.AXES_FAILURE_LIMIT == 10
    assert settings.AXES_COOLOFF_TIME.total_seconds() == 15 * 60
    assert settings.AUTHENTICATION_BACKENDS[0] == "axes.backends.AxesStandaloneBackend"


def test_ten_failures_lock_the_account_even_for_the_right_password():
    user_with_roles("ann", Role.ANNOTATOR)
    client = Client()
    _fail(client, "ann", 10)
    response = _post(client, "ann", PASSWORD)
    assert response.status_code == 429
    text = response.content.decode()
    assert "Too many failed logins for this account or from your address" in text
    assert "locked for 15 minutes" in text
    assert response["Retry-After"] == str(15 * 60)
    assert not _logged_in(client)


def test_nine_failures_still_let_the_right_password_in():
    user_with_roles("ann", Role.ANNOTATOR)
    client = Client()
    _fail(client, "ann", 9)
    response = _post(client, "ann", PASSWORD)
    assert response.status_code == 302
    assert _logged_in(client)


def test_the_account_stays_locked_from_another_address():
    """Per account: ten failures from ten addresses lock the username everywhere."""
    user_with_roles("ann", Role.ANNOTATOR)
    client = Client()
    for n in range(10):
        _fail(client, "ann", 1, address=f"10.0.1.{n}", counted=n)
    response = _post(client, "ann", PASSWORD, address="10.0.2.1")
    assert response.status_code == 429
    assert not _logged_in(client)


def test_failures_from_one_address_lock_that_address_only():
    """Per address: ten failures over many usernames lock the address, not the accounts."""
    user_with_roles("ann", Role.ANNOTATOR)
    attacker = Client()
    for n in range(10):
        _fail(attacker, f"guess{n}", 1, address="10.6.6.6", counted=n)
    assert _post(attacker, "ann", PASSWORD, address="10.6.6.6").status_code == 429
    assert not _logged_in(attacker)
    elsewhere = Client()
    assert _post(elsewhere, "ann", PASSWORD, address="10.0.0.7").status_code == 302
    assert _logged_in(elsewhere)


def test_the_lock_lifts_after_the_cool_down():
    user_with_roles("ann", Role.ANNOTATOR)
    client = Client()
    _fail(client, "ann", 10)
    assert _post(client, "ann", PASSWORD).status_code == 429
    # A refused attempt during the lock restarts the cool-down; 16 minutes of quiet end it.
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    response = _post(client, "ann", PASSWORD)
    assert response.status_code == 302
    assert _logged_in(client)


def test_the_admin_login_is_throttled_too():
    user_with_roles("adm", Role.ADMIN)
    client = Client()
    for _ in range(10):
        client.post("/admin/login/", {"username": "adm", "password": "nope"},
                    REMOTE_ADDR="10.0.0.9")
    response = client.post("/admin/login/", {"username": "adm", "password": PASSWORD},
                           REMOTE_ADDR="10.0.0.9")
    assert response.status_code == 429
    assert not _logged_in(client)


def test_an_api_client_gets_the_message_as_json():
    user_with_roles("ann", Role.ANNOTATOR)
    client = Client()
    _fail(client, "ann", 10)
    response = client.post(LOGIN, {"username": "ann", "password": PASSWORD},
                           REMOTE_ADDR="10.0.0.1", HTTP_ACCEPT="application/json")
    assert response.status_code == 429
    assert response.json()["detail"].startswith("Too many failed logins")


def test_a_forwarded_for_header_does_not_dodge_the_address_lock():
    """Without CROWDQA_PROXY_COUNT the client address is REMOTE_ADDR, whatever
    X-Forwarded-For claims."""
    user_with_roles("ann", Role.ANNOTATOR)
    client = Client()
    for n in range(10):
        client.post(LOGIN, {"username": f"guess{n}", "password": "x"},
                    REMOTE_ADDR="10.6.6.6", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")
    response = client.post(LOGIN, {"username": "ann", "password": PASSWORD},
                           REMOTE_ADDR="10.6.6.6", HTTP_X_FORWARDED_FOR="192.0.2.99")
    assert response.status_code == 429


def test_behind_a_proxy_each_client_is_its_own_address(settings):
    """CROWDQA_PROXY_COUNT=1: the client address is the right-most of X-Forwarded-For (what
    the proxy saw), so one client's failures lock that client, not everyone behind the same
    proxy; and what a client writes into the header itself (to the left) changes nothing."""
    settings.AXES_IPWARE_PROXY_COUNT = 1
    user_with_roles("ann", Role.ANNOTATOR)
    proxy = "10.0.0.2"

    def login(username: str, password: str, forwarded: str):
        return Client().post(LOGIN, {"username": username, "password": password},
                             REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=forwarded)

    for n in range(10):  # a guesser, claiming a new address each time on the left
        login(f"guess{n}", "x", f"192.0.2.{n}, 198.51.100.1")
    assert login("ann", PASSWORD, "203.0.113.5, 198.51.100.1").status_code == 429
    # Another client behind the same proxy signs in.
    assert login("ann", PASSWORD, "198.51.100.2").status_code == 302
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {
        "198.51.100.1"}
