"""Confirmation mails whose message was lost (a Redis flushed or restarted without
persistence): the periodic check sends a mail again when the broker no longer holds its
message, leaves it alone while the message waits or a worker holds it (a retry's countdown
included), and, when that cannot be told, leaves it queued, marked as waiting for the mail
worker with its age on the admin's list. A mail is sent once whatever happens. Here on the
embedded default: eager Celery, and the in-memory broker, which can only count a queue's
messages (as RabbitMQ); Redis with a real worker in test_invite_mail_recovery_redis."""

from __future__ import annotations

import contextlib
import smtplib
from datetime import timedelta
from unittest import mock

import pytest
from django.test import TestCase
from django.urls import reverse
from django.utils import timezone

from annotation import engine, invites
from annotation.models import InviteMail
from collector import broker
from collector.broker import MAIL_TASK
from config.celery import app, beat_run_once

QUIET = {"resent": 0, "stalled": 0}


class _Workers:
    """What the workers answer to ``inspect()``: the messages they reserved, and those they
    hold for a retry's countdown (``scheduled``), as Celery gives them."""

    def __init__(self, reserved: dict | None = None, scheduled: dict | None = None) -> None:
        self._reserved, self._scheduled = reserved, scheduled

    def reserved(self):
        return self._reserved

    def scheduled(self):
        return self._scheduled


@pytest.fixture
def invite(db):
    project = engine.project_create(name="Harbor news", recipe="newsqa")
    return invites.invite_create(project=project, role="annotator", allowed_domains=["uni.edu"])


@pytest.fixture
def memory_broker(settings, monkeypatch):
    """Mails are sent to the in-memory broker (as to a real one) instead of inline; no worker
    answers ``inspect`` unless a test says so. With a real broker configured (CI's
    PostgreSQL step) these skip: test_invite_mail_recovery_redis runs there."""
    if not app.conf.broker_url.startswith("memory://"):
        pytest.skip("these tests need the in-memory broker (no CELERY_BROKER_URL)")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CROWDQA_JOB_QUEUED_LOST_AFTER_S = 300
    monkeypatch.setattr(app.control, "inspect", lambda **kwargs: _Workers())
    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    _purge()
    try:
        yield
    finally:
        app.conf.task_always_eager = eager
        _purge()


def _purge() -> None:
    with app.connection_for_write() as conn, contextlib.suppress(Exception):
        conn.default_channel.queue_purge("default")


def _waiting() -> int:
    with app.connection_for_write() as conn:
        return broker._message_count(conn, "default")


def _deliver() -> int:
    """A worker's part: take every message waiting in the queue and run its task."""
    from annotation.tasks import invite_mail_send_task

    ran = 0
    with app.connection_for_write() as conn:
        while _waiting():
            raw = conn.default_channel._get("default")
            invite_mail_send_task.apply(args=(broker._id_of(raw, MAIL_TASK),))
            ran += 1
    return ran


def _requested(invite, *, minutes_ago: float, send: bool = True) -> InviteMail:
    """A sign-up's confirmation mail, given to the broker (``send``; else the process ended
    between the commit and the send) as long ago as ``minutes_ago``."""
    with TestCase.captureOnCommitCallbacks(execute=send):
        join = invites.invite_join_request(
            invite_id=invite.pk, site_root="http://testserver/", username="maria",
            email="maria@uni.edu", password="lantern-orchid-47")
    InviteMail.objects.filter(pk=join.mail_id).update(
        queued_at=timezone.now() - timedelta(minutes=minutes_ago))
    return InviteMail.objects.get(pk=join.mail_id)


