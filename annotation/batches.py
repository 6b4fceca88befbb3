"""Batched stages: batches per annotator, batch inspection by checkers, relabelling rounds.

ReCO (paper, "Data Collection"): items are grouped into batches (5,000 in the paper), each
batch labelled by one annotator; when it is finished a checker inspects a random sample;
strict rule violations count 1.0 error, loose ones 0.5; accuracy = 1 - errors / sampled;
above the threshold (0.95) the batch is accepted, otherwise the whole batch goes back to
the same annotator and a fresh sample is inspected after relabelling. Every round's
submissions and inspection are kept.

One annotator per batch round: an annotator who can no longer work the batch (paused,
blocked, their membership paused or blocked), or an admin's Put back, puts the batch back
for whoever takes it next (``batch_put_back``): a round already begun is closed and the
whole batch is labelled again in a new round. Sampling and scoring are those of
``collector.filters.inspection`` (an item counts its rules' weights, capped at 1.0;
exactly the threshold fails).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from annotation.models import (
    Assignment,
    Batch,
    Inspection,
    Item,
    Project,
    ProjectMember,
    Stage,
    Submission,
    WorkerStage,
)
from annotation.slots import slot_claim
from annotation.workflow import transition
from collector.filters.inspection import Violation, inspect_batch, round_seed, sample_batch

AS, BS, IS, NS = Assignment.Status, Batch.Status, Item.Status, Inspection.Status

# The checker's rules as the pages show them (the labels of ``Violation``, which has no
# Django, marked here for the translation catalogue).
gettext_noop("the answer is incorrect")
gettext_noop("the question is blurred or not answerable by yes/no/uncertain")
gettext_noop("the evidence has much irrelevant information")
gettext_noop("the question is too easy given the evidence")


def violation_label(rule: str) -> str:
    """A checker rule's label in the language of the request."""
    return gettext(Violation(rule).label)


def stage_is_batched(stage: Stage) -> bool:
    return stage.kind_spec.batched


@transaction.atomic
def batches_fill(*, stage: Stage, flush: bool = False) -> int:
    """Group the stage's unbatched open items into batches of ``batch_size``.

    Only full batches unless ``flush`` (then the remainder forms a last, smaller batch).
    The stage row is locked so two runs never batch the same items, then the project row:
    batches are numbered per project, so "batch 3" names one batch in every list.
    """
    Stage.objects.select_for_update().filter(pk=stage.pk).first()
    size = stage.params["batch_size"]
    ids = list(stage.items.filter(status=IS.OPEN, batch__isnull=True, gold="")
               .order_by("id").values_list("pk", flat=True))
    if not ids:
        return 0
    Project.objects.select_for_update().filter(pk=stage.project_id).first()
    number = (Batch.objects.filter(project_id=stage.project_id)
              .aggregate(n=Max("number"))["n"] or 0)
    created = 0
    while len(ids) >= size or (flush and ids):
        chunk, ids = ids[:size], ids[size:]
        number += 1
        batch = Batch.objects.create(project_id=stage.project_id, stage=stage, number=number)
        Item.objects.filter(pk__in=chunk).update(batch=batch)
        created += 1
    return created


def batches_flush_ready(*, project_id: int) -> int:
    """Flush partial batches of batched stages whose earlier stages have no work left."""
    created = 0
    stages = list(Stage.objects.filter(project_id=project_id).order_by("order"))
    for n, stage in enumerate(stages):
        if not stage_is_batched(stage):
            continue
        upstream = [s.pk for s in stages[:n]]
        busy = Item.objects.filter(stage_id__in=upstream,
                                   status__in=[IS.PENDING, IS.OPEN, IS.REVIEW]).exists()
        if not busy:
            created += batches_fill(stage=stage, flush=True)
    return created


def claim_in_batched_stage(*, worker: Any, stage_id: int, now: Any,
                           lease: Any, limits: Any = None) -> Assignment | None:
    """The next slot of the worker's own batch; when none is left, take a new batch.
    ``limits``: as ``slot_claim``'s."""
    for attempt in range(2):
        slot = slot_claim(worker=worker, stage_id=stage_id, now=now, lease=lease,
                          reserved=True, limits=limits)
        if slot is not None:
            return slot
        if attempt == 1 or not _batch_take(worker=worker, stage_id=stage_id):
            return None
    return None


def _batch_take(*, worker: Any, stage_id: int) -> Batch | None:
    with transaction.atomic():
        batch = (
            Batch.objects.filter(stage_id=stage_id, status=BS.OPEN).order_by("number")
            .select_for_update(skip_locked=True).first()
        )
        if batch is None:
            return None
        transition(batch, BS.WORKING, actor=worker, annotator=worker)
        Assignment.objects.filter(
            item_id__in=Item.objects.filter(batch=batch).values("pk"), status=AS.OPEN,
        ).update(reserved_for=worker, round=batch.round)
        return batch


