"""Invite links, members from a CSV, the project members page and ``invite_create``."""

from __future__ import annotations

import re
import smtplib
import threading
from datetime import timedelta
from io import StringIO
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.checks import run_checks
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import connection, connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import engine, invites
from annotation.models import ExternalAccount, Invite, InviteUse, ProjectMember
from annotation.roles import Role, user_roles
from annotation.stages import Emit
from tests.factories import PASSWORD, user_with_roles

User = get_user_model()
NEW_PASSWORD = "lantern-orchid-47"
CONSENT = "You will read **news stories** and write questions. Pay: 9 GBP an hour."


@pytest.fixture
def project(db):
    project = engine.project_create(name="Harbor news", recipe="newsqa")
    project.consent = CONSENT
    project.save(update_fields=["consent"])
    return project


def _signup(client, invite, **overrides):
    data = {"username": "maria", "email": "maria@uni.edu", "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD, "agree": "on", **overrides}
    return client.post(reverse("annotation:invite_join", args=[invite.token]), data)


def _nothing_written(before_users: int) -> None:
    assert User.objects.count() == before_users
    assert not ProjectMember.objects.exists()
    assert not InviteUse.objects.exists()


# Joining ---------------------------------------------------------------------------------

def test_admin_creates_a_link_and_a_newcomer_signs_up_onto_the_task_page(
        project, admin_user, client, client_for):
    admin = client_for(admin_user)
    response = admin.post(reverse("annotation:project_invite_create", args=[project.pk]),
                          {"role": "annotator", "max_uses": "5", "expires_days": "7",
                           "domains": ""})
    assert response.status_code == 302
    invite = Invite.objects.get(project=project)
    assert (invite.role, invite.max_uses, invite.created_by) == ("annotator", 5, admin_user)
    assert invites.invite_path(invite) == f"/join/{invite.token}/"
    admin.logout()

    page = client.get(invites.invite_path(invite))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Harbor news" in html
    assert "<strong>news stories</strong>" in html  # the consent, rendered from Markdown
    assert "I agree" in html and 'name="password2"' in html

    response = _signup(client, invite)
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:task_next")
    maria = User.objects.get(username="maria")
    assert int(client.session["_auth_user_id"]) == maria.pk  # logged in
    assert maria.check_password(NEW_PASSWORD) and maria.email == "maria@uni.edu"
    assert user_roles(maria) == {Role.ANNOTATOR}
    member = ProjectMember.objects.get(project=project, user=maria)
    assert (member.role, member.source, member.status) == ("annotator", "invite", "active")
    assert member.consented_at is not None
    assert list(invite.uses.values_list("user__username", flat=True)) == ["maria"]

    members_page = client_for(admin_user).get(
        reverse("annotation:project_members", args=[project.pk]))
    html = members_page.content.decode()
    assert 'data-testid="member-maria-annotator"' in html
    assert f"http://testserver/join/{invite.token}/" in html
    row = members_page.context["invites"][0]
    assert [use.user.username for use in row["uses"]] == ["maria"]
    assert row["state"] == "ok"


def test_a_checker_invite_lands_on_the_checker_home(project, client):
    invite = invites.invite_create(project=project, role="checker")
    response = _signup(client, invite, username="chen", email="")
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:checker_home")
    chen = User.objects.get(username="chen")
    assert user_roles(chen) == {Role.CHECKER}
    assert ProjectMember.objects.get(user=chen).role == "checker"


def test_a_logged_in_user_joins_with_one_button_and_keeps_their_groups(
        project, client_for):
    user = user_with_roles("omar", Role.CHECKER)
    client = client_for(user)
    invite = invites.invite_create(project=project, role="annotator", max_uses=1)
    page = client.get(invites.invite_path(invite))
    assert "Join as omar" in page.content.decode()
    assert 'name="password1"' not in page.content.decode()

    refused = client.post(invites.invite_path(invite), {})  # consent not ticked
    assert refused.status_code == 200
    assert "Tick “I agree” to join." in refused.content.decode()
    assert not ProjectMember.objects.exists()

    response = client.post(invites.invite_path(invite), {"agree": "on"})
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:task_next")
    user.refresh_from_db()
    assert set(user.groups.values_list("name", flat=True)) == {"checker", "annotator"}
    # Joining again (the invite is used up by omar himself) neither fails nor counts twice.
    again = client.post(invites.invite_path(invite), {"agree": "on"})
    assert again.status_code == 302
    assert ProjectMember.objects.filter(user=user).count() == 1
    assert invite.uses.count() == 1


def test_an_existing_membership_is_kept_not_duplicated(project, annotator):
    engine.project_member_add(project=project, user=annotator, role=Role.ANNOTATOR)
    invite = invites.invite_create(project=project, role="annotator")
    member = invites.invite_accept(invite_id=invite.pk, user=annotator)
    assert ProjectMember.objects.filter(user=annotator).count() == 1
    assert member.source == "admin" and member.consented_at is not None
    invites.invite_accept(invite_id=invite.pk, user=annotator)
    assert invite.uses.count() == 1


@pytest.mark.django_db(transaction=True)
def test_invite_accept_is_its_own_transaction_outside_a_view():
    """A script or a task joins through the service with no transaction around it (as
    bench/crowd_build.py does): the invite's row lock needs the service's own."""
    project = engine.project_create(name="Harbor news", recipe="newsqa")
    invite = invites.invite_create(project=project, role="annotator")
    member = invites.invite_accept(invite_id=invite.pk, username="maria",
                                   email="maria@uni.edu", password=NEW_PASSWORD)
    assert member.user.username == "maria" and member.role == "annotator"
    assert invite.uses.count() == 1


def _expired(project):
    invite = invites.invite_create(project=project, role="annotator", expires_days=1)
    Invite.objects.filter(pk=invite.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    return invite


def _revoked(project, client_for):
    invite = invites.invite_create(project=project, role="annotator")
    admin = client_for(user_with_roles("boss", Role.ADMIN))
    response = admin.post(reverse("annotation:invite_revoke", args=[invite.pk]))
    assert response.status_code == 302
    admin.logout()
    return invite


def _used_up(project):
    invite = invites.invite_create(project=project, role="annotator", max_uses=1)
    invites.invite_accept(invite_id=invite.pk, username="first", email="first@uni.edu",
                          password=NEW_PASSWORD)
    return invite


@pytest.mark.parametrize(("state", "heading"), [
    ("expired", "This invite link has expired"),
    ("revoked", "This invite link was withdrawn"),
    ("used_up", "This invite link is used up"),
])
def test_closed_links_say_what_happened_with_410_and_create_nothing(
        project, client, client_for, state, heading):
    invite = {"expired": lambda: _expired(project),
              "revoked": lambda: _revoked(project, client_for),
              "used_up": lambda: _used_up(project)}[state]()
    users, members = User.objects.count(), ProjectMember.objects.count()
    uses = InviteUse.objects.count()
    for response in (client.get(invites.invite_path(invite)), _signup(client, invite)):
        assert response.status_code == 410
        html = response.content.decode()
        assert heading in html
        assert "Ask the person who sent you the link" in html
        assert response.context["state"] == state
    assert (User.objects.count(), ProjectMember.objects.count(),
            InviteUse.objects.count()) == (users, members, uses)
    assert invites.invite_state(Invite.objects.get(pk=invite.pk), timezone.now()) == state


def test_an_unknown_link_is_a_clear_404(db, client):
    response = client.get(reverse("annotation:invite_join", args=["no-such-token"]))
    assert response.status_code == 404
    assert "This invite link does not exist" in response.content.decode()
    response = client.post(reverse("annotation:invite_join", args=["no-such-token"]),
                           {"username": "x", "agree": "on"})
    assert response.status_code == 404
    assert not User.objects.filter(username="x").exists()


def _logs_in(username: str, password: str) -> bool:
    """Whether the login form takes the password (in a browser of its own)."""
    response = Client().post(reverse("login"), {"username": username, "password": password})
    return response.status_code == 302


def _confirm_link(mail) -> str:
    """The confirmation link of a mail, as the reader's mail program shows it."""
    [link] = re.findall(r"http://testserver(/join/confirm/[^/\s]+/)", mail.body)
    return link


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
def test_a_domain_outside_the_list_is_refused(project, client, mailoutbox):
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["Uni.EDU", " lab.org "])
    assert invite.allowed_domains == ["uni.edu", "lab.org"]
    users = User.objects.count()
    response = _signup(client, invite, email="maria@gmail.com")
    assert response.status_code == 200
    assert ("This link only accepts e-mail addresses at uni.edu, lab.org, not gmail.com."
            in response.content.decode())
    response = _signup(client, invite, email="")
    assert "This link needs an e-mail address at uni.edu, lab.org." in response.content.decode()
    _nothing_written(users)
    assert mailoutbox == []
    response = _signup(client, invite, email="Maria@UNI.edu")  # case does not matter
    assert response.status_code == 200
    assert "We sent a link to Maria@UNI.edu" in response.content.decode()
    assert [m.to for m in mailoutbox] == [["Maria@UNI.edu"]]
    assert client.post(_confirm_link(mailoutbox[0])).status_code == 302
    assert ProjectMember.objects.filter(user__username="maria").exists()


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
def test_a_newcomer_joins_a_domain_link_only_by_the_link_mailed_to_the_address(
        project, client, mailoutbox):
    """Anybody could type an address at the link's domains and join: the restriction was an
    honour system. Now the sign-up sends a signed link to the address, and nothing joins
    (nor can the new account log in) until it is opened."""
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    page = client.get(invites.invite_path(invite)).content.decode()
    assert "We will e-mail you a link to confirm the address" in page
    response = _signup(client, invite)
    assert response.status_code == 200
    html = response.content.decode()
    assert "We sent a link to maria@uni.edu; open it to join Harbor news." in html
    assert 'data-testid="resend"' in html
    assert "_auth_user_id" not in client.session
    maria = User.objects.get(username="maria")  # the username is kept for her
    assert not maria.is_active and maria.email == "maria@uni.edu"
    assert not ProjectMember.objects.exists() and not InviteUse.objects.exists()
    assert not _logs_in("maria", NEW_PASSWORD)
    refused = Client().post(reverse("login"), {"username": "maria", "password": NEW_PASSWORD})
    assert ("Your account waits for its e-mail address to be confirmed: open the link we sent "
            "to maria@uni.edu, then log in.") in refused.content.decode()
    wrong = Client().post(reverse("login"), {"username": "maria", "password": "guessing-1"})
    assert "maria@uni.edu" not in wrong.content.decode()  # only with the right password
    again = _signup(client, invite)  # nobody else takes it meanwhile
    assert "The username &#x27;maria&#x27; is taken" in again.content.decode()

    [mail] = mailoutbox
    assert mail.to == ["maria@uni.edu"] and mail.subject == (
        "Confirm your e-mail address to join Harbor news")
    assert "Hello maria," in mail.body and "within 3 days" in mail.body
    assert "asked to join Harbor news as annotator with this e-mail address" in mail.body
    link = _confirm_link(mail)
    assert link not in html  # only the mailbox has it
    assert mail.body.count("http") == 1
    # Opening the link shows one button: a mail scanner that fetches it joins nobody.
    page = client.get(link)
    assert page.status_code == 200
    assert "Confirm maria@uni.edu as the address of maria" in page.content.decode()
    assert not ProjectMember.objects.exists()
    joined = client.post(link)
    assert joined.status_code == 302 and joined["Location"] == reverse("annotation:task_next")
    maria.refresh_from_db()
    assert maria.is_active and int(client.session["_auth_user_id"]) == maria.pk
    member = ProjectMember.objects.get(project=project, user=maria)
    assert (member.role, member.source, member.status) == ("annotator", "invite", "active")
    assert list(invite.uses.values_list("user__username", flat=True)) == ["maria"]
    welcome = [str(m) for m in client.get(joined["Location"], follow=True).context["messages"]]
    assert "Welcome to Harbor news: you joined as annotator." in welcome

    # Opening it twice is harmless: nothing changes, nobody is logged in by it.
    client.logout()
    for response in (client.get(link), client.post(link)):
        assert response.status_code == 200
        assert "You joined already" in response.content.decode()
        assert "_auth_user_id" not in client.session
    assert invite.uses.count() == 1 and ProjectMember.objects.count() == 1
    assert _logs_in("maria", NEW_PASSWORD)


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
def test_an_existing_users_new_address_is_saved_only_when_confirmed(
        project, client_for, mailoutbox):
    user = user_with_roles("omar", Role.CHECKER)
    User.objects.filter(pk=user.pk).update(email="omar@gmail.com")
    omar = client_for(user)
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    path = invites.invite_path(invite)
    response = omar.post(path, {"agree": "on", "email": "omar@uni.edu"})
    assert response.status_code == 200 and "We sent a link to omar@uni.edu" in (
        response.content.decode())
    user.refresh_from_db()
    assert user.email == "omar@gmail.com" and not ProjectMember.objects.exists()
    [mail] = mailoutbox
    assert mail.to == ["omar@uni.edu"]
    # Opened in another browser (the phone's mail): joins, and asks to log in as omar.
    client = Client()
    joined = client.post(_confirm_link(mail))
    assert joined.status_code == 302
    assert joined["Location"] == "/accounts/login/?next=%2Ftasks%2Fnext%2F"
    assert "_auth_user_id" not in client.session
    user.refresh_from_db()
    assert user.email == "omar@uni.edu"
    assert ProjectMember.objects.filter(user=user, project=project, role="annotator").exists()
    assert invite.uses.count() == 1


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
def test_a_confirmation_link_never_switches_a_signed_in_browser_to_its_account(
        project, client, client_for, mailoutbox):
    """Pressing "Confirm and join" logged the browser in as the link's new account even when
    someone else was signed in there: mallory could send lena her own link and have lena
    work, and be paid, as mallory. Now the page names both accounts and asks to log out."""
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    assert _signup(client, invite, username="mallory",
                   email="mallory@uni.edu").status_code == 200
    link = _confirm_link(mailoutbox[0])
    lena_user = user_with_roles("lena", Role.ANNOTATOR)
    lena = client_for(lena_user)
    for response, status in ((lena.get(link), 200), (lena.post(link), 409)):
        assert response.status_code == status
        html = response.content.decode()
        assert ("You are logged in as lena, but this link confirms the account mallory. "
                "Log out, then open the link again.") in html
        assert 'data-testid="confirm"' not in html and 'data-testid="logout"' in html
        assert int(lena.session["_auth_user_id"]) == lena_user.pk  # still lena
    mallory = User.objects.get(username="mallory")
    assert not mallory.is_active
    assert not ProjectMember.objects.exists() and not InviteUse.objects.exists()
    # The page's button logs lena out and comes back to the link.
    out = lena.post(reverse("logout"), {"next": link})
    assert out.status_code == 302 and out["Location"] == link
    assert "_auth_user_id" not in lena.session
    assert "Confirm mallory@uni.edu as the address of mallory" in (
        lena.get(link).content.decode())


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
def test_a_new_account_s_link_logs_in_only_the_browser_that_signed_it_up(
        project, mailoutbox):
    """Opened in a browser nobody is signed in to, mallory's link logged that browser in as
    mallory (a login CSRF: sent to lena, lena then works as mallory). It confirms the
    account there and asks to log in; the browser that signed up is logged in as before."""
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    mallorys = Client()
    assert _signup(mallorys, invite, username="mallory",
                   email="mallory@uni.edu").status_code == 200
    link = _confirm_link(mailoutbox[0])
    lenas = Client()
    joined = lenas.post(link)
    assert joined.status_code == 302
    assert joined["Location"] == "/accounts/login/?next=%2Ftasks%2Fnext%2F"
    assert "_auth_user_id" not in lenas.session
    mallory = User.objects.get(username="mallory")
    assert mallory.is_active and ProjectMember.objects.filter(user=mallory).exists()
    assert "_auth_user_id" not in mallorys.session
    assert _logs_in("mallory", NEW_PASSWORD)


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
def test_an_existing_user_with_a_fitting_address_confirms_it_too(
        project, client_for, mailoutbox):
    """An account's address was typed, never confirmed (say at an open link's sign-up):
    joining a domain link confirms it as a newcomer's."""
    user = user_with_roles("lena", Role.ANNOTATOR)
    User.objects.filter(pk=user.pk).update(email="lena@uni.edu")
    client = client_for(user)
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    page = client.get(invites.invite_path(invite)).content.decode()
    assert 'name="email"' not in page
    response = client.post(invites.invite_path(invite), {"agree": "on"})
    assert "We sent a link to lena@uni.edu" in response.content.decode()
    assert not ProjectMember.objects.exists()
    joined = client.post(_confirm_link(mailoutbox[0]))
    assert joined["Location"] == reverse("annotation:task_next")
    assert ProjectMember.objects.filter(user=user, project=project).exists()


def _requested(project, client, mailoutbox, **invite_kwargs):
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"], **invite_kwargs)
    assert _signup(client, invite).status_code == 200
    return invite, _confirm_link(mailoutbox[-1])


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
def test_an_expired_link_joins_nobody_and_sends_a_new_one(project, client, mailoutbox):
    invite, link = _requested(project, client, mailoutbox)
    later = timezone.now() + invites.CONFIRM_MAX_AGE + timedelta(minutes=1)
    with mock.patch("time.time", return_value=later.timestamp()):
        for response in (client.get(link), client.post(link)):
            assert response.status_code == 410
            html = response.content.decode()
            assert "This confirmation link has expired" in html
            assert 'data-testid="resend"' in html
    assert not ProjectMember.objects.exists()
    assert not User.objects.get(username="maria").is_active
    resend = response.context["resend_token"]
    response = client.post(reverse("annotation:invite_confirm_resend"), {"token": resend})
    assert response.status_code == 200
    assert "We sent a link to maria@uni.edu" in response.content.decode()
    assert len(mailoutbox) == 2 and mailoutbox[1].to == ["maria@uni.edu"]
    assert client.post(_confirm_link(mailoutbox[1])).status_code == 302
    assert ProjectMember.objects.filter(user__username="maria").exists()


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
@pytest.mark.parametrize("change", ["cut", "forged", "resend_token"])
def test_a_tampered_link_joins_nobody(project, client, mailoutbox, change):
    invite, link = _requested(project, client, mailoutbox)
    token = link.split("/")[-2]
    maria = User.objects.get(username="maria")
    payload = {"i": invite.pk, "u": maria.pk, "e": "maria@uni.edu", "n": 1}
    bad = {"cut": token[:-3],
           "forged": signing.dumps(payload, key="not-the-site-key", salt=invites.CONFIRM_SALT),
           # The "send again" button's token only sends mail; it never joins.
           "resend_token": signing.dumps(payload, salt=invites.RESEND_SALT)}[change]
    path = reverse("annotation:invite_confirm", args=[bad])
    for response in (client.get(path), client.post(path)):
        assert response.status_code == 400
        assert "This confirmation link does not work" in response.content.decode()
    assert not ProjectMember.objects.exists() and not InviteUse.objects.exists()
    assert not User.objects.get(username="maria").is_active


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
@pytest.mark.parametrize("close", ["revoke", "use_up"])
def test_a_link_confirmed_after_its_invite_closed_joins_nobody(
        project, client, mailoutbox, close):
    invite, link = _requested(project, client, mailoutbox, max_uses=1)
    if close == "revoke":
        invites.invite_revoke(invite=invite, actor=None)
    else:  # someone else confirmed first
        InviteUse.objects.create(invite=invite, user=user_with_roles("first", Role.ANNOTATOR))
    response = client.post(link)
    assert response.status_code == 410
    assert not ProjectMember.objects.filter(user__username="maria").exists()
    assert not User.objects.get(username="maria").is_active


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
def test_mails_per_address_and_link_are_limited(project, client, mailoutbox, settings):
    settings.CROWDQA_INVITE_MAILS_PER_HOUR = 2
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    assert _signup(client, invite, username="m1").status_code == 200
    assert _signup(client, invite, username="m2").status_code == 200
    refused = _signup(client, invite, username="m3")
    assert refused.status_code == 200
    assert ("We sent a link to this address 2 times in the last hour already"
            in refused.content.decode())
    assert not User.objects.filter(username="m3").exists()  # rolled back
    again = invites.JoinRequest(invite=invite, user=User.objects.get(username="m1"),
                                email="maria@uni.edu", newcomer=True)
    resend = client.post(reverse("annotation:invite_confirm_resend"),
                         {"token": again.resend_token})
    assert resend.status_code == 429
    assert len(mailoutbox) == 2
    # Another address goes on.
    assert "We sent a link to" in _signup(client, invite, username="m4",
                                          email="m4@uni.edu").content.decode()
    assert len(mailoutbox) == 3


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
def test_a_mail_that_cannot_be_sent_is_said_with_a_button_to_send_it_again(
        project, client, mailoutbox):
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    with mock.patch("annotation.invites.send_mail",
                    side_effect=smtplib.SMTPServerDisconnected("gone")):
        response = _signup(client, invite)
    assert response.status_code == 503
    html = response.content.decode()
    assert "The mail to maria@uni.edu could not be sent now." in html
    assert not ProjectMember.objects.exists()
    resend = client.post(reverse("annotation:invite_confirm_resend"),
                         {"token": response.context["resend_token"]})
    assert resend.status_code == 200 and [m.to for m in mailoutbox] == [["maria@uni.edu"]]
    assert client.post(_confirm_link(mailoutbox[0])).status_code == 302
    assert ProjectMember.objects.filter(user__username="maria").exists()


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
def test_the_mail_is_in_the_readers_language(project, client, mailoutbox):
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-CN,zh;q=0.9"
    assert _signup(client, invite).status_code == 200
    [mail] = mailoutbox
    assert "申请以标注员身份加入 Harbor news" in mail.body  # the role too, in Chinese
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    assert _signup(client, invite, username="maria2").status_code == 200
    assert "as annotator " in mailoutbox[1].body


def test_production_without_email_url_refuses_domain_links_and_warns(project, settings,
                                                                     client):
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    settings.CROWDQA_ENV = "production"
    settings.EMAIL_URL = ""
    with pytest.raises(ValidationError) as caught:
        invites.invite_create(project=project, role="annotator", allowed_domains=["uni.edu"])
    assert "set EMAIL_URL" in caught.value.message_dict["allowed_domains"][0]
    invites.invite_create(project=project, role="annotator")  # no domains: no mail needed
    [warning] = [m for m in run_checks() if m.id == "crowdqa.W004"]
    assert "EMAIL_URL is not set" in warning.msg
    response = _signup(client, invite)
    assert "this site cannot send e-mail now" in response.content.decode()
    assert not User.objects.filter(username="maria").exists()
    settings.EMAIL_URL = "smtp+tls://user:pass@smtp.example.org:587"
    assert not [m for m in run_checks() if m.id == "crowdqa.W004"]
    invites.invite_create(project=project, role="annotator", allowed_domains=["uni.edu"])


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
def test_a_signed_in_user_without_a_fitting_address_gives_one_on_the_join_form(
        project, client_for, mailoutbox):
    """The join form of a signed-in user had no e-mail field: one without an address (or
    with one elsewhere) only saw "This link needs an e-mail address at …", with nowhere to
    type it. Now the form asks for it, checks it against the domains and, once confirmed,
    saves it."""
    user = user_with_roles("omar", Role.CHECKER)
    User.objects.filter(pk=user.pk).update(email="")
    client = client_for(user)
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    path = invites.invite_path(invite)
    page = client.get(path).content.decode()
    assert 'name="email"' in page and "(at uni.edu)" in page
    assert "Your account has no e-mail address" in page
    refused = client.post(path, {"agree": "on"})
    assert "This link needs an e-mail address at uni.edu." in refused.content.decode()
    refused = client.post(path, {"agree": "on", "email": "omar@gmail.com"})
    assert ("This link only accepts e-mail addresses at uni.edu, not gmail.com."
            in refused.content.decode())
    assert 'value="omar@gmail.com"' in refused.content.decode()  # kept to be fixed
    refused = client.post(path, {"agree": "on", "email": "omar-at-uni.edu"})
    assert "is not an e-mail address." in refused.content.decode()
    user.refresh_from_db()
    assert user.email == "" and not ProjectMember.objects.exists() and mailoutbox == []
    asked = client.post(path, {"agree": "on", "email": " Omar@Uni.edu "})
    assert asked.status_code == 200
    assert client.post(_confirm_link(mailoutbox[-1])).status_code == 302
    user.refresh_from_db()
    assert user.email == "Omar@Uni.edu"
    assert ProjectMember.objects.filter(user=user, project=project).exists()
    # An address outside the domains is replaced the same way; a fitting one asks nothing.
    other = user_with_roles("lena", Role.ANNOTATOR)
    User.objects.filter(pk=other.pk).update(email="lena@gmail.com")
    client = client_for(other)
    page = client.get(path).content.decode()
    assert 'name="email"' in page and "lena@gmail.com, is not at these domains" in page
    assert client.post(path, {"agree": "on", "email": "lena@uni.edu"}).status_code == 200
    assert client.post(_confirm_link(mailoutbox[-1])).status_code == 302
    other.refresh_from_db()
    assert other.email == "lena@uni.edu"
    assert 'name="email"' not in client.get(path).content.decode()


@pytest.mark.django_db(transaction=True)  # the mail is sent on commit
def test_an_open_link_joins_at_once_without_mail(project, client, mailoutbox):
    invite = invites.invite_create(project=project, role="annotator")
    response = _signup(client, invite)
    assert response.status_code == 302 and mailoutbox == []
    assert ProjectMember.objects.filter(user__username="maria").exists()


@pytest.mark.parametrize(("overrides", "message"), [
    ({"password2": "something-else-12"}, "The two passwords differ."),
    ({"password1": "12345", "password2": "12345"}, "This password is too short."),
    ({"username": "ann"}, "The username &#x27;ann&#x27; is taken; choose another."),
    ({"username": "bad name!"}, "Enter a valid username."),
    # A payments CSV opened in a spreadsheet runs a cell starting so as a formula.
    ({"username": "+1-1"}, "Start the username with a letter, a digit or &#x27;_&#x27;."),
    ({"username": "@SUM"}, "Start the username with a letter, a digit or &#x27;_&#x27;."),
    ({"username": "-1+cmd"}, "Start the username with a letter, a digit or &#x27;_&#x27;."),
    ({"agree": ""}, "Tick “I agree” to join."),
])
def test_sign_up_errors_are_shown_and_nothing_is_written(
        project, client, annotator, overrides, message):
    invite = invites.invite_create(project=project, role="annotator")
    users = User.objects.count()
    response = _signup(client, invite, **overrides)
    assert response.status_code == 200
    assert message in response.content.decode()
    _nothing_written(users)
    assert "_auth_user_id" not in client.session


def test_invite_accept_names_the_field_and_rolls_back(project):
    invite = invites.invite_create(project=project, role="annotator")
    with pytest.raises(ValidationError) as caught:
        invites.invite_accept(invite_id=invite.pk, username="zoe", email="not-an-address",
                              password=NEW_PASSWORD)
    assert set(caught.value.message_dict) == {"email"}
    with pytest.raises(ValidationError) as caught:
        invites.invite_accept(invite_id=invite.pk, username="zoe", password="zoe")
    assert set(caught.value.message_dict) == {"password"}
    assert not User.objects.filter(username="zoe").exists()


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"role": "admin"}, "role"),
    ({"role": "annotator", "max_uses": 0}, "max_uses"),
    ({"role": "annotator", "expires_days": -2}, "expires_days"),
    ({"role": "annotator", "allowed_domains": ["uni edu"]}, "allowed_domains"),
    ({"role": "annotator", "allowed_domains": ["localhost"]}, "allowed_domains"),
])
def test_invite_create_validates(project, kwargs, field):
    with pytest.raises(ValidationError) as caught:
        invites.invite_create(project=project, **kwargs)
    assert set(caught.value.message_dict) == {field}
    assert not Invite.objects.exists()


