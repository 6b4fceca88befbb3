"""factory_boy factories; state beyond plain rows is built through services."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from annotation.roles import Role
from annotation.services import user_ensure

PASSWORD = "correct-horse-battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)


def user_with_roles(username: str, *roles: Role):
    user, _ = user_ensure(username=username, password=PASSWORD, roles=roles)
    return user


def held_since(task, *, seconds: float = 0, minutes: float = 0) -> None:
    """Move ``task``'s claim back by that long: the worker has held it since then (a page
    that measured that much active time held it at least as long)."""
    from datetime import timedelta

    from django.db.models import F

    from annotation.models import Assignment

    Assignment.objects.filter(pk=task.pk).update(
        claimed_at=F("claimed_at") - timedelta(seconds=seconds, minutes=minutes))


def zh_catalogue_holds(entries: dict[str, str]) -> None:
    """The committed Simplified Chinese catalogue translates each msgid of ``entries`` as
    given (tests that read a page in Chinese name the translations they expect)."""
    from django.utils.translation import trans_real

    catalogue = trans_real.translation("zh-hans")._catalog._catalogs[0]
    assert {msgid: catalogue.get(msgid) for msgid in entries} == entries
