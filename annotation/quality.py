"""Worker quality per stage: qualification, gold checks during work, pauses.

A member's standing on a stage (``WorkerStage``) says whether they qualified, how they did
on the stage's gold checks, and whether they may work it (active, paused, blocked);
``annotation.eligibility`` reads it inside the claim. Gold items are items of the stage
(``Item.gold``: ``check`` mixed into the live queue at the stage's ``gold_rate``,
``training`` answered in a qualification try) whose ``result`` holds the expected answer
and the reason; each answer is scored with the stage kind's own measure
(``StageKind.gold_score``). Gold items are never finished, so they never reach agreement,
consolidation or a release.

The engine calls this module (``task_submit`` records gold answers, ``standing_pause``
releases the worker's slots); it never calls the engine.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F, Sum
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from annotation import sql
from annotation.models import GoldAnswer, Item, ProjectMember, Stage, WorkerStage
from collector.stored_text import StoredText

WS = WorkerStage.Status


def standing_for(*, member: ProjectMember | int, stage: Stage | int,
                 lock: bool = False) -> WorkerStage:
    """The member's standing on the stage (made when missing); locked with ``lock``."""
    member_id = getattr(member, "pk", member)
    stage_id = getattr(stage, "pk", stage)
    standing, _ = WorkerStage.objects.get_or_create(member_id=member_id, stage_id=stage_id)
    if lock:
        standing = WorkerStage.objects.select_for_update().get(pk=standing.pk)
    return standing


def member_of(*, worker: Any, stage: Stage) -> ProjectMember:
    """The worker's membership that works ``stage`` (the role of its kind)."""
    member = ProjectMember.objects.filter(project_id=stage.project_id, user=worker,
                                          role=stage.kind_spec.role.value).first()
    if member is None:
        raise _not_in_role(worker, stage)
    return member


def _not_in_role(worker: Any, stage: Stage) -> ValidationError:
    """The refusal of a worker who is not a member of ``stage``'s project in its role."""
    return ValidationError(
        gettext("%(worker)s does not work on %(project)s as %(role)s")
        % {"worker": worker, "project": stage.project,
           # The role's name is a msgid of its own ("annotator", "checker").
           "role": gettext(stage.kind_spec.role.value)})


def expected_of(item: Item) -> dict[str, Any]:
    """A gold item's expected answer (a cleaned payload of its stage's kind)."""
    return item.result.get("expected", {})


def gold_check_record(*, item: Item, worker: Any, payload: dict[str, Any]
                      ) -> tuple[WorkerStage, bool]:
    """Score a gold check answer and add it to the worker's record on the stage (call in
    the submit's transaction). Returns the standing and whether this answer paused them
    (below ``gold_min_accuracy`` after at least ``gold_min_items`` checks).

    On PostgreSQL the standing's update (made when missing) and the answer's row are one
    statement, so a gold submit costs about what a work submit does."""
    stage = item.stage
    score = float(stage.kind_spec.gold_score(item, payload, expected_of(item)))
    if sql.db().vendor == "postgresql":
        standing = _gold_count(item=item, worker=worker, payload=payload, score=score)
    else:
        standing = standing_for(member=member_of(worker=worker, stage=stage), stage=stage,
                                lock=True)
        GoldAnswer.objects.create(standing=standing, item=item, purpose="check",
                                  payload=payload, score=score)
        WorkerStage.objects.filter(pk=standing.pk).update(
            gold_seen=F("gold_seen") + 1, gold_score_sum=F("gold_score_sum") + score)
        standing.refresh_from_db()
    p = stage.params
    paused = False
    if standing.status == WS.ACTIVE:
        seen, accuracy, since = _gold_window(standing)
        paused = (seen >= p.get("gold_min_items", 5)
                  and accuracy < p.get("gold_min_accuracy", 0.7))
    if paused:
        standing.status = WS.PAUSED
        standing.status_reason_set(StoredText(
            since or gettext_noop("gold accuracy %(accuracy)s below %(minimum)s after "
                                  "%(seen)s checks"),
            accuracy=f"{accuracy:.0%}", minimum=f"{p.get('gold_min_accuracy', 0.7):.0%}",
            seen=seen))
        standing.changed_at = timezone.now()
        standing.save(update_fields=["status", "status_reason", "status_reason_text",
                                     "changed_at"])
    return standing, paused


