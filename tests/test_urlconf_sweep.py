"""Every URL of the URLconf, for every role and method, with unknown ids, non-integer values
and NUL bytes in its path values: no server error, and every view declares its role rule.

The URL list is generated from the URLconf, so a new endpoint is swept as soon as it is
routed, and fails ``test_every_view_declares_a_role_rule`` unless it declares who may use
it: ``role_required``/``RoleRequiredMixin`` on pages, ``permission_classes`` on API views,
the admin site's own check, or an entry in ``OPEN_VIEWS`` below with the reason it is open.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings
from django.contrib import admin
from django.shortcuts import resolve_url
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.resolvers import RegexPattern, RoutePattern
from rest_framework.permissions import IsAuthenticated
from rest_framework.views import APIView

from annotation.roles import HasRole, Role, RoleRequiredMixin, has_role
from config.admin import CrowdQAAdminSite
from tests.factories import user_with_roles

#: Views open to anonymous visitors, and why.
OPEN_VIEWS: dict[str, str] = {
    "collector.views.healthz": "the load balancer's health check",
    "django.contrib.auth.views.LoginView": "signing in",
    "django.contrib.auth.views.LogoutView": "signing out",
    "django.contrib.auth.views.PasswordResetConfirmView": "one-time password-set links",
    "django.contrib.auth.views.PasswordResetCompleteView": "after a password was set",
    "annotation.invite_views.invite_join": "invite links: sign up or join a project",
    "annotation.invite_views.invite_confirm": "the confirmation mail's link of an invite "
                                              "restricted to e-mail domains",
    "annotation.invite_views.invite_confirm_resend": "mailing that confirmation link again",
    "annotation.study_views.study_entry": "marketplace workers arriving from their platform",
    "django.contrib.admin.sites.AdminSite.login": "the admin site's sign-in page",
    "django.contrib.admin.sites.AdminSite.catch_all_view": "the admin site's 404 fallback",
    "django.contrib.admin.sites.AdminSite.logout": "the admin site's sign-out",
    "config.i18n.language_set": "choosing the interface language, also on the sign-in page",
    "django.views.i18n.JavaScriptCatalog": "the translated strings of the pages' scripts",
}
#: Views for any signed-in user, whatever their roles, and why.
SIGNED_IN_VIEWS: dict[str, str] = {
    "annotation.views.home": "sends each user to the home page of their role",
    "annotation.views.no_role": "tells a user without a role to ask for one",
}

ROLES = ("anonymous", "annotator", "checker", "admin")
METHODS = ("get", "post", "options", "head")
# Ids (<id:pk>, annotation.http.IdConverter) and ints: a number no row has; paths: a file
# no release holds; other converters: a string.
UNKNOWN = {"int": "999999", "id": "999999", "path": "no/such/file.json"}
NUMBERS = ("int", "id")
NUL = "%00"


@dataclass(frozen=True)
class Rule:
    """Who may use a view: ``kind`` is open, signed_in, roles or admin_site."""

    kind: str
    roles: frozenset[Role] = frozenset()
    api: bool = False

    def allows(self, user: Any) -> bool:
        if self.kind == "open":
            return True
        if user is None:
            return False
        if self.kind == "signed_in":
            return True
        return has_role(user, *self.roles)


def _dotted(callback: Callable) -> str:
    target = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
    if target is not None:
        return f"{target.__module__}.{target.__qualname__}"
    return f"{callback.__module__}.{callback.__qualname__}"


def role_rule(callback: Callable) -> Rule | None:
    """The role rule a view declares, or None when it declares none."""
    name = _dotted(callback)
    if name in OPEN_VIEWS:
        return Rule("open")
    if name in SIGNED_IN_VIEWS:
        return Rule("signed_in")
    roles = getattr(callback, "required_roles", None)  # role_required
    if roles:
        return Rule("roles", frozenset(roles))
    view_class = getattr(callback, "view_class", None)
    if isinstance(view_class, type) and issubclass(view_class, RoleRequiredMixin):
        return Rule("roles", frozenset(view_class.required_roles)) \
            if view_class.required_roles else None
    if isinstance(view_class, type) and issubclass(view_class, APIView):
        return _api_rule(view_class, getattr(callback, "initkwargs", {}))
    if isinstance(_admin_site_of(callback), CrowdQAAdminSite):
        return Rule("admin_site", frozenset({Role.ADMIN}))
    return None


def _admin_site_of(callback: Callable) -> Any:
    """The admin site whose ``admin_view`` guards the view (through its wrappers)."""
    while callback is not None:
        site = getattr(callback, "admin_site", None)
        if site is not None:
            return site
        owner = getattr(callback, "__self__", None) or getattr(callback, "model_admin", None)
        if isinstance(owner, admin.ModelAdmin):
            return owner.admin_site
        callback = getattr(callback, "__wrapped__", None)
    return None


def _api_rule(view_class: type[APIView], initkwargs: dict[str, Any]) -> Rule | None:
    declared = initkwargs.get("permission_classes")
    if declared is None and any("permission_classes" in vars(klass)
                                for klass in view_class.__mro__
                                if issubclass(klass, APIView) and klass is not APIView):
        declared = view_class.permission_classes
    if not declared:  # the settings' default is no declaration
        return None
    roles: set[Role] = set()
    for permission in declared:
        if issubclass(permission, HasRole):
            roles.update(permission.roles)
        elif permission is not IsAuthenticated:
            return None
    # A page an API view serves (the docs' Swagger UI) sends anonymous visitors to sign in.
    api = not getattr(view_class, "sign_in_page", False)
    if roles:
        return Rule("roles", frozenset(roles), api=api)
    return Rule("signed_in", api=api)


# -- the URL list --------------------------------------------------------------------------

@dataclass(frozen=True)
class Route:
    route: str
    callback: Callable
    parts: tuple[Any, ...]  # the patterns from the root down

    @property
    def has_values(self) -> bool:
        return any(_converters(part) for part in self.parts)

    @property
    def has_int(self) -> bool:
        return any(kind in NUMBERS for part in self.parts
                   for kind in _converters(part).values())

    def url(self, variant: str) -> str:
        return "/" + "".join(_fill(part, variant) for part in self.parts)


def _converters(part: Any) -> dict[str, str]:
    if isinstance(part, RoutePattern):
        return {name: kind or "str"
                for kind, name in re.findall(r"<(?:(\w+):)?(\w+)>", part._route)}
    if isinstance(part, RegexPattern):
        return dict.fromkeys(re.findall(r"\(\?P<(\w+)>", part._regex), "regex")
    return {}


def _value(kind: str, variant: str) -> str:
    if variant == "nul":
        return NUL
    if variant == "non_integer" and kind in NUMBERS:
        return "not-a-number"
    if variant == "beyond_bigint" and kind in NUMBERS:
        return str(2**63)  # it reached the database's raw statements: an overflow
    return UNKNOWN.get(kind, "no-such-thing")


def _fill(part: Any, variant: str) -> str:
    if isinstance(part, RoutePattern):
        return re.sub(r"<(?:(\w+):)?(\w+)>",
                      lambda m: _value(m.group(1) or "str", variant), part._route)
    text = part._regex.lstrip("^").rstrip("$")

    def group(match: re.Match) -> str:
        body = match.group(2)
        if re.fullmatch(r"[\w|]+", body):  # a choice of literals: its first one
            return body.split("|")[0] if variant != "nul" else NUL
        return _value("str", variant)

    return re.sub(r"\(\?P<(\w+)>((?:[^()]|\([^()]*\))*)\)", group, text)


def _walk(patterns: list, parts: tuple = ()) -> Iterator[Route]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, (*parts, pattern.pattern))
        elif isinstance(pattern, URLPattern):
            full = (*parts, pattern.pattern)
            yield Route("".join(str(p) for p in full), pattern.callback, full)


ROUTES = list(_walk(get_resolver().url_patterns))


def _cases() -> Iterator[Any]:
    for route in ROUTES:
        yield pytest.param(route, "unknown", id=f"{route.route}-unknown")
        if route.has_int:
            yield pytest.param(route, "non_integer", id=f"{route.route}-non_integer")
            yield pytest.param(route, "beyond_bigint", id=f"{route.route}-beyond_bigint")
        if route.has_values:
            yield pytest.param(route, "nul", id=f"{route.route}-nul")


# -- the tests ------------------------------------------------------------------------------

def test_the_sweep_covers_the_whole_urlconf():
    routes = {route.route for route in ROUTES}
    assert {"api/v1/tasks/<id:pk>/release/", "api/v1/corpora/<str:name>/documents/",
            "collector/corpora/<str:name>/", "api/v1/schema/", "api/v1/docs/",
            "admin/"} <= routes
    for route in ROUTES:  # each generated URL reaches the view it was made for
        assert resolve(route.url("unknown")).func is route.callback, route.route
    # The schema is API (anonymous: 401); its Swagger UI a page (anonymous: the login page).
    assert role_rule(resolve("/api/v1/schema/").func) == Rule("signed_in", api=True)
    assert role_rule(resolve("/api/v1/docs/").func) == Rule("signed_in")


def test_every_view_declares_a_role_rule():
    missing = [f"{route.route} ({_dotted(route.callback)})"
               for route in ROUTES if role_rule(route.callback) is None]
    assert not missing, "views without a role rule:\n" + "\n".join(missing)


def test_a_view_without_a_role_rule_is_caught():
    from django.contrib.auth.decorators import login_required
    from rest_framework.permissions import AllowAny

    from annotation.roles import IsAnnotator, role_required

    def page(request):  # pragma: no cover - never called
        raise AssertionError

    class Undeclared(APIView):
        pass

    class Open(APIView):
        permission_classes = (AllowAny,)

    class Annotators(APIView):
        permission_classes = (IsAnnotator,)

    assert role_rule(page) is None
    assert role_rule(login_required(page)) is None
    assert role_rule(Undeclared.as_view()) is None
    assert role_rule(Open.as_view()) is None
    assert role_rule(role_required(Role.CHECKER)(page)) == Rule("roles",
                                                                 frozenset({Role.CHECKER}))
    assert role_rule(Annotators.as_view()) == Rule("roles", frozenset({Role.ANNOTATOR}),
                                                   api=True)
    assert role_rule(Undeclared.as_view(permission_classes=[IsAuthenticated])) == Rule(
        "signed_in", api=True)


def test_the_admin_site_checks_the_admin_role():
    assert isinstance(admin.site, CrowdQAAdminSite)
    assert admin.site.has_permission.__func__ is CrowdQAAdminSite.has_permission


@pytest.fixture
def role_users(db) -> dict[str, Any]:
    return {
        "anonymous": None,
        "annotator": user_with_roles("sweep-ann", Role.ANNOTATOR),
        "checker": user_with_roles("sweep-chk", Role.CHECKER),
        "admin": user_with_roles("sweep-adm", Role.ADMIN),
    }


def _denied(response, rule: Rule, user: Any) -> bool:
    if rule.kind == "admin_site":
        return response.status_code == 302 and "/admin/login/" in response["Location"]
    if rule.api:  # who are you: 401 with the token challenge; known but refused: 403
        if user is None:
            return (response.status_code == 401
                    and response.get("WWW-Authenticate") == "Token")
        return response.status_code == 403
    if user is None:
        return (response.status_code == 302
                and response["Location"].startswith(resolve_url(settings.LOGIN_URL)))
    return response.status_code == 403


@pytest.mark.parametrize(("route", "variant"), list(_cases()))
def test_no_server_error_for_any_role_or_method(route: Route, variant: str, role_users):
    url = route.url(variant)
    rule = role_rule(route.callback)
    problems = []
    for role in ROLES:
        user = role_users[role]
        client = Client(raise_request_exception=False)
        for method in METHODS:
            if user is not None and not client.cookies.get(settings.SESSION_COOKIE_NAME, ""):
                client.force_login(user)  # again after a sign-out URL
            response = getattr(client, method)(url)
            where = f"{method.upper()} {url} as {role}"
            if response.status_code >= 500:
                problems.append(f"{where}: {response.status_code}")
                continue
            if (url.startswith("/api/") and response.status_code >= 400 and method != "head"
                    and not response.get("Content-Type", "").startswith("application/json")):
                problems.append(f"{where}: {response.status_code} is not JSON")
            if variant == "nul" and response.status_code != 400:
                problems.append(f"{where}: {response.status_code}, not 400")
            if variant in ("non_integer", "beyond_bigint") and response.status_code != 404:
                problems.append(f"{where}: {response.status_code}, not 404")
            if (variant == "unknown" and rule is not None and not rule.allows(user)
                    and not _denied(response, rule, user)):
                problems.append(f"{where}: {response.status_code}, but the view's rule "
                                f"({rule.kind} {sorted(rule.roles)}) should refuse it")
    assert not problems, "\n".join(problems)


# -- another project's objects ---------------------------------------------------------------
#
# The role rule lets every annotator or checker reach a view; the objects behind its ids are
# their own projects' only. Two projects (A and B) of the batched test recipe, each with its
# annotator and checker; annotator A and checker A (members of A only) try every URL with the
# ids of B's objects and B's worker: each must refuse (403 or 404, never the object), show
# nothing of B, and change nothing.

#: Routes an annotator or a checker may use that take ids, each with the path values naming
#: B's object. A new such route fails ``test_every_worker_route_with_ids_is_swept_across_
#: projects`` until it has a row here (or in ``NOT_A_PROJECTS``).
OTHER_PROJECT: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "tasks/<id:pk>/": lambda b: {"pk": b["task"].pk},
    "tasks/<id:pk>/release/": lambda b: {"pk": b["task"].pk},
    "tasks/<id:pk>/renew/": lambda b: {"pk": b["task"].pk},
    "tasks/<id:pk>/check-question/": lambda b: {"pk": b["task"].pk},
    "tasks/<id:pk>/check-spelling/": lambda b: {"pk": b["task"].pk},
    "tasks/answers/<id:pk>/correct/": lambda b: {"pk": b["submission"].pk},
    "stages/<id:pk>/guidelines/": lambda b: {"pk": b["stage"].pk},
    "stages/<id:pk>/qualify/": lambda b: {"pk": b["stage"].pk},
    "review/inspections/<id:pk>/": lambda b: {"pk": b["inspection"].pk},
    "releases/<id:pk>/files/<path:path>": lambda b: {"pk": b["release"].pk,
                                                     "path": "DATASHEET.md"},
    "manage/projects/<id:pk>/workers/": lambda b: {"pk": b["project"].pk},
    "manage/projects/<id:pk>/workers/<id:user_id>/": lambda b: {
        "pk": b["project"].pk, "user_id": b["annotator"].pk},
    "collector/jobs/<id:pk>/": lambda b: {"pk": b["job"].pk},
    "api/v1/tasks/<id:pk>/": lambda b: {"pk": b["task"].pk},
    "api/v1/tasks/<id:pk>/submit/": lambda b: {"pk": b["task"].pk},
    "api/v1/tasks/<id:pk>/release/": lambda b: {"pk": b["task"].pk},
    "api/v1/projects/<id:pk>/releases/": lambda b: {"pk": b["project"].pk},
    "api/v1/releases/<id:pk>/files/<path:path>": lambda b: {"pk": b["release"].pk,
                                                            "path": "DATASHEET.md"},
    "api/v1/releases/<id:pk>/score/": lambda b: {"pk": b["release"].pk},
}
#: Routes with ids that name nothing of a project, and why.
NOT_A_PROJECTS: dict[str, str] = {
    "collector/documents/<id:pk>/": "corpora are shared by projects; an annotator sees the "
                                    "documents of corpora opened to annotators "
                                    "(collector/test_corpus_visibility.py)",
}
#: Routes that answer for any project, and why (they still show nothing of B's above).
LISTED_FOR_ALL: dict[str, str] = {
    "api/v1/projects/<id:pk>/releases/": "a project's published releases are everybody's "
                                         "(selectors.releases_visible); unpublished ones, "
                                         "as B's, are listed for admins only",
}
#: What of B may show on no page or answer of A's people (its annotator, its items, its
#: unpublished release's version).
B_MARKERS = ("sweep-ann-b", "project-b-query", "7.7.7")


def _worker_routes_with_ids() -> list[Route]:
    routes = []
    for route in ROUTES:
        rule = role_rule(route.callback)
        if (route.has_int and rule is not None and rule.kind == "roles"
                and rule.roles & {Role.ANNOTATOR, Role.CHECKER}):
            routes.append(route)
    return routes


def _url_with(route: Route, values: dict[str, Any]) -> str:
    def fill(part: Any) -> str:
        return re.sub(r"<(?:(\w+):)?(\w+)>", lambda m: str(values[m.group(2)]), part._route)

    return "/" + "".join(fill(part) for part in route.parts)


def test_every_worker_route_with_ids_is_swept_across_projects():
    routes = {route.route for route in _worker_routes_with_ids()}
    missing = sorted(routes - set(OTHER_PROJECT) - set(NOT_A_PROJECTS))
    assert not missing, ("routes an annotator or checker may use with ids, not swept with "
                         "another project's ids:\n" + "\n".join(missing))
    assert not (set(OTHER_PROJECT) | set(NOT_A_PROJECTS)) - routes, "stale rows"


@pytest.fixture
def two_projects(db, settings, django_capture_on_commit_callbacks):
    """Projects A and B of the batched test recipe; B's annotator finished a batch (waiting
    for inspection) and holds a task of the next; B has a job and an unpublished release."""
    import tests.annotation.test_batches  # noqa: F401 (the batched test recipe)
    from annotation import engine
    from annotation.models import Inspection, Release, ReleaseFile, Submission
    from annotation.stages import Emit
    from collector.models import Job

    settings.CELERY_TASK_ALWAYS_EAGER = True
    people = {}
    for side in ("a", "b"):
        project = engine.project_create(name=f"Project {side.upper()}", recipe="test-batched",
                                        params={2: {"batch_size": 4, "inspect_fraction": 0.5}})
        type(project).objects.filter(pk=project.pk).update(status="active")
        with django_capture_on_commit_callbacks(execute=True):
            engine.items_emit(source_stage=project.stages.get(order=1), emits=[
                Emit(kind="test_batched", key=f"q{n}",
                     data={"query": f"project-{side}-query {n}"}) for n in range(10)])
        annotator = user_with_roles(f"sweep-ann-{side}", Role.ANNOTATOR)
        checker = user_with_roles(f"sweep-chk-{side}", Role.CHECKER)
        engine.project_member_add(project=project, user=annotator, role=Role.ANNOTATOR)
        engine.project_member_add(project=project, user=checker, role=Role.CHECKER)
        people[side] = {"project": project, "annotator": annotator, "checker": checker}
    b = people["b"]
    for _ in range(4):  # a whole batch: it waits for a checker of B
        task = engine.task_claim(worker=b["annotator"], project=b["project"])
        engine.task_submit(assignment_id=task.pk, worker=b["annotator"],
                           payload={"label": "yes"})
    b["submission"] = Submission.objects.filter(worker=b["annotator"]).first()
    b["inspection"] = Inspection.objects.get(batch__project=b["project"])
    b["task"] = engine.task_claim(worker=b["annotator"], project=b["project"])
    b["stage"] = b["project"].stages.get(order=2)
    b["job"] = Job.objects.create(kind="selfcheck", created_by=b["annotator"])
    b["release"] = Release.objects.create(project=b["project"], version="7.7.7",
                                          status=Release.Status.READY, formats=["hf"],
                                          pseudonym_salt="0" * 64)
    ReleaseFile.objects.create(release=b["release"], format="datasheet", path="DATASHEET.md",
                               records=0, sha256="0" * 64, bytes=0)
    return people


@pytest.mark.parametrize("route", sorted(OTHER_PROJECT))
def test_another_projects_objects_are_refused(route: str, two_projects):
    from annotation.models import Assignment, Inspection, Release

    a, b = two_projects["a"], two_projects["b"]
    target = next(r for r in ROUTES if r.route == route)
    url = _url_with(target, OTHER_PROJECT[route](b))
    problems = []
    for who in ("annotator", "checker"):
        client = Client(raise_request_exception=False)
        client.force_login(a[who])
        for method in ("get", "post"):
            # A POST that would do its work on an object of one's own: claim, answer.
            response = (client.get(url) if method == "get" else client.post(url, {
                "action": "claim", "label": "yes", "payload": '{"label": "yes"}'}))
            where = f"{method.upper()} {url} as {who} of project A"
            refused = response.status_code in (403, 404, 405)
            if not refused and not (route in LISTED_FOR_ALL and response.status_code == 200):
                problems.append(f"{where}: {response.status_code}")
            body = b"".join(response.streaming_content) if response.streaming \
                else response.content
            shown = [m for m in B_MARKERS if m.encode() in body]
            if shown:
                problems.append(f"{where}: shows {shown}")
    assert not problems, "\n".join(problems)
    # Nothing of B changed.
    assert Assignment.objects.get(pk=b["task"].pk).status == Assignment.Status.ACTIVE
    assert Inspection.objects.get(pk=b["inspection"].pk).checker_id is None
    assert Release.objects.get(pk=b["release"].pk).status == Release.Status.READY
