"""The pipeline engine's writes: projects from recipes, emitting items, claiming, submitting,
releasing and expiring tasks, and running automatic stages as jobs.

Locks are short and taken inside short atomic blocks: a claim locks one open slot (skipping
locked ones) in a statement that commits on its own; a submit locks the slot and its item
together in one statement; nothing locks a slot and then its item in two steps. Jobs and
follow-up work are enqueued on commit. The hot statements live in ``annotation.slots``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from annotation import eligibility, quality, slots, sql
from annotation.batches import (
    batches_fill,
    batches_flush_ready,
    batches_put_back_for,
    claim_in_batched_stage,
    inspections_put_back_for,
    item_work_in,
)
from annotation.eligibility import QueueStage
from annotation.models import (
    Assignment,
    Batch,
    Item,
    ItemExclusion,
    Project,
    ProjectMember,
    Stage,
    Submission,
    WorkerStage,
)
from annotation.roles import Role
from annotation.stages import Emit, run_texts, stage_kind, stage_kinds
from annotation.workflow import (
    project_complete_if_done,
    project_reopen_if_pending,
    transition,
)
from collector.jobs import JobError, Progress, job_create, job_handler
from collector.models import Job

AS, IS = Assignment.Status, Item.Status


class TaskError(Exception):
    """A task request that cannot be honoured (not yours, expired, already submitted)."""


class TaskNotFound(TaskError):
    """No task has that id."""


class TaskNotYours(TaskError):
    """The task is another worker's."""


def lease_duration() -> timedelta:
    return timedelta(minutes=getattr(settings, "CROWDQA_LEASE_MINUTES", 30))


def active_time_clean(value: Any, *, held_s: float) -> float | None:
    """The active time a task page measured (seconds with the page in view), as the worker's
    browser sent it: a number of seconds, finite and not negative, else a ValidationError
    naming the field. Hourly pay is paid on it, so it is cut to ``held_s``, the time the
    worker held the task by the server's clock: the page counts from its load, after the
    claim, so an honest page never measures more. None (or "") when it measured nothing."""
    if value is None or value == "":
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ValidationError(gettext("active_time_s: %(value)s is not a number of seconds")
                              % {"value": repr(str(value)[:40])}) from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ValidationError(gettext("active_time_s: %(value)s is not a time: it must be a "
                                      "finite number of seconds, 0 or more")
                              % {"value": str(value)[:40]})
    return min(seconds, max(held_s, 0.0))


# Projects ------------------------------------------------------------------------------

@transaction.atomic
def project_create(
    *,
    name: str,
    recipe: str,
    corpus: Any = None,
    language: str = "en",
    description: str = "",
    params: dict[int, dict[str, Any]] | None = None,
    user: Any = None,
) -> Project:
    """Create a draft project with the recipe's stages; ``params`` overrides by stage order."""
    from annotation.recipes import recipe_stages

    project = Project.objects.create(
        name=name, recipe=recipe, corpus=corpus, language=language, description=description,
        created_by=user if getattr(user, "pk", None) else None,
    )
    overrides = params or {}
    for order, spec in enumerate(recipe_stages(recipe), start=1):
        kind = stage_kind(spec.kind)
        try:
            cleaned = kind.clean_params({**spec.params, **overrides.get(order, {})})
        except ValidationError as exc:
            raise ValidationError(gettext("stage %(order)s (%(name)s): %(detail)s")
                                  % {"order": order, "name": spec.name,
                                     "detail": exc.messages[0]}) from exc
        Stage.objects.create(
            project=project, order=order, kind=spec.kind, name=spec.name, params=cleaned,
            guidelines=spec.guidelines, guidelines_zh_hans=spec.guidelines_zh_hans,
        )
    return project


@transaction.atomic
def stage_params_update(*, stage: Stage, params: dict[str, Any]) -> Stage:
    """Change a stage's parameters; only before the project starts."""
    if stage.project.status != Project.Status.DRAFT:
        raise ValidationError(gettext("parameters can only change before the project starts"))
    stage.params = stage.kind_spec.clean_params({**stage.params, **params})
    stage.save(update_fields=["params"])
    return stage


def project_member_add(*, project: Project, user: Any, role: Role) -> ProjectMember:
    member, _ = ProjectMember.objects.get_or_create(project=project, user=user, role=role.value)
    return member


@transaction.atomic
def project_start(*, project: Project, actor: Any = None) -> Project:
    """Activate the project and run its first stage (automatic) or open it (human); refused
    (ValidationError) when the first stage's kind says it has nothing to start with."""
    first = project.stages.order_by("order").first()
    refusal = first.kind_spec.start_refusal(first) if first is not None else None
    if refusal:
        raise ValidationError(refusal)
    transition(project, Project.Status.ACTIVE, actor=actor)
    if first is not None and first.kind_spec.automatic:
        stage_run_enqueue(stage=first, user=actor)
    return project


def stage_run_enqueue(*, stage: Stage, user: Any = None) -> Job:
    """Run an automatic stage as a job."""
    return job_create(kind="stage_run", params={"stage_id": stage.pk}, user=user)