# The members page ------------------------------------------------------------------------

def test_the_members_page_and_its_forms_need_the_admin_role(
        project, client, client_for, annotator, checker):
    invite = invites.invite_create(project=project, role="annotator")
    url = reverse("annotation:project_members", args=[project.pk])
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    for user in (annotator, checker):
        c = client_for(user)
        assert c.get(url).status_code == 403
        assert c.post(reverse("annotation:project_invite_create", args=[project.pk]),
                      {"role": "annotator"}).status_code == 403
        assert c.post(reverse("annotation:invite_revoke", args=[invite.pk])).status_code == 403
        assert c.post(reverse("annotation:members_import", args=[project.pk])).status_code == 403
    assert Invite.objects.count() == 1 and Invite.objects.get().revoked_at is None
    assert client_for(user_with_roles("adm", Role.ADMIN)).get(url).status_code == 200


def test_members_page_shows_marketplace_ids_and_submissions_in_constant_queries(
        news_corpus, admin_user, client_for, django_assert_max_num_queries):
    project = engine.project_create(name="Counted", recipe="newsqa", corpus=news_corpus)
    project.status = "active"
    project.save(update_fields=["status"])
    from collector.models import Document

    doc = Document.objects.filter(corpus=news_corpus).first()
    engine.items_emit(source_stage=project.stages.get(kind="newsqa_question"), emits=[
        Emit(kind="newsqa_answer", key=f"q{n}", data={"question": f"Question {n}?"},
             document_id=doc.pk) for n in range(3)])
    worker = user_with_roles("prolific-1", Role.ANNOTATOR)
    ExternalAccount.objects.create(platform="prolific", external_id="5f1e2d3c4b5a", user=worker)
    engine.project_member_add(project=project, user=worker, role=Role.ANNOTATOR)
    invites.invite_create(project=project, role="annotator")
    for _ in range(2):
        task = engine.task_claim(worker=worker, project=project)
        engine.task_submit(assignment_id=task.pk, worker=worker, payload={"no_answer": True})
    client = client_for(admin_user)
    url = reverse("annotation:project_members", args=[project.pk])
    with django_assert_max_num_queries(12) as few:
        response = client.get(url)
    row = next(m for m in response.context["members"] if m.user == worker)
    assert row.submissions == 2
    html = response.content.decode()
    assert "5f1e2d3c4b5a" in html and "Prolific" in html

    for n in range(8):  # more members and invites: not one query more
        user = user_with_roles(f"extra{n}", Role.ANNOTATOR)
        ExternalAccount.objects.create(platform="mturk", external_id=f"A{n}XYZ", user=user)
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
        invite = invites.invite_create(project=project, role="annotator")
        invites.invite_accept(invite_id=invite.pk, user=user)
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = client.get(url)
    assert len(response.context["members"]) == 9 and len(response.context["invites"]) == 9


