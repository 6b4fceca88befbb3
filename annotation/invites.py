"""Invite links and bulk membership: how people join a project outside the marketplaces.

An invite is a link ``/join/<token>/`` that makes whoever opens it (and signs up or logs
in) a member of the project in the invite's role, with their consent recorded. It may
expire, carry a number of uses, accept only some e-mail domains, and be revoked.
``invite_accept`` takes the invite's row lock and re-checks the state under it, so
concurrent accepts never pass ``max_uses``.

``members_import`` adds many people at once from a CSV (``username,email,role[,project]``):
every row is checked before anything is written, and new accounts get a one-time link to
set their password instead of a password in a spreadsheet.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
import re
import secrets
import smtplib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any
from urllib.parse import urljoin

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group
from django.contrib.auth.tokens import default_token_generator
from django.core import signing
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.mail import send_mail
from django.core.paginator import Page, Paginator
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q, QuerySet
from django.db.models.functions import Coalesce, Lower
from django.template.loader import render_to_string
from django.urls import get_script_prefix, reverse
from django.utils import timezone, translation
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, ngettext
from kombu.exceptions import OperationalError as KombuOperationalError

from annotation.models import (
    Invite,
    InviteMail,
    InviteUse,
    Project,
    ProjectMember,
    Submission,
)
from annotation.ratelimit import hour_count
from annotation.roles import Role
from collector.importers.errors import COLUMNS_DIFFER, LONGER_THAN, ImportFailure, at_line
from collector.importers.records import IS_EMPTY, ONE_OF
from collector.importers.source import BAD_CSV, csv_problem
from collector.stored_text import StoredText

logger = logging.getLogger(__name__)

INVITE_ROLES = (Role.ANNOTATOR.value, Role.CHECKER.value)
IMPORT_ROLES = (Role.ANNOTATOR.value, Role.CHECKER.value, Role.ADMIN.value)
IMPORT_COLUMNS = ("username", "email", "role", "project")
IMPORT_REQUIRED = ("username", "email", "role")
MEMBERS_PER_PAGE = 100
INVITE_USES_SHOWN = 10  # the latest uses listed under an invite (all are counted)

_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_DOMAIN_RE = re.compile(rf"^{_LABEL}(\.{_LABEL})+$")


class State:
    OK = "ok"
    REVOKED = "revoked"
    EXPIRED = "expired"
    USED_UP = "used_up"


class InviteUnavailable(ValidationError):
    """The invite cannot be used any more; ``state`` says why (revoked, expired, used_up,
    or ``unknown`` when no such invite exists)."""

    def __init__(self, state: str) -> None:
        self.state = state
        super().__init__(f"This invite link cannot be used: {state.replace('_', ' ')}.",
                         code=state)


# Invites ---------------------------------------------------------------------------------

# A name starting with one of these is a formula to a spreadsheet that opens the payments
# CSV, where usernames are a column (OWASP's CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@")

def _domains_clean(domains: Iterable[str]) -> list[str]:
    cleaned: list[str] = []
    for raw in domains:
        domain = raw.strip().lower().removeprefix("@")
        if not domain:
            continue
        if len(domain) > 253 or not _DOMAIN_RE.match(domain):
            raise ValidationError(
                {"allowed_domains": f"{raw.strip()!r} is not a domain (like example.org)"})
        if domain not in cleaned:
            cleaned.append(domain)
    return cleaned


MAX_USES_MOST = 2**31 - 1  # what the column holds
EXPIRES_DAYS_MOST = 3650  # ten years: a link meant to last longer should not expire at all


def _positive(name: str, value: Any, *, most: int) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError({name: f"{value!r} is not a positive whole number"})
    if value > most:
        raise ValidationError({name: f"{value} is more than {most:,}"})
    return value


def invite_create(
    *,
    project: Project,
    role: str,
    actor: Any = None,
    max_uses: int | None = None,
    expires_days: int | None = None,
    allowed_domains: Iterable[str] = (),
) -> Invite:
    """A new invite link to ``project`` in ``role`` (annotator or checker)."""
    role = str(role).strip().lower()
    if role not in INVITE_ROLES:
        raise ValidationError({"role": f"{role!r} is not one of {', '.join(INVITE_ROLES)}"})
    max_uses = _positive("max_uses", max_uses, most=MAX_USES_MOST)
    expires_days = _positive("expires_days", expires_days, most=EXPIRES_DAYS_MOST)
    domains = _domains_clean(allowed_domains)
    if domains and not mail_possible():
        raise ValidationError({"allowed_domains": _(
            "A link restricted to e-mail domains confirms each address by e-mail, and this "
            "site cannot send e-mail: set EMAIL_URL (docs/deployment.md), or leave the "
            "domains empty.")})
    expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
    return Invite.objects.create(
        project=project, role=role, token=secrets.token_urlsafe(16), expires_at=expires_at,
        max_uses=max_uses, allowed_domains=domains,
        created_by=actor if getattr(actor, "pk", None) else None,
    )


def invite_path(invite: Invite) -> str:
    """The link's path, ``/join/<token>/``."""
    return reverse("annotation:invite_join", args=[invite.token])


@transaction.atomic
def invite_revoke(*, invite: Invite, actor: Any) -> Invite:
    """Close the link for good (people who joined stay members). Revoking twice keeps the
    first time."""
    locked = Invite.objects.select_for_update().get(pk=invite.pk)
    if locked.revoked_at is None:
        locked.revoked_at = timezone.now()
        locked.save(update_fields=["revoked_at"])
    invite.revoked_at = locked.revoked_at
    return invite


def invite_state(invite: Invite, now: datetime | None = None) -> str:
    """``ok``, ``revoked``, ``expired`` or ``used_up`` (uses >= max_uses).

    Counts the uses with one query, or none when they were prefetched."""
    now = now or timezone.now()
    if invite.revoked_at is not None:
        return State.REVOKED
    if invite.expires_at is not None and invite.expires_at <= now:
        return State.EXPIRED
    if invite.max_uses is not None and invite.uses.count() >= invite.max_uses:
        return State.USED_UP
    return State.OK


