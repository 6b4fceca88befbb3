"""The hot path of task assignment in a few SQL statements.

Claiming the next task and submitting it run for every judgment a crowd makes, so they are
written as single statements (prepared once per session on PostgreSQL, ``annotation.sql``)
instead of ORM query chains, whose compilation cost more than PostgreSQL's work (about
23 ms of Python per claim + submit before; see docs/benchmarks.md). The rules stay where
they were: statuses change only through ``annotation.workflow`` (its table of allowed
moves and its conditional UPDATE), and the engine (``annotation.engine``) decides what to
claim and what a finished item emits.

- ``worker_queue``: the worker's live slot, if any, and the human stages they may work,
  latest first, in one query.
- ``slot_claim``: the first open slot of a stage in (priority, item, id) order that this
  worker may take, moved to ``active`` under a lease in one ``UPDATE … WHERE id = (SELECT …
  FOR NO KEY UPDATE SKIP LOCKED) RETURNING``; on PostgreSQL the log row is written by the
  same statement, so the claim commits on its own in one round trip.
- ``slot_claim_next`` (PostgreSQL): the two above in one statement; the worker's stages
  are tried latest first and the first that yields a slot ends the walk.
- ``slot_for_submit``: the slot and its item (with its stage and document), both locked
  by one statement.
- ``slot_submit``: the slot moved to ``submitted`` and its submission written (one
  statement on PostgreSQL), returning all the item's submissions when no slot of it is
  open or active any more (the item is complete).
- ``item_insert``: an emitted item, idempotent by (stage, key).
- ``item_done_and_emit`` (PostgreSQL): an item moved to done and its emitted items
  inserted into the stages after it, in one statement.
- ``stage_run_wanted``: whether an automatic stage has pending items and no queued run.

SQLite runs the same statements without row locks (it has one writer at a time).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from django.db import transaction

from annotation import eligibility, sql
from annotation.eligibility import QueueStage
from annotation.models import Assignment, Item, Project, Stage, Submission
from annotation.workflow import TransitionError, transition, transition_cte, transition_rows
from collector.models import Document

AS = Assignment.Status


def _live(
    *, worker: Any, now: datetime, project_id: int | None, kinds: Sequence[str] | None,
    what: str,
) -> tuple[str, list[Any]]:
    """SELECT ``what`` of the worker's live slots (active, lease not expired), earliest
    claimed first."""
    conn = sql.db()
    text = (f"SELECT {what} FROM annotation_assignment a"
            " JOIN annotation_stage s ON s.id = a.stage_id"
            " WHERE a.worker_id = %s AND a.status = 'active' AND a.lease_expires_at > %s")
    params: list[Any] = [worker.pk, conn.ops.adapt_datetimefield_value(now)]
    if project_id is not None:
        text += " AND s.project_id = %s"
        params.append(project_id)
    if kinds is not None:
        text += f" AND s.kind IN ({sql.placeholders(kinds)})"
        params += list(kinds)
    return text + " ORDER BY a.claimed_at, a.id LIMIT 1", params


def _gate(
    *, worker: Any, now: datetime, project_id: int | None, kinds: Sequence[str] | None,
) -> tuple[str, list[Any]]:
    """PostgreSQL: the call of ``crowdqa_claim_gate`` (migration ``annotation/0019``),
    true when the worker may claim. It holds the worker's claims after this one until this
    transaction ends, then looks for a live slot of the same scope as ``_live`` in a fresh
    snapshot: a claim that waited finds the slot the one before it took, which its
    statement's own snapshot cannot see."""
    return ("SELECT crowdqa_claim_gate(%s, %s, %s::bigint, %s::text[]) AS free",
            [worker.pk, sql.db().ops.adapt_datetimefield_value(now), project_id,
             list(kinds) if kinds is not None else None])


