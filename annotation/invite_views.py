"""Invite links and the project members page.

``/join/<token>/`` is public: it shows the project's consent text and signs people up (or
takes a logged-in user in) through ``annotation.invites.invite_accept``. The members page
and its forms (new invite, revoke, CSV upload) are for admins; every change is a POST.
"""

from __future__ import annotations

import time
from pathlib import PurePath
from typing import Any
from urllib.parse import urlencode

from axes.helpers import get_client_ip_address
from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import get_script_prefix, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_http_methods, require_POST

from annotation import engine, invites
from annotation.markdown import render_markdown
from annotation.models import Invite, InviteMail, Project, ProjectMember
from annotation.roles import Role, role_required
from collector.importers.errors import ImportFailure
from collector.importers.source import text_decode
from config.request_guards import form_refuses_nul

MEMBERS_TEMPLATE = "annotation/invites/members.html"
IMPORT_MAX_BYTES = 2 * 1024 * 1024


#: The roles an invite gives, as the welcome message names them.
ROLE_NAMES = {Role.ANNOTATOR: gettext_lazy("annotator"), Role.CHECKER: gettext_lazy("checker"),
              Role.ADMIN: gettext_lazy("admin")}


class SignupForm(forms.Form):
    username = forms.CharField(max_length=150, label=gettext_lazy("Username"))
    email = forms.EmailField(required=False, label=gettext_lazy("E-mail"))
    password1 = forms.CharField(widget=forms.PasswordInput, strip=False,
                                label=gettext_lazy("Password"))
    password2 = forms.CharField(widget=forms.PasswordInput, strip=False,
                                label=gettext_lazy("Password again"))
    agree = forms.BooleanField(
        label=gettext_lazy("I agree"),
        error_messages={"required": gettext_lazy("Tick “I agree” to join.")})

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("password1") and data.get("password1") != data.get("password2"):
            self.add_error("password2", _("The two passwords differ."))
        return data


class JoinForm(forms.Form):
    """A logged-in user joins with one button; consent is still asked. When the link
    accepts only some e-mail domains and their account's address is missing or elsewhere,
    the form asks for one (``invites.email_wanted``; the service checks it)."""

    agree = forms.BooleanField(
        label=gettext_lazy("I agree"),
        error_messages={"required": gettext_lazy("Tick “I agree” to join.")})

    def __init__(self, *args: Any, email_wanted: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if email_wanted:
            self.fields["email"] = forms.CharField(required=False, max_length=254,
                                                   label=gettext_lazy("E-mail"))


#: The roles' names in the reader's language (the invite form's choices).
ROLE_NAMES = {"annotator": gettext_lazy("annotator"), "checker": gettext_lazy("checker"),
              "admin": gettext_lazy("admin")}


class InviteCreateForm(forms.Form):
    role = forms.ChoiceField(choices=[(r, ROLE_NAMES[r]) for r in invites.INVITE_ROLES],
                             label=gettext_lazy("Role"))
    max_uses = forms.IntegerField(min_value=1, required=False,
                                  label=gettext_lazy("Max uses (empty: no limit)"))
    expires_days = forms.IntegerField(min_value=1, required=False,
                                      label=gettext_lazy("Expires in days (empty: never)"))
    domains = forms.CharField(
        required=False, label=gettext_lazy("E-mail domains, comma-separated (empty: any)"),
        help_text=gettext_lazy(
            "Only addresses at these domains may join. Each address is confirmed: whoever "
            "signs up gets a link by e-mail and joins when they open it."))


class MembersImportForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("CSV file"))


def _errors_to_form(form: forms.Form, exc: ValidationError) -> None:
    """Put a service's errors on the form's fields (or on the form when no field fits)."""
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return
    aliases = {"password": "password1", "allowed_domains": "domains"}
    for key, messages_ in exc.message_dict.items():
        target = aliases.get(key, key)
        form.add_error(target if target in form.fields else None, messages_)


#: The session key naming the account this browser signed up (a confirmation link logs in
#: only the browser that signed its account up: in another, say a victim's, it would log
#: in as whoever sent it).
SIGNED_UP_KEY = "crowdqa_signed_up"


