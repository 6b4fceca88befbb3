"""Who may claim what: one set of rules, the SQL the claim statements are built from.

A worker may take an open slot of a stage when

- they are a member of the stage's project in the role that works the stage's kind, and
  that membership is active (not paused or blocked);
- the project is active;
- the stage's ``max_items_per_worker`` (0: none) is not reached: their live and submitted
  slots of the stage, counted in ``ProjectMember.stage_taken``;
- their marketplace session's quota (tasks per session) is not reached:
  ``ProjectMember.session_taken`` against ``session_limit``;
- the slot is one of the pool (or reserved for them in a batched stage), of an item they
  neither hold nor did, and not of an item they are excluded from (the questioner of the
  article ...).

``stages_sql`` and ``candidates_sql`` are the SELECTs of the stages a worker may work and
of the slots they may take; ``counted_cte`` (PostgreSQL, inside the one-statement claim)
and ``count_claim`` (the claims of more, simpler statements) raise the counters in one
conditional UPDATE of the membership row. Concurrent claims of one worker meet on that
row: the second waits for the first and PostgreSQL re-checks the condition on the row as
the first left it, so no limit is ever passed. ``count_return`` gives a count back when a
slot is released or its lease expires.

The engine (``annotation.engine``) and the slot statements (``annotation.slots``) call this
module; it calls neither of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from annotation import sql


class QueueStage(NamedTuple):
    """A stage a worker may work now, and the limits their claims there count against."""

    id: int
    kind: str
    member_id: int
    item_limit: int | None  # the stage's max_items_per_worker, None when unlimited
    session_limited: bool  # their membership counts tasks against a session quota
    gold_rate: float = 0.0  # share of claims that get a gold check item

    @property
    def counted(self) -> bool:
        return self.item_limit is not None or bool(self.session_limited)


def _pg() -> bool:
    return sql.db().vendor == "postgresql"


def _limit(stage: str) -> str:
    """SQL: the stage's per-worker limit (NULL when none); ``stage`` its table alias."""
    if _pg():
        return f"NULLIF(({stage}.params->>'max_items_per_worker')::int, 0)"
    return (f"NULLIF(CAST(json_extract({stage}.params, '$.max_items_per_worker')"
            " AS INTEGER), 0)")


def _param(stage: str, name: str, cast: str) -> str:
    """SQL: a stage parameter as ``cast`` (int or float), NULL when missing."""
    if _pg():
        return f"(({stage}.params->>'{name}')::{'int' if cast == 'int' else 'float8'})"
    return (f"CAST(json_extract({stage}.params, '$.{name}') AS "
            f"{'INTEGER' if cast == 'int' else 'REAL'})")


def _taken(member: str, stage_id: str) -> str:
    """SQL: the member's count on the stage whose id is ``stage_id`` (SQL)."""
    if _pg():
        return f"COALESCE(({member}.stage_taken->>({stage_id})::text)::int, 0)"
    return f"COALESCE(json_extract({member}.stage_taken, '$.\"' || ({stage_id}) || '\"'), 0)"


def _taken_set(member: str, stage_id: str, value: str) -> str:
    """SQL: the member's ``stage_taken`` with the stage's count set to ``value`` (SQL)."""
    if _pg():
        return (f"jsonb_set({member}.stage_taken, ARRAY[({stage_id})::text],"
                f" to_jsonb({value}))")
    return f"json_set({member}.stage_taken, '$.\"' || ({stage_id}) || '\"', {value})"


