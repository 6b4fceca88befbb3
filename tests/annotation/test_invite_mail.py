"""The confirmation mail of an invite restricted to e-mail domains is sent by a Celery task
once the sign-up commits (never inside the web request), at most once, retried while the
mail server fails; an unconfirmed sign-up whose links expired frees its username (a new
sign-up takes it over, the periodic purge removes the account)."""

from __future__ import annotations

import re
import smtplib
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.db.models import F
from django.urls import clear_script_prefix, reverse, set_script_prefix
from django.utils import timezone
from kombu.exceptions import OperationalError as KombuOperationalError
from rest_framework.authtoken.models import Token

from annotation import engine, invites
from annotation.models import InviteMail, InviteUse, ProjectMember
from annotation.roles import Role
from annotation.services import worker_erase
from annotation.tasks import invite_mail_retry_pause, invite_mail_send_task
from config.celery import beat_run_once
from tests.factories import user_with_roles

User = get_user_model()
NEW_PASSWORD = "lantern-orchid-47"
SMTP_DOWN = smtplib.SMTPServerDisconnected("Connection unexpectedly closed")


@pytest.fixture
def project(db):
    return engine.project_create(name="Harbor news", recipe="newsqa")


@pytest.fixture
def invite(project):
    return invites.invite_create(project=project, role="annotator", allowed_domains=["uni.edu"])