def slot_claim_gate(
    *, worker: Any, now: datetime, project_id: int | None = None,
    kinds: Sequence[str] | None = None,
) -> bool:
    """Whether the worker may claim now (PostgreSQL, in the claim's transaction: the gate
    stays shut to their other claims until it ends). True on other databases, whose claim
    runs in one write transaction anyway."""
    if sql.db().vendor != "postgresql":
        return True
    text, params = _gate(worker=worker, now=now, project_id=project_id, kinds=kinds)
    with sql.db().cursor() as cursor:
        sql.execute(cursor, text, params)
        return bool(cursor.fetchone()[0])


def slot_live(
    *, worker: Any, now: datetime, project_id: int | None = None,
    kinds: Sequence[str] | None = None,
) -> Assignment | None:
    """The worker's earliest-claimed active slot whose lease has not expired."""
    text, params = _live(worker=worker, now=now, project_id=project_id, kinds=kinds,
                         what=sql.columns(Assignment, "a"))
    with sql.db().cursor() as cursor:
        sql.execute(cursor, text, params)
        rows = cursor.fetchall()
    return sql.rows_load(Assignment, rows)[0] if rows else None


def slot_get(pk: int) -> Assignment | None:
    with sql.db().cursor() as cursor:
        sql.execute(cursor, f"SELECT {sql.columns(Assignment)} FROM annotation_assignment"
                    " WHERE id = %s", [pk])
        rows = cursor.fetchall()
    return sql.rows_load(Assignment, rows)[0] if rows else None


def worker_queue(
    *, worker: Any, kinds_by_role: dict[str, Sequence[str]], project_id: int | None = None,
    now: datetime | None = None, live_kinds: Sequence[str] | None = None,
) -> tuple[int | None, list[QueueStage]]:
    """The id of the worker's live slot (with ``now``; of ``live_kinds`` when given) and
    the human stages of active projects the worker may work now (``eligibility``), latest
    stage first. One query."""
    stages = eligibility.stages_sql(worker_id=worker.pk, kinds_by_role=kinds_by_role,
                                    project_id=project_id)
    parts, params = [], []
    if now is not None:
        live, live_params = _live(worker=worker, now=now, project_id=project_id,
                                  kinds=live_kinds, what="a.id")
        false = "false" if sql.db().vendor == "postgresql" else "0"
        parts.append(f"SELECT 0, live.id, '', 0, 0, NULL, {false}, 0 FROM ({live}) live")
        params += live_params
    if stages is not None:
        parts.append('SELECT 1, st.id, st.kind, st."order", st.member_id, st.item_limit,'
                     f" st.session_limited, st.gold_rate FROM ({stages[0]}) st")
        params += stages[1]
    if not parts:
        return None, []
    with sql.db().cursor() as cursor:
        sql.execute(cursor, " UNION ALL ".join(parts) + " ORDER BY 1, 4 DESC, 2", params)
        rows = cursor.fetchall()
    live_id = next((row[1] for row in rows if row[0] == 0), None)
    return live_id, [eligibility.queue_stage((pk, kind, *rest))
                     for part, pk, kind, _, *rest in rows if part == 1]


def work_waiting(
    *, worker: Any, kinds_by_role: dict[str, Sequence[str]], project_id: int | None = None,
    batched_kinds: Sequence[str] = (),
) -> bool:
    """Whether a claim now could give the worker a task (read-only; takes nothing): a
    stage they may work (``eligibility``) has an open slot they may take, or, batched, a
    slot of their batch or a batch nobody took yet."""
    stages = eligibility.stages_sql(worker_id=worker.pk, kinds_by_role=kinds_by_role,
                                    project_id=project_id)
    if stages is None:
        return False
    pool, pool_params = eligibility.candidates_sql(worker_id=worker.pk, stage="st.id")
    mine, mine_params = eligibility.candidates_sql(worker_id=worker.pk, stage="st.id",
                                                   reserved=True)
    batched = sql.placeholders(batched_kinds)
    if batched_kinds:
        condition = (
            f"(st.kind NOT IN ({batched}) AND EXISTS ({pool} LIMIT 1))"
            f" OR (st.kind IN ({batched}) AND (EXISTS ({mine} LIMIT 1) OR EXISTS (SELECT 1"
            " FROM annotation_batch bt WHERE bt.stage_id = st.id AND bt.status = 'open')))")
        params = [*batched_kinds, *pool_params, *batched_kinds, *mine_params]
    else:
        condition, params = f"EXISTS ({pool} LIMIT 1)", pool_params
    with sql.db().cursor() as cursor:
        sql.execute(cursor, f"SELECT 1 FROM ({stages[0]}) st WHERE {condition} LIMIT 1",
                    [*stages[1], *params])
        return cursor.fetchone() is not None


