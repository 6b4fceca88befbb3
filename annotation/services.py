"""Writes of the annotation app: people and their roles (projects and work join later)."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from annotation.roles import Role

User = get_user_model()


@transaction.atomic
def user_ensure(
    *, username: str, password: str, roles: Iterable[Role], email: str = ""
) -> tuple[User, bool]:
    """Create the user if missing, set the password and exactly these roles.

    Returns the user and whether it was created. Running it again changes nothing
    but the password, so callers (the demo loader) are idempotent.
    """
    user, created = User.objects.get_or_create(username=username, defaults={"email": email})
    user.set_password(password)
    # Staff status lets admins into the Django admin's login; RoleBackend grants the rest.
    user.is_staff = Role.ADMIN in roles
    user.save()
    # get_or_create: the data migration made the groups, but a flushed database has none.
    user.groups.set([Group.objects.get_or_create(name=role.value)[0] for role in roles])
    return user, created