def _stage_run_when_wanted(stage_id: int) -> None:
    """After a commit that emitted items to an automatic stage: run it, unless a run is
    queued already (it will see them all when it starts) or nothing is pending (an earlier
    run of the same commit took it all)."""
    if slots.stage_run_wanted(stage_id):
        job_create(kind="stage_run", params={"stage_id": stage_id})


def stage_job_subject(job: Job) -> list[tuple[str, str, str]]:
    """The project and stage a stage run works on, for its page."""
    from django.urls import reverse

    stage = Stage.objects.select_related("project").filter(pk=job.params.get("stage_id")).first()
    if stage is None:
        gone = gettext("#%(id)s (deleted)") % {"id": job.params.get("stage_id")}
        return [(gettext("Stage"), gone, "")]
    return [(gettext("Project"), stage.project.name,
             reverse("annotation:project_detail", args=[stage.project_id])),
            (gettext("Stage"), f"{stage.order}. {stage.display_name} ({stage.kind_spec.label})",
             "")]


def stage_job_summary(job: Job) -> list[str]:
    """What a stage run did, in words: received, passed on, dropped with the reasons, its
    notes, then the kind's own figures."""
    from collector.jobs import result_in_words

    result = dict(job.result)
    dropped_shown, notes = run_texts(result)
    result.pop("texts", None)
    lines = []
    if result.get("received") is not None:
        lines.append(gettext("Received %(received)s, passed on %(passed)s.") % {
            "received": f"{result.pop('received'):,}", "passed": f"{result.pop('passed', 0):,}"})
    dropped = result.pop("dropped", None)
    if isinstance(dropped, dict):
        lines += [gettext("Dropped %(count)s: %(reason)s.") % {"count": f"{n:,}", "reason": reason}
                  for reason, n in dropped_shown]
    elif dropped is not None:
        result["dropped"] = dropped
    result.pop("notes", None)
    lines += [gettext("%(note)s.") % {"note": f"{note[0].upper()}{note[1:]}"}
              for note in notes if note]
    return lines + result_in_words(result)


@job_handler("stage_run", rerun_when_lost=True, subject=stage_job_subject,
             summary=stage_job_summary, label=gettext_lazy("Stage run"))
def stage_run_job(job: Job, progress: Progress) -> dict[str, Any]:
    """Run an automatic stage over its pending items (idempotent; safe to re-deliver)."""
    stage = Stage.objects.select_related("project").filter(pk=job.params["stage_id"]).first()
    if stage is None:
        raise JobError(f"stage {job.params['stage_id']} no longer exists")
    if not stage.kind_spec.automatic:
        raise JobError(f"stage {stage} is worked by people, not run as a job")
    result = stage.kind_spec.run(stage, progress)
    project_reopen_if_pending(project_id=stage.project_id)  # a run that found new work
    batches = batches_flush_ready(project_id=stage.project_id)
    return {**result, **({"batches": batches} if batches else {})}


# Emitting items ------------------------------------------------------------------------

def _no_target(source_stage: Stage, kind: str) -> ValidationError:
    return ValidationError(f"project {source_stage.project} has no stage of kind {kind!r} "
                           f"after stage {source_stage.order}")


def _target_stage(source_stage: Stage, kind: str) -> Stage:
    target = slots.stage_after(source_stage, kind)
    if target is None:
        raise _no_target(source_stage, kind)
    return target


def _emitted_item(emit: Emit, *, project_id: int, parent: Item | None, now: Any,
                  target: Stage | None = None) -> Item:
    """The unsaved item ``emit`` asks for (its stage set later when ``target`` is None)."""
    spec = stage_kind(emit.kind)
    return Item(
        project_id=project_id, stage=target, key=emit.key, data=emit.data, parent=parent,
        document_id=emit.document_id, split=emit.split,
        overlap=emit.overlap or (spec.overlap(target) if target is not None
                                 else spec.fixed_overlap()),
        status=IS.PENDING if spec.automatic else IS.OPEN, created_at=now,
    )


def _emitted_follow_up(new: list[tuple[Emit, Item]], targets: dict[int, Stage]) -> None:
    """What new emitted items need: their exclusions, slots in human stages (batches in
    batched ones), a run of automatic stages once the transaction commits."""
    to_run: set[int] = set()
    batched: set[int] = set()
    for emit, item in new:
        spec = stage_kind(emit.kind)
        if emit.exclude_user_ids:
            ItemExclusion.objects.bulk_create(
                [ItemExclusion(item=item, user_id=uid, reason=emit.exclusion_reason)
                 for uid in sorted(set(emit.exclude_user_ids))],
                ignore_conflicts=True,
            )
        if spec.automatic:
            to_run.add(item.stage_id)
        else:
            slots_add(item=item, n=item.overlap)
            if spec.batched:
                batched.add(item.stage_id)
    for stage_id in sorted(batched):
        batches_fill(stage=targets[stage_id])
    for stage_id in sorted(to_run):
        transaction.on_commit(lambda s=stage_id: _stage_run_when_wanted(s))


