"""What the broker still holds of the messages of one task: asked before a queued job that no
worker has taken is sent again (``collector.jobs``, task ``job_run_task``), or a queued
confirmation mail (``annotation.invites.invite_mails_recover``, task
``invite_mail_send_task``), so that a message still waiting is never sent twice. Both tasks
take the row's id as their first argument, which is what is read from each message.

A message is *held* while it waits in its queue or while a worker has it (taken, not yet
acknowledged: tasks are ``acks_late``; or a retry waiting for its countdown). How far that can
be told depends on the broker:

- Redis: exactly. A queue is a list per priority and the messages workers took are kept in
  the ``unacked`` hash until acknowledged (and put back after the visibility timeout when
  their worker died); both are read in one ``MULTI`` (the lists first), so a message moving
  from a list to the hash is seen in one of them.
- Any other broker (RabbitMQ): messages cannot be listed, only counted. An empty queue holds
  nothing; the messages workers reserved without starting them, or hold for a retry's
  countdown, are asked of the workers (``inspect().reserved()`` and ``scheduled()``; a started
  task's row is no longer queued). A queue holding messages may or may not hold the row's: that
  cannot be told.

What cannot be told comes with its reason as a stored text (``collector.stored_text``): the
job is then marked stalled (the mail: left waiting, marked so), for an admin to decide,
instead of being sent again.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_noop

from collector.stored_text import StoredText

logger = logging.getLogger(__name__)

JOB_TASK = "collector.tasks.job_run_task"
MAIL_TASK = "annotation.tasks.invite_mail_send_task"
# Messages read from one Redis queue at most; a longer queue is not listed (its jobs'
# fate cannot be told).
SCAN_LIMIT = 20_000
# How long the workers are given to say which messages they reserved (not Redis).
INSPECT_TIMEOUT_S = 1.0
_ARGSREPR = re.compile(r"^\(\s*(\d+)\s*,?\s*\)$")


class Unreadable(ValueError):
    """A message whose task or arguments could not be read."""


@dataclass
class BrokerHoldings:
    """The ids (first argument) of the messages of ``task`` that the broker or a worker
    holds, and, per queue, why what it holds cannot be told (a queue not named there was read
    in full)."""

    task: str = JOB_TASK
    ids: set[int] = field(default_factory=set)
    unknown: dict[str, StoredText] = field(default_factory=dict)

    def held(self, pk: int) -> bool:
        return pk in self.ids

    def why_unknown(self, pk: int, queue: str) -> StoredText | None:
        """Why it cannot be told whether the message for row ``pk`` is still held (None: it
        can: held when ``held()``, else gone)."""
        return None if pk in self.ids else self.unknown.get(queue)


def broker_holdings(*, queues: Iterable[str], task: str = JOB_TASK) -> BrokerHoldings:
    """What the configured broker (and its workers) hold of the messages of ``task`` sent to
    ``queues``."""
    from kombu.transport.redis import Channel as RedisChannel

    from config.celery import app

    queues = sorted(set(queues))
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            channel = conn.default_channel
            if isinstance(channel, RedisChannel):
                return _redis_holdings(channel, queues, task)
            return _counted_holdings(app, conn, queues, task)
    except Exception as exc:  # unreachable, refused, a reply we do not understand
        logger.warning("the broker could not be asked what it holds: %s", exc)
        reason = StoredText(gettext_noop("the broker could not be asked (%(error)s)"),
                            error=f"{type(exc).__name__}: {exc}"[:300])
        return BrokerHoldings(task=task, unknown=dict.fromkeys(queues, reason))


def _redis_holdings(channel: Any, queues: list[str], task: str) -> BrokerHoldings:
    # LRANGE and HVALS are not among the commands kombu's client prefixes itself.
    prefix = getattr(channel, "global_keyprefix", "") or ""
    keys = {queue: [prefix + channel._q_for_pri(queue, pri) for pri in channel.priority_steps]
            for queue in queues}
    with channel.client.pipeline(transaction=True) as pipe:
        for queue in queues:
            for key in keys[queue]:
                pipe.lrange(key, 0, SCAN_LIMIT)
        pipe.hvals(prefix + channel.unacked_key)
        *lists, unacked = pipe.execute()
    holdings = BrokerHoldings(task=task)
    for queue in queues:
        messages = [lists.pop(0) for _ in keys[queue]]
        if sum(len(m) for m in messages) > SCAN_LIMIT:
            holdings.unknown[queue] = StoredText(
                gettext_noop("the queue %(queue)s holds more than %(limit)s messages, too "
                             "many to look through"), queue=queue, limit=f"{SCAN_LIMIT:,}")
            continue
        try:
            holdings.ids |= {pk for m in messages for raw in m
                             if (pk := _id_of(json.loads(raw), task)) is not None}
        except (Unreadable, ValueError, TypeError) as exc:
            holdings.unknown[queue] = _unreadable(queue, exc)
    try:
        # [message, exchange, routing key] for each message a worker took
        holdings.ids |= {pk for raw in unacked
                         if (pk := _id_of(json.loads(raw)[0], task)) is not None}
    except (Unreadable, ValueError, TypeError, IndexError) as exc:
        reason = _unreadable(channel.unacked_key, exc)
        holdings.unknown = dict.fromkeys(queues, reason)
    return holdings


def _counted_holdings(app: Any, conn: Any, queues: list[str], task: str) -> BrokerHoldings:
    holdings = BrokerHoldings(task=task)
    empty = []
    for queue in queues:
        count = _message_count(conn, queue)
        if count:
            holdings.unknown[queue] = StoredText(
                gettext_noop("the queue %(queue)s holds messages (%(count)s), and this "
                             "broker (%(broker)s) cannot list them"),
                queue=queue, count=f"{count:,}", broker=conn.transport.driver_type)
        else:
            empty.append(queue)
    if empty:
        # Workers hold reserved messages apart from the queue, and retries waiting for their
        # countdown (``scheduled``: each request wrapped with its eta). A worker that does not
        # answer in time is busy on its single slot with a task it started (its row is not
        # queued any more).
        inspect = app.control.inspect(timeout=INSPECT_TIMEOUT_S)
        requests = [request for requests in (inspect.reserved() or {}).values()
                    for request in requests]
        if task != JOB_TASK:  # jobs are never sent with a countdown
            requests += [entry.get("request") or {}
                         for entries in (inspect.scheduled() or {}).values()
                         for entry in entries]
        try:
            holdings.ids |= {pk for request in requests
                             if (pk := _id_of_request(request, task)) is not None}
        except (Unreadable, ValueError, TypeError) as exc:
            for queue in empty:
                holdings.unknown[queue] = _unreadable("reserved", exc)
    return holdings


def _message_count(conn: Any, queue: str) -> int:
    """Ready messages in ``queue`` (0 when there is no such queue)."""
    from amqp.exceptions import ChannelError

    channel = conn.channel()
    try:
        return channel.queue_declare(queue=queue, passive=True).message_count
    except ChannelError as exc:
        if str(getattr(exc, "code", "")) == "404":
            return 0
        raise
    finally:
        try:
            channel.close()
        except Exception:  # a channel the broker closed after the 404 (RabbitMQ)
            logger.debug("closing the channel of %s", queue, exc_info=True)


def _unreadable(where: str, exc: BaseException) -> StoredText:
    return StoredText(gettext_noop("a message in %(queue)s could not be read (%(error)s)"),
                      queue=where, error=f"{type(exc).__name__}: {exc}"[:200])


def _job_of(raw: dict[str, Any]) -> int | None:
    """The job id a raw message sends to ``job_run_task``; None for any other task."""
    return _id_of(raw, JOB_TASK)


def _id_of(raw: dict[str, Any], task: str) -> int | None:
    """The row id a raw message sends to ``task`` (its first argument); None for any other
    task."""
    headers = raw.get("headers") or {}
    named = headers.get("task")
    if named is not None and named != task:
        return None
    if named is not None and (match := _ARGSREPR.match(str(headers.get("argsrepr", "")))):
        return int(match.group(1))
    body = raw.get("body", "")
    if (raw.get("properties") or {}).get("body_encoding") == "base64":
        body = base64.b64decode(body)
    if raw.get("content-type") != "application/json" or headers.get("compression"):
        raise Unreadable(f"a {raw.get('content-type')} message")
    payload = json.loads(body)
    if isinstance(payload, dict):  # task protocol 1: the task and its arguments in the body
        if payload.get("task") != task:
            return None
        args = payload.get("args")
    else:  # protocol 2: [args, kwargs, embed]
        args = payload[0]
    return _job_id(args)


def _id_of_request(request: dict[str, Any], task: str) -> int | None:
    """The row id of a request of ``task`` a worker reports (``inspect().reserved()``)."""
    if request.get("name") != task:
        return None
    args = request.get("args")
    if isinstance(args, str):  # older workers report the arguments' repr
        match = _ARGSREPR.match(args)
        if match is None:
            raise Unreadable(f"arguments {args!r}")
        return int(match.group(1))
    return _job_id(args)


def _job_id(args: Any) -> int:
    if not isinstance(args, list | tuple) or not args or not isinstance(args[0], int):
        raise Unreadable(f"arguments {args!r}")
    return args[0]