def _domain_fits(invite: Invite, email: str) -> bool:
    """Whether ``email`` is at one of the invite's domains (any address, or none, fits a
    link without domains)."""
    if not invite.allowed_domains:
        return True
    return bool(email) and email.rpartition("@")[2].lower() in invite.allowed_domains


def email_wanted(invite: Invite, user: Any) -> bool:
    """Whether a signed-in ``user`` must give an address to join through ``invite``: the link
    accepts only some domains and their account has no address, or one outside them."""
    return not _domain_fits(invite, (user.email or "").strip())


def _email_valid(email: str) -> None:
    try:
        validate_email(email)
    except ValidationError:
        raise ValidationError(
            {"email": [_("%(email)r is not an e-mail address.") % {"email": email}]}) from None


def _domain_check(invite: Invite, email: str) -> None:
    if not invite.allowed_domains:
        return
    allowed = ", ".join(invite.allowed_domains)
    if not email:
        raise ValidationError({"email": _("This link needs an e-mail address at %(allowed)s.")
                               % {"allowed": allowed}})
    domain = email.rpartition("@")[2].lower()
    if domain not in invite.allowed_domains:
        raise ValidationError(
            {"email": _("This link only accepts e-mail addresses at %(allowed)s, not %(domain)s.")
             % {"allowed": allowed, "domain": domain}})


def _user_new(*, username: str, email: str, password: str, active: bool = True) -> Any:
    """Create an account from the sign-up form; errors name their field. An inactive one
    cannot log in until it is activated."""
    user_model = get_user_model()
    errors: dict[str, list[str]] = {}
    holders: list[int] = []  # accounts with this name (any case): lapsed sign-ups only
    username = (username or "").strip()
    email = (email or "").strip()
    if not username:
        errors["username"] = [_("Choose a username.")]
    else:
        try:
            user_model.username_validator(username)
            if len(username) > 150:
                raise ValidationError(_("Use at most 150 characters."))
            if username.startswith(FORMULA_STARTS):
                raise ValidationError(_("Start the username with a letter, a digit or '_'."))
        except ValidationError as exc:
            errors["username"] = exc.messages
        else:
            # An unconfirmed sign-up whose links have all expired holds the name no more.
            holders = list(user_model.objects.filter(username__iexact=username)
                           .values_list("pk", flat=True))
            if any(not _signup_lapsed(user_id=pk) for pk in holders):
                errors["username"] = [_("The username %(username)r is taken; choose another.")
                                      % {"username": username}]
    if email:
        try:
            validate_email(email)
        except ValidationError:
            errors["email"] = [_("%(email)r is not an e-mail address.") % {"email": email}]
    user = user_model(username=username, email=email, is_active=active)
    if not password:
        errors["password"] = [_("Choose a password.")]
    else:
        try:
            password_validation.validate_password(password, user=user)
        except ValidationError as exc:
            errors["password"] = exc.messages
    if errors:
        raise ValidationError(errors)
    user.set_password(password)
    try:
        with transaction.atomic():
            if not all(_signup_lapsed_release(user_id=pk) for pk in holders):
                raise IntegrityError("taken meanwhile")
            user.save()
    except IntegrityError as exc:  # someone took the name a moment ago
        raise ValidationError(
            {"username": [_("The username %(username)r is taken; choose another.")
                          % {"username": username}]}) from exc
    return user


def _role_grant(user: Any, role: str) -> None:
    """Add the role's group, keeping the user's other groups."""
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    if role == Role.ADMIN.value and not user.is_staff:
        user.is_staff = True  # as user_ensure: admins may log in to the Django admin
        user.save(update_fields=["is_staff"])
    user.__dict__.pop("_crowdqa_roles", None)


def _invite_open(invite_id: int, user: Any) -> tuple[Invite, bool]:
    """The invite, locked, and whether ``user`` joined through it already; raises
    ``InviteUnavailable`` when it is closed (used up is no bar to who joined already)."""
    invite = (Invite.objects.select_for_update().select_related("project")
              .filter(pk=invite_id).first())
    if invite is None:
        raise InviteUnavailable("unknown")
    already = (user is not None
               and InviteUse.objects.filter(invite=invite, user=user).exists())
    # Under the row lock: concurrent accepts of this invite count one after another.
    state = invite_state(invite)
    if state != State.OK and not (already and state == State.USED_UP):
        raise InviteUnavailable(state)
    return invite, already


def _address_checked(invite: Invite, user: Any, email: str, *, confirmed: bool) -> str | None:
    """Check the address against the invite's domains: a newcomer's ``email``, an existing
    user's when their account's does not fit (or whatever address was ``confirmed``), else
    their account's. Returns the existing user's new address, or None."""
    typed = (email or "").strip()
    if user is None:
        _domain_check(invite, typed)
        return None
    if typed and (email_wanted(invite, user)
                  or (confirmed and typed.lower() != (user.email or "").lower())):
        _email_valid(typed)
        _domain_check(invite, typed)
        return typed
    _domain_check(invite, (user.email or "").strip())
    return None


def _member_unblocked(invite: Invite, user: Any) -> ProjectMember | None:
    member = ProjectMember.objects.filter(project=invite.project, user=user,
                                          role=invite.role).first()
    if member is not None and member.status == ProjectMember.Status.BLOCKED:
        raise ValidationError(
            _("Your membership of this project is blocked; ask the project's admins."))
    return member


def signup_allowed(*, address: str | None) -> bool:
    """Whether one more account may be made through an invite link from ``address``: at
    most ``CROWDQA_INVITE_SIGNUPS_PER_HOUR`` an hour per client address (an IPv6 one by
    its /64 network), counted in the shared cache as every web process sees it. Each
    sign-up a form sends counts, whether the service then takes it or not."""
    from annotation.ratelimit import client_network, hour_count

    limit = settings.CROWDQA_INVITE_SIGNUPS_PER_HOUR
    return limit <= 0 or hour_count(f"invite-signups:{client_network(address)}") <= limit