def _targets(source_stage: Stage, emits: list[Emit]) -> dict[str, Stage]:
    """The stage each emitted kind goes to; ValidationError when the project has none."""
    kinds = dict.fromkeys(emit.kind for emit in emits)
    return {kind: _target_stage(source_stage, kind) for kind in kinds}


def items_emit(*, source_stage: Stage, emits: list[Emit], parent: Item | None = None) -> int:
    """Create the emitted items (idempotent by stage + key). Returns how many are new.

    Human targets open with ``overlap`` slots; automatic targets get a job on commit.
    """
    new = _items_emit(source_stage, emits, parent, _targets(source_stage, emits))
    if new:
        project_reopen_if_pending(project_id=source_stage.project_id)
    return new


def _items_emit(source_stage: Stage, emits: list[Emit], parent: Item | None,
                targets: dict[str, Stage]) -> int:
    now = timezone.now()
    new = []
    for emit in emits:
        item = _emitted_item(emit, project_id=source_stage.project_id, parent=parent, now=now,
                             target=targets[emit.kind])
        if slots.item_insert(item):
            new.append((emit, item))
    _emitted_follow_up(new, {target.pk: target for target in targets.values()})
    return len(new)


def slots_add(*, item: Item, n: int, reserved_for: Any = None, round_no: int = 1) -> None:
    Assignment.objects.bulk_create([
        Assignment(item=item, stage_id=item.stage_id, priority=item.priority,
                   reserved_for=reserved_for, round=round_no)
        for _ in range(n)
    ])


def _target_free(emit: Emit) -> bool:
    """Whether the item ``emit`` asks for can be built without reading its target stage:
    its overlap is given or fixed by its kind (batches are filled from the stage)."""
    spec = stage_kind(emit.kind)
    return bool(emit.overlap or spec.fixed_overlap()) and not spec.batched


def item_finish(*, item: Item, emits: list[Emit], result: dict | None = None) -> None:
    """Mark ``item`` done (recording ``result``) and emit its successors.

    On PostgreSQL, when no emitted item needs its target stage's parameters, the move, its
    log row, the targets' lookup and the emitted items are one statement.
    """
    fields: dict[str, Any] = {"finished_at": timezone.now()}
    if result is not None:
        fields["result"] = result
    if not emits:
        # An end of the pipeline: after the commit, the project completes when nothing
        # is pending any more.
        transaction.on_commit(
            lambda project_id=item.project_id: project_complete_if_done(project_id=project_id))
    if sql.db().vendor != "postgresql" or not all(_target_free(emit) for emit in emits):
        targets = _targets(item.stage, emits)  # a missing stage refused before any write
        transition(item, IS.DONE, **fields)
        _items_emit(item.stage, emits, item, targets)
        return
    now = fields["finished_at"]
    built = [(emit, _emitted_item(emit, project_id=item.project_id, parent=item, now=now))
             for emit in emits]
    outcome = slots.item_done_and_emit(item=item, fields=fields,
                                       emitted=[(emit.kind, new) for emit, new in built])
    for (emit, _), (target_id, _) in zip(built, outcome, strict=True):
        if target_id is None:
            raise _no_target(item.stage, emit.kind)
    item.status = IS.DONE
    for name, value in fields.items():
        setattr(item, name, value)
    _emitted_follow_up([each for each, (_, is_new) in zip(built, outcome, strict=True)
                        if is_new], {})


# Claiming and working tasks ----------------------------------------------------------------

def _batched_kinds() -> list[str]:
    from annotation.stages import stage_kinds

    return [key for key, kind in stage_kinds().items() if kind.batched]


def _role_kinds(role: Role) -> list[str]:
    """Human stage kinds worked by ``role`` (the kind's ``role``)."""
    from annotation.stages import stage_kinds

    return [key for key, kind in stage_kinds().items()
            if not kind.automatic and kind.role == role]


def worker_queue(
    *, worker: Any, project: Project | None = None, role: Role | None = None,
    now: Any = None,
) -> tuple[int | None, list[QueueStage]]:
    """The human stages of active projects the worker may work now, latest stage first:
    stages of annotator kinds where they are an annotator member, of checker
    kinds where they are a checker member (only ``role``'s when given). With ``now``, also
    the id of their live slot (None when they hold none)."""
    return slots.worker_queue(worker=worker, now=now, **_queue_scope(project, role))


def _queue_scope(project: Project | None, role: Role | None) -> dict[str, Any]:
    """What a worker's queue covers: the human kinds of each role (only ``role``'s when
    given), the project (all when None), the kinds of a live slot that counts."""
    roles = [role] if role else [Role.ANNOTATOR, Role.CHECKER]
    return {
        "kinds_by_role": {each.value: _role_kinds(each) for each in roles},
        "project_id": project.pk if project is not None else None,
        "live_kinds": _role_kinds(role) if role is not None else None,
    }