def _landing(role: str) -> str:
    if role == Role.CHECKER:
        return reverse("annotation:checker_home")
    return reverse("annotation:task_next")


def _gone(request: HttpRequest, invite: Invite | None, state: str) -> HttpResponse:
    """The clear page of a link that cannot be used: 404 unknown, 410 otherwise."""
    return render(request, "annotation/invites/gone.html", {"invite": invite, "state": state},
                  status=404 if invite is None else 410)


@require_http_methods(["GET", "POST"])
def invite_join(request: HttpRequest, token: str) -> HttpResponse:
    """Public: the project's consent and a sign-up form, or one button when logged in."""
    invite = Invite.objects.select_related("project").filter(token=token).first()
    if invite is None:
        return _gone(request, None, "unknown")
    user = request.user if request.user.is_authenticated else None
    state = invites.invite_state(invite)
    joined = user is not None and invite.uses.filter(user=user).exists()
    if state != invites.State.OK and not (joined and state == invites.State.USED_UP):
        return _gone(request, invite, state)
    if user is not None:
        extra = {"email_wanted": invites.email_wanted(invite, user) and not joined}
        form: forms.Form = (JoinForm(request.POST, **extra) if request.method == "POST"
                            else JoinForm(**extra))
    else:
        form = SignupForm(request.POST) if request.method == "POST" else SignupForm()
    if (request.method == "POST" and user is None and form.is_valid()
            and not invites.signup_allowed(address=get_client_ip_address(request))):
        form.add_error(None, _("Too many accounts were made from your network address this "
                               "hour. Try again in an hour, or ask whoever sent you the link."))
        response = render(request, "annotation/invites/join.html", {
            "invite": invite, "project": invite.project, "form": form, "joined": joined,
            "consent": render_markdown(invite.project.consent)}, status=429)
        response["Retry-After"] = str(3600 - int(time.time()) % 3600)  # the next hour
        return response
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        fields = ({"user": user, "email": data.get("email", "")} if user is not None else
                  {"username": data["username"], "email": data["email"],
                   "password": data["password1"]})
        try:
            if invites.confirm_needed(invite) and not joined:
                join = invites.invite_join_request(invite_id=invite.pk,
                                                   site_root=_site_root(request), **fields)
            else:
                member = invites.invite_accept(invite_id=invite.pk, **fields)
        except invites.InviteUnavailable as exc:
            return _gone(request, invite, exc.state)
        except ValidationError as exc:
            _errors_to_form(form, exc)
        else:
            if invites.confirm_needed(invite) and not joined:
                if user is None:
                    request.session[SIGNED_UP_KEY] = join.user.pk
                return _confirm_sent(request, join)
            if user is None:
                _login(request, member.user)
            _welcome(request, member)
            return redirect(_landing(member.role))
    return render(request, "annotation/invites/join.html", {
        "invite": invite, "project": invite.project, "form": form, "joined": joined,
        "consent": render_markdown(invite.project.consent),
    })


def _login(request: HttpRequest, user: Any) -> None:
    # Named: django-axes' login throttling is a second authentication backend.
    login(request, user, backend="annotation.roles.RoleBackend")


def _welcome(request: HttpRequest, member: ProjectMember) -> None:
    messages.success(request, _("Welcome to %(project)s: you joined as %(role)s.")
                     % {"project": member.project.name,
                        "role": ROLE_NAMES.get(member.role, member.role)})


def _site_root(request: HttpRequest) -> str:
    """The site's absolute root URL as this request reached it: the mailed links start
    with it."""
    return request.build_absolute_uri(get_script_prefix())


def _confirm_sent(request: HttpRequest, join: invites.JoinRequest) -> HttpResponse:
    """Say where the confirmation mail stands: on its way (a worker sends it), sent (the
    embedded mode sent it on commit), or failed (503), with the button to send it again."""
    mail = invites.invite_mail_status(mail_id=join.mail_id)
    failed = mail in (InviteMail.Status.FAILED, "gone")
    return render(request, "annotation/invites/confirm_sent.html", {
        "join": join, "mail": "failed" if failed else mail, "resend_token": join.resend_token,
        "days": invites.CONFIRM_MAX_AGE.days}, status=503 if failed else 200)


