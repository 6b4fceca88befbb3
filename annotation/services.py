"""Writes of the annotation app: people and their roles (projects and work join later)."""

from __future__ import annotations

import csv
import io
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils.translation import gettext_lazy

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


@dataclass
class ErasureSummary:
    """What ``worker_erase`` removed, to tell the admin (and the worker who asked)."""

    user_id: int
    username: str  # the account's new, meaningless name
    removed: list[Any] = field(default_factory=list)  # lazily translated labels


def _payment_rows_scrubbed(content: str, *, usernames: set[str], external: str,
                           erased: str) -> tuple[str, int]:
    """A payments CSV with the worker's rows naming them no more (their platform, external
    id and username): the amounts, pseudonym and period stay, the row is paid no more on
    the platform. The number of rows changed."""
    reader = csv.DictReader(io.StringIO(content))
    if not reader.fieldnames:
        return content, 0
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=reader.fieldnames, lineterminator="\n")
    writer.writeheader()
    changed = 0
    for row in reader:
        if row.get("username") in usernames or (external and row.get("external_id") == external):
            row.update({"platform": "", "external_id": "", "username": erased})
            changed += 1
        writer.writerow(row)
    return (out.getvalue(), changed) if changed else (content, 0)


@transaction.atomic
def worker_erase(*, user: Any, actor: Any = None) -> ErasureSummary:
    """Erase a worker's personal identifiers (a GDPR erasure request, e.g. through
    Prolific): their marketplace id, e-mail address, name, username and password, their
    marketplace session ids, the failed logins recorded with their network address, and
    their rows in recorded payment exports; the account is deactivated. Their answers stay,
    anonymised under the same account id, so releases (pseudonyms are derived from the
    id), agreement and pay stay reproducible. Their memberships are blocked, so their live
    tasks and batches go to other workers at once."""
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog

    from annotation import engine
    from annotation.models import (
        ExternalAccount,
        InviteMail,
        PaymentExport,
        ProjectMember,
        StudySession,
    )

    user = User.objects.select_for_update().get(pk=user.pk)
    for member in ProjectMember.objects.filter(user=user).exclude(
            status=ProjectMember.Status.BLOCKED):
        engine.member_status_set(member=member, status=ProjectMember.Status.BLOCKED,
                                 actor=actor, reason="erased on the worker's request",
                                 set_aside=False)
    old_names = {user.get_username()}
    erased = f"erased-{secrets.token_hex(5)}"
    summary = ErasureSummary(user_id=user.pk, username=erased)
    account = ExternalAccount.objects.filter(user=user).first()
    external = account.external_id if account is not None else ""
    if account is not None:
        summary.removed.append(gettext_lazy("marketplace id"))
        for session in StudySession.objects.filter(member__user=user).select_for_update():
            session.session_key = f"erased-{session.pk}"
            session.submit_to = ""
            session.save(update_fields=["session_key", "submit_to"])
        account.delete()
    # The addresses invite confirmation mails went to, too.
    if InviteMail.objects.filter(user=user).delete()[0] or user.email:
        summary.removed.append(gettext_lazy("e-mail address"))
    if user.first_name or user.last_name:
        summary.removed.append(gettext_lazy("name"))
    summary.removed.append(gettext_lazy("username"))
    user.username, user.email, user.first_name, user.last_name = erased, "", "", ""
    user.set_unusable_password()
    user.is_active = False
    user.save()
    logins = 0
    for model in (AccessAttempt, AccessFailureLog, AccessLog):
        logins += model.objects.filter(username__in=old_names).delete()[0]
    if logins:
        summary.removed.append(gettext_lazy("login records with network addresses"))
    rows = 0
    # (PostgreSQL refuses FOR UPDATE with DISTINCT: the join's duplicates go by the subquery)
    exports = PaymentExport.objects.filter(
        pk__in=PaymentExport.objects.filter(lines__user=user).values("pk"),
    ).select_for_update().order_by("pk")
    for export in exports:
        content, changed = _payment_rows_scrubbed(export.content, usernames=old_names,
                                                  external=external, erased=erased)
        if changed:
            export.content = content
            export.save(update_fields=["content"])
            rows += changed
    if rows:
        summary.removed.append(gettext_lazy("their ids in payment exports"))
    from rest_framework.authtoken.models import Token

    Token.objects.filter(user=user).delete()
    return summary