def work_waiting(*, worker: Any, project: Project | None = None,
                 role: Role = Role.ANNOTATOR) -> bool:
    """Whether a claim now could give the worker a task of ``role``'s kinds (read-only)."""
    scope = _queue_scope(project, role)
    return slots.work_waiting(worker=worker, kinds_by_role=scope["kinds_by_role"],
                              project_id=scope["project_id"], batched_kinds=_batched_kinds())


def task_current(
    *, worker: Any, project: Project | None = None, role: Role | None = None
) -> Assignment | None:
    """The worker's live assignment (lease not expired), if any; of ``role``'s kinds when
    given."""
    return slots.slot_live(
        worker=worker, now=timezone.now(),
        project_id=project.pk if project is not None else None,
        kinds=_role_kinds(role) if role is not None else None,
    )


def task_claim(
    *, worker: Any, project: Project | None = None, role: Role | None = None,
    related: bool = False,
) -> Assignment | None:
    """Give the worker the next open slot they may work, or None when there is none.
    With ``related``, the slot comes with its item, document, stage and project loaded (on
    PostgreSQL by the claim statement itself).

    Never an item they already hold or did, never an item they are excluded from (the
    questioner of the article...), never more workers than the item's slots; on
    PostgreSQL the slot row is locked with SKIP LOCKED so concurrent claims never meet.
    With ``role``, only stages of that role's kinds (a checker's review queue). Who may
    claim what (membership, pauses, limits, exclusions) is ``annotation.eligibility``.

    Claims of one worker at once (two tabs, a double click, a script) give them one task:
    on PostgreSQL each waits at the worker's gate (``slots.slot_claim_gate``) for the one
    before it and then finds its task; on SQLite each runs in one write transaction. Should
    two still pick the two slots of one item, the second breaks the one-live-slot-per-item
    constraint, writes nothing, and is tried again.
    """
    for attempt in range(3):
        try:
            slot = _task_claim(worker=worker, project=project, role=role, related=related)
        except IntegrityError as exc:
            if (attempt == 2 or sql.db().in_atomic_block
                    or "annotation_assignment_one_per_worker" not in str(exc)):
                raise
        else:
            if related and slot is not None and "item" not in slot._state.fields_cache:
                slot = assignment_for_worker(assignment_id=slot.pk, worker=worker)
            return slot
    return None


def _task_claim(
    *, worker: Any, project: Project | None, role: Role | None, related: bool = False,
) -> Assignment | None:
    # Later stages first: finishing started pipelines beats starting new ones. Each stage's
    # open slots are walked in order on a partial index that stops at the first slot this
    # worker may take that nobody else holds.
    now = timezone.now()
    batched = _batched_kinds()
    if sql.db().vendor != "postgresql":
        # One transaction, which begins by taking SQLite's write lock (IMMEDIATE,
        # config/settings): two claims of one worker at once (two tabs, a double click) run
        # one after the other, and the second finds the first one's slot live instead of
        # taking another.
        with transaction.atomic():
            return _task_claim_steps(worker=worker, project=project, role=role, now=now,
                                     batched=batched)
    # The live slot, the stages and the claim in one statement (batched stages aside).
    scope = _queue_scope(project, role)
    got, slot, stages = slots.slot_claim_next(
        worker=worker, now=now, lease=lease_duration(), batched_kinds=batched,
        related=related, **scope,
    )
    if got:
        return slot
    # The claims of batched stages and after expired leases take more statements: the
    # worker's gate stays shut to their other claims until these end.
    with transaction.atomic():
        if not slots.slot_claim_gate(worker=worker, now=now, project_id=scope["project_id"],
                                     kinds=scope["live_kinds"]):
            return slots.slot_live(worker=worker, now=now, project_id=scope["project_id"],
                                   kinds=scope["live_kinds"])
        if set(batched) & {stage.kind for stage in stages}:
            slot = _claim_open_slot(worker, stages, batched)
        return slot or _claim_after_expiry(worker, stages, batched)


def _task_claim_steps(
    *, worker: Any, project: Project | None, role: Role | None, now: datetime,
    batched: list[str],
) -> Assignment | None:
    """SQLite's claim: the live slot and the stages in one query, then a claim per stage."""
    live_id, stages = worker_queue(worker=worker, project=project, role=role, now=now)
    if live_id is not None:
        current = slots.slot_get(live_id)
        if current is not None:
            return current
    return (_claim_open_slot(worker, stages, batched)
            or _claim_after_expiry(worker, stages, batched))


def _claim_after_expiry(worker: Any, stages: list[QueueStage],
                        batched: list[str]) -> Assignment | None:
    """Nothing was open: leases past their expiry are also checked here, not only by the
    periodic job; the slots they return are new, so every stage is tried again."""
    if leases_expire(stage_ids=[stage.id for stage in stages]):
        return _claim_open_slot(worker, stages, batched)
    return None