def test_the_members_page_is_paged_and_lists_an_invites_latest_uses(
        project, admin_user, client_for, monkeypatch, django_assert_max_num_queries):
    """Hundreds of members: a page of them at a time, in the same number of queries
    whatever the crowd; an invite lists its latest joiners and counts every use."""
    monkeypatch.setattr(invites, "MEMBERS_PER_PAGE", 3)
    monkeypatch.setattr(invites, "INVITE_USES_SHOWN", 2)
    invite = invites.invite_create(project=project, role="annotator")
    client = client_for(admin_user)
    url = reverse("annotation:project_members", args=[project.pk])

    def join(n: int) -> None:
        invites.invite_accept(invite_id=invite.pk,
                              user=user_with_roles(f"crowd{n:02d}", Role.ANNOTATOR))

    join(0)
    with django_assert_max_num_queries(12) as few:
        assert client.get(url).status_code == 200
    for n in range(1, 8):
        join(n)
    with django_assert_max_num_queries(len(few.captured_queries)):
        first = client.get(url)
    names = [m.user.username for m in first.context["members"]]
    assert names == ["crowd00", "crowd01", "crowd02"]
    html = first.content.decode()
    assert "Members (8)" in html and "Page 1 of 3 (8 in all)" in html
    assert 'data-testid="member-crowd03-annotator"' not in html
    (row,) = first.context["invites"]
    assert [use.user.username for use in row["uses"]] == ["crowd07", "crowd06"]
    assert (row["used"], row["more"]) == (8, 6) and "8 / ∞" in html
    assert "and 6 more" in html

    last = client.get(url, {"page": 3})
    assert [m.user.username for m in last.context["members"]] == ["crowd06", "crowd07"]
    assert 'data-testid="member-crowd07-annotator"' in last.content.decode()