def stage_rules() -> list[tuple[str, str]]:
    """The rules of ``stages_sql`` by name, each an SQL condition over the stage ``s``, its
    project ``p`` and the worker's membership ``m``: the stages a worker may work are those
    where every rule holds (``availability_sql`` reads each one to say which failed)."""
    limit = _limit("s")
    qualification = _param("s", "qualification_items", "int")
    # PostgreSQL: ``OFFSET 0`` keeps each standing lookup a probe of the (member, stage)
    # index (a generic plan otherwise hashed every qualified standing of every project).
    fence = " OFFSET 0" if _pg() else ""
    return [
        ("project_active", "p.status = 'active'"),
        ("member_active", "m.status = 'active'"),
        ("under_limit", f"({limit} IS NULL OR {_taken('m', 's.id')} < {limit})"),
        ("session_left", "(m.session_limit IS NULL OR m.session_taken < m.session_limit)"),
        # Not paused or blocked on this stage ...
        ("not_paused", "NOT EXISTS (SELECT 1 FROM annotation_workerstage ws"
         " WHERE ws.member_id = m.id"
         f" AND ws.stage_id = s.id AND ws.status <> 'active'{fence})"),
        # ... and qualified where the stage asks for it.
        ("qualified", f"(COALESCE({qualification}, 0) = 0 OR EXISTS (SELECT 1 FROM"
         " annotation_workerstage wq WHERE wq.member_id = m.id AND wq.stage_id = s.id"
         f" AND wq.qualified{fence}))"),
    ]


def stages_sql(
    *, worker_id: int, kinds_by_role: dict[str, Sequence[str]], project_id: int | None
) -> tuple[str, list[Any]] | None:
    """SELECT id, kind, order, member_id, item_limit, session_limited of the stages of
    active projects the worker may work now; None when no role has kinds."""
    allowed, params = [], []
    for role, kinds in kinds_by_role.items():
        if kinds:
            allowed.append(f"(s.kind IN ({sql.placeholders(kinds)}) AND m.role = %s)")
            params += [*kinds, role]
    if not allowed:
        return None
    rules = dict(stage_rules())
    text = (
        f'SELECT s.id, s.kind, s."order", m.id AS member_id, {_limit("s")} AS item_limit,'
        " m.session_limit IS NOT NULL AS session_limited,"
        f" COALESCE({_param('s', 'gold_rate', 'float')}, 0) AS gold_rate"
        " FROM annotation_stage s JOIN annotation_project p ON p.id = s.project_id"
        " JOIN annotation_projectmember m ON m.project_id = s.project_id AND m.user_id = %s"
        f" WHERE {rules['project_active']} AND {rules['member_active']}"
        f" AND ({' OR '.join(allowed)})"
        f" AND {rules['under_limit']} AND {rules['session_left']}"
        f" AND {rules['not_paused']} AND {rules['qualified']}"
    )
    params = [worker_id, *params]
    if project_id is not None:
        text += " AND s.project_id = %s"
        params.append(project_id)
    return text, params


def queue_stage(row: Sequence[Any]) -> QueueStage:
    """A ``QueueStage`` from a row of ``stages_sql`` less its order column."""
    pk, kind, member_id, item_limit, session_limited, gold_rate = row
    return QueueStage(pk, kind, member_id, item_limit, bool(session_limited),
                      float(gold_rate or 0))


#: The priority of gold check items and their slots: below any work, so that the pool's
#: index keeps them apart (work is ``priority > GOLD_PRIORITY``, gold ``= GOLD_PRIORITY``).
GOLD_PRIORITY = -2_000_000_000


def pool_rules() -> list[tuple[str, str]]:
    """The rules of a pool slot (``a``) by name, each an SQL condition with one parameter,
    the worker's id: ``candidates_sql`` takes a slot where every rule holds
    (``availability_sql`` counts the slots each one keeps from the worker).

    PostgreSQL: ``OFFSET 0`` keeps each NOT EXISTS a probe of one index per candidate
    slot. Without it they become anti joins that read the worker's whole history and
    compare every candidate with every row of it, quadratic in the history (a worker
    with 4,700 slots behind them waited 1 s per claim instead of 10 ms). SQLite
    probes the index anyway (and wants a LIMIT before an OFFSET)."""
    fence = " OFFSET 0" if _pg() else ""
    return [
        ("not_held_or_done", "NOT EXISTS (SELECT 1 FROM annotation_assignment b"
         f" WHERE b.item_id = a.item_id AND b.worker_id = %s{fence})"),
        ("not_excluded", "NOT EXISTS (SELECT 1 FROM annotation_itemexclusion e"
         f" WHERE e.item_id = a.item_id AND e.user_id = %s{fence})"),
    ]


