"""Who is asking, as the API answers it: 401 with ``WWW-Authenticate: Token`` when it does not
know (no credentials, a wrong or malformed token, a deactivated account), 403 when it knows
the account but refuses it (the role, or a session's failed CSRF check). Sessions keep
working for same-origin calls with their CSRF token; a token never needs one."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.roles import Role
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db

ME = "api_me"
NOT_PROVIDED = "Authentication credentials were not provided."


def _token(user) -> str:
    return Token.objects.create(user=user).key


def _api(authorization: str | None = None, **extra) -> APIClient:
    api = APIClient(enforce_csrf_checks=True)  # as a real client: no CSRF exemption
    if authorization is not None:
        api.credentials(HTTP_AUTHORIZATION=authorization, **extra)
    return api


def _unauthorized(response, detail: str) -> None:
    assert response.status_code == 401, response.content
    assert response["WWW-Authenticate"] == "Token"
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": detail}


def _forbidden(response) -> None:
    assert response.status_code == 403, response.content
    assert not response.has_header("WWW-Authenticate")
    assert response["Content-Type"] == "application/json"


def test_no_credentials_is_a_401_asking_for_a_token():
    _unauthorized(_api().get(reverse(ME)), NOT_PROVIDED)
    _unauthorized(_api().post(reverse("api_task_next"), {}, format="json"), NOT_PROVIDED)
    _unauthorized(_api().get(reverse("api_users")), NOT_PROVIDED)


def test_the_401_detail_is_in_the_clients_language():
    response = _api().get(reverse(ME), HTTP_ACCEPT_LANGUAGE="zh-hans")
    _unauthorized(response, "身份认证信息未提供。")
    wrong = _api("Token " + "0" * 40).get(reverse(ME), HTTP_ACCEPT_LANGUAGE="zh-hans")
    _unauthorized(wrong, "认证令牌无效。")


def test_an_unknown_or_deleted_token_is_a_401():
    _unauthorized(_api("Token " + "0" * 40).get(reverse(ME)), "Invalid token.")
    user = user_with_roles("gone-token", Role.ANNOTATOR)
    key = _token(user)
    api = _api(f"Token {key}")
    assert api.get(reverse(ME)).status_code == 200  # and cached
    Token.objects.filter(key=key).delete()
    _unauthorized(api.get(reverse(ME)), "Invalid token.")


@pytest.mark.parametrize("cached", [False, True])
def test_the_token_of_a_deactivated_account_is_a_401(cached):
    user = user_with_roles("left", Role.ANNOTATOR)
    api = _api(f"Token {_token(user)}")
    if cached:
        assert api.get(reverse(ME)).status_code == 200
    user.is_active = False
    user.save(update_fields=["is_active"])
    _unauthorized(api.get(reverse(ME)), "User inactive or deleted.")


@pytest.mark.parametrize(("authorization", "detail"), [
    ("Token", "Invalid token header. No credentials provided."),
    ("Token two words", "Invalid token header. Token string should not contain spaces."),
    ("Token caf\u00e9", "Invalid token header. Token string should not contain invalid "
                        "characters."),
    ("Bearer " + "0" * 40, NOT_PROVIDED),  # another scheme: no token was sent
    ("Basic YWRtaW46ZGVtbw==", NOT_PROVIDED),
    ("", NOT_PROVIDED),
])
def test_a_malformed_authorization_header_is_a_401(authorization, detail):
    _unauthorized(_api(authorization).get(reverse(ME)), detail)


def test_a_known_token_user_without_the_role_is_a_403():
    annotator = user_with_roles("ann-403", Role.ANNOTATOR)
    api = _api(f"Token {_token(annotator)}")
    _forbidden(refused := api.get(reverse("api_users")))
    assert refused.json() == {"detail": "Your account does not have the role this endpoint "
                                        "needs."}
    _forbidden(api.post(reverse("api_project_releases", args=[1]), {}, format="json"))
    checker = user_with_roles("chk-403", Role.CHECKER)
    _forbidden(_api(f"Token {_token(checker)}").post(reverse("api_task_next"), {},
                                                     format="json"))


def test_a_signed_in_user_without_the_role_is_a_403(client_for):
    client = client_for(user_with_roles("ann-session", Role.ANNOTATOR))
    _forbidden(client.get(reverse("api_users")))


def test_a_token_never_needs_a_csrf_token():
    annotator = user_with_roles("ann-token", Role.ANNOTATOR)
    api = _api(f"Token {_token(annotator)}")
    response = api.post(reverse("api_task_next"), {}, format="json")
    assert response.status_code == 204  # no project of theirs has a task: none waits
    # ... even with a session cookie of someone else beside it: the token says who asks.
    api.force_login(user_with_roles("chk-cookie", Role.CHECKER))
    assert api.post(reverse("api_task_next"), {}, format="json").status_code == 204
    assert api.get(reverse(ME)).json()["username"] == "ann-token"


def test_a_session_calls_the_api_with_its_csrf_token_and_is_refused_without():
    annotator = user_with_roles("ann-browser", Role.ANNOTATOR)
    annotator.set_password("a-browser-pass-91")
    annotator.save()
    browser = Client(enforce_csrf_checks=True)
    login = browser.get(reverse("login"))
    csrf = login.cookies["csrftoken"].value
    signed_in = browser.post(reverse("login"), {"username": "ann-browser",
                                                "password": "a-browser-pass-91",
                                                "csrfmiddlewaretoken": csrf})
    assert signed_in.status_code == 302
    csrf = browser.cookies["csrftoken"].value  # rotated at sign-in
    me = browser.get(reverse(ME))
    assert me.status_code == 200 and me.json()["username"] == "ann-browser"
    ok = browser.post(reverse("api_task_next"), "{}", content_type="application/json",
                      HTTP_X_CSRFTOKEN=csrf)
    assert ok.status_code == 204
    refused = browser.post(reverse("api_task_next"), "{}", content_type="application/json")
    _forbidden(refused)
    assert refused.json()["detail"].startswith("CSRF Failed")


def test_a_session_of_a_deactivated_account_is_a_401(client_for):
    user = user_with_roles("gone-session", Role.ADMIN)
    client = client_for(user)
    assert client.get(reverse(ME)).status_code == 200
    user.is_active = False
    user.save(update_fields=["is_active"])
    _unauthorized(client.get(reverse(ME)), NOT_PROVIDED)


def test_a_session_call_to_the_api_reads_nothing_once_cached(client_for,
                                                              django_assert_num_queries):
    """The token class asked first costs a session call nothing: no token lookup."""
    client = client_for(user_with_roles("ann-cost", Role.ANNOTATOR))
    assert client.get(reverse(ME)).status_code == 200  # fills the caches
    with django_assert_num_queries(0):
        assert client.get(reverse(ME)).json()["username"] == "ann-cost"