def _claim_open_slot(worker: Any, stages: list[QueueStage],
                     batched: list[str]) -> Assignment | None:
    now = timezone.now()
    for stage in stages:
        claim = claim_in_batched_stage if stage.kind in batched else slots.slot_claim
        slot = claim(worker=worker, stage_id=stage.id, now=now, lease=lease_duration(),
                     limits=stage)
        if slot is not None:
            return slot
    return None


def _not_active(assignment: Assignment) -> TaskError:
    """Why a task its worker no longer holds cannot be submitted or given back, in the
    worker's language."""
    if assignment.status == AS.EXPIRED:
        return TaskError(gettext("your time for this task ran out and it went back to the pool"))
    return TaskError(gettext("this task is already %(status)s")
                     % {"status": str(assignment.get_status_display()).lower()})


def _held_locked(assignment_id: int, worker: Any) -> Assignment:
    """The worker's active task, locked for the rest of the transaction; TaskError (its
    subclasses) says why it is not that."""
    assignment = Assignment.objects.select_for_update().filter(pk=assignment_id).first()
    if assignment is None:
        raise TaskNotFound(gettext("this task does not exist"))
    if assignment.worker_id != worker.pk:
        raise TaskNotYours(gettext("this task is not yours"))
    if assignment.status != AS.ACTIVE:
        raise _not_active(assignment)
    return assignment


def task_release(*, assignment_id: int, worker: Any) -> None:
    """The worker cannot do this task: the slot goes back to the pool."""
    with transaction.atomic():
        assignment = _held_locked(assignment_id, worker)
        transition(assignment, AS.RELEASED, actor=worker, ended_at=timezone.now())
        _slot_replace(assignment)
        _count_return(assignment)


def task_lease_renew(*, assignment_id: int, worker: Any) -> datetime:
    """The worker is still at work on the task's page: its lease runs another
    ``lease_duration()`` from now, so the answer they are writing is not refused as late.
    A task whose lease already ran out (or that is no longer theirs to hold) is not revived:
    TaskError says why. Returns the new expiry."""
    now = timezone.now()
    expires = now + lease_duration()
    with transaction.atomic():
        assignment = _held_locked(assignment_id, worker)
        if assignment.lease_expires_at is None or assignment.lease_expires_at <= now:
            raise TaskError(gettext("your time for this task ran out; take the next task"))
        Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=expires)
    return expires


def _slot_replace(assignment: Assignment) -> None:
    """A fresh open slot for a released or expired one (same batch reservation and round)."""
    Assignment.objects.create(
        item_id=assignment.item_id, stage_id=assignment.stage_id, priority=assignment.priority,
        reserved_for_id=assignment.reserved_for_id, round=assignment.round,
    )


def _count_return(assignment: Assignment) -> None:
    """A slot went back to the pool: its claim no longer counts against the worker's
    limits."""
    stage = assignment.stage
    eligibility.count_return(
        project_id=stage.project_id, worker_id=assignment.worker_id,
        role=stage.kind_spec.role.value, stage_id=stage.pk,
        item_limit=eligibility.stage_limit(stage.params), claimed_at=assignment.claimed_at)


def leases_expire(*, stage_ids: Any = None, now: Any = None, worker: Any = None) -> int:
    """Expire active assignments past their lease (of ``worker`` only, when given); each
    slot returns to the pool."""
    now = now or timezone.now()
    qs = Assignment.objects.filter(status=AS.ACTIVE, lease_expires_at__lte=now)
    if stage_ids is not None:
        qs = qs.filter(stage__in=stage_ids)
    if worker is not None:
        qs = qs.filter(worker=worker)
    expired = 0
    for pk in qs.values_list("pk", flat=True)[:1000]:
        with transaction.atomic():
            assignment = (
                Assignment.objects.select_for_update(skip_locked=True)
                .filter(pk=pk, status=AS.ACTIVE, lease_expires_at__lte=now).first()
            )
            if assignment is None:
                continue
            transition(assignment, AS.EXPIRED, ended_at=now, note="lease expired")
            _slot_replace(assignment)
            _count_return(assignment)
            expired += 1
    return expired