def _signup(client, invite, *, script_prefix: str = "", **overrides):
    data = {"username": "maria", "email": "maria@uni.edu", "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD, "agree": "on", **overrides}
    path = reverse("annotation:invite_join", args=[invite.token])
    if script_prefix:  # the site is under a path: the server sets it for each request
        set_script_prefix(script_prefix)
    try:
        return client.post(path, data)
    finally:
        clear_script_prefix()


def _confirm_path(mail) -> str:
    [link] = re.findall(r"http://testserver(\S*/join/confirm/[^/\s]+/)", mail.body)
    return link


def _days_pass(delta: timedelta) -> None:
    """Every confirmation mail so far was asked for and sent ``delta`` earlier."""
    InviteMail.objects.update(created_at=F("created_at") - delta,
                              sent_at=F("sent_at") - delta)


# The mail from a task --------------------------------------------------------------------

def test_the_sign_up_answers_at_once_and_a_task_enqueued_on_commit_sends_the_mail(
        invite, client, mailoutbox, django_capture_on_commit_callbacks, settings):
    """The mail was sent inside the request: a slow or dead mail server made the sign-up
    page hang or fail. Now the request records the mail and enqueues its task on commit."""
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a broker: the task goes to the workers
    with mock.patch("annotation.invites.send_mail", side_effect=AssertionError(
            "mail sent inside the request")), \
            django_capture_on_commit_callbacks() as callbacks:
        response = _signup(client, invite)
    assert response.status_code == 200
    assert ("A link to maria@uni.edu is on its way; open it to join Harbor news."
            in response.content.decode())
    assert 'data-testid="resend"' in response.content.decode()
    maria = User.objects.get(username="maria")
    assert not maria.is_active
    [mail] = InviteMail.objects.all()
    assert (mail.user, mail.email, mail.newcomer, mail.status, mail.attempts) == (
        maria, "maria@uni.edu", True, "queued", 0)
    assert (mail.language, mail.site_root) == ("en", "http://testserver/")
    assert mailoutbox == []
    # What commits enqueues is the task, with the mail's id only.
    with mock.patch.object(invite_mail_send_task, "delay") as delay:
        for callback in callbacks:
            callback()
    delay.assert_called_once_with(mail.pk)

    # The worker's run: it reads the row and sends the link.
    assert invite_mail_send_task.apply(args=[mail.pk]).get() == "sent"
    mail.refresh_from_db()
    assert (mail.status, mail.attempts, mail.error) == ("sent", 1, "")
    assert mail.sent_at is not None
    [sent] = mailoutbox
    assert sent.to == ["maria@uni.edu"] and "Hello maria," in sent.body
    assert client.post(_confirm_path(sent)).status_code == 302
    maria.refresh_from_db()
    assert maria.is_active and ProjectMember.objects.filter(user=maria).exists()


@pytest.mark.django_db(transaction=True)
def test_the_embedded_mode_sends_on_commit_and_the_link_keeps_the_sites_path(
        invite, client, mailoutbox):
    """Eager Celery (no broker) runs the task as the sign-up commits: the page can say
    the mail went. The link starts where the request reached the site."""
    response = _signup(client, invite, script_prefix="/crowdqa/")
    assert "We sent a link to maria@uni.edu; open it to join Harbor news." in (
        response.content.decode())
    [sent] = mailoutbox
    path = _confirm_path(sent)
    assert path.startswith("/crowdqa/join/confirm/")
    assert client.post(path.removeprefix("/crowdqa")).status_code == 302


@pytest.mark.django_db(transaction=True)
def test_a_failing_mail_server_does_not_lose_the_sign_up(invite, client, mailoutbox):
    """Eagerly the task tries once (the request does not wait through retry pauses):
    the page says it failed (503), the account is kept, and "Send the link again" works."""
    with mock.patch("annotation.invites.send_mail", side_effect=SMTP_DOWN):
        response = _signup(client, invite)
    assert response.status_code == 503
    assert "The mail to maria@uni.edu could not be sent now." in response.content.decode()
    [mail] = InviteMail.objects.all()
    assert (mail.status, mail.attempts) == ("failed", 1)
    assert mail.error == "SMTPServerDisconnected: Connection unexpectedly closed"
    assert not User.objects.get(username="maria").is_active  # kept for her
    resend = client.post(reverse("annotation:invite_confirm_resend"),
                         {"token": response.context["resend_token"]})
    assert resend.status_code == 200 and [m.to for m in mailoutbox] == [["maria@uni.edu"]]
    assert client.post(_confirm_path(mailoutbox[0])).status_code == 302


@pytest.mark.django_db(transaction=True)
def test_a_broker_that_cannot_be_reached_fails_the_mail_not_the_page(invite, client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with mock.patch.object(invite_mail_send_task, "delay",
                           side_effect=KombuOperationalError("Connection refused")):
        response = _signup(client, invite)
    assert response.status_code == 503
    assert "could not be sent now" in response.content.decode()
    assert 'data-testid="resend"' in response.content.decode()
    mail = InviteMail.objects.get()
    assert mail.status == "failed"
    assert mail.error == "the broker could not be reached: Connection refused"
    assert User.objects.filter(username="maria", is_active=False).exists()


def test_a_failed_try_is_queued_again_until_the_last(invite, client, mailoutbox,
                                                    django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        _signup(client, invite)
    mail = InviteMail.objects.get()
    with mock.patch("annotation.invites.send_mail", side_effect=SMTP_DOWN), \
            pytest.raises(invites.MailNotSent):
        invites.invite_mail_send(mail_id=mail.pk, final=False)
    mail.refresh_from_db()
    assert (mail.status, mail.attempts) == ("queued", 1) and "SMTPServer" in mail.error
    with mock.patch("annotation.invites.send_mail", side_effect=OSError("No route to host")):
        assert invites.invite_mail_send(mail_id=mail.pk, final=True) == "failed"
    mail.refresh_from_db()
    assert (mail.status, mail.attempts, mail.error) == ("failed", 2,
                                                        "OSError: No route to host")
    assert mailoutbox == []
    # The pauses double from CROWDQA_INVITE_MAIL_RETRY_S, at most half an hour.
    assert [invite_mail_retry_pause(n) for n in range(8)] == [
        30, 60, 120, 240, 480, 960, 1800, 1800]


def test_the_task_sends_a_mail_once_and_drops_one_no_longer_needed(
        invite, client, mailoutbox, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        response = _signup(client, invite)
    first = InviteMail.objects.get()
    # Delivered twice (a worker lost after sending): one mail.
    assert invite_mail_send_task.apply(args=[first.pk]).get() == "sent"
    assert invite_mail_send_task.apply(args=[first.pk]).get() == "sent"
    assert len(mailoutbox) == 1
    # "Send the link again", and meanwhile the first link joins: the second mail would
    # join nobody, so it is not sent.
    with django_capture_on_commit_callbacks():
        client.post(reverse("annotation:invite_confirm_resend"),
                    {"token": response.context["resend_token"]})
    second = InviteMail.objects.exclude(pk=first.pk).get()
    assert client.post(_confirm_path(mailoutbox[0])).status_code == 302
    assert invite_mail_send_task.apply(args=[second.pk]).get() == "dropped"
    second.refresh_from_db()
    assert (second.status, second.error) == ("dropped", "joined already")
    assert len(mailoutbox) == 1


def test_a_mail_being_sent_is_left_alone_unless_its_try_was_cut_short(
        invite, client, mailoutbox, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        _signup(client, invite)
    mail = InviteMail.objects.get()
    InviteMail.objects.update(status="sending", attempts=1, attempted_at=timezone.now())
    assert invites.invite_mail_send(mail_id=mail.pk) == "sending"
    assert mailoutbox == []
    InviteMail.objects.update(attempted_at=timezone.now() - invites.MAIL_SENDING_STALE
                              - timedelta(seconds=1))
    assert invites.invite_mail_send(mail_id=mail.pk) == "sent"
    assert len(mailoutbox) == 1
    assert InviteMail.objects.get().attempts == 2


def test_a_revoked_links_mail_is_dropped(invite, client, mailoutbox,
                                         django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        _signup(client, invite)
    invites.invite_revoke(invite=invite, actor=None)
    assert invites.invite_mail_send(mail_id=InviteMail.objects.get().pk) == "dropped"
    assert InviteMail.objects.get().error == "the invite link is revoked"
    assert mailoutbox == []


def test_erasing_a_worker_removes_the_addresses_their_mails_went_to(
        invite, client_for, django_capture_on_commit_callbacks):
    user = user_with_roles("omar", Role.ANNOTATOR)
    with django_capture_on_commit_callbacks():
        client_for(user).post(invites.invite_path(invite),
                              {"agree": "on", "email": "omar@uni.edu"})
    assert InviteMail.objects.filter(user=user, email="omar@uni.edu").exists()
    summary = worker_erase(user=user)
    assert not InviteMail.objects.exists()
    assert "e-mail address" in [str(label) for label in summary.removed]


# Unconfirmed sign-ups whose links expired -------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_a_new_sign_up_takes_over_the_username_of_an_expired_unconfirmed_one(
        invite, client, mailoutbox):
    """Someone typed a wrong address: the account waited for a confirmation that could
    never come, and kept the username for ever. Once its links have expired, signing up
    again with the name works."""
    assert _signup(client, invite, email="mraia@uni.edu").status_code == 200
    typo = User.objects.get(username="maria")
    old_link = _confirm_path(mailoutbox[0])
    _days_pass(invites.CONFIRM_MAX_AGE - timedelta(minutes=1))  # the link still works
    refused = _signup(client, invite, username="Maria")
    assert "The username &#x27;Maria&#x27; is taken" in refused.content.decode()
    assert User.objects.filter(pk=typo.pk).exists()

    _days_pass(timedelta(minutes=2))  # now it has expired
    response = _signup(client, invite)
    assert response.status_code == 200
    assert "We sent a link to maria@uni.edu" in response.content.decode()
    maria = User.objects.get(username="maria")
    assert maria.pk != typo.pk and maria.email == "maria@uni.edu"
    assert not User.objects.filter(pk=typo.pk).exists()
    assert list(InviteMail.objects.values_list("email", flat=True)) == ["maria@uni.edu"]
    # The old account's link joins nobody; the new one's joins her.
    assert client.post(old_link).status_code == 400
    assert client.post(_confirm_path(mailoutbox[1])).status_code == 302
    assert list(invite.uses.values_list("user__username", flat=True)) == ["maria"]


@pytest.mark.django_db(transaction=True)
def test_a_lapsed_sign_up_with_a_membership_keeps_its_name(invite, project, client,
                                                           mailoutbox):
    _signup(client, invite)
    held = User.objects.get(username="maria")
    engine.project_member_add(project=project, user=held, role=Role.ANNOTATOR)
    _days_pass(invites.CONFIRM_MAX_AGE + timedelta(minutes=1))
    refused = _signup(client, invite, email="maria2@uni.edu")
    assert "The username &#x27;maria&#x27; is taken" in refused.content.decode()
    assert User.objects.get(username="maria").pk == held.pk


@pytest.mark.django_db(transaction=True)
def test_the_periodic_purge_removes_only_lapsed_sign_ups_that_nothing_refers_to(
        invite, project, client, mailoutbox, settings):
    from django.test import Client

    def sign_up(username: str) -> Client:
        browser = Client()
        assert _signup(browser, invite, username=username,
                       email=f"{username}@uni.edu").status_code == 200
        return browser

    settings.CROWDQA_INVITE_MAILS_PER_HOUR = 0
    sign_up("lapsed")
    resent = sign_up("resent")
    sign_up("member")
    sign_up("token")
    confirmed = sign_up("confirmed")
    assert confirmed.post(_confirm_path(mailoutbox[-1])).status_code == 302
    engine.project_member_add(project=project, user=User.objects.get(username="member"),
                              role=Role.CHECKER)
    Token.objects.create(user=User.objects.get(username="token"))
    # An account an admin deactivated before its first login: no sign-up of ours.
    deactivated = user_with_roles("deactivated")
    User.objects.filter(pk=deactivated.pk).update(is_active=False)
    _days_pass(invites.CONFIRM_MAX_AGE + timedelta(minutes=1))
    # "resent" asked for a new link since: it works for 3 more days.
    assert resent.post(reverse("annotation:invite_confirm_resend"), {
        "token": invites.JoinRequest(invite=invite, user=User.objects.get(username="resent"),
                                     email="resent@uni.edu", newcomer=True).resend_token,
    }).status_code == 200

    results = beat_run_once()  # what beat (or the embedded ticker) runs
    assert "purge-signups" in settings.CELERY_BEAT_SCHEDULE
    assert results["purge-signups"] == 1
    assert sorted(User.objects.values_list("username", flat=True)) == [
        "confirmed", "deactivated", "member", "resent", "token"]
    assert not InviteMail.objects.filter(email="lapsed@uni.edu").exists()
    assert InviteUse.objects.filter(user__username="confirmed").exists()
    assert invites.signups_lapsed_purge() == 0  # idempotent

    # Kept rows go after 30 days; the accounts they named stay as they are.
    _days_pass(invites.MAIL_ROWS_KEPT)
    assert invites.signups_lapsed_purge() == 1  # "resent" has lapsed too now
    assert not InviteMail.objects.exists()
    assert sorted(User.objects.values_list("username", flat=True)) == [
        "confirmed", "deactivated", "member", "token"]


# What a lapsed sign-up sees when it logs in ------------------------------------------------

def _login_page(client, **extra) -> str:
    response = client.post(reverse("login"), {"username": "maria", "password": NEW_PASSWORD},
                           **extra)
    assert response.status_code == 200  # not logged in
    assert "_auth_user_id" not in client.session
    return response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_lapsed_sign_up_logging_in_is_told_its_link_expired_and_gets_a_new_one(
        invite, client, mailoutbox):
    """Once every link of an unconfirmed sign-up had expired, the login page still told it
    to "open the link we sent": a link that could only say "expired". Now it says the link
    expired and offers a new one (or signing up again through the invite)."""
    from django.test import Client

    _signup(client, invite)
    _days_pass(invites.CONFIRM_MAX_AGE - timedelta(minutes=1))
    html = _login_page(Client())
    assert "open the link we sent to maria@uni.edu, then log in." in html  # still works
    assert 'data-testid="lapsed"' not in html

    _days_pass(timedelta(minutes=2))
    browser = Client()
    html = _login_page(browser)
    assert "open the link we sent" not in html
    assert ("Your account was never confirmed, and the link we sent to maria@uni.edu has "
            "expired.") in html
    assert f'href="{invites.invite_path(invite)}"' in html
    assert "Or sign up again through the invite to Harbor news" in html
    [resend] = re.findall(r'<form method="post" action="/join-again/">.*?</form>', html,
                          flags=re.DOTALL)
    assert 'name="csrfmiddlewaretoken"' in resend
    [token] = re.findall(r'name="token" value="([^"]+)"', resend)
    sent = browser.post(reverse("annotation:invite_confirm_resend"), {"token": token})
    assert sent.status_code == 200
    assert "We sent a link to maria@uni.edu" in sent.content.decode()
    assert len(mailoutbox) == 2
    # The new link works: no longer lapsed, the login page says to open it, and it joins.
    assert "open the link we sent to maria@uni.edu" in _login_page(Client())
    assert browser.post(_confirm_path(mailoutbox[1])).status_code == 302
    assert list(invite.uses.values_list("user__username", flat=True)) == ["maria"]


@pytest.mark.django_db(transaction=True)
def test_a_lapsed_sign_up_whose_invite_closed_is_told_to_ask_for_a_new_one_in_chinese(
        invite, client):
    from django.test import Client

    _signup(client, invite)
    _days_pass(invites.CONFIRM_MAX_AGE + timedelta(minutes=1))
    zh = _login_page(Client(), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "你的账户从未确认，我们发送到 maria@uni.edu 的链接已过期。" in zh
    assert "发送新链接" in zh and "或通过 Harbor news 的邀请重新注册" in zh

    invites.invite_revoke(invite=invite, actor=None)
    zh = _login_page(Client(), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "Harbor news 的邀请链接已无法使用：请向其管理员索取新的链接。" in zh
    assert 'data-testid="resend"' not in zh and "重新注册" not in zh
    html = _login_page(Client())
    assert ("The invite link to Harbor news cannot be used any more: ask its admins for a "
            "new one.") in html


def test_an_account_deactivated_before_its_first_login_is_not_told_to_open_a_link(db, client):
    """No confirmation mail was ever sent to it: "open the link we sent" was wrong."""
    user = user_with_roles("maria")
    user.set_password(NEW_PASSWORD)
    user.email = "maria@uni.edu"
    user.is_active = False
    user.save()
    html = _login_page(client)
    assert "maria@uni.edu" not in html
    assert "Your username and password did not match" in html