def item_work_in(*, item: Item) -> None:
    """All slots of a batched item are in: it waits for its batch's inspection. When the
    whole batch is in, a sample is drawn and the batch waits for a checker."""
    transition(item, IS.REVIEW)
    batch = Batch.objects.select_for_update().get(pk=item.batch_id)
    if batch.items.filter(status=IS.OPEN).exists():
        return
    transition(batch, BS.INSPECTION)
    inspection_open(batch=batch)


def inspection_open(*, batch: Batch) -> Inspection:
    """Draw this round's seeded sample (collector.filters.inspection) for a checker."""
    params = batch.stage.params
    base_seed = params["inspect_seed"] * 1_000_003 + batch.number
    sample = sample_batch(batch.items.values_list("pk", flat=True),
                          fraction=params["inspect_fraction"],
                          seed=round_seed(base_seed, batch.round))
    return Inspection.objects.create(
        batch=batch, round=batch.round, fraction=sample.fraction, seed=sample.seed,
        sample=list(sample.item_ids), threshold=params["pass_threshold"],
    )


def inspection_claim(*, inspection_id: int, checker: Any) -> Inspection:
    """The checker takes an open inspection of a batch of a project they check (a checker
    member; admins check every project), never one of their own batches."""
    from annotation.selectors import inspects_project

    with transaction.atomic():
        inspection = Inspection.objects.select_for_update().select_related("batch").get(
            pk=inspection_id)
        if inspection.batch.annotator_id == checker.pk:
            raise PermissionDenied("you cannot inspect your own batch")
        if not inspects_project(user=checker, project_id=inspection.batch.project_id):
            raise PermissionDenied("you are not a checker of this batch's project")
        if inspection.status == NS.ACTIVE and inspection.checker_id == checker.pk:
            return inspection
        if inspection.status != NS.OPEN:
            raise PermissionDenied("another checker has this batch")
        transition(inspection, NS.ACTIVE, actor=checker, checker=checker,
                   claimed_at=timezone.now())
        return inspection


def inspection_release(*, inspection_id: int, user: Any) -> Inspection:
    """Put a claimed inspection back for any checker of the project: by the checker who
    holds it (they cannot finish it), or by an admin (its checker left, was paused or
    removed from the project, or does not answer). Nothing the holder ticked was saved, so
    nothing is lost; the batch stays waiting for inspection with the same sample."""
    from annotation.roles import Role, has_role

    with transaction.atomic():
        inspection = Inspection.objects.select_for_update().get(pk=inspection_id)
        if inspection.status != NS.ACTIVE:
            raise ValidationError(gettext("This inspection is not being inspected: there is "
                                          "nothing to put back."))
        if inspection.checker_id != user.pk and not has_role(user, Role.ADMIN):
            raise PermissionDenied("another checker is inspecting this batch")
        transition(inspection, NS.OPEN, actor=user, checker=None, claimed_at=None,
                   note="released")
        return inspection


def inspections_put_back_for(*, checker: Any, project_id: int, actor: Any = None,
                             note: str = "") -> int:
    """Put back the inspections ``checker`` holds in the project once they no longer
    inspect its batches (paused or blocked as its checker member), so that another checker
    takes them at once instead of waiting for an admin's Put back; how many. The log names
    ``actor``, who stopped them."""
    from annotation.selectors import inspects_project

    if inspects_project(user=checker, project_id=project_id):
        return 0
    held = Inspection.objects.select_for_update(of=("self",)).filter(
        checker=checker, status=NS.ACTIVE, batch__project_id=project_id).order_by("pk")
    count = 0
    for inspection in held:
        transition(inspection, NS.OPEN, actor=actor, checker=None, claimed_at=None,
                   note=(note or "put back")[:300])
        count += 1
    return count


#: Batches an annotator holds: being labelled, or returned to them for relabelling.
HELD = (BS.WORKING, BS.RETURNED)


def annotator_may_work(*, batch: Batch) -> bool:
    """Whether the batch's annotator may still work its stage: an active user, an active
    member of the project in the stage's role, not paused or blocked on the stage."""
    if batch.annotator_id is None:
        return False
    stage = batch.stage
    member = ProjectMember.objects.filter(
        project_id=batch.project_id, user_id=batch.annotator_id,
        role=stage.kind_spec.role.value, user__is_active=True).first()
    if member is None or member.status != ProjectMember.Status.ACTIVE:
        return False
    return not WorkerStage.objects.filter(member=member, stage=stage).exclude(
        status=WorkerStage.Status.ACTIVE).exists()