@transaction.atomic
def invite_accept(
    *,
    invite_id: int,
    user: Any = None,
    username: str = "",
    email: str = "",
    password: str = "",
    address_confirmed: bool = False,
) -> ProjectMember:
    """Join the invite's project: an existing ``user``, or a new account from ``username``,
    ``email`` and ``password``. Returns the membership (its ``user`` is the account).
    An existing user whose address does not fit a link restricted to some domains (none,
    or one elsewhere: ``email_wanted``) gives one in ``email``; it is checked against the
    domains like a newcomer's and saved on their account.

    A link restricted to some domains joins only with the address confirmed by mail
    (``address_confirmed``, from ``invite_confirm``); before that, ``invite_join_request``.
    Who joined through it already may join again (their consent is renewed, nothing else).

    Raises ``InviteUnavailable`` when the link is closed and ``ValidationError`` (by field)
    when the sign-up is refused; nothing is written then.
    """
    invite, already = _invite_open(invite_id, user)
    now = timezone.now()
    address = None  # the existing user's new address, when they give one
    if invite.allowed_domains and not address_confirmed:
        if not already:
            raise ValidationError({"email": _(
                "This link joins once your address is confirmed: open the link we e-mail "
                "you.")})
    else:
        address = _address_checked(invite, user, email, confirmed=address_confirmed)
    if user is None:
        user = _user_new(username=username, email=email, password=password)
    member = _member_unblocked(invite, user)
    if address is not None:
        user.email = address
        user.save(update_fields=["email"])
    _role_grant(user, invite.role)
    if member is None:
        member = ProjectMember.objects.create(
            project=invite.project, user=user, role=invite.role,
            source=ProjectMember.Source.INVITE, joined_at=now, consented_at=now)
    else:
        member.consented_at = now
        member.save(update_fields=["consented_at"])
    if not already:
        InviteUse.objects.create(invite=invite, user=user)
    return member


# Confirming the address of a link restricted to e-mail domains ---------------------------
#
# Joining through such a link takes two steps. ``invite_join_request`` checks all that
# ``invite_accept`` checks, makes a newcomer's account inactive (it cannot log in; the
# username is kept for them while a link works) and records a confirmation mail
# (``InviteMail``, counted against the hourly limit). Once that commits, the Celery task
# ``annotation.tasks.invite_mail_send_task`` sends it (``invite_mail_send``): a signed link
# (``JoinRequest.confirm_token``: invite, user, address; CONFIRM_MAX_AGE), never from inside
# the web request's transaction, retried while the mail server fails. ``invite_confirm``
# reads the link, checks everything again under the invite's lock, and joins through
# ``invite_accept``, activating the newcomer. ``JoinRequest.resend_token`` (another salt: it
# cannot join) lets the pages send the link again. A newcomer who never confirms holds the
# username no longer than their last link works: a new sign-up may take the name over, and
# the periodic ``signups_lapsed_purge`` removes the account (``_signup_lapsed``).

CONFIRM_SALT = "crowdqa.invites.confirm"
RESEND_SALT = "crowdqa.invites.resend"
CONFIRM_MAX_AGE = timedelta(days=3)
RESEND_MAX_AGE = timedelta(days=30)
# A mail still "sending" this long after its attempt began: its worker died mid-send, and
# a second delivery of the task may send it.
MAIL_SENDING_STALE = timedelta(minutes=5)
# Confirmation mail rows (and the addresses in them) are deleted after this.
MAIL_ROWS_KEPT = RESEND_MAX_AGE


def confirm_needed(invite: Invite) -> bool:
    """Whether joining through ``invite`` waits for the address to be confirmed by mail."""
    return bool(invite.allowed_domains)


def mail_possible() -> bool:
    """Whether the site can send mail: ``EMAIL_URL`` is set, or (outside production) the
    console prints it."""
    return bool(settings.EMAIL_URL) or settings.CROWDQA_ENV != "production"


class ConfirmLinkBad(Exception):
    """A confirmation link that cannot be used: ``state`` is ``expired`` (signed by us,
    older than CONFIRM_MAX_AGE: ``resend_token`` can send a new one) or ``bad`` (cut short,
    changed, or its account is gone)."""

    def __init__(self, state: str, resend_token: str = "") -> None:
        self.state = state
        self.resend_token = resend_token
        super().__init__(state)


class MailNotSent(Exception):
    """The mail server refused a confirmation mail or could not be reached; the mail is
    queued again for the task's next try."""


@dataclass(frozen=True)
class JoinRequest:
    """Who asked to join ``invite`` with which address; ``newcomer``: their account waits
    for this confirmation to be activated. ``mail_id``: the confirmation mail recorded for
    it (``InviteMail``), when one was."""

    invite: Invite
    user: Any
    email: str
    newcomer: bool
    mail_id: int | None = None

    def _payload(self) -> dict[str, Any]:
        return {"i": self.invite.pk, "u": self.user.pk, "e": self.email,
                "n": int(self.newcomer)}

    @property
    def confirm_token(self) -> str:
        return signing.dumps(self._payload(), salt=CONFIRM_SALT)

    @property
    def resend_token(self) -> str:
        return signing.dumps(self._payload(), salt=RESEND_SALT)


def _mail_counted(invite: Invite, email: str) -> None:
    """Count one confirmation mail to ``email`` for ``invite``; refuse past
    ``CROWDQA_INVITE_MAILS_PER_HOUR`` in the clock hour."""
    limit = settings.CROWDQA_INVITE_MAILS_PER_HOUR
    digest = hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]
    if limit > 0 and hour_count(f"invite-mail:{invite.token}:{digest}") > limit:
        raise ValidationError({"email": ngettext(
            "We sent a link to this address %(n)d time in the last hour already: open the "
            "one in your mail (check the spam folder), or try again in an hour.",
            "We sent a link to this address %(n)d times in the last hour already: open one "
            "of them (check the spam folder), or try again in an hour.", limit)
            % {"n": limit}}, code="mail_limit")


