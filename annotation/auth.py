"""Who is asking, without a database query per request.

Every page and API request needs its user and the user's roles (``annotation.roles``):
through a session that is a query for the user and one for their groups, through a DRF
token a query for the token and its user and one for the groups. On the hot path (claim,
task page, submit) those were a third of the queries. Here the user, with their roles
already computed, is kept in the shared cache (Redis in production, so every web process
sees one copy) under their id, and under their API token's key:

- ``RoleBackend.get_user`` (sessions) and ``CachedTokenAuthentication`` (tokens) read it;
- it is dropped the moment anything it holds changes: the user saved or deleted (a new
  password, deactivation, ``last_login``), their groups changed, their token deleted; and
  dropped again when that change commits, since a request in between still reads the row
  as it was and caches it. So a blocked account or a revoked token stops working at the
  next request, as before.

``CROWDQA_AUTH_CACHE_SECONDS`` bounds how long an entry lives (0 turns the cache off).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import receiver
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from annotation.roles import user_roles

User = get_user_model()


def _user_key(user_id: Any) -> str:
    return f"crowdqa:auth:user:{user_id}"


def _token_key(key: str) -> str:
    return f"crowdqa:auth:token:{key}"


def _seconds() -> int:
    return getattr(settings, "CROWDQA_AUTH_CACHE_SECONDS", 300)


def _remember(key: str, user: Any) -> None:
    user_roles(user)  # computed now, kept on the cached object
    cache.set(key, user, _seconds())


def user_cached(user_id: Any) -> Any:
    """The user with this id and their roles, from the cache when it holds them."""
    if not _seconds():
        return User._default_manager.filter(pk=user_id).first()
    key = _user_key(user_id)
    user = cache.get(key)
    if user is None:
        user = User._default_manager.filter(pk=user_id).first()
        if user is not None:
            _remember(key, user)
    return user


class CachedTokenAuthentication(TokenAuthentication):
    """DRF token authentication (``Authorization: Token …``) served from the cache."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        if not _seconds():
            return super().authenticate_credentials(key)
        cached = cache.get(_token_key(key))
        if cached is not None and cached.is_active:
            return cached, key
        user, token = super().authenticate_credentials(key)  # the checks and their errors
        _remember(_token_key(key), user)
        return user, token


def _drop(keys: list[str], *, at_commit: bool = True) -> None:
    """Drop ``keys`` now and (``at_commit``) again when the change that drops them commits:
    until then another connection still reads the row as it was, and a request of that
    user in between would cache it again (a deactivated account, a removed role or a
    deleted token would then work for up to ``CROWDQA_AUTH_CACHE_SECONDS``)."""
    cache.delete_many(keys)
    if at_commit and transaction.get_connection().in_atomic_block:
        transaction.on_commit(partial(cache.delete_many, keys), robust=True)


def user_forget(user_id: Any, *, at_commit: bool = True) -> None:
    """Drop what the cache holds for this user (and their API token), now and when the
    change commits (``_drop``)."""
    keys = [_user_key(user_id)]
    keys += [_token_key(key) for key in
             Token.objects.filter(user_id=user_id).values_list("key", flat=True)]
    _drop(keys, at_commit=at_commit)


@receiver(post_save, sender=User)
@receiver(post_delete, sender=User)
def _user_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    # A sign-in's new ``last_login`` changes nothing the cache decides by: a request that
    # caches the row as it was before is harmless, so no second drop at the commit.
    fields = kwargs.get("update_fields")
    user_forget(instance.pk, at_commit=not (fields and set(fields) == {"last_login"}))


@receiver(post_delete, sender=Token)
def _token_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    _drop([_token_key(instance.key)])


@receiver(m2m_changed, sender=User.groups.through)
def _groups_changed(sender: Any, instance: Any, action: str, reverse: bool,
                    pk_set: Any, **kwargs: Any) -> None:
    """A user's groups (their roles) changed, from either side of the relation."""
    if action not in ("post_add", "post_remove", "pre_clear"):
        return
    if not reverse:  # user.groups.add(...)
        user_forget(instance.pk)
        return
    # group.user_set.add(...): the users named, or every member before a clear
    users = (pk_set if action != "pre_clear"
             else instance.user_set.values_list("pk", flat=True))
    for user_id in users or ():
        user_forget(user_id)
