"""Celery tasks of the annotation app: the engine's periodic jobs and the invites' mail.
Thin: they pass ids, and the services they call re-read the state."""

from celery import shared_task
from django.conf import settings

from annotation.engine import leases_expire


@shared_task(name="annotation.tasks.leases_expire_task")
def leases_expire_task() -> int:
    """Return expired leases' slots to the pool (idempotent; also checked at claim time)."""
    return leases_expire()


@shared_task(name="annotation.tasks.stages_pick_up_task")
def stages_pick_up_task() -> list[int]:
    """Periodic: run again automatic stages whose pending items have no live run."""
    from annotation.workflow import stages_pick_up

    return stages_pick_up()


def invite_mail_retry_pause(retries: int) -> float:
    """Seconds before try ``retries + 2`` of a confirmation mail: doubling from
    ``CROWDQA_INVITE_MAIL_RETRY_S``, at most half an hour."""
    return min(settings.CROWDQA_INVITE_MAIL_RETRY_S * 2**retries, 1800.0)


# acks_late (the project's default) is safe: invite_mail_send claims the mail row, so a
# second delivery sends nothing.
@shared_task(bind=True, name="annotation.tasks.invite_mail_send_task", max_retries=None)
def invite_mail_send_task(self, mail_id: int) -> str:
    """Send an invite's confirmation mail by id (``invites.invite_mail_send``: once, and
    not at all when it is no longer needed). When the mail server fails it is tried again
    after a growing pause, ``CROWDQA_INVITE_MAIL_RETRIES`` times, then failed (the page's
    "Send the link again" stays). Run eagerly (the embedded mode, in the web request)
    it tries once: the request does not wait through the pauses."""
    from annotation.invites import MailNotSent, invite_mail_send

    retries = self.request.retries
    final = self.request.is_eager or retries >= settings.CROWDQA_INVITE_MAIL_RETRIES
    try:
        return invite_mail_send(mail_id=mail_id, final=final)
    except MailNotSent as exc:
        raise self.retry(exc=exc, countdown=invite_mail_retry_pause(retries)) from exc


@shared_task(name="annotation.tasks.invite_mails_recover_task")
def invite_mails_recover_task() -> dict[str, int]:
    """Periodic: send again confirmation mails whose message the broker lost (or mark them
    waiting for the mail worker when it cannot tell; ``invites.invite_mails_recover``)."""
    from annotation.invites import invite_mails_recover

    return invite_mails_recover()


@shared_task(name="annotation.tasks.signups_purge_task")
def signups_purge_task() -> int:
    """Periodic: delete unconfirmed sign-ups whose confirmation links expired and that
    nothing refers to (``invites.signups_lapsed_purge``)."""
    from annotation.invites import signups_lapsed_purge

    return signups_lapsed_purge()