def test_the_embedded_mode_sends_a_mail_a_restart_cut_off_once(
    invite, mailoutbox, settings, django_capture_on_commit_callbacks
):
    settings.CROWDQA_JOB_QUEUED_LOST_AFTER_S = 300
    young = _requested(invite, minutes_ago=1, send=False)
    assert invites.invite_mails_recover() == QUIET  # not yet: its send may be under way
    InviteMail.objects.filter(pk=young.pk).update(
        queued_at=timezone.now() - timedelta(minutes=10))
    # The embedded beat runs the check with the rest of the schedule.
    with django_capture_on_commit_callbacks(execute=True):
        results = beat_run_once()
    assert results["recover-mails"] == {**QUIET, "resent": 1}
    mail = InviteMail.objects.get(pk=young.pk)
    assert (mail.status, mail.attempts) == ("sent", 1)
    assert [m.to for m in mailoutbox] == [["maria@uni.edu"]]
    assert invites.invite_mails_recover() == QUIET
    assert len(mailoutbox) == 1


def test_a_mail_whose_message_was_lost_is_sent_again_and_once(
    invite, memory_broker, mailoutbox, django_capture_on_commit_callbacks
):
    mail = _requested(invite, minutes_ago=10)
    assert _waiting() == 1
    _purge()  # the broker lost it: restarted without persistence, or a flushed queue
    with django_capture_on_commit_callbacks(execute=True):
        assert invites.invite_mails_recover() == {**QUIET, "resent": 1}
    mail.refresh_from_db()
    assert mail.status == "queued" and mail.stalled_at is None
    assert mail.queued_at > timezone.now() - timedelta(minutes=1)
    assert _waiting() == 1
    assert invites.invite_mails_recover() == QUIET  # its new message is young
    assert _deliver() == 1
    mail.refresh_from_db()
    assert (mail.status, mail.attempts) == ("sent", 1) and len(mailoutbox) == 1


@pytest.mark.parametrize("held_as", ["reserved", "scheduled"])
def test_a_mail_a_worker_holds_is_not_sent_again(
    invite, memory_broker, monkeypatch, mailoutbox, held_as
):
    mail = _requested(invite, minutes_ago=10)
    _purge()
    # The worker took its message: reserved, waiting for a free pool process, or a retry
    # waiting for its countdown (wrapped with its eta).
    request = {"id": "t-1", "name": MAIL_TASK, "args": [mail.pk], "kwargs": {}}
    workers = (_Workers(reserved={"celery@host": [request]}) if held_as == "reserved" else
               _Workers(scheduled={"celery@host": [{"eta": "2026-11-28T20:00:00+00:00",
                                                    "priority": 6, "request": request}]}))
    monkeypatch.setattr(app.control, "inspect", lambda **kwargs: workers)
    assert invites.invite_mails_recover() == QUIET
    mail.refresh_from_db()
    assert mail.status == "queued" and mail.stalled_at is None and mail.error == ""
    assert _waiting() == 0 and mailoutbox == []


def test_a_mail_whose_message_cannot_be_told_apart_waits_marked_for_the_admin(
    invite, memory_broker, mailoutbox, client_for, admin_user, annotator,
    django_capture_on_commit_callbacks,
):
    mail = _requested(invite, minutes_ago=12)
    # Its message waits in the queue, but this broker can only count messages: the mail is
    # not sent again (that may be its message), nor failed, but marked for the admin.
    assert invites.invite_mails_recover() == {**QUIET, "stalled": 1}
    assert invites.invite_mails_recover() == QUIET  # marked once
    mail.refresh_from_db()
    assert mail.status == "queued" and mail.stalled_at is not None
    assert mail.error == (
        "waiting for the mail worker: no worker has taken it, and it cannot be told whether "
        "the broker still holds its message: the queue default holds messages (1), and "
        "this broker (memory) cannot list them")

    client = client_for(admin_user)
    listing = client.get(reverse("admin:annotation_invitemail_changelist")).content.decode()
    assert ("waiting for the mail worker for 12\xa0minutes; the broker cannot tell whether "
            "it still holds the message (see Error)") in listing
    detail = client.get(reverse("admin:annotation_invitemail_change", args=[mail.pk]))
    assert "this broker (memory) cannot list them" in detail.content.decode()

    # The queue drains without it (it was lost after all): the next check sends it.
    _purge()
    with django_capture_on_commit_callbacks(execute=True):
        assert invites.invite_mails_recover() == {**QUIET, "resent": 1}
    mail.refresh_from_db()
    assert mail.stalled_at is None and mail.error == "" and _waiting() == 1
    listing = client.get(reverse("admin:annotation_invitemail_changelist")).content.decode()
    assert "waiting for the mail worker for 0\xa0minutes<" in listing
    assert _deliver() == 1
    mail.refresh_from_db()
    assert mail.status == "sent" and mail.error == "" and len(mailoutbox) == 1
    # Only admins see the list.
    assert client_for(annotator).get(
        reverse("admin:annotation_invitemail_changelist")).status_code == 302