def slot_claim(
    *, worker: Any, stage_id: int, now: datetime, lease: timedelta, reserved: bool = False,
    limits: QueueStage | None = None,
) -> Assignment | None:
    """Take the first open slot of the stage this worker may work, or None.

    Pool slots (``reserved=False``): never one of an item the worker already holds or did,
    never one of an item they are excluded from. Batch slots (``reserved=True``): only the
    slots reserved for this worker (their batch; a returned batch is labelled again).
    Skips slots other claims hold locked, so concurrent claims never wait on or meet each
    other. ``limits``: the stage as the worker's queue gave it; a claim that counts
    against a limit is counted first, in the same transaction, and nothing is claimed
    when the limit is reached.
    """
    # A gold check first when this claim's roll falls under the stage's gold rate, and
    # only while the stage has work for the worker too: gold is mixed into work, and a
    # stage with nothing else for them would give it away (``eligibility.pick_sql``).
    gold = (not reserved and limits is not None
            and random.random() < limits.gold_rate  # noqa: S311
            and _work_open(worker=worker, stage_id=stage_id))
    if limits is None or not limits.counted:
        return _slot_claim(worker=worker, stage_id=stage_id, now=now, lease=lease,
                           reserved=reserved, gold=gold)
    with transaction.atomic():
        slot = None
        if eligibility.count_claim(limits):
            slot = _slot_claim(worker=worker, stage_id=stage_id, now=now, lease=lease,
                               reserved=reserved, gold=gold)
        if slot is None:
            transaction.set_rollback(True)
        return slot


def _work_open(*, worker: Any, stage_id: int) -> bool:
    """Whether the stage has a work slot (not a gold check) this worker may take."""
    candidates, params = eligibility.candidates_sql(worker_id=worker.pk)
    with sql.db().cursor() as cursor:
        sql.execute(cursor, f"{candidates} LIMIT 1", [stage_id, *params])
        return cursor.fetchone() is not None


def _slot_claim(
    *, worker: Any, stage_id: int, now: datetime, lease: timedelta, reserved: bool,
    gold: bool = False,
) -> Assignment | None:
    if gold:
        slot = _slot_claim_of(worker=worker, stage_id=stage_id, now=now, lease=lease,
                              reserved=False, gold=True)
        if slot is not None:
            return slot
    return _slot_claim_of(worker=worker, stage_id=stage_id, now=now, lease=lease,
                          reserved=reserved, gold=False)


def _slot_claim_of(
    *, worker: Any, stage_id: int, now: datetime, lease: timedelta, reserved: bool,
    gold: bool,
) -> Assignment | None:
    candidates, params = eligibility.candidates_sql(worker_id=worker.pk, reserved=reserved,
                                                    gold=gold)
    lock = (" FOR NO KEY UPDATE SKIP LOCKED"
            if sql.db().features.has_select_for_update_skip_locked else "")
    rows = transition_rows(
        Assignment, AS.ACTIVE, source=AS.OPEN, where=f"id = ({candidates} LIMIT 1{lock})",
        params=[stage_id, *params], actor=worker,
        fields={"worker": worker.pk, "claimed_at": now, "lease_expires_at": now + lease},
        returning=sql.column_names(Assignment),
    )
    return sql.rows_load(Assignment, rows)[0] if rows else None