def _confirm_bad(request: HttpRequest, exc: invites.ConfirmLinkBad) -> HttpResponse:
    return render(request, "annotation/invites/confirm.html", {
        "state": exc.state, "resend_token": exc.resend_token,
        "days": invites.CONFIRM_MAX_AGE.days}, status=410 if exc.state == "expired" else 400)


@require_http_methods(["GET", "POST"])
def invite_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """Public: the link of a confirmation mail. GET shows one button (mail scanners that
    open links join nobody); POST joins (``invites.invite_confirm``), logs the newcomer in
    when this browser signed them up (elsewhere: the login page) and lands where joining
    lands. Someone else signed in here: they are asked to log out first, and nothing is
    joined. Expired: a button to mail a new link."""
    try:
        join = invites.confirm_request(token=token)
    except invites.ConfirmLinkBad as exc:
        return _confirm_bad(request, exc)
    except invites.InviteUnavailable as exc:
        return _gone(request, None, exc.state)
    invite = join.invite
    landing = _landing(invite.role)
    if request.user.is_authenticated and request.user.pk != join.user.pk:
        # Somebody else is signed in here: confirming would join (and, for a new account,
        # log this browser in as) the link's account, so the one signed in could work and be
        # paid under another's name without noticing. They log out first.
        return render(request, "annotation/invites/confirm.html", {
            "state": "other_user", "join": join, "project": invite.project},
            status=409 if request.method == "POST" else 200)
    # Where to go once joined: the landing page for its user, else logging in as them.
    next_ = (landing if request.user.pk == join.user.pk
             else f"{reverse('login')}?{urlencode({'next': landing})}")
    errors: list[str] = []
    joined = invites.invite_joined(invite=invite, user=join.user)
    if request.method == "POST" and not joined:
        try:
            member, activated = invites.invite_confirm(token=token)
        except invites.ConfirmLinkBad as exc:
            return _confirm_bad(request, exc)
        except invites.InviteUnavailable as exc:
            return _gone(request, invite, exc.state)
        except ValidationError as exc:
            errors = exc.messages
        else:
            if activated and request.session.get(SIGNED_UP_KEY) == member.user_id:
                _login(request, member.user)
                request.session.pop(SIGNED_UP_KEY, None)
            _welcome(request, member)
            return redirect(landing if request.user.pk == member.user_id else next_)
    elif request.method == "GET" and not joined:
        state = invites.invite_state(invite)
        if state != invites.State.OK:
            return _gone(request, invite, state)
    return render(request, "annotation/invites/confirm.html", {
        "state": "joined" if joined else "ok", "join": join, "project": invite.project,
        "errors": errors, "next": next_})


@require_POST
def invite_confirm_resend(request: HttpRequest) -> HttpResponse:
    """Public: mail a new confirmation link (``invites.confirm_resend``; the hourly limit
    holds)."""
    try:
        join = invites.confirm_resend(resend_token=request.POST.get("token", ""),
                                      site_root=_site_root(request))
    except invites.ConfirmLinkBad as exc:
        return _confirm_bad(request, invites.ConfirmLinkBad("bad") if exc.state == "expired"
                            else exc)
    except invites.InviteUnavailable as exc:
        return _gone(request, None, exc.state)
    except ValidationError as exc:
        return render(request, "annotation/invites/confirm.html", {
            "state": "limited", "errors": exc.messages}, status=429)
    if join is None:
        messages.info(request, _("You joined already"))
        return redirect("annotation:home")
    return _confirm_sent(request, join)


def _members_page(request: HttpRequest, project: Project, **extra: Any) -> dict[str, Any]:
    invite_rows = invites.project_invites(project=project)
    members = invites.project_members(project=project, page=request.GET.get("page") or 1)
    for row in invite_rows:
        row["url"] = request.build_absolute_uri(row["path"])
    context = {
        "project": project,
        "members": members.object_list, "page": members,
        "invites": invite_rows,
        "invite_form": InviteCreateForm(),
        "import_form": MembersImportForm(),
    }
    context.update(extra)
    return context