def _mail_unavailable() -> ValidationError:
    return ValidationError(_(
        "This link joins once your e-mail address is confirmed, and this site cannot send "
        "e-mail now. Ask the project's admins."), code="no_mail")


def _mail_queue(join: JoinRequest, *, site_root: str, language: str | None) -> JoinRequest:
    """Record ``join``'s confirmation mail (counted against the hourly limit) and have it
    sent once the transaction commits; ``site_root`` is the site's absolute root URL
    (``https://crowdqa.example.org/``), ``language`` the mail's (default: the active one).
    Returns ``join`` with its ``mail_id``."""
    _mail_counted(join.invite, join.email)
    mail = InviteMail.objects.create(
        invite=join.invite, user=join.user, email=join.email, newcomer=join.newcomer,
        language=language or translation.get_language() or settings.LANGUAGE_CODE,
        site_root=site_root)
    transaction.on_commit(partial(invite_mail_enqueue, mail_id=mail.pk))
    return replace(join, mail_id=mail.pk)


@transaction.atomic
def invite_join_request(
    *,
    invite_id: int,
    site_root: str,
    user: Any = None,
    username: str = "",
    email: str = "",
    password: str = "",
    language: str | None = None,
) -> JoinRequest:
    """Ask to join a link restricted to some e-mail domains: what ``invite_accept`` checks
    is checked (state, domains, a blocked membership, a newcomer's sign-up), nothing joins.
    A newcomer's account is made, inactive, with the address; an existing user's address
    is not changed. Records the confirmation mail (``CROWDQA_INVITE_MAILS_PER_HOUR``), sent
    by a task once this commits (``_mail_queue``). Errors as ``invite_accept``'s."""
    if not mail_possible():
        raise _mail_unavailable()
    invite, _already = _invite_open(invite_id, user)
    address = _address_checked(invite, user, email, confirmed=False)
    newcomer = user is None
    if newcomer:
        user = _user_new(username=username, email=email, password=password, active=False)
    else:
        _member_unblocked(invite, user)
    to = address or (user.email or "").strip()
    join = JoinRequest(invite=invite, user=user, email=to, newcomer=newcomer)
    # Last: refused by the limit, the new account is rolled back.
    return _mail_queue(join, site_root=site_root, language=language)


def invite_mail_enqueue(*, mail_id: int) -> None:
    """Send confirmation mail ``mail_id`` to the workers (in the embedded mode, eager
    Celery sends it here and now, trying once). A broker that cannot be reached fails the
    mail at once, saying so: the page offers "Send the link again"."""
    from annotation.tasks import invite_mail_send_task

    try:
        if settings.CELERY_TASK_ALWAYS_EAGER:
            # Django's setting decides, as for jobs (``collector.jobs``): Celery's own copy
            # of it is read once, and tests and the demo turn it on at run time.
            invite_mail_send_task.apply(args=(mail_id,))
        else:
            invite_mail_send_task.delay(mail_id)
    except KombuOperationalError as exc:
        logger.error("confirmation mail %s could not be queued: %s", mail_id, exc)
        InviteMail.objects.filter(pk=mail_id, status=InviteMail.Status.QUEUED).update(
            status=InviteMail.Status.FAILED,
            error=f"the broker could not be reached: {exc}"[:500])


def _mail_unwanted(mail: InviteMail) -> str:
    """Why ``mail`` need not be sent any more (its link would join nobody), or ''."""
    user = mail.user
    state = invite_state(mail.invite)
    if state != State.OK:
        return f"the invite link is {state.replace('_', ' ')}"
    if invite_joined(invite=mail.invite, user=user):
        return "joined already"
    if mail.newcomer and (user.is_active or user.last_login is not None
                          or (user.email or "").lower() != mail.email.lower()):
        return "the account does not wait for this address any more"
    if not mail.newcomer and not user.is_active:
        return "the account is deactivated"
    return ""


def _mail_finish(mail_id: int, status: str, **fields: Any) -> None:
    InviteMail.objects.filter(pk=mail_id, status=InviteMail.Status.SENDING).update(
        status=status, **fields)


def invite_mail_send(*, mail_id: int, final: bool = True) -> str:
    """Send confirmation mail ``mail_id`` (the Celery task's work), once: a mail sent, or
    being sent, is left alone, so a second delivery of the task sends nothing (a send cut
    short by a dead worker is tried again after MAIL_SENDING_STALE). A mail whose link
    would join nobody (joined already, the link closed, the account no longer waiting) is
    dropped unsent. The link is signed now, so it works CONFIRM_MAX_AGE from the sending.

    When the mail server fails: ``final``, the mail is failed (the page's "Send the link
    again" still works); otherwise it is queued again and ``MailNotSent`` raised for the
    task to retry. Returns the mail's status (``gone`` when its row is)."""
    now = timezone.now()
    claimed = InviteMail.objects.filter(
        Q(status=InviteMail.Status.QUEUED)
        | Q(status=InviteMail.Status.SENDING, attempted_at__lt=now - MAIL_SENDING_STALE),
        pk=mail_id,
    ).update(status=InviteMail.Status.SENDING, attempts=F("attempts") + 1, attempted_at=now,
             stalled_at=None)
    mail = (InviteMail.objects.select_related("invite__project", "user")
            .filter(pk=mail_id).first())
    if mail is None:
        return "gone"
    if not claimed:
        return mail.status
    reason = _mail_unwanted(mail)
    if reason:
        _mail_finish(mail.pk, InviteMail.Status.DROPPED, error=reason)
        return InviteMail.Status.DROPPED
    join = JoinRequest(invite=mail.invite, user=mail.user, email=mail.email,
                       newcomer=mail.newcomer, mail_id=mail.pk)
    with translation.override(mail.language):
        # Relative to the site's root (which has any path prefix the request had).
        path = reverse("annotation:invite_confirm", args=[join.confirm_token])
        path = path.removeprefix(get_script_prefix())
        try:
            confirm_mail_send(join=join, url=urljoin(mail.site_root, path))
        except (OSError, smtplib.SMTPException) as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
            if final:
                logger.error("confirmation mail %s to invite %s failed for good (%d tries): "
                             "%s", mail.pk, mail.invite_id, mail.attempts, error)
                _mail_finish(mail.pk, InviteMail.Status.FAILED, error=error)
                return InviteMail.Status.FAILED
            logger.warning("confirmation mail %s: try %d failed, will try again: %s",
                           mail.pk, mail.attempts, error)
            # Its retry's message is given to the broker now (the task's countdown).
            _mail_finish(mail.pk, InviteMail.Status.QUEUED, error=error,
                         queued_at=timezone.now())
            raise MailNotSent(error) from exc
    _mail_finish(mail.pk, InviteMail.Status.SENT, sent_at=timezone.now(), error="")
    return InviteMail.Status.SENT