def slot_claim_next(
    *, worker: Any, kinds_by_role: dict[str, Sequence[str]], now: datetime,
    lease: timedelta, project_id: int | None = None, live_kinds: Sequence[str] | None = None,
    batched_kinds: Sequence[str] = (), related: bool = False,
) -> tuple[str, Assignment | None, list[QueueStage]]:
    """PostgreSQL only: ``worker_queue`` and ``slot_claim`` in one statement.

    With ``related`` the slot comes with its item, document, stage and project loaded by
    the same statement (what a task shows; the API's claim answers with it, no second
    read).

    Returns ``("live", slot, stages)`` when the worker holds a live slot (nothing is
    claimed), ``("claimed", slot, stages)`` when the first open slot they may take of their
    latest stage that has one is now theirs, and ``("", None, stages)`` otherwise: nothing
    open, a limit reached, or (batched kinds among their stages) nothing tried, since a
    batched stage claims through its batches (``annotation.batches``). ``stages`` are the
    ``QueueStage``s, latest first.

    Each stage's candidates are walked in claim order under ``SKIP LOCKED`` and the walk
    stops at the first stage that yields a slot (a nested loop over the ordered stages under
    ``LIMIT 1``), so an empty stage costs one index probe. A claim that counts against a
    limit is counted on the membership row by the same statement (``eligibility``).
    """
    stages = eligibility.stages_sql(worker_id=worker.pk, kinds_by_role=kinds_by_role,
                                    project_id=project_id)
    live, live_params = _live(worker=worker, now=now, project_id=project_id, kinds=live_kinds,
                              what=sql.columns(Assignment, "a"))
    if stages is None:
        stages = ('SELECT NULL::bigint AS id, NULL::text AS kind, NULL::int AS "order",'
                  " NULL::bigint AS member_id, NULL::int AS item_limit,"
                  " NULL::boolean AS session_limited, NULL::float8 AS gold_rate WHERE false",
                  [])
    skip_batched, batched_params = "", []
    if batched_kinds:
        skip_batched = (" AND NOT EXISTS (SELECT 1 FROM stages WHERE kind IN"
                        f" ({sql.placeholders(batched_kinds)}))")
        batched_params = list(batched_kinds)
    # The candidates of each stage in turn, the stage read from the outer row: a gold
    # check when this claim's roll falls under the stage's gold rate, else work.
    candidates, candidate_params = eligibility.pick_sql(
        worker_id=worker.pk, stage="st", roll=random.random(),  # noqa: S311
        lock=" FOR NO KEY UPDATE SKIP LOCKED")
    gate, gate_params = _gate(worker=worker, now=now, project_id=project_id,
                              kinds=live_kinds)
    # The gate is asked only when the statement's snapshot shows no live slot, before any
    # candidate is looked at.
    before = (
        f"live AS ({live}), gate AS MATERIALIZED ({gate}), stages AS ({stages[0]}),"
        " pick AS (SELECT c.id, st.id AS stage_id, st.member_id, st.item_limit,"
        " st.session_limited FROM (SELECT * FROM stages WHERE NOT EXISTS (SELECT 1 FROM live)"
        ' AND (SELECT free FROM gate) ORDER BY "order" DESC, id) st CROSS JOIN LATERAL'
        f" ({candidates}) c WHERE c.id IS NOT NULL{skip_batched}"
        f' ORDER BY st."order" DESC, st.id LIMIT 1), {eligibility.counted_cte()}',
        [*live_params, *gate_params, *stages[1], *candidate_params, *batched_params],
    )
    prefix, params = transition_cte(
        Assignment, AS.ACTIVE, source=AS.OPEN,
        where=f"id = (SELECT id FROM pick) AND {eligibility.counted_guard()}",
        actor=worker, fields={"worker": worker.pk, "claimed_at": now,
                              "lease_expires_at": now + lease},
        returning=sql.column_names(Assignment), before=before,
    )
    names = ", ".join(sql.db().ops.quote_name(c) for c in sql.column_names(Assignment))
    joined, joins = "", ""
    if related:
        joined = "".join(f", {sql.columns(model, alias)}" for model, alias in _RELATED)
        joins = (" LEFT JOIN annotation_item ri ON ri.id = got.item_id"
                 " LEFT JOIN annotation_stage rs ON rs.id = got.stage_id"
                 " LEFT JOIN annotation_project rp ON rp.id = rs.project_id"
                 " LEFT JOIN collector_document rd ON rd.id = ri.document_id")
    with sql.db().cursor() as cursor:
        sql.execute(
            cursor,
            f"{prefix} SELECT got.*{joined}, (SELECT coalesce(json_agg(json_build_array("
            "s.id, s.kind, s.member_id, s.item_limit, s.session_limited, s.gold_rate)"
            """ ORDER BY s."order" DESC, s.id), '[]') FROM stages s),"""
            " EXISTS (SELECT 1 FROM live) OR (SELECT free FROM gate) FROM (SELECT 1) one"
            f" LEFT JOIN (SELECT 'claimed' AS got, {names} FROM moved UNION ALL"
            f" SELECT 'live', {names} FROM live) got ON true{joins}",
            params,
        )
        got, *row, stage_list, free = cursor.fetchone()
    queue = [eligibility.queue_stage(each) for each in stage_list]
    if got:
        return got, _slot_load(row, related), queue
    if not free:
        # Another claim of this worker took a slot while this one's statement ran.
        slot = slot_live(worker=worker, now=now, project_id=project_id, kinds=live_kinds)
        if slot is not None:
            return "live", slot_related(slot.pk) if related else slot, queue
    return "", None, queue