def candidates_sql(*, worker_id: int, stage: str = "%s", reserved: bool = False,
                   gold: bool | None = False, extra: str = "",
                   columns: str = "a.id") -> tuple[str, list[Any]]:
    """The SELECT of the open slots of a stage this worker may take, first to take first
    (without a row lock), and its parameters after the stage's. ``stage``: the SQL the
    stage id is read from (a placeholder by default). Pool slots: never one of an item the
    worker holds or did, never one of an item they are excluded from; work slots, or with
    ``gold`` gold check slots (None: either). Batch slots (``reserved``): only those
    reserved for the worker. ``extra``: one more SQL condition (its parameters last).
    ``columns``: what to select of each slot ``a``."""
    if reserved:
        condition, params = "a.reserved_for_id = %s", [worker_id]
    else:
        condition = "a.reserved_for_id IS NULL" + "".join(
            f" AND {rule}" for _, rule in pool_rules())
        params = [worker_id, worker_id]
        if gold is not None:
            condition += f" AND a.priority {'=' if gold else '>'} {GOLD_PRIORITY}"
    return (f"SELECT {columns} FROM annotation_assignment a"
            f" WHERE a.stage_id = {stage} AND a.status = 'open' AND {condition}{extra}"
            " ORDER BY a.priority, a.item_id, a.id"), params


def pick_sql(*, worker_id: int, stage: str, roll: float, lock: str
             ) -> tuple[str, list[Any]]:
    """One row whose ``id`` is the first slot of a stage (``stage``: SQL of a ``stages_sql``
    row's alias) the worker may take, NULL when none: a gold check when ``roll`` (uniform
    in [0, 1)) falls under the stage's ``gold_rate``, one is open for them and so is work
    (gold is mixed into work: a stage with nothing else for them would give it away),
    else work. ``lock``: the row-lock clause. (Row locks are not allowed under UNION: the
    two probes are lateral joins, the second skipped when the first found nothing.)"""
    work, work_params = candidates_sql(worker_id=worker_id, stage=f"{stage}.id")
    gold, gold_params = candidates_sql(worker_id=worker_id, stage=f"{stage}.id", gold=True,
                                       extra=f" AND w.id IS NOT NULL AND %s < {stage}.gold_rate")
    return (f"SELECT COALESCE(g.id, w.id) AS id FROM (SELECT 1) one"
            f" LEFT JOIN LATERAL ({work} LIMIT 1{lock}) w ON true"
            f" LEFT JOIN LATERAL ({gold} LIMIT 1{lock}) g ON true",
            [*work_params, *gold_params, roll])


def _count_update(source: str) -> str:
    """UPDATE of the membership row that counts one claim; ``source`` is SQL giving
    ``member_id``, ``stage_id``, ``item_limit`` and ``session_limited`` (aliased ``q``)."""
    taken = _taken("m", "q.stage_id")
    true = "true" if _pg() else "1"
    return (
        "UPDATE annotation_projectmember AS m SET stage_taken = CASE WHEN q.item_limit IS NULL"
        f" THEN m.stage_taken ELSE {_taken_set('m', 'q.stage_id', taken + ' + 1')} END,"
        f" session_taken = m.session_taken + CASE WHEN q.session_limited = {true} THEN 1"
        f" ELSE 0 END FROM {source} q WHERE m.id = q.member_id"
        f" AND (q.item_limit IS NOT NULL OR q.session_limited = {true})"
        f" AND (q.item_limit IS NULL OR {taken} < q.item_limit)"
        f" AND (q.session_limited <> {true} OR m.session_limit IS NULL"
        " OR m.session_taken < m.session_limit)"
    )