def _late_slot(expired: Assignment, *, item: Item, worker: Any, now: datetime) -> Assignment:
    """A late submit of ``expired`` (its lease ran out and it went back to the pool): the
    worker gets the slot of the item back, active, to submit into, when the item still
    needs the answer (it is open and a slot of it in the same round is still open: nobody
    took it meanwhile) and the worker may still work there (not paused, blocked or at a
    limit); otherwise TaskError says why. The item is locked (``slots.slot_for_submit``),
    so two late submits of the item cannot both take its last slot, and a claim of its
    open slot by another worker gives exactly one of the two the slot. The caller's
    transaction rolls all of it back when the answer is then refused."""
    if expired.status != AS.EXPIRED:
        raise _not_active(expired)
    gone = TaskError(gettext("your time for this task ran out and another worker took it "
                             "meanwhile, or its item needs no more answers"))
    if item.status != IS.OPEN:
        raise gone
    stage = item.stage
    member = (ProjectMember.objects.filter(project_id=stage.project_id, user_id=worker.pk,
                                           role=stage.kind_spec.role.value)
              .values_list("pk", "status", "session_limit").first())
    stopped = member is None or member[1] != ProjectMember.Status.ACTIVE or (
        WorkerStage.objects.filter(
            member_id=member[0], stage_id=stage.pk,
            status__in=(WorkerStage.Status.PAUSED, WorkerStage.Status.BLOCKED)).exists())
    if stopped:
        raise _not_active(expired)
    if Assignment.objects.filter(item_id=expired.item_id, round=expired.round,
                                 worker_id=worker.pk,
                                 status__in=(AS.ACTIVE, AS.SUBMITTED)).exists():
        # They took the item again since: that task is where this answer goes.
        raise _not_active(expired)
    counted = eligibility.QueueStage(
        stage.pk, stage.kind, member[0], eligibility.stage_limit(stage.params),
        member[2] is not None)
    if not eligibility.count_claim(counted):
        raise TaskError(gettext("your time for this task ran out, and you have reached the "
                                "number of tasks you may take here"))
    slot = slots.slot_take_back(expired=expired, worker=worker, now=now, lease=lease_duration())
    if slot is None:
        raise gone
    slot.item = item
    return slot


def task_submit(
    *, assignment_id: int, worker: Any, payload: dict[str, Any],
    active_time_s: float | str | None = None,
) -> Submission:
    """Validate and record a submission; when the item's last slot is in, finish it.
    ``active_time_s`` is what the page measured (``active_time_clean``)."""
    with transaction.atomic():
        locked = slots.slot_for_submit(assignment_id)
        if locked is None:
            raise TaskNotFound(gettext("this task does not exist"))
        item, assignment = locked
        if assignment.worker_id != worker.pk:
            raise TaskNotYours(gettext("this task is not yours"))
        now = timezone.now()
        # A lease past its expiry that nothing expired yet is still the worker's slot, and
        # an expired one is given back when its item still waits for the answer: a late
        # submit (a phone put away mid-answer) keeps what the worker typed.
        if assignment.status != AS.ACTIVE:
            assignment = _late_slot(assignment, item=item, worker=worker, now=now)
        active = active_time_clean(active_time_s,
                                   held_s=(now - assignment.claimed_at).total_seconds())
        spec = item.stage.kind_spec
        cleaned = spec.payload_checked(item, payload)
        submission, submissions = slots.slot_submit(
            slot=assignment, item=item, worker=worker, payload=cleaned, now=now,
            active_time_s=active,
        )
        if item.gold:
            # A gold check: scored, never finished (it serves the next worker in a fresh
            # slot), so it never reaches agreement, consolidation or a release.
            _slot_replace(assignment)
            standing, paused = quality.gold_check_record(item=item, worker=worker,
                                                         payload=cleaned)
            if paused:  # by the gold record, nobody's decision: the log names no actor
                _standing_effects(standing, item.stage, worker, actor=None)
        elif submissions is not None:  # no slot of the item is open or active any more
            if spec.batched:
                # Finished only when its batch passes inspection.
                item_work_in(item=item)
            else:
                emits = spec.on_items_complete(item, submissions)
                if emits is not None:
                    item_finish(item=item, emits=emits)
    return submission


def submission_correctable(*, submission: Submission) -> str:
    """Why the worker cannot correct ``submission`` now ("" when they can): only their
    latest answer, while its item is still open (other workers' answers still to come)."""
    if submission.superseded_by_id is not None:
        return gettext("this answer was corrected already")
    if submission.set_aside:
        return gettext("this answer was set aside")
    item = submission.item
    # A gold check is corrected as any open item is, so that the worker cannot tell it from
    # work (gold items stay open); the correction is kept but not scored: the first answer
    # to a gold check is what counts (``quality.gold_check_record`` at the submit).
    if item.status != IS.OPEN:
        return gettext("its item is no longer open: the answers are in")
    if _returned_for_relabelling(submission):
        return gettext("a checker returned its batch: relabel the item as a task instead")
    if _worker_stopped(submission):
        return gettext("your work here is paused or stopped")
    later = Submission.objects.filter(worker_id=submission.worker_id, pk__gt=submission.pk)
    if later.exists():
        return gettext("only your last answer can be corrected")
    return ""


def _worker_stopped(submission: Submission) -> bool:
    """Whether an admin (or the gold checks) stopped the worker of ``submission`` where it
    was given: their membership of the project in the stage's role is paused or blocked
    (or gone), or their standing on the stage is. A stopped worker changes no answer: the
    claim gives them no task, and a correction is a new answer too."""
    stage = submission.stage
    member = (ProjectMember.objects.filter(project_id=stage.project_id,
                                           user_id=submission.worker_id,
                                           role=stage.kind_spec.role.value)
              .values_list("pk", "status").first())
    if member is None or member[1] != ProjectMember.Status.ACTIVE:
        return True
    return WorkerStage.objects.filter(
        member_id=member[0], stage_id=stage.pk,
        status__in=(WorkerStage.Status.PAUSED, WorkerStage.Status.BLOCKED)).exists()


