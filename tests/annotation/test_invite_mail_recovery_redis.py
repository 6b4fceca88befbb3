"""A confirmation mail whose message the broker lost, with a real worker on Redis (CI:
PostgreSQL + Redis): the queue is flushed after the sign-up, and the periodic check of a
worker run with beat sends the mail again, once; a message still waiting, taken by a worker
and not yet acknowledged, or held for a retry's countdown is never sent a second time."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import engine, invites
from annotation.models import InviteMail
from collector.broker import MAIL_TASK, broker_holdings
from config.celery import app
from tests.polling import wait_until
from tests.smtp_stub import SmtpStub

QUIET = {"resent": 0, "stalled": 0}


@pytest.fixture
def smtp():
    stub = SmtpStub()
    yield stub
    stub.close()


def _waiting() -> int:
    with app.connection_for_write() as conn:
        return conn.default_channel.client.llen("default")


def _flush() -> None:
    """What a Redis restart without persistence does to the queue."""
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge("default")


def _requested(*, minutes_ago: float) -> InviteMail:
    """A sign-up's confirmation mail, its message given to Redis when the sign-up committed,
    as long ago as ``minutes_ago``."""
    project = engine.project_create(name="Harbor news", recipe="newsqa")
    invite = invites.invite_create(project=project, role="annotator",
                                   allowed_domains=["uni.edu"])
    join = invites.invite_join_request(  # atomic: the message is sent as it commits
        invite_id=invite.pk, site_root="http://testserver/", username="maria",
        email="maria@uni.edu", password="lantern-orchid-47")
    InviteMail.objects.filter(pk=join.mail_id).update(
        queued_at=timezone.now() - timedelta(minutes=minutes_ago))
    return InviteMail.objects.get(pk=join.mail_id)


def _mails() -> str:
    return str(list(InviteMail.objects.values("status", "attempts", "error", "queued_at")))


@pytest.mark.celery_worker
def test_a_mail_whose_message_a_flush_dropped_is_sent_again_by_beat_once(
    redis_broker, smtp, tmp_path
):
    mail = _requested(minutes_ago=0)
    assert _waiting() == 1
    _flush()
    # A worker with beat: its periodic check finds the mail queued for more than a second,
    # no longer in Redis, and sends it again; the worker sends it.
    redis_broker(args=("--pool", "solo", "-B", "-s", str(tmp_path / "beat-schedule")),
                 env={"CROWDQA_JOB_QUEUED_LOST_AFTER_S": "1", "CROWDQA_PERIODIC_S": "1",
                      "EMAIL_URL": f"smtp://127.0.0.1:{smtp.port}"})
    sent = wait_until(lambda: InviteMail.objects.filter(pk=mail.pk, status="sent").first(),
                      timeout=60, what="the lost mail to be sent again", detail=_mails)
    assert sent.attempts == 1 and sent.stalled_at is None and sent.error == ""
    [message] = smtp.messages
    assert message["To"] == "maria@uni.edu" and smtp.connections == 1
    assert _waiting() == 0


@pytest.mark.celery_worker
def test_a_mail_message_waiting_or_taken_is_not_sent_again(redis_broker, smtp, settings):
    settings.CROWDQA_JOB_QUEUED_LOST_AFTER_S = 60
    mail = _requested(minutes_ago=10)
    assert broker_holdings(queues=["default"], task=MAIL_TASK).held(mail.pk)
    assert invites.invite_mails_recover() == QUIET  # waiting in the queue (no worker yet)
    assert _waiting() == 1
    with app.connection_for_write() as conn:
        # A worker takes the message and has not acknowledged it yet (acks_late): it is in
        # Redis's unacked hash, no longer in the queue.
        message = conn.default_channel.basic_get("default", no_ack=False)
        assert message is not None and _waiting() == 0
        assert broker_holdings(queues=["default"], task=MAIL_TASK).held(mail.pk)
        assert invites.invite_mails_recover() == QUIET
        message.reject(requeue=True)  # that worker gave it back
    assert _waiting() == 1
    mail.refresh_from_db()
    assert mail.status == "queued" and mail.stalled_at is None and mail.error == ""
    redis_broker(env={"EMAIL_URL": f"smtp://127.0.0.1:{smtp.port}"})
    wait_until(lambda: InviteMail.objects.filter(pk=mail.pk, status="sent").exists(),
               timeout=60, what="the mail to be sent", detail=_mails)
    assert len(smtp.messages) == 1 and _waiting() == 0  # one message was ever sent


@pytest.mark.celery_worker
def test_a_retry_waiting_for_its_countdown_is_held_and_not_sent_again(redis_broker, settings):
    busy = SmtpStub(refuse=1)
    busy.release.set()  # the first try is turned away at once
    try:
        redis_broker(env={"EMAIL_URL": f"smtp://127.0.0.1:{busy.port}",
                          "CROWDQA_INVITE_MAIL_RETRY_S": "600"})
        mail = _requested(minutes_ago=0)
        wait_until(lambda: InviteMail.objects.filter(pk=mail.pk, status="queued",
                                                     attempts=1).exclude(error="").exists(),
                   timeout=60, what="the first try to fail", detail=_mails)
        # The worker holds the retry for its ten minutes' countdown (Redis: unacked). The
        # check, looking at it as if it had waited long, leaves it alone.
        settings.CROWDQA_JOB_QUEUED_LOST_AFTER_S = 60
        InviteMail.objects.filter(pk=mail.pk).update(
            queued_at=timezone.now() - timedelta(minutes=10))
        wait_until(lambda: broker_holdings(queues=["default"], task=MAIL_TASK).held(mail.pk),
                   timeout=30, what="the retry's message to be held")
        assert invites.invite_mails_recover() == QUIET
        mail.refresh_from_db()
        assert (mail.status, mail.attempts, mail.stalled_at) == ("queued", 1, None)
        assert busy.connections == 1 and busy.messages == []
    finally:
        busy.close()