def batch_put_back(*, batch_id: int, actor: Any = None, note: str = "",
                   check_admin: bool = False) -> Batch:
    """Take a batch from its annotator so that whoever takes a batch next gets it whole.

    For an annotator who can no longer work it (paused, blocked, their membership paused
    or blocked) and for an admin's Put back (``check_admin``: only admins may). Their live
    slot of it goes back. One annotator per batch round: when they have already answered
    items of the current round, that round is closed (its answers stay as history, and
    paid, like a returned round's) and the whole batch is open again in a new round;
    otherwise its open slots are simply no longer reserved for them. A returned batch
    keeps its checker's feedback for the next annotator."""
    from annotation.engine import _slots_return
    from annotation.roles import Role, has_role
    from annotation.workflow import transition_rows

    if check_admin and not has_role(actor, Role.ADMIN):
        raise PermissionDenied("only an admin can put a batch back")
    with transaction.atomic():
        batch = Batch.objects.select_for_update().select_related("stage").get(pk=batch_id)
        if batch.status not in HELD:
            raise ValidationError(gettext("Batch %(number)s is not held by an annotator: "
                                          "there is nothing to put back.")
                                  % {"number": batch.number})
        note = (note or "put back")[:300]
        in_batch = Assignment.objects.filter(item__batch=batch)
        _slots_return(in_batch, actor=actor, note=note)
        begun = Submission.objects.filter(item__batch=batch, assignment__round=batch.round,
                                          superseded_by__isnull=True).exists()
        round_no = batch.round
        if begun:
            round_no += 1
            item_ids = "SELECT id FROM annotation_item WHERE batch_id = %s"
            transition_rows(Assignment, AS.CANCELLED, source=AS.OPEN, actor=actor,
                            note=note, where=f"item_id IN ({item_ids})", params=[batch.pk])
            transition_rows(Item, IS.OPEN, source=IS.REVIEW, actor=actor, note=note,
                            where="batch_id = %s", params=[batch.pk])
            Assignment.objects.bulk_create([
                Assignment(item_id=item.pk, stage_id=item.stage_id, priority=item.priority,
                           round=round_no)
                for item in batch.items.filter(status=IS.OPEN).order_by("id")
                for _ in range(item.overlap)
            ])
        else:
            in_batch.filter(status=AS.OPEN).update(reserved_for=None)
        transition(batch, BS.OPEN, actor=actor, note=note, annotator=None, round=round_no)
        return batch


def batches_put_back_for(*, worker: Any, actor: Any = None, note: str = "",
                         stage_id: int | None = None, project_id: int | None = None,
                         stage_kinds: Any = None) -> int:
    """Put back the batches ``worker`` holds on a stage (or in a project) when they can no
    longer work them; how many."""
    held = Batch.objects.filter(annotator=worker, status__in=HELD)
    if stage_id is not None:
        held = held.filter(stage_id=stage_id)
    if project_id is not None:
        held = held.filter(project_id=project_id)
    if stage_kinds is not None:
        held = held.filter(stage__kind__in=stage_kinds)
    count = 0
    for pk in held.order_by("pk").values_list("pk", flat=True):
        batch_put_back(batch_id=pk, actor=actor, note=note)
        count += 1
    return count


#: The checker's explicit verdicts (the buttons of the inspection page).
VERDICTS = {"accept": True, "return": False}


def inspection_done_message(inspection: Inspection) -> str:
    """What a checker who sends a finished inspection again is told."""
    return (gettext("You finished this inspection already: the batch was accepted.")
            if inspection.passed else
            gettext("You finished this inspection already: the batch was returned to its "
                    "annotator."))