#: What a claim with ``related`` loads beside the slot, and the aliases it joins them as.
_RELATED = ((Item, "ri"), (Stage, "rs"), (Project, "rp"), (Document, "rd"))


def _slot_load(row: Sequence[Any], related: bool = True) -> Assignment:
    """The slot of a row of its ``sql.columns`` followed (``related``) by those of its item,
    stage, project and document (``_RELATED``), each linked to the others."""
    slot, *loaded = _rows_split(row, (Assignment, *(m for m, _ in _RELATED)) if related
                                else (Assignment,))
    if related:
        item, stage, project, document = loaded
        stage.project = project
        item.stage = stage
        if document is not None:
            item.document = document
        slot.item, slot.stage = item, stage
    return slot


def slot_related(assignment_id: int) -> Assignment | None:
    """The slot with its item, stage, project and document (what its task shows), read by
    one statement; None when there is no such slot. The task page's read: the ORM's
    four-way ``select_related`` cost several times more to build than to run."""
    with sql.db().cursor() as cursor:
        sql.execute(cursor, _slot_related_sql(sql.db().vendor), [assignment_id])
        row = cursor.fetchone()
    return _slot_load(row) if row is not None else None


@lru_cache(maxsize=4)
def _slot_related_sql(vendor: str) -> str:
    joined = "".join(f", {sql.columns(model, alias)}" for model, alias in _RELATED)
    return (f"SELECT {sql.columns(Assignment, 'a')}{joined} FROM annotation_assignment a"
            " JOIN annotation_item ri ON ri.id = a.item_id"
            " JOIN annotation_stage rs ON rs.id = a.stage_id"
            " JOIN annotation_project rp ON rp.id = rs.project_id"
            " LEFT JOIN collector_document rd ON rd.id = ri.document_id WHERE a.id = %s")


def _rows_split(row: Sequence[Any], models: Sequence[type]) -> list[Any]:
    """Instances of ``models`` from one row holding each one's ``sql.columns`` in turn;
    None for a model whose columns are all NULL (a LEFT JOIN that found nothing)."""
    loaded, start = [], 0
    for model in models:
        end = start + len(sql.column_names(model))
        part = row[start:end]
        loaded.append(sql.rows_load(model, [part])[0] if any(v is not None for v in part)
                      else None)
        start = end
    return loaded


