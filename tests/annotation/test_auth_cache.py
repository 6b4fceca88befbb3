"""The user behind a session or an API token, with their roles, comes from the cache
(``annotation.auth``) and stops working the moment the account, its groups or its token
change."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.roles import Role
from tests.factories import user_with_roles


@pytest.fixture
def api_for(db):
    def make(user):
        token = Token.objects.create(user=user)
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return api, token

    return make


def test_a_token_request_reads_no_user_or_group_once_cached(annotator, api_for,
                                                             django_assert_num_queries):
    api, _ = api_for(annotator)
    assert api.get(reverse("api_me")).json()["roles"] == ["annotator"]  # fills the cache
    with django_assert_num_queries(0):
        me = api.get(reverse("api_me"))
    assert me.status_code == 200 and me.json()["username"] == "ann"


def test_a_session_page_reads_only_the_session_once_cached(annotator, client_for):
    client = client_for(annotator)
    url = reverse("annotation:annotator_home")
    assert client.get(url).status_code == 200  # fills the cache
    assert _auth_queries(_queries(client, url)) == []
    # Not cached (forgotten): the user and their groups are read again, and cached.
    assert len(_auth_queries(_queries(client, url, forget=annotator.pk))) == 2
    assert _auth_queries(_queries(client, url)) == []


def test_a_signed_in_page_reads_its_session_from_the_cache(annotator, client_for):
    client = client_for(annotator)
    url = reverse("annotation:annotator_home")
    assert client.get(url).status_code == 200  # fills the caches
    assert not [q for q in _queries(client, url) if 'FROM "django_session"' in q]
    # Signed out: the session is gone from the cache and the database alike.
    client.logout()
    assert client.get(url).status_code == 302


def _auth_queries(queries):
    return [q for q in queries if 'FROM "auth_user"' in q or 'FROM "auth_group"' in q]


def _queries(client, url, forget=None):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.auth import user_forget

    if forget is not None:
        user_forget(forget)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return [q["sql"] for q in captured.captured_queries]


def test_deactivation_a_lost_role_and_a_deleted_token_take_effect_at_once(
        annotator, api_for, client_for):
    api, token = api_for(annotator)
    next_url = reverse("api_task_next")
    assert api.post(next_url, {}, format="json").status_code in (200, 204)
    # The annotator group taken away: the API refuses the annotator's endpoint.
    annotator.groups.remove(Group.objects.get(name=Role.ANNOTATOR))
    assert api.post(next_url, {}, format="json").status_code == 403
    # ... and given back, from the group's side of the relation.
    Group.objects.get(name=Role.ANNOTATOR).user_set.add(annotator)
    assert api.post(next_url, {}, format="json").status_code in (200, 204)
    # A deleted token is refused at the next request.
    token.delete()
    refused = api.get(reverse("api_me"))
    assert refused.status_code == 401 and refused.json()["detail"] == "Invalid token."
    assert refused["WWW-Authenticate"] == "Token"
    # A deactivated account loses its session at the next page.
    client = client_for(annotator)
    assert client.get(reverse("annotation:annotator_home")).status_code == 200
    annotator.is_active = False
    annotator.save(update_fields=["is_active"])
    response = client.get(reverse("annotation:annotator_home"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_new_password_ends_other_sessions(annotator, client_for):
    client = client_for(annotator)
    url = reverse("annotation:annotator_home")
    assert client.get(url).status_code == 200
    annotator.set_password("a-brand-new-password-77")
    annotator.save()
    assert client.get(url).status_code == 302


def test_the_cache_can_be_turned_off(settings, api_for, django_assert_max_num_queries):
    settings.CROWDQA_AUTH_CACHE_SECONDS = 0
    user = user_with_roles("ann2", Role.ANNOTATOR)
    api, _ = api_for(user)
    api.get(reverse("api_me"))
    with django_assert_max_num_queries(2) as captured:
        assert api.get(reverse("api_me")).status_code == 200
    assert any("authtoken_token" in q["sql"] for q in captured.captured_queries)


def test_a_deactivation_drops_again_what_a_request_cached_before_it_committed(
        annotator, api_for, django_capture_on_commit_callbacks):
    """The change drops the cached user inside its transaction; a request of that worker
    before the commit (another connection) still reads the account as it was, active, and
    caches it: the commit drops it again, so the deactivation holds at once, not after
    CROWDQA_AUTH_CACHE_SECONDS. (The race itself, with two connections, is the PostgreSQL
    test below.)"""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from annotation import auth

    api, token = api_for(annotator)
    assert api.get(reverse("api_me")).status_code == 200
    as_committed = get_user_model().objects.get(pk=annotator.pk)  # what the other reads
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        annotator.is_active = False
        annotator.save(update_fields=["is_active"])
        # the other connection's request, between the change and its commit
        auth._remember(auth._user_key(annotator.pk), as_committed)
        auth._remember(auth._token_key(token.key), as_committed)
    refused = api.get(reverse("api_me"))
    assert refused.status_code == 401
    assert auth.user_cached(annotator.pk).is_active is False


@pytest.mark.django_db(transaction=True)
def test_a_deactivation_holds_against_a_request_while_it_commits(db):
    """Two connections (PostgreSQL): the admin's transaction deactivates the worker; the
    worker's API request meanwhile reads the committed row (still active) and caches it;
    once the deactivation commits, the worker's next request is refused."""
    import threading

    from django.contrib.auth import get_user_model
    from django.db import connection, connections, transaction

    if connection.vendor != "postgresql":
        pytest.skip("two concurrent connections need PostgreSQL (DATABASE_URL=postgres://...)")
    worker = user_with_roles("racer", Role.ANNOTATOR)
    token = Token.objects.create(user=worker)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api.get(reverse("api_me")).status_code == 200
    saved, asked, errors = threading.Event(), threading.Event(), []

    def deactivate() -> None:
        try:
            with transaction.atomic():
                account = get_user_model().objects.get(pk=worker.pk)
                account.is_active = False
                account.save(update_fields=["is_active"])
                saved.set()
                assert asked.wait(timeout=60), "the worker's request never came"
        except Exception as exc:  # surfaced below
            errors.append(repr(exc))
        finally:
            saved.set()
            connections.close_all()

    admin = threading.Thread(target=deactivate)
    admin.start()
    assert saved.wait(timeout=60)
    assert api.get(reverse("api_me")).status_code == 200  # not committed yet
    asked.set()
    admin.join()
    assert errors == []
    assert api.get(reverse("api_me")).status_code == 401