def invite_mails_recover(*, now: datetime | None = None) -> dict[str, int]:
    """The periodic check for confirmation mails whose message was lost (a Redis flushed or
    restarted without persistence, a broker restarted without durable queues): mails queued
    ``CROWDQA_JOB_QUEUED_LOST_AFTER_S`` ago or longer (the jobs' threshold,
    ``collector.jobs.queued_lost_after``) are looked for in the broker, once for all of them
    (``collector.broker.broker_holdings``, as for jobs), and each is settled: its message is
    held: it waits; gone: it is sent again ("resent"); cannot be told (a RabbitMQ queue that
    holds messages, a broker that does not answer): it is left queued, marked as waiting for
    the mail worker with the reason ("stalled"; the admin's list shows how long it has
    waited), and sent again by a later check once the broker can tell it is gone. Never
    failed here: a mail behind a long queue still goes out. A mail is never sent twice: the
    send claims its row (``invite_mail_send``).

    In the embedded mode (eager Celery) a mail is sent in the request that made it, once
    that commits: one still queued after the threshold was cut off by a restart, and is sent
    here. Idempotent; safe to run from several places."""
    from collector.broker import MAIL_TASK, BrokerHoldings, broker_holdings
    from collector.jobs import queued_lost_after

    now = now or timezone.now()
    counts = {"resent": 0, "stalled": 0}
    waiting = list(InviteMail.objects.filter(
        status=InviteMail.Status.QUEUED, queued_at__lt=now - queued_lost_after(),
    ).order_by("id")[:500])
    if not waiting:
        return counts
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    if settings.CELERY_TASK_ALWAYS_EAGER:
        holdings = BrokerHoldings(task=MAIL_TASK)  # no broker: nothing holds them
    else:
        holdings = broker_holdings(queues=[queue], task=MAIL_TASK)
    for mail in waiting:
        outcome = _mail_settle(mail, holdings, queue=queue, now=now)
        if outcome:
            counts[outcome] += 1
    return counts


# What the admin's list says of a stalled mail (``InviteMail.error``, English as the mail
# server's complaints there).
MAIL_STALLED = ("waiting for the mail worker: no worker has taken it, and it cannot be told "
                "whether the broker still holds its message")


def _mail_settle(mail: InviteMail, holdings: Any, *, queue: str, now: datetime) -> str | None:
    """One mail queued long, after the broker said what it holds (``invite_mails_recover``).
    Each move is a conditional update on the row as it was read, so a mail a worker took
    meanwhile (or queued again for a retry), or another check settled, is left alone."""
    from collector.stored_text import stored_text_english

    still = InviteMail.objects.filter(pk=mail.pk, status=InviteMail.Status.QUEUED)
    if holdings.held(mail.pk):
        if mail.stalled_at is not None:  # its message turned up
            still.filter(stalled_at__isnull=False).update(stalled_at=None, error="")
        return None
    why = holdings.why_unknown(mail.pk, queue)
    if why is not None:
        if mail.stalled_at is not None:
            return None
        reason = f"{MAIL_STALLED}: {stored_text_english(why)}"[:500]
        moved = still.filter(stalled_at__isnull=True, queued_at=mail.queued_at).update(
            stalled_at=now, error=reason)
        if moved:
            logger.warning("confirmation mail %s is stalled: %s", mail.pk, reason)
        return "stalled" if moved else None
    with transaction.atomic():
        # A stalled mail's note goes with its stall (a mail server's complaint stays).
        note = {"error": ""} if mail.stalled_at is not None else {}
        moved = still.filter(queued_at=mail.queued_at).update(queued_at=now, stalled_at=None,
                                                              **note)
        if moved:
            transaction.on_commit(partial(invite_mail_enqueue, mail_id=mail.pk))
    if moved:
        logger.warning("confirmation mail %s: its message was lost (queued %s); sent again",
                       mail.pk, f"{mail.queued_at:%Y-%m-%d %H:%M:%S} UTC")
    return "resent" if moved else None


def invite_mail_status(*, mail_id: int | None) -> str:
    """Where confirmation mail ``mail_id`` stands (``InviteMail.Status``; ``gone`` when
    there is no such mail)."""
    status = InviteMail.objects.filter(pk=mail_id).values_list("status", flat=True).first()
    return status or "gone"


def _token_read(token: str, *, salt: str, max_age: timedelta) -> tuple[dict[str, Any], Any]:
    try:
        data = signing.loads(token, salt=salt, max_age=max_age)
    except signing.SignatureExpired:
        data = signing.loads(token, salt=salt)
        raise ConfirmLinkBad("expired", signing.dumps(data, salt=RESEND_SALT)) from None
    except signing.BadSignature:
        raise ConfirmLinkBad("bad") from None
    user = get_user_model().objects.filter(pk=data.get("u")).first()
    if user is None or not isinstance(data.get("e"), str):
        raise ConfirmLinkBad("bad")
    return data, user