def counted_cte(pick: str = "pick") -> str:
    """PostgreSQL: the ``counted AS (…)`` CTE that counts the claim of the slot in ``pick``
    (which carries the ``QueueStage`` columns); it returns a row only when the claim
    counts and fits. ``counted_guard`` is the condition the move adds."""
    return f"counted AS ({_count_update(pick)} RETURNING m.id)"


def counted_guard(pick: str = "pick") -> str:
    """SQL condition: the claim in ``pick`` counts against no limit, or ``counted`` took it."""
    return (f"(EXISTS (SELECT 1 FROM counted) OR NOT EXISTS (SELECT 1 FROM {pick}"
            " WHERE item_limit IS NOT NULL OR session_limited))")


def count_claim(stage: QueueStage) -> bool:
    """Count one claim of ``stage`` on the membership row when it fits its limits (call in
    the claim's transaction, before the claim; roll back when nothing is claimed)."""
    if not stage.counted:
        return True
    source = ("(SELECT %s AS member_id, %s AS stage_id, CAST(%s AS INTEGER) AS item_limit,"
              f" {'CAST(%s AS boolean)' if _pg() else '%s'} AS session_limited)")
    with sql.db().cursor() as cursor:
        sql.execute(cursor, _count_update(source) + " RETURNING id",
                    [stage.member_id, stage.id, stage.item_limit, stage.session_limited])
        return cursor.fetchone() is not None


def stage_limit(params: dict[str, Any]) -> int | None:
    """A stage's per-worker limit from its parameters (None when unlimited)."""
    return params.get("max_items_per_worker") or None


def count_return(*, project_id: int, worker_id: int, role: str, stage_id: int,
                 item_limit: int | None, claimed_at: datetime | None) -> None:
    """A slot the worker claimed went back to the pool (released, lease expired): its
    claim no longer counts against the stage's limit, nor against the session it was
    claimed in."""
    conn = sql.db()
    stage = str(stage_id)
    decrement = (f"GREATEST({_taken('m', '%s')} - 1, 0)" if _pg()
                 else f"MAX({_taken('m', '%s')} - 1, 0)")
    stage_set = _taken_set("m", "%s", decrement)
    at = conn.ops.adapt_datetimefield_value(claimed_at)
    with conn.cursor() as cursor:
        sql.execute(
            cursor,
            "UPDATE annotation_projectmember AS m SET stage_taken = CASE WHEN %s"
            f" THEN {stage_set} ELSE m.stage_taken END,"
            " session_taken = CASE WHEN m.session_limit IS NOT NULL AND m.session_taken > 0"
            " AND m.session_started_at <= %s THEN m.session_taken - 1"
            " ELSE m.session_taken END"
            " WHERE m.project_id = %s AND m.user_id = %s AND m.role = %s",
            [item_limit is not None, stage, stage, at, project_id, worker_id, role],
        )


#: Items counted per stage in ``availability_sql`` (beyond it, the count shows "cap+").
AVAILABLE_CAP = 100