def _returned_for_relabelling(submission: Submission, batch_round: int | None = None) -> bool:
    """Whether ``submission`` answered an earlier round of a batch a checker returned: its
    item is open again for a relabelling task, whose answer is the one that counts (a
    correction of the old round's answer would never be used)."""
    if submission.item.batch_id is None or submission.assignment_id is None:
        return False
    if batch_round is None:
        batch_round = (Batch.objects.filter(pk=submission.item.batch_id)
                       .values_list("round", flat=True).first())
    return batch_round is not None and submission.assignment.round < batch_round


def submission_correct(*, submission_id: int, worker: Any, payload: dict[str, Any],
                       active_time_s: float | str | None = None) -> Submission:
    """A worker corrects their last answer while its item is still open: a new submission
    (same slot) that supersedes the old one, which is kept as it was. Agreement and
    consolidation read only the answers that count, so they use the newest. The
    correction's active time is held to the time since the answer it corrects, and to a
    task's lease at most. A gold check's correction is recorded the same way and never
    scored: its first answer is what its GoldAnswer holds and what the standing counts."""
    with transaction.atomic():
        found = Submission.objects.filter(pk=submission_id, worker=worker).values("item_id")
        if not found:
            raise TaskError(gettext("this answer is not yours"))
        # Lock the item as a submit does (item, then the answer): a submit that completes it
        # waits for us and then sees the correction instead of the answer it replaces.
        item = (Item.objects.select_for_update(of=("self",)).select_related("stage", "document")
                .get(pk=found[0]["item_id"]))
        old = Submission.objects.select_for_update().get(pk=submission_id)
        old.item = item
        why = submission_correctable(submission=old)
        if why:
            raise TaskError(gettext("You cannot correct this answer: %(why)s.") % {"why": why})
        held = min(timezone.now() - old.created_at, lease_duration())
        active = active_time_clean(active_time_s, held_s=held.total_seconds())
        cleaned = item.stage.kind_spec.payload_checked(item, payload)
        new = Submission.objects.create(
            assignment_id=old.assignment_id, item=item, stage_id=old.stage_id, worker=worker,
            payload=cleaned, time_on_task_s=0.0, active_time_s=active,
        )
        updated = Submission.objects.filter(pk=old.pk, superseded_by__isnull=True).update(
            superseded_by=new)
        if updated != 1:
            raise TaskError(gettext("You cannot correct this answer: %(why)s.")
                            % {"why": gettext("this answer was corrected already")})
    return new


def worker_recent_submissions(*, worker: Any, limit: int = 10) -> list[dict[str, Any]]:
    """The worker's latest answers (corrections included), newest first, each with
    whether it still counts and why it cannot be corrected ("" for the one that can).
    Completed projects leave the annotators' pages, their answers with them. Gold checks
    are listed as any task (nothing here tells them apart: their key's prefix is not
    shown)."""
    rows = list(Submission.objects.filter(worker=worker)
                .exclude(stage__project__status=Project.Status.COMPLETED)
                .select_related("item", "item__stage", "stage__project", "assignment")
                .order_by("-id")[:limit])
    rounds = dict(Batch.objects.filter(
        pk__in={s.item.batch_id for s in rows if s.item.batch_id}).values_list("pk", "round"))
    out = []
    for n, submission in enumerate(rows):
        why = ("only your last answer can be corrected" if n else
               submission_correctable(submission=submission))
        item = submission.item
        data = item.data if isinstance(item.data, dict) else {}
        # A gold item's key starts with ``gold.KEY_PREFIX``: shown without it.
        label = (data.get("question") or data.get("query")
                 or (item.key.removeprefix("gold:") if item.gold else item.key))
        out.append({"submission": submission, "correctable": not why, "why": why,
                    "label": label,
                    "returned": item.status == IS.OPEN and _returned_for_relabelling(
                        submission, rounds.get(item.batch_id))})
    return out


def standing_decide(*, standing: WorkerStage, action: str, actor: Any = None,
                    reason: str = "") -> WorkerStage:
    """An admin's decision on a worker's standing on a stage (``quality.standing_set``);
    a worker paused or blocked loses their live slots of the stage to the pool."""
    with transaction.atomic():
        standing = quality.standing_set(standing=standing, action=action, actor=actor,
                                        reason=reason)
        if standing.status != WorkerStage.Status.ACTIVE:
            _standing_effects(standing, standing.stage, standing.member.user, actor=actor)
    return standing


def _slots_return(assignments: Any, *, actor: Any, note: str) -> int:
    """The active slots among ``assignments`` go back to the pool (each replaced by an open
    one, its claim no longer counted); how many."""
    now = timezone.now()
    returned = 0
    for assignment in (assignments.select_for_update(of=("self",)).select_related("stage")
                       .filter(status=AS.ACTIVE)):
        transition(assignment, AS.RELEASED, actor=actor, ended_at=now, note=note[:300])
        _slot_replace(assignment)
        _count_return(assignment)
        returned += 1
    return returned