def confirm_request(*, token: str) -> JoinRequest:
    """The join request a confirmation link names (read only); ``ConfirmLinkBad`` when it
    is expired or bad, ``InviteUnavailable`` when its invite is gone."""
    data, user = _token_read(token, salt=CONFIRM_SALT, max_age=CONFIRM_MAX_AGE)
    invite = Invite.objects.select_related("project").filter(pk=data.get("i")).first()
    if invite is None:
        raise InviteUnavailable("unknown")
    return JoinRequest(invite=invite, user=user, email=data["e"], newcomer=bool(data.get("n")))


def invite_joined(*, invite: Invite, user: Any) -> bool:
    return InviteUse.objects.filter(invite=invite, user=user).exists()


@transaction.atomic
def invite_confirm(*, token: str) -> tuple[ProjectMember, bool]:
    """Join through a confirmation link: the signature and age, the invite (state, uses),
    the address's domain are checked again, then ``invite_accept`` joins (counting the
    use). A newcomer's account is activated, an existing user's confirmed address saved.
    Returns the membership and whether an account was activated now. Opening it again
    changes nothing (and activates nothing)."""
    data, user = _token_read(token, salt=CONFIRM_SALT, max_age=CONFIRM_MAX_AGE)
    user = get_user_model().objects.select_for_update().get(pk=user.pk)
    newcomer, email = bool(data.get("n")), data["e"]
    pending = newcomer and not user.is_active and user.last_login is None
    if not user.is_active and not pending:
        raise ValidationError(_("This account is deactivated; ask the project's admins."))
    if pending and email.lower() != (user.email or "").lower():
        raise ConfirmLinkBad("bad")
    invite = Invite.objects.filter(pk=data.get("i")).first()
    if invite is not None and invite_joined(invite=invite, user=user):
        member = ProjectMember.objects.get(project_id=invite.project_id, user=user,
                                           role=invite.role)
        return member, False
    member = invite_accept(invite_id=data.get("i"), user=user, email=email,
                           address_confirmed=True)
    if pending:
        user.is_active = True
        user.save(update_fields=["is_active"])
    return member, pending


def confirm_resend(*, resend_token: str, site_root: str,
                   language: str | None = None) -> JoinRequest | None:
    """The join request mailed again (recorded and counted against the hourly limit, sent
    by a task as ``invite_join_request``'s), or None when its user joined already.
    ``ConfirmLinkBad`` (also when the account went: a lapsed sign-up is purged),
    ``InviteUnavailable`` or ``ValidationError`` otherwise."""
    if not mail_possible():
        raise _mail_unavailable()
    data, user = _token_read(resend_token, salt=RESEND_SALT, max_age=RESEND_MAX_AGE)
    with transaction.atomic():
        # Locked: the purge, which locks it too, does not remove it under a new link.
        user = get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        if user is None:
            raise ConfirmLinkBad("bad")
        invite, already = _invite_open(data.get("i"), user)
        if already:
            return None
        newcomer = bool(data.get("n"))
        if newcomer and (user.is_active or user.last_login is not None):
            raise ConfirmLinkBad("bad")  # not a pending sign-up any more
        join = JoinRequest(invite=invite, user=user, email=data["e"], newcomer=newcomer)
        return _mail_queue(join, site_root=site_root, language=language)


@dataclass(frozen=True)
class PendingSignup:
    """An account signed up through a link restricted to e-mail domains that waits for
    its address to be confirmed. ``lapsed``: every link mailed to it has expired (it may be
    purged, or its username taken over). ``invite``: the invite its last link was for, and
    ``invite_state`` that invite's ``State``; ``resend_token`` mails a new link
    (``confirm_resend``), which works while the invite is open."""

    user: Any
    email: str
    lapsed: bool
    invite: Invite
    invite_state: str
    resend_token: str


def signup_pending(*, username: str, password: str,
                   now: datetime | None = None) -> PendingSignup | None:
    """The account signed up through a link restricted to e-mail domains and waiting for
    its address to be confirmed (inactive, never logged in, mailed a link as a newcomer),
    when ``password`` is its password; else None. Read only."""
    user = (get_user_model().objects.filter(username=username, is_active=False,
                                            last_login__isnull=True).first()
            if username and password else None)
    if user is None or not user.check_password(password):
        return None
    mail = (InviteMail.objects.filter(user=user, newcomer=True)
            .select_related("invite__project").order_by("-pk").first())
    if mail is None:  # no sign-up of ours: an account deactivated before its first login
        return None
    now = now or timezone.now()
    join = JoinRequest(invite=mail.invite, user=user, email=mail.email, newcomer=True)
    return PendingSignup(
        user=user, email=mail.email,
        lapsed=_signups_lapsed(now).filter(pk=user.pk).exists(),
        invite=mail.invite, invite_state=invite_state(mail.invite, now),
        resend_token=join.resend_token)


def confirm_mail_send(*, join: JoinRequest, url: str) -> None:
    """Mail ``url`` (the confirmation link) to the address, in the active language."""
    context = {"user": join.user, "project": join.invite.project, "role": join.invite.role,
               "url": url, "days": CONFIRM_MAX_AGE.days, "newcomer": join.newcomer}
    subject = " ".join(render_to_string(
        "annotation/invites/confirm_mail_subject.txt", context).split())
    body = render_to_string("annotation/invites/confirm_mail.txt", context)
    send_mail(subject, body, None, [join.email])


# Unconfirmed sign-ups whose links expired ---------------------------------------------------

def _signups_lapsed(now: datetime) -> QuerySet:
    """Accounts made by a sign-up through a link restricted to e-mail domains that were
    never confirmed (inactive, never logged in) and whose every confirmation link has
    expired (the last mail sent, or asked for, longer than CONFIRM_MAX_AGE ago)."""
    recent = (InviteMail.objects.filter(user=OuterRef("pk"))
              .annotate(link_at=Coalesce("sent_at", "created_at"))
              .filter(link_at__gt=now - CONFIRM_MAX_AGE))
    return (get_user_model().objects
            .filter(is_active=False, last_login__isnull=True,
                    pk__in=InviteMail.objects.filter(newcomer=True).values("user_id"))
            .exclude(Exists(recent)))


