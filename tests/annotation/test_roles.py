"""Role checks on pages and API endpoints."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.roles import Role, has_role, user_roles
from tests.factories import user_with_roles

ANNOTATOR_PAGES = ["annotation:annotator_home"]
CHECKER_PAGES = ["annotation:checker_home"]
ADMIN_PAGES = ["annotation:admin_home"]
CHECKER_API = ["api_workers"]
ADMIN_API = ["api_users"]


@pytest.mark.django_db
@pytest.mark.parametrize("name", ANNOTATOR_PAGES + CHECKER_PAGES + ADMIN_PAGES)
def test_anonymous_users_are_sent_to_login(client, name):
    url = reverse(name)
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={url}"


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["api_me", *CHECKER_API, *ADMIN_API])
def test_anonymous_api_calls_are_refused(name):
    response = APIClient().get(reverse(name))
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize("name", CHECKER_PAGES + ADMIN_PAGES)
def test_annotator_gets_403_on_checker_and_admin_pages(client_for, annotator, name):
    response = client_for(annotator).get(reverse(name))
    assert response.status_code == 403
    assert b"needs the role" in response.content


@pytest.mark.parametrize("name", CHECKER_API + ADMIN_API)
def test_annotator_gets_403_on_checker_and_admin_api(annotator, name):
    api = APIClient()
    api.force_authenticate(annotator)
    assert api.get(reverse(name)).status_code == 403


@pytest.mark.parametrize("name", ADMIN_PAGES)
def test_checker_cannot_reach_admin_pages(client_for, checker, name):
    assert client_for(checker).get(reverse(name)).status_code == 403


def test_checker_cannot_reach_admin_api_or_django_admin(client_for, checker):
    api = APIClient()
    api.force_authenticate(checker)
    assert api.get(reverse("api_users")).status_code == 403
    assert api.get(reverse("api_workers")).status_code == 200
    response = client_for(checker).get(reverse("admin:index"))
    assert response.status_code == 302
    assert reverse("admin:login") in response["Location"]


def test_checker_is_not_an_annotator(client_for, checker):
    assert client_for(checker).get(reverse("annotation:annotator_home")).status_code == 403


def test_admin_reaches_admin_and_checker_pages_and_django_admin(client_for, admin_user):
    client = client_for(admin_user)
    assert client.get(reverse("annotation:admin_home")).status_code == 200
    assert client.get(reverse("annotation:checker_home")).status_code == 200
    assert client.get(reverse("admin:index")).status_code == 200
    assert client.get(reverse("admin:collector_job_changelist")).status_code == 200


@pytest.mark.parametrize(
    ("fixture", "landing"),
    [
        ("annotator", "annotation:annotator_home"),
        ("checker", "annotation:checker_home"),
        ("admin_user", "annotation:admin_home"),
    ],
)
def test_home_redirects_by_role(request, client_for, fixture, landing):
    user = request.getfixturevalue(fixture)
    response = client_for(user).get(reverse("annotation:home"))
    assert response.status_code == 302
    assert response["Location"] == reverse(landing)


@pytest.mark.django_db
def test_user_without_role_is_told_so(client_for):
    user = user_with_roles("nobody")
    response = client_for(user).get(reverse("annotation:home"), follow=True)
    assert response.status_code == 403
    assert b"has no role" in response.content


def test_token_authentication_and_roles_in_api(admin_user, annotator):
    token = Token.objects.create(user=admin_user)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    me = api.get(reverse("api_me")).json()
    assert me["username"] == "adm"
    assert me["roles"] == ["admin", "checker"]
    users = {u["username"]: u["roles"] for u in api.get(reverse("api_users")).json()["results"]}
    assert users["ann"] == ["annotator"]


def test_role_logic(annotator, checker, admin_user, django_user_model):
    assert user_roles(annotator) == {Role.ANNOTATOR}
    assert has_role(admin_user, Role.CHECKER)
    assert not has_role(checker, Role.ADMIN)
    superuser = django_user_model.objects.create_superuser("root", "r@x.org", "pw-0123456789")
    assert user_roles(superuser) == set(Role)
    annotator.is_active = False
    annotator._crowdqa_roles = None
    assert user_roles(annotator) == frozenset()


def test_forms_carry_csrf(client_for, annotator):
    content = client_for(annotator).get(reverse("annotation:annotator_home")).content.decode()
    assert 'hx-headers=\'{"X-CSRFToken": "' in content
    assert 'name="csrfmiddlewaretoken"' in content  # the logout form


def test_a_checker_lists_only_the_annotators_of_the_projects_they_check(
        newsqa_project, news_corpus, workers, admin_user, client_for):
    from annotation import engine

    other = engine.project_create(name="Elsewhere", recipe="newsqa", corpus=news_corpus,
                                  user=admin_user)
    outsider = user_with_roles("outsider", Role.ANNOTATOR)
    engine.project_member_add(project=other, user=outsider, role=Role.ANNOTATOR)
    checker = user_with_roles("check1", Role.CHECKER)
    engine.project_member_add(project=newsqa_project, user=checker, role=Role.CHECKER)
    idle_checker = user_with_roles("check2", Role.CHECKER)

    def listed(user) -> set[str]:
        response = client_for(user).get("/api/v1/workers/")
        assert response.status_code == 200
        return {row["username"] for row in response.json()["results"]}

    assert listed(checker) == set(workers)
    assert listed(idle_checker) == set()
    assert listed(admin_user) == {*workers, "outsider"}


def test_checkers_get_no_personal_data_of_workers_and_admins_their_last_sign_in(
        newsqa_project, workers, admin_user, client_for, client):
    """Checkers review batches: the workers list gives them each worker's id and username,
    not when they last signed in (nor e-mail, names or marketplace ids); admins keep
    ``last_login``, and the schema says it is theirs alone."""
    from annotation import engine
    from annotation.models import ExternalAccount

    worker = workers["ann1"]
    worker.email, worker.first_name, worker.last_name = "ann1@example.org", "Ann", "Smith"
    worker.save()
    ExternalAccount.objects.create(platform="prolific", external_id="5f1a2b3c4d5e6f708192a3b4",
                                   user=worker)
    client_for(worker)  # signs in: last_login set
    worker.refresh_from_db()
    assert worker.last_login is not None
    checker = user_with_roles("check1", Role.CHECKER)
    engine.project_member_add(project=newsqa_project, user=checker, role=Role.CHECKER)

    def row_of(user) -> dict:
        response = client_for(user).get("/api/v1/workers/")
        assert response.status_code == 200
        return next(r for r in response.json()["results"] if r["id"] == worker.pk)

    seen = row_of(checker)
    assert seen == {"id": worker.pk, "username": "ann1"}
    text = client_for(checker).get("/api/v1/workers/").content.decode()
    for personal in ("last_login", "ann1@example.org", "Smith", "5f1a2b3c4d5e6f708192a3b4"):
        assert personal not in text
    assert row_of(admin_user) == {"id": worker.pk, "username": "ann1",
                                  "last_login": worker.last_login.isoformat().replace(
                                      "+00:00", "Z")}
    schema = client_for(admin_user).get("/api/v1/schema/", {"format": "json"}).json()
    page = schema["paths"]["/api/v1/workers/"]["get"]["responses"]["200"]["content"][
        "application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    shape = schema["components"]["schemas"][schema["components"]["schemas"][page][
        "properties"]["results"]["items"]["$ref"].rsplit("/", 1)[1]]
    assert set(shape["properties"]) == {"id", "username", "last_login"}
    assert shape["required"] == ["id", "username"]
    assert "Admins only" in shape["properties"]["last_login"]["description"]


def test_a_stages_guidelines_are_for_its_projects_members(newsqa_project, workers,
                                                          admin_user, client_for):
    stage = newsqa_project.stages.get(kind="newsqa_answer")
    url = reverse("annotation:stage_guidelines", args=[stage.pk])
    assert client_for(workers["ann1"]).get(url).status_code == 200
    assert client_for(admin_user).get(url).status_code == 200
    stranger = user_with_roles("stranger", Role.ANNOTATOR)
    assert client_for(stranger).get(url).status_code == 404


def test_the_users_api_reads_roles_in_a_fixed_number_of_queries(
        admin_user, client_for, django_assert_max_num_queries):
    """The users list prefetches the groups: one query per page, not one per user."""
    for n in range(30):
        user_with_roles(f"crowd{n:02d}", Role.ANNOTATOR if n % 3 else Role.CHECKER)
    client = client_for(admin_user)
    with django_assert_max_num_queries(6):
        page = client.get(reverse("api_users")).json()
    roles = {u["username"]: u["roles"] for u in page["results"]}
    assert page["count"] == 31 and len(roles) == 31
    assert roles["crowd00"] == ["checker"] and roles["crowd01"] == ["annotator"]
    assert roles["adm"] == ["admin", "checker"]