def member_status_set(*, member: ProjectMember, status: str, actor: Any,
                      reason: str = "", set_aside: bool = True) -> int:
    """An admin pauses, blocks or resumes a member of a project. A paused or blocked member
    claims nothing more there (``eligibility.stages_sql``) and their live slots of the
    project go back to the pool; returns how many went back. As when they are paused or
    blocked on one stage (``_standing_effects``), on each stage of their role with
    ``gold_set_aside`` their answers to items still open are set aside and those items get
    a replacement worker (not with ``set_aside=False``: an erasure keeps their answers)."""
    if status not in ProjectMember.Status.values:
        raise TaskError(f"unknown member status {status!r}")
    with transaction.atomic():
        locked = ProjectMember.objects.select_for_update().get(pk=member.pk)
        locked.status = status
        locked.save(update_fields=["status"])
        member.status = status
        if status == ProjectMember.Status.ACTIVE:
            return 0
        kinds = [kind for kind, spec in stage_kinds().items()
                 if spec.role.value == locked.role]
        note = reason or f"member {status} by an admin"  # stored: the value, not a label
        returned = _slots_return(
            Assignment.objects.filter(stage__project_id=locked.project_id,
                                      stage__kind__in=kinds, worker_id=locked.user_id),
            actor=actor, note=note)
        # Their batches go to whoever takes a batch next (one annotator per batch round).
        batches_put_back_for(worker=locked.user_id, project_id=locked.project_id,
                             stage_kinds=kinds, actor=actor, note=note)
        if locked.role == Role.CHECKER.value:
            # The inspections they hold go to the project's other checkers at once.
            inspections_put_back_for(checker=locked.user, project_id=locked.project_id,
                                     actor=actor, note=note)
        if set_aside:
            for stage in Stage.objects.filter(project_id=locked.project_id, kind__in=kinds):
                _answers_set_aside(stage, locked.user_id)
        return returned


def _standing_effects(standing: WorkerStage, stage: Stage, worker: Any, *,
                      actor: Any) -> None:
    """A worker was paused or blocked on ``stage`` (by ``actor``, the admin who decided, or
    None when their gold record paused them): their active slots there go back to the
    pool, the transition log naming ``actor`` (not the worker, who did nothing); with the
    stage's ``gold_set_aside``, their answers to items still open are set aside and each
    such item gets a replacement worker. Their answers to gold checks (open
    items too) are set aside with the rest, so that the worker's list does not single them
    out; a gold check needs no replacement (its slots are replenished at each submit) and
    its scores stay in the worker's gold record."""
    _slots_return(Assignment.objects.filter(stage=stage, worker=worker),
                  actor=actor, note=standing.status_reason)
    # Their batches of the stage go to whoever takes a batch next (a new round when they
    # had begun it), so a batched item needs no replacement worker below.
    batches_put_back_for(worker=worker, stage_id=stage.pk, actor=actor,
                         note=standing.status_reason)
    _answers_set_aside(stage, worker)


def _answers_set_aside(stage: Stage, worker: Any) -> None:
    """With the stage's ``gold_set_aside``, the worker's answers to its items still open are
    set aside (gold checks' too, which need no replacement) and each such item gets a
    replacement worker."""
    if not stage.params.get("gold_set_aside"):
        return
    aside = list(Submission.objects.select_related("item").filter(
        stage=stage, worker=worker, set_aside=False, item__status=IS.OPEN))
    Submission.objects.filter(pk__in=[each.pk for each in aside]).update(set_aside=True)
    for item in {each.item_id: each.item for each in aside}.values():
        if not item.gold and item.batch_id is None:
            slots_add(item=item, n=1)


def items_pending(stage: Stage) -> Any:
    return stage.items.filter(status=IS.PENDING).order_by("id")


def items_pending_locked(stage: Stage, progress: Progress, message: str) -> Iterator[Item]:
    """Each pending item of an automatic stage, locked in its own short transaction.

    Two runs of the same stage (a re-delivered job, two emits close together) share the
    work instead of colliding: an item another run holds or has finished is skipped. The
    caller's work on the item happens inside the item's transaction.
    """
    ids = list(items_pending(stage).values_list("pk", flat=True))
    progress.start(total=len(ids), message=message)
    for pk in ids:
        with transaction.atomic():
            item = (
                Item.objects.select_for_update(skip_locked=True, of=("self",))
                .select_related("stage", "document").filter(pk=pk, status=IS.PENDING).first()
            )
            if item is not None:
                yield item
        progress.advance()


def assignment_for_worker(*, assignment_id: int, worker: Any) -> Assignment:
    """An assignment the worker holds (403-worthy errors otherwise)."""
    assignment = slots.slot_related(assignment_id)
    if assignment is None or assignment.worker_id != worker.pk:
        raise TaskError(gettext("this task is not yours"))
    return assignment


def worker_done_today(*, worker: Any) -> int:
    start = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    return Submission.objects.filter(worker=worker, created_at__gte=start).count()