def _referenced(user_ids: set[int]) -> set[int]:
    """Those of ``user_ids`` that any row refers to but their confirmation mails: a
    membership, an invite use, work, payments, groups, a token, an admin's log entry (every
    relation to the user model, whatever app adds it). Such an account is never purged."""
    if not user_ids:
        return set()
    found: set[int] = set()
    for relation in get_user_model()._meta.get_fields(include_hidden=True):
        if (relation.concrete or not relation.auto_created
                or relation.related_model is InviteMail):
            continue
        name = relation.field.name
        found.update(relation.related_model._base_manager
                     .filter(**{f"{name}__in": user_ids}).values_list(name, flat=True))
    return found


def _signup_lapsed(*, user_id: int, now: datetime | None = None) -> bool:
    """Whether account ``user_id`` is a lapsed sign-up nothing refers to (read only)."""
    now = now or timezone.now()
    return (_signups_lapsed(now).filter(pk=user_id).exists()
            and not _referenced({user_id}))


def _signup_lapsed_release(*, user_id: int, now: datetime | None = None) -> bool:
    """Delete account ``user_id`` (and its confirmation mails) when it is a lapsed sign-up
    nothing refers to, checked again under its row lock; whether it is gone. Runs in the
    caller's transaction, or its own."""
    with transaction.atomic():
        if not get_user_model().objects.select_for_update().filter(pk=user_id).exists():
            return True
        if not _signup_lapsed(user_id=user_id, now=now):
            return False
        get_user_model().objects.filter(pk=user_id).delete()
        return True


def signups_lapsed_purge(*, now: datetime | None = None) -> int:
    """The periodic purge: delete the accounts of sign-ups never confirmed whose links
    have all expired and that nothing refers to (``_signup_lapsed``), so their usernames
    and addresses are free; then the confirmation mail rows older than MAIL_ROWS_KEPT.
    Never touches a confirmed account, or one with any membership, work or role.
    Idempotent. Returns how many accounts went."""
    now = now or timezone.now()
    candidates = set(_signups_lapsed(now).values_list("pk", flat=True))
    purged = 0
    for user_id in sorted(candidates - _referenced(candidates)):
        if _signup_lapsed_release(user_id=user_id, now=now):
            purged += 1
    InviteMail.objects.filter(created_at__lt=now - MAIL_ROWS_KEPT).delete()
    if purged:
        logger.info("purged %d unconfirmed sign-ups whose confirmation links expired", purged)
    return purged


# Members from a CSV ----------------------------------------------------------------------

@dataclass
class MembersImport:
    """What ``members_import`` did. ``links`` are (username, password-set path) of the new
    accounts: shown once, never stored."""

    created: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    memberships_added: int = 0
    memberships_kept: int = 0
    links: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class _Row:
    line: int
    username: str
    email: str
    role: str
    project: Project


def password_set_path(user: Any) -> str:
    """A one-time link to set a password (Django's reset confirm page)."""
    uidb64 = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return reverse("password_reset_confirm", args=[uidb64, token])


def _rows_parse(*, text: str, name: str, project: Project | None) -> list[_Row]:
    """Every row checked; all errors raised together, naming file, line and field (stored
    texts in the import's frame, shown in the reader's language)."""
    errors: list[StoredText] = []

    def error(line: int, column: str | None, detail: StoredText) -> None:
        errors.append(ImportFailure(detail, file=name, where=at_line(line), field=column).text)

    def bad_csv(exc: csv.Error, line: int) -> None:
        problem, _at_record = csv_problem(exc)
        error(line, None, StoredText(BAD_CSV, error=problem))

    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    try:
        header = next(reader)
    except StopIteration:
        raise ValidationError([ImportFailure(
            StoredText(gettext_noop("the file is empty (expected a header row %(header)s)"),
                       header=",".join(IMPORT_REQUIRED)), file=name).text]) from None
    except csv.Error as exc:
        bad_csv(exc, 1)
        raise ValidationError(errors) from None
    columns = [c.strip().lower() for c in header]
    known = ", ".join(IMPORT_COLUMNS)
    for column in columns:
        if not column:
            error(1, None, StoredText(gettext_noop("a column has no name; the columns are "
                                                   "%(columns)s"), columns=known))
        elif column not in IMPORT_COLUMNS:
            error(1, column, StoredText(gettext_noop("unknown column; the columns are "
                                                     "%(columns)s"), columns=known))
    for column in IMPORT_REQUIRED:
        if column not in columns:
            error(1, column, StoredText(gettext_noop("column is missing")))
    for column in dict.fromkeys(c for c in columns if c and columns.count(c) > 1):
        error(1, column, StoredText(gettext_noop("the column appears twice")))
    if errors:
        raise ValidationError(errors)

    raw_rows: list[tuple[int, dict[str, str]]] = []
    try:
        for values in reader:
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(columns):
                error(reader.line_num, None, StoredText(COLUMNS_DIFFER, columns=len(values),
                                                        header=len(columns)))
                continue
            raw_rows.append((reader.line_num,
                             {c: v.strip() for c, v in zip(columns, values, strict=True)}))
    except csv.Error as exc:
        bad_csv(exc, reader.line_num)
    if not raw_rows and not errors:
        errors.append(ImportFailure(StoredText(gettext_noop("no rows under the header")),
                                    file=name).text)

    names = {r.get("project", "") for _, r in raw_rows} - {""}
    projects = {p.name: p for p in Project.objects.filter(name__in=names)}
    seen: dict[tuple[str, int, str], int] = {}
    emails: dict[str, tuple[int, str]] = {}
    rows: list[_Row] = []
    for line, r in raw_rows:
        ok = True
        username, email, role = r["username"], r["email"], r["role"].lower()
        if not username:
            error(line, "username", StoredText(IS_EMPTY))
            ok = False
        elif len(username) > 150:
            error(line, "username", StoredText(LONGER_THAN, most=150))
            ok = False
        else:
            try:
                get_user_model().username_validator(username)
            except ValidationError:
                error(line, "username", StoredText(gettext_noop(
                    "%(value)s may only hold letters, digits and @ . + - _"),
                    value=repr(username)))
                ok = False
            else:
                if username.startswith(FORMULA_STARTS):
                    error(line, "username", StoredText(gettext_noop(
                        "%(value)s starts with %(start)s; start it with a letter, a digit or "
                        "'_'"), value=repr(username), start=repr(username[0])))
                    ok = False
        if email:
            try:
                validate_email(email)
            except ValidationError:
                error(line, "email", StoredText(gettext_noop("%(value)s is not an e-mail "
                                                             "address"), value=repr(email)))
                ok = False
        if role not in IMPORT_ROLES:
            error(line, "role", StoredText(ONE_OF, value=repr(r["role"]),
                                           choices=", ".join(IMPORT_ROLES)))
            ok = False
        target = project
        if r.get("project"):
            target = projects.get(r["project"])
            if target is None:
                error(line, "project", StoredText(gettext_noop("no project named %(name)s"),
                                                  name=repr(r["project"])))
                ok = False
        elif project is None:
            error(line, "project", StoredText(gettext_noop(
                "is empty, and the upload is not for one project")))
            ok = False
        if not ok:
            continue
        key = (username.lower(), target.pk, role)
        if key in seen:
            error(line, "username", StoredText(gettext_noop(
                "%(username)s as %(role)s in %(project)s is on line %(line)s already"),
                username=repr(username), role=role, project=repr(target.name),
                line=seen[key]))
            continue
        seen[key] = line
        earlier = emails.get(username.lower())
        if earlier is not None and earlier[1].lower() != email.lower():
            error(line, "email", StoredText(gettext_noop(
                "%(email)s differs from %(earlier)s given for %(username)s on line %(line)s"),
                email=repr(email), earlier=repr(earlier[1]), username=repr(username),
                line=earlier[0]))
            continue
        emails.setdefault(username.lower(), (line, email))
        rows.append(_Row(line, username, email, role, target))
    if errors:
        raise ValidationError(errors)
    return rows


