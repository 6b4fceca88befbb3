"""Roles, in one place: who may do what, for pages and for API endpoints.

CrowdQA has three roles, stored as Django groups created by a data migration:
``annotator`` (works tasks), ``checker`` (reviews batches) and ``admin`` (runs projects,
imports corpora, publishes releases). An admin may also open checker pages; superusers
hold every role. Annotator work is never implied by another role: a checker or admin
who should annotate joins the ``annotator`` group, so worker pools stay explicit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from functools import wraps
from typing import Any

from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.decorators import login_required
from django.contrib.auth.mixins import AccessMixin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy
from rest_framework.permissions import BasePermission


class Role(StrEnum):
    ANNOTATOR = "annotator"
    CHECKER = "checker"
    ADMIN = "admin"


# A role on the left grants the roles on the right as well.
IMPLIED_ROLES: dict[Role, frozenset[Role]] = {
    Role.ADMIN: frozenset({Role.ADMIN, Role.CHECKER}),
    Role.CHECKER: frozenset({Role.CHECKER}),
    Role.ANNOTATOR: frozenset({Role.ANNOTATOR}),
}


def user_roles(user: Any) -> frozenset[Role]:
    """All roles a user holds, implied ones included (cached on the user object); read from
    the user's prefetched groups when a list prefetched them (no query per user)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return frozenset()
    cached = getattr(user, "_crowdqa_roles", None)
    if cached is not None:
        return cached
    if user.is_superuser:
        roles = frozenset(Role)
    else:
        prefetched = getattr(user, "_prefetched_objects_cache", {}).get("groups")
        names = ({group.name for group in prefetched} if prefetched is not None
                 else set(user.groups.values_list("name", flat=True)))
        roles = frozenset(
            implied
            for role in Role
            if role.value in names
            for implied in IMPLIED_ROLES[role]
        )
    user._crowdqa_roles = roles
    return roles


def has_role(user: Any, *roles: Role) -> bool:
    """True when the user holds any of ``roles``."""
    return bool(user_roles(user) & set(roles))


def home_url_name(user: Any) -> str:
    """The URL name of the page a user lands on after login, by their highest role."""
    roles = user_roles(user)
    if Role.ADMIN in roles:
        return "annotation:admin_home"
    if Role.CHECKER in roles:
        return "annotation:checker_home"
    if Role.ANNOTATOR in roles:
        return "annotation:annotator_home"
    return "annotation:no_role"


def queue_home_url_name(role: Role) -> str:
    """The URL name of the page where a worker of ``role`` finds their queue: checkers'
    review tasks start from the checker home (the annotator home refuses them)."""
    return "annotation:checker_home" if role == Role.CHECKER else "annotation:annotator_home"


def role_required(*roles: Role) -> Callable:
    """View decorator: anonymous users go to login, users without the role get 403."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not has_role(request.user, *roles):
                raise PermissionDenied(f"This page needs the role: {' or '.join(roles)}.")
            return view(request, *args, **kwargs)

        # Declared on the view, so the URLconf test can check every view has a role rule.
        wrapped.required_roles = frozenset(roles)
        return login_required(wrapped)

    return decorator


class RoleRequiredMixin(AccessMixin):
    """Class-based view guard; set ``required_roles``."""

    required_roles: Iterable[Role] = ()

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return self.handle_no_permission()
        if not has_role(request.user, *self.required_roles):
            raise PermissionDenied(
                f"This page needs the role: {' or '.join(self.required_roles)}."
            )
        return super().dispatch(request, *args, **kwargs)


class HasRole(BasePermission):
    """DRF permission; subclass with ``roles`` or use the ready-made classes below."""

    roles: tuple[Role, ...] = ()
    message = gettext_lazy("Your account does not have the role this endpoint needs.")

    def has_permission(self, request: Any, view: Any) -> bool:
        return has_role(request.user, *self.roles)


class IsAnnotator(HasRole):
    roles = (Role.ANNOTATOR,)


class IsChecker(HasRole):
    roles = (Role.CHECKER,)


class IsAdmin(HasRole):
    roles = (Role.ADMIN,)


class IsAnyRole(HasRole):
    roles = tuple(Role)


def roles_context(request: HttpRequest) -> dict[str, Any]:
    """Template context: the current user's roles, for per-role navigation."""
    roles = user_roles(request.user)
    return {
        "roles": {role.value: role in roles for role in Role},
    }


class RoleBackend(ModelBackend):
    """Authentication backend: members of the ``admin`` group hold every model permission,
    and the session's user comes from the cache (``annotation.auth``).

    So the Django admin works for admins without granting permissions model by model,
    including for models added later.
    """

    def get_user(self, user_id: Any) -> Any:
        """The session's user, with their roles, from the cache (``annotation.auth``)."""
        from annotation.auth import user_cached

        user = user_cached(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None

    def has_perm(self, user_obj: Any, perm: str, obj: Any = None) -> bool:
        if user_obj.is_active and Role.ADMIN in user_roles(user_obj):
            return True
        return super().has_perm(user_obj, perm, obj)

    def has_module_perms(self, user_obj: Any, app_label: str) -> bool:
        if user_obj.is_active and Role.ADMIN in user_roles(user_obj):
            return True
        return super().has_module_perms(user_obj, app_label)