def test_a_stalled_mail_whose_message_turns_up_is_sent_once(
    invite, memory_broker, mailoutbox, django_capture_on_commit_callbacks
):
    mail = _requested(invite, minutes_ago=10)
    assert invites.invite_mails_recover() == {**QUIET, "stalled": 1}
    assert _deliver() == 1  # it was its own message
    mail.refresh_from_db()
    assert (mail.status, mail.attempts, mail.stalled_at, mail.error) == ("sent", 1, None, "")
    # A second message for the same mail (a redelivery) sends nothing more.
    with django_capture_on_commit_callbacks(execute=True):
        invites.invite_mail_enqueue(mail_id=mail.pk)
    assert _deliver() == 1
    mail.refresh_from_db()
    assert mail.attempts == 1 and len(mailoutbox) == 1


def test_a_retry_waiting_for_its_countdown_is_not_looked_at_early(
    invite, memory_broker, mailoutbox
):
    mail = _requested(invite, minutes_ago=10)
    _purge()
    # A try failed: the mail is queued again, its retry's message given to the broker now.
    down = smtplib.SMTPServerDisconnected("Connection unexpectedly closed")
    with mock.patch("annotation.invites.send_mail", side_effect=down), \
            pytest.raises(invites.MailNotSent):
        invites.invite_mail_send(mail_id=mail.pk, final=False)
    mail.refresh_from_db()
    assert mail.status == "queued" and mail.queued_at > timezone.now() - timedelta(minutes=1)
    assert invites.invite_mails_recover() == QUIET


def test_a_broker_that_cannot_be_asked_leaves_the_mail_waiting_unsent(
    invite, memory_broker, monkeypatch, mailoutbox
):
    mail = _requested(invite, minutes_ago=10)
    _purge()

    def refused(*args, **kwargs):
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(broker, "_counted_holdings", refused)
    assert invites.invite_mails_recover() == {**QUIET, "stalled": 1}
    mail.refresh_from_db()
    assert mail.status == "queued"
    assert mail.error.endswith("the broker could not be asked (ConnectionRefusedError: "
                               "[Errno 111] Connection refused)")
    assert _waiting() == 0 and mailoutbox == []


def test_a_mail_message_is_told_from_a_jobs(db, memory_broker):
    """The mail's id is read from its message's headers, or its body when they do not say;
    a job's message with the same id is not the mail's, nor the other way round."""
    from annotation.tasks import invite_mail_send_task
    from collector.tasks import job_run_task

    invite_mail_send_task.apply_async((41,), queue="default")
    job_run_task.apply_async((41,), queue="default")
    with app.connection_for_write() as conn:
        mail = conn.default_channel._get("default")
        job = conn.default_channel._get("default")
    assert broker._id_of(mail, MAIL_TASK) == 41 and broker._id_of(job, MAIL_TASK) is None
    assert broker._job_of(job) == 41 and broker._job_of(mail) is None
    mail["headers"].pop("argsrepr")
    assert broker._id_of(mail, MAIL_TASK) == 41