def test_the_people_to_add_are_searched_and_paged_in_constant_queries(
        project, admin_user, client_for, annotator, checker, monkeypatch):
    """The project page's list of people to add: accounts with a role, not marketplace
    workers, not members already; searched by part of a username, a page at a time (with
    or without htmx), in the same number of queries whatever the number of accounts;
    refused to annotators and checkers."""
    from django.db import connection as db
    from django.test.utils import CaptureQueriesContext

    from annotation import selectors

    monkeypatch.setattr(selectors, "CANDIDATES_PER_PAGE", 3, raising=False)
    url = reverse("annotation:project_detail", args=[project.pk])
    client = client_for(admin_user)

    def offered(**params) -> tuple[list[str], int, str]:
        headers = {"HX-Request": "true"} if params.get("part") else {}
        with CaptureQueriesContext(db) as seen:
            response = client.get(url, params, headers=headers)
        assert response.status_code == 200
        page = response.content.decode()
        return re.findall(r'data-testid="member-annotator-([^"]+)"', page), len(seen), page

    for n in range(4):
        user_with_roles(f"crowd{n}", Role.ANNOTATOR)
    engine.project_member_add(project=project, user=User.objects.get(username="crowd1"),
                              role=Role.ANNOTATOR)
    market = user_with_roles("crowd9", Role.ANNOTATOR)
    ExternalAccount.objects.create(platform="prolific", external_id="5f1e2d3c4b5a", user=market)
    user_with_roles("nobody")  # no role: not offered
    names, _, page = offered()
    # adm, annotator, checker, crowd0, crowd2, crowd3 (crowd1 is a member), three a page
    assert names == [admin_user.username, annotator.username, checker.username]
    assert 'data-testid="people-search"' in page and "Page 1 of 2 (6 in all)" in page
    names, queries, part = offered(part="people", people_page=2)
    assert names == ["crowd0", "crowd2", "crowd3"]
    assert part.lstrip().startswith('<div id="people"') and "<html" not in part
    assert ('<a href="?people_page=1" hx-get="?people_page=1&amp;part=people" '
            'hx-target="#people" hx-swap="outerHTML" hx-push-url="?people_page=1" '
            'rel="prev">') in part
    assert 'name="csrfmiddlewaretoken"' in part and 'data-testid="add-members"' in part
    names, _, page = offered(people="CROWD", people_page=2)  # past the end: the last page
    assert names == ["crowd0", "crowd2", "crowd3"] and 'value="CROWD"' in page
    assert 'data-testid="pager"' not in page.split('id="people"')[1]
    names, _, page = offered(people="zz", part="people")
    assert names == [] and "Nobody to add whose username holds “zz”." in page

    for n in range(10, 40):  # thirty more accounts: not one query more
        user_with_roles(f"crowd{n}", Role.ANNOTATOR)
    names, more, part = offered(part="people", people_page=2)
    assert more == queries and len(names) == 3 and "(36 in all)" in part

    response = client.post(reverse("annotation:project_action", args=[project.pk]),
                           {"action": "members", "user": [
                               f"{User.objects.get(username='crowd2').pk}:annotator"]})
    assert response.status_code == 302
    assert "crowd2" not in offered(people="crowd2")[0]

    for user in (annotator, checker):
        assert client_for(user).get(url, {"part": "people", "people": "crowd"},
                                    headers={"HX-Request": "true"}).status_code == 403


