"""A confirmation mail through a real Celery worker, broker and mail server (CI:
PostgreSQL + Redis): the sign-up page answers at once, the worker sends the mail, trying a
failing mail server again after a pause, and gives up after CROWDQA_INVITE_MAIL_RETRIES
without losing the sign-up."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation import engine, invites
from annotation.models import InviteMail, ProjectMember
from tests.polling import wait_until
from tests.smtp_stub import SmtpStub

User = get_user_model()


@pytest.fixture
def smtp():
    stub = SmtpStub(refuse=1)
    yield stub
    stub.close()


def _signup(client, invite):
    return client.post(reverse("annotation:invite_join", args=[invite.token]), {
        "username": "maria", "email": "maria@uni.edu", "password1": "lantern-orchid-47",
        "password2": "lantern-orchid-47", "agree": "on"})


def _invite():
    project = engine.project_create(name="Harbor news", recipe="newsqa")
    return invites.invite_create(project=project, role="annotator", allowed_domains=["uni.edu"])


def _mails() -> str:
    return str(list(InviteMail.objects.values("status", "attempts", "error")))


def _confirm_path(message) -> str:
    body = message.get_payload(decode=True).decode()
    [path] = re.findall(r"http://testserver(/join/confirm/[^/\s]+/)", body)
    return path


@pytest.mark.celery_worker
def test_the_worker_sends_the_mail_after_the_page_and_retries_a_busy_server(
        celery_workers, smtp, client):
    celery_workers(env={"EMAIL_URL": f"smtp://127.0.0.1:{smtp.port}",
                        "CROWDQA_INVITE_MAIL_RETRY_S": "0.2"})
    invite = _invite()
    response = _signup(client, invite)
    # The mail server holds the worker's first try: the page did not wait for it.
    assert response.status_code == 200
    assert "A link to maria@uni.edu is on its way" in response.content.decode()
    wait_until(lambda: smtp.connections, timeout=60, what="the worker's first try",
               detail=_mails)
    smtp.release.set()  # now the server turns that try away ("421"), and accepts the next
    [message] = wait_until(lambda: list(smtp.messages), timeout=60,
                           what="the mail on its second try", detail=_mails)
    assert message["To"] == "maria@uni.edu"
    mail = wait_until(lambda: InviteMail.objects.filter(status="sent").first(), timeout=30,
                      what="the mail recorded as sent", detail=_mails)
    assert mail.attempts == 2 and smtp.connections == 2
    assert client.post(_confirm_path(message)).status_code == 302
    assert ProjectMember.objects.filter(user__username="maria", project=invite.project).exists()


@pytest.mark.celery_worker
def test_a_dead_mail_server_is_tried_a_bounded_number_of_times_and_the_sign_up_kept(
        celery_workers, smtp, client):
    smtp.refuse = 10**6
    smtp.release.set()  # every connection is turned away at once
    celery_workers(env={"EMAIL_URL": f"smtp://127.0.0.1:{smtp.port}",
                        "CROWDQA_INVITE_MAIL_RETRY_S": "0.05",
                        "CROWDQA_INVITE_MAIL_RETRIES": "2"})
    invite = _invite()
    response = _signup(client, invite)
    assert response.status_code == 200
    mail = wait_until(lambda: InviteMail.objects.filter(status="failed").first(),
                      timeout=60, what="the mail to fail after its retries", detail=_mails)
    assert mail.attempts == 3 and smtp.connections == 3
    assert "421" in mail.error
    assert User.objects.filter(username="maria", is_active=False).exists()
    # The server is back: "Send the link again" on the page mails a link that joins.
    smtp.refuse = 0
    again = client.post(reverse("annotation:invite_confirm_resend"),
                        {"token": response.context["resend_token"]})
    assert again.status_code == 200
    [message] = wait_until(lambda: list(smtp.messages), timeout=60, what="the mail sent again",
                           detail=_mails)
    assert client.post(_confirm_path(message)).status_code == 302
    assert ProjectMember.objects.filter(user__username="maria").exists()