def availability_sql(
    *, worker_id: int, role: str, kinds: Sequence[str], batched_kinds: Sequence[str] = (),
    project_id: int | None = None, cap: int = AVAILABLE_CAP,
) -> tuple[str, list[Any]] | None:
    """Read-only: per stage of ``kinds`` in the projects where the worker is a ``role``
    member, what they may take and, when nothing, which rule keeps them out. One query.

    Columns: stage id, project id, order, name, kind, project status, membership status,
    then each rule of ``stage_rules`` after the first two (true when it holds), then the
    items this worker may take a slot of by ``candidates_sql`` (pool slots, or in a batched
    stage their batch's slots and the slots of batches nobody took yet) and the items with
    open work slots, both counted among the first ``10 * (cap + 1)`` slots (more than
    ``cap``: show "cap+"). The worker may take the slots of
    the first count only where every rule holds. Last, whether other workers hold live
    slots of the stage, and whether earlier stages have unfinished items. None when
    ``kinds`` is empty."""
    if not kinds:
        return None
    rules = stage_rules()[2:]
    # A worker takes one slot per item: items are counted, among the first slots.
    limit = f" LIMIT {(int(cap) + 1) * 10}"
    pool, pool_params = candidates_sql(worker_id=worker_id, stage="s.id",
                                       columns="a.item_id")
    mine, mine_params = candidates_sql(worker_id=worker_id, stage="s.id", reserved=True,
                                       columns="a.item_id")
    work = (f"SELECT a.item_id FROM annotation_assignment a WHERE a.stage_id = s.id"
            f" AND a.status = 'open' AND a.priority > {GOLD_PRIORITY}")

    def items(select: str) -> str:
        return f"(SELECT COUNT(DISTINCT c.item_id) FROM ({select}{limit}) c)"

    takeable, take_params = items(pool), pool_params
    if batched_kinds:
        unclaimed = (f"{work} AND a.reserved_for_id IS NULL AND EXISTS (SELECT 1 FROM"
                     " annotation_item i JOIN annotation_batch bt ON bt.id = i.batch_id"
                     " WHERE i.id = a.item_id AND bt.status = 'open')")
        takeable = (f"CASE WHEN s.kind IN ({sql.placeholders(batched_kinds)}) THEN"
                    f" {items(mine)} + {items(unclaimed)} ELSE {takeable} END")
        take_params = [*batched_kinds, *mine_params, *pool_params]
    text = (
        'SELECT s.id, s.project_id, s."order", s.name, s.kind, p.status, m.status, '
        + ", ".join(f"CASE WHEN {rule} THEN 1 ELSE 0 END" for _, rule in rules)
        + f", {takeable}, {items(work)},"
        # Who holds the rest: other workers' live slots, and earlier stages' unfinished
        # items that will reach this stage.
        " CASE WHEN EXISTS (SELECT 1 FROM annotation_assignment o WHERE o.stage_id = s.id"
        " AND o.status = 'active' AND o.worker_id <> m.user_id) THEN 1 ELSE 0 END,"
        " CASE WHEN EXISTS (SELECT 1 FROM annotation_stage e JOIN annotation_item i"
        ' ON i.stage_id = e.id WHERE e.project_id = s.project_id AND e."order" < s."order"'
        " AND i.status IN ('pending', 'open', 'review') AND i.gold = '') THEN 1 ELSE 0 END"
        " FROM annotation_stage s JOIN annotation_project p ON p.id = s.project_id"
        " JOIN annotation_projectmember m ON m.project_id = s.project_id AND m.user_id = %s"
        f" AND m.role = %s WHERE s.kind IN ({sql.placeholders(kinds)})"
    )
    params = [*take_params, worker_id, role, *kinds]
    if project_id is not None:
        text += " AND s.project_id = %s"
        params.append(project_id)
    return text + ' ORDER BY s.project_id, s."order"', params


def pool_blocked_sql(*, worker_id: int, stage_id: int) -> tuple[str, list[Any]]:
    """Read-only: the open work slots of a stage's pool, and how many each rule of
    ``pool_rules`` keeps from the worker (one row: total, then one count per rule)."""
    counts = ", ".join(f"COALESCE(SUM(CASE WHEN {rule} THEN 0 ELSE 1 END), 0)"
                       for _, rule in pool_rules())
    return (f"SELECT COUNT(*), {counts} FROM annotation_assignment a WHERE a.stage_id = %s"
            " AND a.status = 'open' AND a.reserved_for_id IS NULL"
            f" AND a.priority > {GOLD_PRIORITY}",
            [*(worker_id for _ in pool_rules()), stage_id])