def slot_for_submit(assignment_id: int) -> tuple[Item, Assignment] | None:
    """Lock the slot and its item and load both; None when there is no such slot. The item
    comes with its stage and document loaded.

    ``FOR NO KEY UPDATE`` leaves inserts that point at the item or the slot (a
    submission, a fresh slot for an expired one) free to go on beside the locks; nothing
    else locks an assignment and then its item, so the two locks of one statement cannot
    deadlock with another transaction.
    """
    conn = sql.db()
    lock = " FOR NO KEY UPDATE OF i, a" if conn.features.has_select_for_update_of else ""
    with conn.cursor() as cursor:
        sql.execute(
            cursor,
            f"SELECT {sql.columns(Item, 'i')}, {sql.columns(Stage, 's')},"
            f" {sql.columns(Document, 'd')}, {sql.columns(Assignment, 'a')}"
            " FROM annotation_assignment a JOIN annotation_item i ON i.id = a.item_id"
            " JOIN annotation_stage s ON s.id = i.stage_id"
            " LEFT JOIN collector_document d ON d.id = i.document_id"
            " WHERE a.id = %s" + lock,
            [assignment_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    item, item.stage, document, slot = _rows_split(row, (Item, Stage, Document, Assignment))
    if document is not None:
        item.document = document
    slot.item = item
    return item, slot


def slot_take_back(
    *, expired: Assignment, worker: Any, now: datetime, lease: timedelta,
) -> Assignment | None:
    """A late submit's slot: an open slot of the item ``expired`` was on (same round, same
    batch reservation: the one that replaced it, or one like it) moved back to ``worker``
    as active, claimed when ``expired`` was, so that the answer they typed can be submitted
    in it; None when none is open any more (another worker took it). Not the hot path.

    The open slot is locked without skipping: a claim of another worker that holds it is
    waited for, and its slot is then no longer open, so exactly one of the two gets it."""
    conn = sql.db()
    lock = " FOR NO KEY UPDATE" if conn.features.has_select_for_update else ""
    reserved = ("reserved_for_id = %s" if expired.reserved_for_id is not None
                else "reserved_for_id IS NULL")
    params: list[Any] = [expired.item_id, expired.round]
    if expired.reserved_for_id is not None:
        params.append(expired.reserved_for_id)
    rows = transition_rows(
        Assignment, AS.ACTIVE, source=AS.OPEN,
        where=("id = (SELECT id FROM annotation_assignment WHERE item_id = %s AND round = %s"
               f" AND status = 'open' AND {reserved} ORDER BY id LIMIT 1{lock})"),
        params=params, actor=worker, note=f"late submit of slot {expired.pk}",
        fields={"worker": worker.pk, "claimed_at": expired.claimed_at or now,
                "lease_expires_at": now + lease},
        returning=sql.column_names(Assignment),
    )
    return sql.rows_load(Assignment, rows)[0] if rows else None


_SUBMISSION_FIELDS = ("item_id", "stage_id", "worker_id", "payload", "time_on_task_s",
                      "active_time_s", "created_at")


def slot_submit(
    *, slot: Assignment, item: Item, worker: Any, payload: dict[str, Any], now: datetime,
    active_time_s: float | None,
) -> tuple[Submission, list[Submission] | None]:
    """Move ``slot`` (locked, active) to ``submitted`` and write its submission. Returns
    the submission and, when no slot of the item is open or active any more (the item is
    complete), all the item's submissions in the order they came in; None otherwise. One
    statement on PostgreSQL."""
    submission = Submission(
        assignment=slot, item=item, stage_id=item.stage_id, worker=worker, payload=payload,
        time_on_task_s=(now - slot.claimed_at).total_seconds(), active_time_s=active_time_s,
        created_at=now,
    )
    conn = sql.db()
    values = [sql.db_value(Submission, name, getattr(submission, name), conn)
              for name in _SUBMISSION_FIELDS]
    names = ", ".join(c for c, _ in values)
    if conn.vendor == "postgresql":
        prefix, params = transition_cte(
            Assignment, AS.SUBMITTED, source=AS.ACTIVE, where="id = %s", params=[slot.pk],
            actor=worker, fields={"submitted_at": now})
        with conn.cursor() as cursor:
            # The statement reads the rows as they were before it: the slot itself was still
            # active then, and the new submission is not among the earlier ones.
            sql.execute(
                cursor,
                f"{prefix}, sub AS (INSERT INTO annotation_submission (assignment_id, {names})"
                f" SELECT moved_id, {sql.placeholders(values)} FROM moved RETURNING id),"
                " done AS (SELECT NOT EXISTS (SELECT 1 FROM annotation_assignment WHERE"
                " item_id = %s AND status IN ('open', 'active') AND id <> %s) AS complete)"
                f" SELECT (SELECT id FROM sub), done.complete, {sql.columns(Submission, 'e')}"
                " FROM done LEFT JOIN annotation_submission e ON done.complete"
                " AND e.item_id = %s AND NOT e.set_aside AND e.superseded_by_id IS NULL"
                " ORDER BY e.id",
                [*params, *(v for _, v in values), item.pk, slot.pk, item.pk],
            )
            rows = cursor.fetchall()
        submission.pk, complete = rows[0][:2]
        if submission.pk is None:
            raise TransitionError(f"Assignment {slot.pk}: expected status active; another "
                                  "process changed it first")
        earlier = sql.rows_load(Submission, [row[2:] for row in rows if row[2] is not None])
    else:
        transition(slot, AS.SUBMITTED, actor=worker, submitted_at=now)
        with conn.cursor() as cursor:
            sql.execute(
                cursor,
                f"INSERT INTO annotation_submission (assignment_id, {names})"
                f" VALUES (%s, {sql.placeholders(values)}) RETURNING id, NOT EXISTS (SELECT 1"
                " FROM annotation_assignment WHERE item_id = %s AND status IN"
                " ('open', 'active'))",
                [slot.pk, *(v for _, v in values), item.pk],
            )
            submission.pk, complete = cursor.fetchone()
        earlier = submissions_of(item)[:-1] if complete else []  # the new one comes last
    slot.status, slot.submitted_at = AS.SUBMITTED, now
    submission._state.adding = False
    return submission, [*earlier, submission] if complete else None


def submissions_of(item: Item) -> list[Submission]:
    """The item's submissions that count (not set aside, not superseded by a correction),
    in the order they came in."""
    with sql.db().cursor() as cursor:
        sql.execute(cursor, f"SELECT {sql.columns(Submission)} FROM annotation_submission"
                    " WHERE item_id = %s AND NOT set_aside AND superseded_by_id IS NULL"
                    " ORDER BY id", [item.pk])
        return sql.rows_load(Submission, cursor.fetchall())


def stage_after(stage: Stage, kind: str) -> Stage | None:
    """The first stage of ``kind`` after ``stage`` in its project."""
    with sql.db().cursor() as cursor:
        sql.execute(cursor, f"SELECT {sql.columns(Stage)} FROM annotation_stage"
                    ' WHERE project_id = %s AND "order" > %s AND kind = %s'
                    ' ORDER BY "order" LIMIT 1', [stage.project_id, stage.order, kind])
        rows = cursor.fetchall()
    return sql.rows_load(Stage, rows)[0] if rows else None


def _item_row(item: Item, *, but: str = "") -> tuple[str, list[Any]]:
    """The quoted columns of an unsaved item (all but its pk and ``but``) and its values."""
    conn = sql.db()
    pairs = [sql.db_value(Item, f.attname, getattr(item, f.attname), conn)
             for f in Item._meta.concrete_fields if not f.primary_key and f.attname != but]
    return ", ".join(column for column, _ in pairs), [value for _, value in pairs]


def item_insert(item: Item) -> bool:
    """Insert ``item`` unless its stage already has an item with its key (emitting is
    idempotent); sets its pk and returns True when it is new."""
    columns, values = _item_row(item)
    with sql.db().cursor() as cursor:
        sql.execute(
            cursor,
            f"INSERT INTO annotation_item ({columns}) VALUES ({sql.placeholders(values)})"
            " ON CONFLICT (stage_id, key) DO NOTHING RETURNING id",
            values,
        )
        row = cursor.fetchone()
    if row is None:
        return False
    item.pk = row[0]
    item._state.adding = False
    return True


def item_done_and_emit(
    *, item: Item, fields: dict[str, Any], emitted: Sequence[tuple[str, Item]],
    actor: Any = None,
) -> list[tuple[int | None, bool]]:
    """PostgreSQL only: move ``item`` to done (setting ``fields``, logged) and insert the
    emitted items, each into the first stage of its kind after the item's stage
    (idempotent by stage and key, as ``item_insert``), in one statement.

    ``emitted``: (kind, unsaved item without a stage). Returns (target stage id, whether
    the item is new) for each; new items get their pk and stage. When a kind has no such
    stage its target is None and nothing is written; when the item is no longer in its
    status, TransitionError.
    """
    targets, inserts, target_params, insert_params = [], [], [], []
    for n, (kind, new) in enumerate(emitted):
        targets.append(f't{n} AS (SELECT id FROM annotation_stage WHERE project_id = %s'
                       f' AND "order" > %s AND kind = %s ORDER BY "order" LIMIT 1)')
        target_params += [item.stage.project_id, item.stage.order, kind]
        columns, values = _item_row(new, but="stage_id")
        inserts.append(
            f"i{n} AS (INSERT INTO annotation_item ({columns}, stage_id)"
            f" SELECT {sql.placeholders(values)}, t{n}.id FROM t{n}"
            " WHERE EXISTS (SELECT 1 FROM moved)"
            " ON CONFLICT (stage_id, key) DO NOTHING RETURNING id)")
        insert_params += values
    every_target = "".join(f" AND EXISTS (SELECT 1 FROM t{n})" for n in range(len(emitted)))
    prefix, params = transition_cte(
        Item, Item.Status.DONE, source=item.status, where=f"id = %s{every_target}",
        params=[item.pk], actor=actor, fields=fields,
        before=(", ".join(targets), target_params),
    )
    picks = "".join(f", (SELECT id FROM t{n}), (SELECT id FROM i{n})"
                    for n in range(len(emitted)))
    with sql.db().cursor() as cursor:
        sql.execute(cursor, f"{prefix}{''.join(', ' + each for each in inserts)}"
                    f" SELECT (SELECT moved_id FROM moved){picks}", [*params, *insert_params])
        moved, *found = cursor.fetchone()
    outcome = []
    for n, (_, new) in enumerate(emitted):
        target_id, new_id = found[2 * n], found[2 * n + 1]
        if new_id is not None:
            new.pk, new.stage_id = new_id, target_id
            new._state.adding = False
        outcome.append((target_id, new_id is not None))
    if moved is None and all(target_id is not None for target_id, _ in outcome):
        raise TransitionError(f"Item {item.pk}: expected status {item.status}; another "
                              "process changed it first")
    return outcome


def stage_run_wanted(stage_id: int) -> bool:
    """Whether an automatic stage needs a run: it has pending items and no run of it is
    queued yet (a queued run will see them all when it starts)."""
    conn = sql.db()
    if conn.vendor == "postgresql":
        same_stage, key = "j.params @> %s::jsonb", json.dumps({"stage_id": stage_id})
    else:
        same_stage, key = "json_extract(j.params, '$.stage_id') = %s", stage_id
    with conn.cursor() as cursor:
        sql.execute(
            cursor,
            "SELECT CASE WHEN EXISTS (SELECT 1 FROM annotation_item i WHERE i.stage_id = %s"
            " AND i.status = 'pending') AND NOT EXISTS (SELECT 1 FROM collector_job j"
            f" WHERE j.kind = 'stage_run' AND j.status = 'queued' AND {same_stage})"
            " THEN 1 ELSE 0 END",
            [stage_id, key],
        )
        return bool(cursor.fetchone()[0])