@transaction.atomic
def members_import(
    *, text: str, name: str, project: Project | None = None, actor: Any = None
) -> MembersImport:
    """Add the people of a CSV (header ``username,email,role`` and optional ``project``,
    a project's name; empty means ``project``) as members. All or nothing: a
    ``ValidationError`` lists every bad row and nothing is written.

    Existing accounts (usernames match case-insensitively) get the role's group and the
    membership; their e-mail and password stay as they are. New accounts have no usable
    password: each comes with a one-time password-set link.
    """
    rows = _rows_parse(text=text, name=name, project=project)
    user_model = get_user_model()
    lowers = {row.username.lower() for row in rows}
    users = {u.lower_name: u for u in user_model.objects.annotate(lower_name=Lower("username"))
             .filter(lower_name__in=lowers).order_by("-pk")}  # the oldest wins
    summary = MembersImport()
    for row in rows:
        key = row.username.lower()
        user = users.get(key)
        if user is None:
            user = user_model(username=row.username, email=row.email)
            user.set_unusable_password()
            user.save()
            users[key] = user
            summary.created.append(user.username)
        elif user.username not in summary.created and user.username not in summary.existing:
            summary.existing.append(user.username)
        _role_grant(user, row.role)
        _, created = ProjectMember.objects.get_or_create(
            project=row.project, user=user, role=row.role,
            defaults={"source": ProjectMember.Source.CSV})
        if created:
            summary.memberships_added += 1
        else:
            summary.memberships_kept += 1
    # Tokens last: they hash the saved account (password, last login, e-mail).
    summary.links = [(username, password_set_path(users[username.lower()]))
                     for username in summary.created]
    return summary


# Reads for the members page --------------------------------------------------------------

def project_members(*, project: Project, page: Any = 1, per_page: int | None = None) -> Page:
    """One page of the project's members (by role, then username) with their account,
    marketplace account (``external``, or None) and ``submissions`` to the project: three
    queries whatever the number of members (their count, the page, the page's counts)."""
    members = project.members.select_related("user", "user__external_account").order_by(
        "role", "user__username", "id")
    shown = Paginator(members, per_page or MEMBERS_PER_PAGE).get_page(page)
    rows = list(shown.object_list)
    counts = dict(Submission.objects.filter(
        stage__project=project, worker_id__in={m.user_id for m in rows}).order_by()
        .values("worker").annotate(n=Count("id")).values_list("worker", "n"))
    for member in rows:
        try:
            member.external = member.user.external_account
        except ObjectDoesNotExist:
            member.external = None
        member.submissions = counts.get(member.user_id, 0)
    shown.object_list = rows
    return shown


def project_invites(*, project: Project, now: datetime | None = None) -> list[dict[str, Any]]:
    """The project's invites, newest first, each with its path, state, number of uses
    (``used``) and the latest ``INVITE_USES_SHOWN`` of them (with the users): two queries
    whatever the number of invites and uses."""
    now = now or timezone.now()
    rows = []
    latest = InviteUse.objects.select_related("user").order_by("-at", "-id")
    for invite in (project.invites.select_related("created_by")
                   .annotate(used=Count("uses"))
                   .prefetch_related(Prefetch("uses", queryset=latest[:INVITE_USES_SHOWN],
                                              to_attr="latest_uses"))):
        uses = invite.latest_uses
        rows.append({"invite": invite, "path": invite_path(invite), "uses": uses,
                     "used": invite.used, "more": invite.used - len(uses),
                     "state": invite_state(invite, now)})
    return rows