def inspection_submit(*, inspection_id: int, checker: Any, marks: dict[Any, list[str]],
                      verdict: str | None = None, comment: str = "",
                      item_comments: dict[Any, str] | None = None) -> Inspection:
    """Record a checker's marks and comments; accept the batch or return it to its
    annotator.

    The paper's rule decides: accepted when the accuracy from the marks is above the
    threshold, returned otherwise. ``verdict`` ("accept" / "return", the button the checker
    pressed) must agree with it: an Accept on a batch at or below the threshold, or a Return
    on one above it, is refused with the accuracy and what to change. A checker who thinks a
    passing batch is bad says so by ticking the rules it breaks (the accuracy then falls).
    Comments (per batch, per sampled item) go back to the annotator with a returned batch.
    """
    from annotation.engine import item_finish, slots_add

    if verdict is not None and verdict not in VERDICTS:
        raise ValidationError(gettext("verdict: %(verdict)s is not one of accept, return")
                              % {"verdict": repr(verdict)})
    with transaction.atomic():
        inspection = Inspection.objects.select_for_update().get(pk=inspection_id)
        if inspection.checker_id != checker.pk:
            raise PermissionDenied("this inspection is not yours")
        if inspection.status != NS.ACTIVE:  # sent twice (a second click, the back button)
            raise ValidationError(inspection_done_message(inspection))
        batch = Batch.objects.select_for_update().select_related("stage").get(
            pk=inspection.batch_id)
        spec = batch.stage.kind_spec
        cleaned = {int(key): sorted(set(rules)) for key, rules in marks.items() if rules}
        for item_id, rules in cleaned.items():
            unknown = sorted(set(rules) - set(spec.inspection_rules))
            if unknown:
                raise ValidationError(gettext("item %(item)s: unknown rule(s) %(rules)s")
                                      % {"item": item_id, "rules": ", ".join(unknown)})
        notes = {int(key): text.strip() for key, text in (item_comments or {}).items()
                 if text and text.strip()}
        outside = sorted(set(notes) - set(inspection.sample))
        if outside:
            raise ValidationError(gettext("comment on item %(item)s: it is not in the sample")
                                  % {"item": outside[0]})
        try:
            result = inspect_batch(inspection.sample, cleaned, threshold=inspection.threshold)
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc
        errors, accuracy, passed = result.errors, result.accuracy, result.passed
        if verdict is not None and VERDICTS[verdict] != passed:
            figures = {"accuracy": f"{accuracy:.3f}", "threshold": inspection.threshold}
            raise ValidationError(
                gettext("verdict: accuracy %(accuracy)s is above the threshold %(threshold)s, "
                        "so the batch passes; to return it, tick the rules its items break")
                % figures if passed else
                gettext("verdict: accuracy %(accuracy)s is not above the threshold "
                        "%(threshold)s, so the batch cannot be accepted; return it, or untick "
                        "marks you set by mistake") % figures)
        now = timezone.now()
        transition(inspection, NS.DONE, actor=checker,
                   marks={str(k): v for k, v in cleaned.items()},
                   comment=comment.strip(), item_comments={str(k): v for k, v in notes.items()},
                   errors=errors, accuracy=accuracy, passed=passed, finished_at=now)
        items = list(batch.items.select_related("stage", "document").order_by("id"))
        if passed:
            transition(batch, BS.ACCEPTED, actor=checker, finished_at=now)
            for item in items:
                submissions = list(item.submissions.filter(assignment__round=batch.round,
                                                           superseded_by__isnull=True)
                                   .order_by("id"))
                item_finish(item=item, emits=spec.on_items_complete(item, submissions) or [])
        else:
            transition(batch, BS.RETURNED, actor=checker, round=batch.round + 1,
                       note=f"accuracy {accuracy:.3f}")
            for item in items:
                transition(item, IS.OPEN, actor=checker, note="batch returned")
                slots_add(item=item, n=item.overlap, reserved_for=batch.annotator,
                          round_no=batch.round)
            if not annotator_may_work(batch=batch):
                # Its annotator was paused or blocked meanwhile: whoever takes it next.
                batch_put_back(batch_id=batch.pk, actor=checker,
                               note="returned; its annotator cannot work it")
    return inspection


def returned_feedback(*, assignment: Assignment) -> dict[str, Any] | None:
    """What the annotator of a returned batch sees on one of its items: the inspection
    that returned it (accuracy, threshold, the batch comment), the rules the checker
    ticked on this item and their comment on it (when it was sampled), and the annotator's
    previous answer to it. None when the assignment is not a relabelling round."""
    if assignment.round <= 1 or not assignment.stage.kind_spec.batched:
        return None
    item = assignment.item
    # The last round a checker returned (a batch put back in the middle of a round skips
    # the number of the round it closed).
    inspection = (Inspection.objects.filter(batch_id=item.batch_id,
                                            round__lt=assignment.round, status=NS.DONE)
                  .select_related("checker").order_by("-round").first())
    if inspection is None:
        return None
    # Their own answer only: a batch whose annotator was paused or blocked goes to the next
    # annotator, who gets the checker's feedback but never another worker's answers.
    previous = (Submission.objects.filter(item=item, assignment__round__lt=assignment.round,
                                          worker_id=assignment.worker_id,
                                          superseded_by__isnull=True)
                .order_by("-assignment__round", "-id").first())
    key = str(item.pk)
    return {
        "inspection": inspection, "round": assignment.round,
        "sampled": item.pk in inspection.sample,
        "rules": [(rule, violation_label(rule), Violation(rule).strict)
                  for rule in inspection.marks.get(key, [])],
        "comment": inspection.item_comments.get(key, ""),
        "batch_comment": inspection.comment,
        "previous": previous,
    }