def _gold_window(standing: WorkerStage) -> tuple[int, float, str]:
    """The gold checks the pause rule judges: all of the worker's on the stage, or, once an
    admin resumed or retrained them (``changed_at``), those answered since, so that a
    resumed worker gets ``gold_min_items`` fresh checks (the record shown stays whole).
    Returns how many, their mean score and, for those since, the pause's msgid saying so."""
    if standing.changed_at is None:
        return standing.gold_seen, standing.gold_accuracy or 0.0, ""
    since = GoldAnswer.objects.filter(standing=standing, purpose="check",
                                      created_at__gt=standing.changed_at).aggregate(
        n=Count("id"), total=Sum("score"))
    seen = since["n"]
    mean = (since["total"] or 0.0) / seen if seen else 0.0
    return seen, mean, gettext_noop("gold accuracy %(accuracy)s below %(minimum)s after "
                                    "%(seen)s checks since their standing last changed")


def _gold_count(*, item: Item, worker: Any, payload: dict[str, Any], score: float
                ) -> WorkerStage:
    """PostgreSQL: one statement adds the answer to the worker's standing on the item's
    stage (made when missing, the row locked by the update) and writes the GoldAnswer."""
    stage, conn = item.stage, sql.db()
    fresh = WorkerStage(stage_id=stage.pk, gold_seen=1, gold_score_sum=score)
    names = [f.attname for f in WorkerStage._meta.concrete_fields
             if not f.primary_key and f.attname != "member_id"]
    columns = [sql.db_value(WorkerStage, name, getattr(fresh, name), conn) for name in names]
    answer = [sql.db_value(GoldAnswer, name, value, conn) for name, value in (
        ("item_id", item.pk), ("purpose", "check"), ("try_number", 0), ("payload", payload),
        ("score", score), ("created_at", timezone.now()))]
    with conn.cursor() as cursor:
        sql.execute(
            cursor,
            "WITH m AS (SELECT id FROM annotation_projectmember WHERE project_id = %s"
            " AND user_id = %s AND role = %s),"
            f" ws AS (INSERT INTO annotation_workerstage (member_id,"
            f" {', '.join(c for c, _ in columns)}) SELECT m.id, {sql.placeholders(columns)}"
            " FROM m ON CONFLICT (member_id, stage_id) DO UPDATE SET"
            " gold_seen = annotation_workerstage.gold_seen + 1,"
            " gold_score_sum = annotation_workerstage.gold_score_sum + EXCLUDED.gold_score_sum"
            f" RETURNING {sql.columns(WorkerStage)}),"
            f" ga AS (INSERT INTO annotation_goldanswer (standing_id,"
            f" {', '.join(c for c, _ in answer)}) SELECT ws.id, {sql.placeholders(answer)}"
            " FROM ws) SELECT * FROM ws",
            [stage.project_id, worker.pk, stage.kind_spec.role.value,
             *(v for _, v in columns), *(v for _, v in answer)],
        )
        rows = cursor.fetchall()
    if not rows:
        raise _not_in_role(worker, stage)
    return sql.rows_load(WorkerStage, rows)[0]


@transaction.atomic
def standing_set(*, standing: WorkerStage, action: str, actor: Any = None,
                 reason: str = "") -> WorkerStage:
    """An admin's decision on a worker's standing: ``resume`` (active again, the gold record
    kept), ``retrain`` (active, but must qualify again: tries and qualification reset),
    ``pause`` or ``block``."""
    standing = WorkerStage.objects.select_for_update().get(pk=standing.pk)
    by = str(actor) if getattr(actor, "pk", None) else ""

    def said(alone: str, with_actor: str) -> StoredText:
        return StoredText(with_actor, actor=by) if by else StoredText(alone)

    if action == "resume":
        standing.status = WS.ACTIVE
        standing.status_reason_set(said(gettext_noop("resumed"), gettext_noop("resumed by "
                                                                              "%(actor)s")))
    elif action == "retrain":
        standing.status = WS.ACTIVE
        standing.status_reason_set(said(gettext_noop("sent back to training"),
                                        gettext_noop("sent back to training by %(actor)s")))
        standing.qualified, standing.qualification_tries = False, 0
        standing.training_items, standing.training_scores = [], []
    elif action == "pause":
        standing.status = WS.PAUSED
        standing.status_reason_set(reason or said(gettext_noop("paused"),
                                                  gettext_noop("paused by %(actor)s")))
    elif action == "block":
        standing.status = WS.BLOCKED
        standing.status_reason_set(reason or said(gettext_noop("blocked"),
                                                  gettext_noop("blocked by %(actor)s")))
    else:
        raise ValidationError(gettext("action: %(action)s is not one of resume, retrain, "
                                      "pause, block") % {"action": repr(action)})
    standing.changed_at = timezone.now()
    standing.save()
    return standing