def _invites_response(request: HttpRequest, project: Project, **extra: Any) -> HttpResponse:
    """After an invite changed: the invites part for htmx, else back to the page."""
    if request.htmx:
        return render(request, MEMBERS_TEMPLATE + "#invites",
                      _members_page(request, project, **extra))
    return redirect("annotation:project_members", pk=project.pk)


@role_required(Role.ADMIN)
def project_members(request: HttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=pk)
    return render(request, MEMBERS_TEMPLATE, _members_page(request, project))


@form_refuses_nul
@role_required(Role.ADMIN)
@require_POST
def project_invite_create(request: HttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=pk)
    form = InviteCreateForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            invite = invites.invite_create(
                project=project, role=data["role"], actor=request.user,
                max_uses=data["max_uses"], expires_days=data["expires_days"],
                allowed_domains=data["domains"].split(","))
        except ValidationError as exc:
            _errors_to_form(form, exc)
        else:
            url = request.build_absolute_uri(invites.invite_path(invite))
            messages.success(request, _("Invite link created: %(url)s") % {"url": url})
            return _invites_response(request, project, created=invite.pk)
    template = MEMBERS_TEMPLATE + "#invites" if request.htmx else MEMBERS_TEMPLATE
    return render(request, template, _members_page(request, project, invite_form=form))


@role_required(Role.ADMIN)
@require_POST
def invite_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    invite = get_object_or_404(Invite.objects.select_related("project"), pk=pk)
    invites.invite_revoke(invite=invite, actor=request.user)
    messages.success(request, _("Invite link …%(end)s revoked.") % {"end": invite.token[-6:]})
    return _invites_response(request, invite.project)


@role_required(Role.ADMIN)
@require_POST
def members_import(request: HttpRequest, pk: int) -> HttpResponse:
    """Upload a members CSV: the summary and password-set links, or every error."""
    project = get_object_or_404(Project, pk=pk)
    form = MembersImportForm(request.POST, request.FILES)
    result, errors = None, []
    if form.is_valid():
        upload = form.cleaned_data["file"]
        name = PurePath(upload.name).name or "members.csv"
        try:
            if upload.size > IMPORT_MAX_BYTES:
                raise ValidationError(_("%(file)s: larger than %(limit)s KiB")
                                      % {"file": name, "limit": IMPORT_MAX_BYTES // 1024})
            try:
                text = text_decode(upload.read(), file=name)
            except ImportFailure as exc:
                raise ValidationError(exc.text) from None
            result = invites.members_import(text=text, name=name, project=project,
                                            actor=request.user)
        except ValidationError as exc:
            errors = exc.messages
        else:
            result.links = [(username, request.build_absolute_uri(path))
                            for username, path in result.links]
    else:
        errors = [*form.non_field_errors(),
                  *(_("%(where)s: %(detail)s") % {"where": field.label, "detail": message}
                    for field in form for message in field.errors)]
    return render(request, MEMBERS_TEMPLATE, _members_page(
        request, project, import_form=form, import_result=result, import_errors=errors),
        status=200 if result else 400)


@role_required(Role.ADMIN)
@require_POST
def member_status(request: HttpRequest, pk: int) -> HttpResponse:
    """Pause, block or resume a member (``status`` in the POST); a paused or blocked
    member's live tasks of the project go back to the pool."""
    member = get_object_or_404(ProjectMember.objects.select_related("user", "project"), pk=pk)
    status = request.POST.get("status", "")
    if status not in ProjectMember.Status.values:
        return HttpResponseBadRequest(f"status: expected one of "
                                      f"{', '.join(ProjectMember.Status.values)}")
    returned = engine.member_status_set(member=member, status=status, actor=request.user)
    text = _("%(user)s (%(role)s) is now %(status)s.") % {
        "user": member.user.username, "role": _(member.role),
        "status": str(ProjectMember.Status(status).label).lower()}
    if returned:
        text += " " + ngettext("%(n)d live task went back to the pool.",
                               "%(n)d live tasks went back to the pool.", returned) % {
            "n": returned}
    (messages.warning if status != ProjectMember.Status.ACTIVE else messages.success)(
        request, text)
    return redirect("annotation:project_members", pk=member.project_id)