def test_revoking_with_htmx_returns_the_invites_part(project, admin_user, client_for):
    invite = invites.invite_create(project=project, role="annotator")
    response = client_for(admin_user).post(
        reverse("annotation:invite_revoke", args=[invite.pk]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card" id="invites"')
    assert ">revoked<" in html
    invite.refresh_from_db()
    assert invite.revoked_at is not None


def test_invite_form_errors_are_shown(project, admin_user, client_for):
    response = client_for(admin_user).post(
        reverse("annotation:project_invite_create", args=[project.pk]),
        {"role": "annotator", "domains": "uni.edu, not a domain"})
    assert response.status_code == 200
    assert "&#x27;not a domain&#x27; is not a domain (like example.org)" in (
        response.content.decode())
    assert not Invite.objects.exists()


# Members from a CSV ----------------------------------------------------------------------

def _upload(client, project, text, name="members.csv"):
    return client.post(
        reverse("annotation:members_import", args=[project.pk]),
        {"file": SimpleUploadedFile(name, text.encode(), content_type="text/csv")})


def test_csv_import_adds_new_and_existing_users_once(project, admin_user, annotator, client,
                                                      client_for):
    other = engine.project_create(name="Bridge stories", recipe="newsqa")
    engine.project_member_add(project=project, user=annotator, role=Role.ANNOTATOR)
    text = ("username,email,role,project\n"
            "ann,ann@uni.edu,annotator,\n"            # existing user and membership
            "ann,ann@uni.edu,checker,\n"              # existing user, new role
            "lena,lena@uni.edu,annotator,\n"
            "lena,lena@uni.edu,annotator,Bridge stories\n")
    users = User.objects.count()
    response = _upload(client_for(admin_user), project, text)
    assert response.status_code == 200
    result = response.context["import_result"]
    assert (result.created, result.existing) == (["lena"], ["ann"])
    assert (result.memberships_added, result.memberships_kept) == (3, 1)
    assert User.objects.count() == users + 1
    assert ProjectMember.objects.filter(user=annotator, project=project).count() == 2
    assert ProjectMember.objects.get(user=annotator, role="checker").source == "csv"
    assert ProjectMember.objects.get(user=annotator, role="annotator").source == "admin"
    lena = User.objects.get(username="lena")
    assert not lena.has_usable_password()
    assert set(lena.memberships.values_list("project__name", "source")) == {
        ("Harbor news", "csv"), ("Bridge stories", "csv")}
    annotator.refresh_from_db()
    assert annotator.check_password(PASSWORD)  # an existing account keeps its password
    assert user_roles(annotator) == {Role.ANNOTATOR, Role.CHECKER}

    [(username, link)] = result.links
    assert username == "lena" and link.startswith("http://testserver/accounts/reset/")
    assert link in response.content.decode()
    client.logout()
    page = client.get(link, follow=True)
    assert "Set your password" in page.content.decode()
    done = client.post(page.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD,
                                                    "new_password2": NEW_PASSWORD})
    assert done.status_code == 302 and done["Location"] == "/accounts/reset/done/"
    assert "Your password is set" in client.get(done["Location"]).content.decode()
    lena.refresh_from_db()
    assert lena.check_password(NEW_PASSWORD)
    again = client.get(link)  # one time only
    assert "This link cannot be used" in again.content.decode()

    # The same file again adds nothing.
    result = invites.members_import(text=text, name="members.csv", project=project)
    assert (result.created, result.memberships_added, result.memberships_kept) == ([], 0, 4)
    assert other.members.count() == 1


def test_a_csv_with_a_bad_row_on_line_3_writes_nothing(project, admin_user, client_for):
    text = ("username,email,role\n"
            "kofi,kofi@uni.edu,annotator\n"
            "ines,ines@uni.edu,boss\n")
    users = User.objects.count()
    response = _upload(client_for(admin_user), project, text)
    assert response.status_code == 400
    assert response.context["import_errors"] == [
        "members.csv: line 3: field 'role': 'boss' is not one of annotator, checker, admin"]
    assert "Nothing was added." in response.content.decode()
    assert User.objects.count() == users
    assert not ProjectMember.objects.exists()


@pytest.mark.parametrize(("text", "errors"), [
    ("username,email,role,team\nkofi,kofi@uni.edu,annotator,x\n",
     ["roster.csv: line 1: field 'team': unknown column; the columns are "
      "username, email, role, project"]),
    ("username,role\nkofi,annotator\n", ["roster.csv: line 1: field 'email': column is missing"]),
    ("username,email,role\n"
     "kofi,kofi@uni.edu,annotator\n"
     ",nobody@uni.edu,annotator\n"
     "ines,ines(at)uni.edu,checker\n"
     "KOFI,kofi@uni.edu,annotator\n",
     ["roster.csv: line 3: field 'username': is empty",
      "roster.csv: line 4: field 'email': 'ines(at)uni.edu' is not an e-mail address",
      "roster.csv: line 5: field 'username': 'KOFI' as annotator in 'Harbor news' is on "
      "line 2 already"]),
    ("username,email,role\n+1-1,,annotator\n",
     ["roster.csv: line 2: field 'username': '+1-1' starts with '+'; start it with a "
      "letter, "
      "a digit or '_'"]),
    ("username,email,role,project\nkofi,kofi@uni.edu,annotator,Atlantis\n",
     ["roster.csv: line 2: field 'project': no project named 'Atlantis'"]),
    ("username,email,role\n", ["roster.csv: no rows under the header"]),
])
def test_csv_errors_name_file_line_and_field(project, text, errors):
    users = User.objects.count()
    with pytest.raises(ValidationError) as caught:
        invites.members_import(text=text, name="roster.csv", project=project)
    assert caught.value.messages == errors
    _nothing_written(users)


def test_csv_rows_need_a_project_when_the_upload_has_none(project):
    with pytest.raises(ValidationError) as caught:
        invites.members_import(text="username,email,role\nkofi,,annotator\n",
                               name="members.csv")
    assert caught.value.messages == [
        "members.csv: line 2: field 'project': is empty, and the upload is not for one project"]


# The command -----------------------------------------------------------------------------

def test_the_command_prints_the_path_as_its_last_line(project):
    out = StringIO()
    call_command("invite_create", "--project", "Harbor news", "--role", "checker",
                 "--max-uses", "3", "--expires-days", "14", "--domains", "uni.edu,lab.org",
                 stdout=out)
    last = out.getvalue().rstrip("\n").splitlines()[-1]
    invite = Invite.objects.get()
    assert last == f"/join/{invite.token}/" == invites.invite_path(invite)
    assert (invite.role, invite.max_uses, invite.allowed_domains) == (
        "checker", 3, ["uni.edu", "lab.org"])
    assert timedelta(days=13) < invite.expires_at - timezone.now() <= timedelta(days=14)


@pytest.mark.parametrize(("args", "named"), [
    (["--project", "Atlantis", "--role", "annotator"], "'Atlantis'"),
    (["--project", "Harbor news", "--role", "boss"], "'boss'"),
    # Beyond the column and the calendar: an overflow and a traceback before.
    (["--project", "Harbor news", "--role", "annotator", "--max-uses", str(10**20)],
     "^--max-uses: 100000000000000000000 is more than 2,147,483,647$"),
    (["--project", "Harbor news", "--role", "annotator", "--expires-days", "99999999"],
     "^--expires-days: 99999999 is more than 3,650$"),
    (["--project", "Harbor news", "--role", "annotator", "--domains", "uni.edu,not a domain"],
     r"^--domains: 'not a domain' is not a domain \(like example.org\)$"),
])
def test_the_command_names_a_bad_project_or_role(project, args, named):
    with pytest.raises(CommandError, match=named):
        call_command("invite_create", *args, stdout=StringIO())
    assert not Invite.objects.exists()


# Concurrency (PostgreSQL) ----------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_ten_concurrent_accepts_of_a_three_use_invite_make_three_members():
    if connection.vendor != "postgresql":
        pytest.skip("row-lock concurrency needs PostgreSQL (DATABASE_URL=postgres://...)")
    project = engine.project_create(name="Rush", recipe="newsqa")
    invite = invites.invite_create(project=project, role="annotator", max_uses=3)
    start = threading.Barrier(10)
    joined: list[str] = []
    refused: list[str] = []
    errors: list[str] = []

    def accept(n: int) -> None:
        start.wait()
        try:
            member = invites.invite_accept(invite_id=invite.pk, username=f"rush{n}",
                                           email=f"rush{n}@uni.edu", password=NEW_PASSWORD)
            joined.append(member.user.username)
        except invites.InviteUnavailable as exc:
            refused.append(exc.state)
        except Exception as exc:  # surfaced by the assertion below
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=accept, args=(n,)) for n in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert len(joined) == 3 and refused == ["used_up"] * 7
    assert ProjectMember.objects.filter(project=project).count() == 3
    assert InviteUse.objects.filter(invite=invite).count() == 3
    assert User.objects.filter(username__startswith="rush").count() == 3


def test_a_chinese_newcomer_signs_up_in_chinese(project, client, annotator):
    """The sign-up form, its errors and the welcome follow the browser's language."""
    invite = invites.invite_create(project=project, role="annotator")
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-CN,zh;q=0.9"
    page = client.get(reverse("annotation:invite_join", args=[invite.token])).content.decode()
    assert "再次输入密码" in page and "我同意" in page
    users = User.objects.count()
    refused = _signup(client, invite, username=annotator.username, password2="other-words-93")
    text = refused.content.decode()
    assert refused.status_code == 200
    assert "两次输入的密码不一致。" in text
    _nothing_written(users)
    joined = _signup(client, invite)
    assert joined.status_code == 302
    welcome = [str(m) for m in client.get(joined["Location"], follow=True).context["messages"]]
    assert "欢迎加入 Harbor news：你的角色是标注员。" in welcome
