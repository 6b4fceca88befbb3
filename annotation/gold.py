"""Gold items and qualification tries: the services behind the gold and qualification pages.

Gold items are items of a stage (``Item.gold``) whose ``result`` holds the expected answer
(a payload cleaned by the stage's kind) and the reason. An admin imports them as JSONL or
takes them from the consolidated records of an earlier project of the same recipe.
``check`` items open three slots at ``eligibility.GOLD_PRIORITY`` and are mixed into the
live queue by the claim (``annotation.engine`` scores them); ``training`` items have no
slot: a worker answers them in a qualification try, seeing the expected answer and the
reason after each, and qualifies when the try's mean score reaches the stage's
``qualification_threshold``.

Standing rows are locked (``select_for_update``) for every change of a try, so two tabs of
one worker never answer the same item twice or count a try twice.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Avg, Count
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop, ngettext

from annotation import engine, quality
from annotation.eligibility import GOLD_PRIORITY
from annotation.models import (
    GoldAnswer,
    Item,
    Project,
    ProjectMember,
    Stage,
    WorkerStage,
)
from annotation.stages import StageKind
from collector.importers.errors import (
    LONGER_THAN,
    SHOULD_BE_OBJECT,
    SHOULD_BE_STRING,
    ImportFailure,
    at_line,
)
from collector.importers.jsonvalues import join_path, json_record
from collector.importers.records import IS_EMPTY, IS_MISSING
from collector.stored_text import StoredText

WS = WorkerStage.Status
PURPOSES = ("check", "training")
#: Keys of gold items start with this, so they never meet the keys of emitted work.
KEY_PREFIX = "gold:"
#: Workers who may hold one gold check item at once (its open slots).
CHECK_SLOTS = 3
IMPORT_FIELDS = ("key", "data", "document", "expected", "reason")
MAX_ERRORS = 30


# Gold items --------------------------------------------------------------------------------

def _gold_kind(stage: Stage, purpose: str) -> StageKind:
    """The stage's kind, when it can take gold items of ``purpose``; else ValidationError."""
    spec = stage.kind_spec
    if purpose not in PURPOSES:
        raise ValidationError(gettext("purpose: %(purpose)s is not one of %(choices)s")
                              % {"purpose": repr(purpose), "choices": ", ".join(PURPOSES)})
    if spec.automatic or not spec.scores_gold:
        raise ValidationError(gettext("stage %(stage)s (%(kind)s) has no gold measure: its "
                                      "answers cannot be scored against a gold answer")
                              % {"stage": repr(stage.name), "kind": stage.kind})
    if purpose == "check" and spec.batched:
        raise ValidationError(gettext("stage %(stage)s hands out whole batches: gold checks "
                                      "are not mixed into it; import training items for its "
                                      "qualification") % {"stage": repr(stage.name)})
    return spec


def _item_shown(spec: StageKind, item: Item) -> tuple[str, StoredText] | None:
    """Why the task page of ``item`` cannot be built (what its kind's context misses): the
    field and the problem, or None when it can."""
    try:
        spec.context(item)
    except KeyError as exc:
        return join_path("data", str(exc.args[0])), StoredText(
            gettext_noop("is missing (the task shows it)"))
    except AttributeError:
        if item.document_id is None:
            return "document", StoredText(gettext_noop(
                "is missing: this stage's tasks show a document; give its external id"))
        raise
    except (TypeError, IndexError, ValueError) as exc:
        return "data", StoredText(gettext_noop("is not the shape the task needs (%(error)s)"),
                                  error=str(exc))
    return None


def _cleaned_expected(spec: StageKind, item: Item, expected: Any) -> dict[str, Any]:
    """``expected`` cleaned by the kind against the built item (ValidationError else)."""
    if not isinstance(expected, dict):
        raise ValidationError(StoredText(gettext_noop(
            "should be an object (an answer of the stage's kind)")))
    try:
        return spec.payload_checked(item, expected)
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ValidationError(StoredText(gettext_noop("does not fit the item (%(error)s)"),
                                         error=repr(exc))) from exc


def _gold_items_create(*, stage: Stage, rows: list[tuple[Item, dict[str, Any], str]],
                       purpose: str, source: str) -> list[Item]:
    """Save built gold items with their expected answers; check items get their slots."""
    created = []
    try:
        with transaction.atomic():
            for item, expected, reason in rows:
                item.result = {"expected": expected, "reason": reason, "source": source}
                item.save()
                if purpose == "check":
                    engine.slots_add(item=item, n=CHECK_SLOTS)
                created.append(item)
    except IntegrityError as exc:
        raise ValidationError(gettext("stage %(stage)s: a gold item with one of these keys "
                                      "was added meanwhile; nothing was imported")
                              % {"stage": repr(stage.name)}) from exc
    return created


def _gold_item(stage: Stage, *, key: str, data: dict[str, Any], purpose: str,
               document: Any = None) -> Item:
    """An unsaved gold item of ``stage``: open, at the gold priority; a check item wants
    ``CHECK_SLOTS`` workers at once, a training item has no slot."""
    return Item(project=stage.project, stage=stage, key=key, data=data, document=document,
                gold=purpose, status=Item.Status.OPEN, priority=GOLD_PRIORITY,
                overlap=CHECK_SLOTS if purpose == "check" else 0)


def gold_items_import(*, stage: Stage, text: str, name: str, purpose: str) -> list[Item]:
    """Gold items from JSONL, one a line: ``{"key", "data", "document", "expected",
    "reason"}`` (``document``: external id of a document of the project's corpus,
    optional). Each expected answer is cleaned by the stage's kind against the item it
    belongs to. All or nothing: every error is raised together, naming file, line and
    field, before anything is written."""
    from collector.models import Document

    spec = _gold_kind(stage, purpose)
    project = stage.project
    existing = set(stage.items.filter(key__startswith=KEY_PREFIX)
                   .values_list("key", flat=True))
    seen: dict[str, int] = {}
    documents: dict[str, Any] = {}
    errors: list[StoredText] = []
    rows: list[tuple[Item, dict[str, Any], str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue

        def error(field: str | None, detail: str | StoredText, number: int = number) -> None:
            errors.append(ImportFailure(detail, file=name, where=at_line(number),
                                        field=field).text)

        try:
            row = json_record(line, file=name, where=at_line(number))
        except ImportFailure as exc:
            errors.append(exc.text)
            continue
        if not isinstance(row, dict):
            error(None, StoredText(gettext_noop("expected a JSON object on each line")))
            continue
        unknown = sorted(set(row) - set(IMPORT_FIELDS))
        if unknown:
            error(unknown[0], StoredText(gettext_noop("unknown field; the fields are "
                                                      "%(fields)s"),
                                         fields=", ".join(IMPORT_FIELDS)))
            continue
        key, data = row.get("key"), row.get("data", {})
        reason, external_id = row.get("reason", ""), row.get("document")
        if "key" not in row:
            error("key", StoredText(IS_MISSING))
            continue
        if not isinstance(key, str):
            error("key", StoredText(SHOULD_BE_STRING))
            continue
        if not key.strip():
            error("key", StoredText(IS_EMPTY))
            continue
        full_key = KEY_PREFIX + key.strip()
        if len(full_key) > 200:
            error("key", StoredText(LONGER_THAN, most=200 - len(KEY_PREFIX)))
            continue
        if full_key in seen:
            error("key", StoredText(gettext_noop("%(key)s is on line %(line)s too"),
                                    key=repr(key), line=seen[full_key]))
            continue
        seen[full_key] = number
        if full_key in existing:
            error("key", StoredText(gettext_noop("the stage already has a gold item %(key)s"),
                                    key=repr(key)))
            continue
        if not isinstance(data, dict):
            error("data", StoredText(SHOULD_BE_OBJECT))
            continue
        if not isinstance(reason, str):
            error("reason", StoredText(SHOULD_BE_STRING))
            continue
        document = None
        if external_id is not None:
            if not isinstance(external_id, str):
                error("document", StoredText(SHOULD_BE_STRING))
                continue
            if not external_id:
                error("document", StoredText(IS_EMPTY))
                continue
            if external_id not in documents:
                documents[external_id] = (Document.objects.filter(
                    corpus_id=project.corpus_id, external_id=external_id).first()
                    if project.corpus_id else None)
            document = documents[external_id]
            if document is None:
                error("document", StoredText(gettext_noop("no document %(id)s in the project's "
                                                          "corpus"), id=repr(external_id)))
                continue
        item = _gold_item(stage, key=full_key, data=data, purpose=purpose, document=document)
        missing = _item_shown(spec, item)
        if missing:
            error(*missing)
            continue
        if "expected" not in row:
            error("expected", StoredText(IS_MISSING))
            continue
        try:
            expected = _cleaned_expected(spec, item, row["expected"])
        except ValidationError as exc:
            # The kind's own words for a refused answer, in the language active now: the
            # request's, whose page shows the refusal (it is never stored).
            error("expected", "; ".join(exc.messages))
            continue
        rows.append((item, expected, reason.strip()))
    if errors:
        more = len(errors) - MAX_ERRORS
        raise ValidationError(errors[:MAX_ERRORS] + (
            ["… " + ngettext("and %(more)s more", "and %(more)s more", more) % {"more": more}]
            if more > 0 else []))
    if not rows:
        raise ValidationError(ImportFailure(
            StoredText(gettext_noop("the file holds no gold item")), file=name).text)
    return _gold_items_create(stage=stage, rows=rows, purpose=purpose, source=name)


# From the consolidated records of an earlier project --------------------------------------

Built = tuple[dict[str, Any], dict[str, Any], str]  # data, expected payload, reason


def _from_newsqa_record(record: Item, source: Project) -> Built | None:
    """A NewsQA question record whose answerers agreed: the question, and the consensus
    (one span, or no answer, or a bad question) as the expected answer."""
    result = record.result
    consensus = result.get("consensus") or {}
    if not result.get("agreed") or record.document_id is None or not result.get("q"):
        return None
    if consensus.get("badQuestion"):
        expected: dict[str, Any] = {"bad_question": True}
    elif consensus.get("noAnswer"):
        expected = {"no_answer": True}
    elif "s" in consensus and "e" in consensus:
        expected = {"spans": [[consensus["s"], consensus["e"]]]}
    else:
        return None
    validated = " after validation" if result.get("validated") else ""
    reason = (f"The answer the workers of {source.name} agreed on{validated} "
              f"({len(result.get('answers', []))} answerers).")
    return {"question": result["q"]}, expected, reason


def _from_marco_record(record: Item, source: Project) -> Built | None:
    """An MS MARCO final record: its query was kept (informational, answerable by a short
    passage) with the judged query and question types."""
    result = record.result
    if not result.get("query"):
        return None
    expected = {"intent": "informational", "decision": "keep", "exclusions": [],
                "query_type": result.get("query_type") or "",
                "question_type": result.get("question_type") or ""}
    types = "/".join(t for t in (expected["query_type"], expected["question_type"]) if t)
    reason = (f"The editors of {source.name} kept this query: informational, answerable by a "
              f"short passage" + (f"; judged {types}" if types else "") + ".")
    return {"query": result["query"], "query_id": str(result.get("query_id", ""))}, expected, reason


def _from_reco_record(record: Item, source: Project) -> Built | None:
    """A ReCO final record: its document, evidence span, alternatives and answer."""
    from annotation.stages.reco import ANSWERS

    result = record.result
    provenance = result.get("provenance") or {}
    alternatives = str(result.get("alternatives", "")).split("|")
    if (len(alternatives) != len(ANSWERS) or not result.get("doc")
            or "evidence" not in provenance or result.get("answer_type") not in ANSWERS):
        return None
    document = {"document_id": provenance.get("document_id"),
                "external_id": provenance.get("document_external_id", ""),
                "title": provenance.get("title", ""), "url": result.get("url") or "",
                "source_type": provenance.get("source_type", ""), "text": result["doc"]}
    data = {"query": result["query"], "query_id": result.get("query_id"),
            "language": source.language, "documents": [document]}
    expected = {"doc": 0, "evidence": list(provenance["evidence"]),
                "alternatives": dict(zip(ANSWERS, alternatives, strict=True)),
                "answer": result["answer_type"]}
    reason = f"The label {source.name} kept ({provenance.get('source', 'batch')})."
    return data, expected, reason


#: Stage kinds that can take gold items from a project's consolidated records.
RECORD_GOLD: dict[str, Callable[[Item, Project], Built | None]] = {
    "newsqa_answer": _from_newsqa_record,
    "marco_judge": _from_marco_record,
    "reco_evidence": _from_reco_record,
    "reco_test_evidence": _from_reco_record,
}


def gold_items_from_project(*, stage: Stage, source_project: Project, purpose: str,
                            limit: int) -> list[Item]:
    """Up to ``limit`` gold items for ``stage`` from the consolidated records (the done
    items of the last stage) of an earlier project of the same recipe. Records that give
    no certain answer (no agreement, ...) or whose gold item exists already are skipped."""
    from annotation.selectors import consolidated_items

    spec = _gold_kind(stage, purpose)
    if source_project.pk == stage.project_id:
        raise ValidationError(gettext("source project: take gold items from an earlier "
                                      "project, not from the project itself"))
    if source_project.recipe != stage.project.recipe:
        raise ValidationError(gettext("source project: %(source)s is a %(recipe)s project; "
                                      "stage %(stage)s needs records of a %(wanted)s project")
                              % {"source": repr(source_project.name),
                                 "recipe": source_project.recipe, "stage": repr(stage.name),
                                 "wanted": stage.project.recipe})
    build = RECORD_GOLD.get(stage.kind)
    if build is None:
        raise ValidationError(gettext("stage %(stage)s (%(kind)s) cannot take gold items from "
                                      "consolidated records; stages that can: %(kinds)s. "
                                      "Import a JSONL file instead")
                              % {"stage": repr(stage.name), "kind": stage.kind,
                                 "kinds": ", ".join(RECORD_GOLD)})
    if not isinstance(limit, int) or limit < 1:
        raise ValidationError(gettext("limit: take at least one record"))
    existing = set(stage.items.filter(key__startswith=KEY_PREFIX)
                   .values_list("key", flat=True))
    rows: list[tuple[Item, dict[str, Any], str]] = []
    records = 0
    for record in consolidated_items(project=source_project).defer(None).iterator(
            chunk_size=200):
        records += 1
        built = build(record, source_project)
        key = f"{KEY_PREFIX}{source_project.pk}:{record.key}"
        if built is None or key in existing or len(key) > 200:
            continue
        data, expected, reason = built
        item = _gold_item(stage, key=key, data=data, purpose=purpose,
                          document=record.document)
        try:
            cleaned = _cleaned_expected(spec, item, expected)
        except ValidationError:
            continue
        rows.append((item, cleaned, reason))
        if len(rows) >= limit:
            break
    if not rows:
        raise ValidationError(gettext("project %(project)s has no consolidated record usable "
                                      "as a new gold item (%(records)s record(s) read)")
                              % {"project": repr(source_project.name), "records": records})
    return _gold_items_create(stage=stage, rows=rows, purpose=purpose,
                              source=f"project {source_project.name}")


def gold_items_overview(*, stage: Stage) -> list[dict[str, Any]]:
    """The stage's gold items with their expected answer in words, the reason, and the
    answers so far (count, mean score)."""
    spec = stage.kind_spec
    items = (stage.items.exclude(gold="").select_related("document")
             .annotate(answers=Count("gold_answers"), mean=Avg("gold_answers__score"))
             .order_by("gold", "id"))
    rows = []
    for item in items:
        expected = quality.expected_of(item)
        try:
            words = spec.gold_explain(item, expected)
        except (KeyError, TypeError, IndexError, AttributeError, NotImplementedError):
            words = json.dumps(expected, ensure_ascii=False)
        rows.append({"item": item, "purpose": item.gold,
                     "key": item.key.removeprefix(KEY_PREFIX), "expected": words,
                     "reason": item.result.get("reason", ""), "answers": item.answers,
                     "mean": item.mean})
    return rows


# Qualification tries ---------------------------------------------------------------------------

def _wanted(stage: Stage) -> int:
    """Training items a qualification try of ``stage`` takes (0: no qualification)."""
    if not stage.kind_spec.scores_gold:
        return 0
    return int(stage.params.get("qualification_items") or 0)


def _tries_allowed(stage: Stage) -> int:
    return int(stage.params.get("qualification_tries") or 2)


def _threshold(stage: Stage) -> float:
    value = stage.params.get("qualification_threshold")
    return float(0.8 if value is None else value)


def _in_progress(standing: WorkerStage) -> bool:
    return len(standing.training_scores) < len(standing.training_items)


def _training_ids(stage: Stage) -> list[int]:
    return sorted(stage.items.filter(gold="training", status=Item.Status.OPEN)
                  .values_list("pk", flat=True))


class QualificationStopped(ValidationError):
    """A qualification try refused to a worker an admin paused or blocked."""


#: The qualification states of a worker an admin stopped (``_state``).
STOPPED = ("paused", "blocked")


def _stopped(member: ProjectMember, standing: WorkerStage | None,
             stage: Stage) -> QualificationStopped | None:
    """The refusal of a qualification try to a worker an admin stopped: paused or blocked
    in the project (``member_status_set``) or on the stage (``standing_decide``); None when
    they may try."""
    if member.status != ProjectMember.Status.ACTIVE:
        return QualificationStopped(gettext("you are %(status)s in %(project)s: an admin "
                                            "decides when you work there again") % {
            "status": str(ProjectMember.Status(member.status).label).lower(),
            "project": stage.project.name})
    if standing is not None and standing.status != WS.ACTIVE:
        return QualificationStopped(gettext("you are %(status)s on '%(stage)s'") % {
            "status": str(WS(standing.status).label).lower(), "stage": stage.display_name}
            + (f": {standing.status_reason_shown}" if standing.status_reason else ""))
    return None


@transaction.atomic
def qualification_start(*, stage: Stage, worker: Any) -> WorkerStage:
    """Start a qualification try: ``qualification_items`` training items, in an order
    seeded by (stage, worker, try). A try already running is returned as it is. Refused
    when the worker is qualified already, paused or blocked on the stage, has no try left,
    or the stage has too few training items."""
    # The worker reads these: in their language, the stage by its shown name.
    name = stage.display_name
    wanted = _wanted(stage)
    if not wanted:
        raise ValidationError(gettext("stage '%(stage)s' asks for no qualification")
                              % {"stage": name})
    member = quality.member_of(worker=worker, stage=stage)
    standing = quality.standing_for(member=member, stage=stage, lock=True)
    if standing.qualified:
        raise ValidationError(gettext("you are qualified for '%(stage)s' already")
                              % {"stage": name})
    if (refusal := _stopped(member, standing, stage)) is not None:
        raise refusal
    if _in_progress(standing):
        return standing
    if standing.qualification_tries >= _tries_allowed(stage):
        raise ValidationError(gettext("no qualification try left for '%(stage)s' (%(used)s "
                                      "used)") % {"stage": name,
                                                  "used": standing.qualification_tries})
    ids = _training_ids(stage)
    if len(ids) < wanted:
        raise ValidationError(gettext("stage '%(stage)s' has %(n)s training item(s); a try "
                                      "needs %(wanted)s. Come back later")
                              % {"stage": name, "n": len(ids), "wanted": wanted})
    number = standing.qualification_tries + 1
    seed = f"crowdqa-qualification:{stage.pk}:{member.user_id}:{number}"
    random.Random(seed).shuffle(ids)  # noqa: S311 - an order, not a secret
    standing.training_items, standing.training_scores = ids[:wanted], []
    standing.save(update_fields=["training_items", "training_scores"])
    return standing


def qualification_item(*, standing: WorkerStage) -> Item | None:
    """The next training item of the running try (None when no try is running)."""
    if not _in_progress(standing):
        return None
    pk = standing.training_items[len(standing.training_scores)]
    return Item.objects.select_related("stage", "project", "document").filter(pk=pk).first()


def _feedback(standing: WorkerStage, answer: GoldAnswer) -> dict[str, Any]:
    """What a worker sees after a training answer: its score, the expected answer in
    words and the reason; when the try is over, its mean and whether it passed."""
    item = answer.item
    spec = item.stage.kind_spec
    finished = answer.try_number <= standing.qualification_tries
    position = (standing.training_items.index(item.pk) + 1
                if item.pk in standing.training_items else None)
    feedback: dict[str, Any] = {
        "item": item, "score": answer.score,
        "expected": spec.gold_explain(item, quality.expected_of(item)),
        "reason": item.result.get("reason", ""), "finished": finished,
        "number": position, "of": len(standing.training_items), "try": answer.try_number,
    }
    if finished:
        tries_left = max(0, _tries_allowed(item.stage) - standing.qualification_tries)
        feedback.update(mean=standing.qualification_score, passed=standing.qualified,
                        threshold=_threshold(item.stage), tries_left=tries_left)
    return feedback


def qualification_answer(*, standing: WorkerStage, item: Item,
                         payload: dict[str, Any]) -> dict[str, Any]:
    """Score the worker's answer to the next training item of their try with the stage's
    measure, record it, and return the feedback (score, expected answer in words, reason;
    at the end of the try its mean score and whether it passed). A finished try counts one
    try; a mean at or above ``qualification_threshold`` qualifies the worker."""
    with transaction.atomic():
        standing = (WorkerStage.objects.select_for_update(of=("self",))
                    .select_related("stage", "stage__project", "member").get(pk=standing.pk))
        stage = standing.stage
        # Paused or blocked since the try began: not one more answer.
        if (refusal := _stopped(standing.member, standing, stage)) is not None:
            raise refusal
        if item.stage_id != stage.pk or item.gold != "training":
            raise ValidationError(gettext("this item is not a training item of the stage"))
        if not _in_progress(standing):
            raise ValidationError(gettext("no qualification try is running; start one"))
        if item.pk not in standing.training_items:
            raise ValidationError(gettext("this item is not part of your try"))
        position = standing.training_items.index(item.pk)
        if position < len(standing.training_scores):
            raise ValidationError(gettext("you answered this item already"))
        if position != len(standing.training_scores):
            raise ValidationError(gettext("answer the items of your try in order"))
        spec = stage.kind_spec
        cleaned = spec.payload_checked(item, payload)
        score = float(spec.gold_score(item, cleaned, quality.expected_of(item)))
        number = standing.qualification_tries + 1
        answer = GoldAnswer.objects.create(standing=standing, item=item, purpose="training",
                                           try_number=number, payload=cleaned, score=score)
        standing.training_scores = [*standing.training_scores, score]
        fields = ["training_scores"]
        if not _in_progress(standing):
            mean = sum(standing.training_scores) / len(standing.training_scores)
            standing.qualification_tries = number
            standing.qualification_score = mean
            standing.qualified = mean >= _threshold(stage)
            standing.changed_at = timezone.now()
            fields += ["qualification_tries", "qualification_score", "qualified", "changed_at"]
        standing.save(update_fields=fields)
    answer.item = item
    return _feedback(standing, answer)


def qualification_feedback(*, standing: WorkerStage, item_id: int) -> dict[str, Any] | None:
    """The feedback on the worker's answer to ``item_id`` in their running or last try
    (None when they have not answered it there)."""
    number = standing.qualification_tries + (1 if _in_progress(standing) else 0)
    answer = (GoldAnswer.objects.select_related("item", "item__stage", "item__document")
              .filter(standing=standing, item_id=item_id, purpose="training",
                      try_number=number).order_by("-id").first())
    return _feedback(standing, answer) if answer is not None else None


STATES = {
    "not_needed": "Not needed",
    "todo": "To do",
    "in_progress": "In progress",
    "passed": "Passed",
    "failed": "Failed, try again",
    "failed_final": "Failed, no try left",
    "unavailable": "Not open yet",
    "paused": "Paused",
    "blocked": "Blocked",
}
#: The badge colour of each state (the classes of the stylesheet).
TONES = {"passed": "done", "failed_final": "failed", "blocked": "failed",
         "in_progress": "running", "paused": "running", "unavailable": "pending"}


def _state(stage: Stage, standing: WorkerStage | None, available: int,
           member_status: str = ProjectMember.Status.ACTIVE) -> dict[str, Any]:
    """A worker's qualification state on a stage that asks for one (paused or blocked when
    their membership of the project is, ``member_status``)."""
    tries = _tries_allowed(stage)
    used = standing.qualification_tries if standing else 0
    if not _wanted(stage):
        state = "not_needed"
    elif standing is not None and standing.qualified:
        state = "passed"
    elif member_status != ProjectMember.Status.ACTIVE:
        state = member_status
    elif standing is not None and standing.status != WS.ACTIVE:
        state = standing.status
    elif standing is not None and _in_progress(standing):
        state = "in_progress"
    elif used >= tries:
        state = "failed_final"
    elif available < _wanted(stage):
        state = "unavailable"
    else:
        state = "failed" if used else "todo"
    return {
        "stage": stage, "project": stage.project, "state": state, "label": STATES[state],
        "tone": TONES.get(state, "open"),
        "items": _wanted(stage), "threshold": _threshold(stage), "tries": tries,
        "tries_used": used, "tries_left": max(0, tries - used),
        "score": standing.qualification_score if standing else None,
        "answered": len(standing.training_scores) if standing and _in_progress(standing)
        else 0,
        "can_start": state in ("todo", "failed"),
        "member_stopped": member_status != ProjectMember.Status.ACTIVE,
    }


def qualification_status(*, stage: Stage, worker: Any) -> tuple[WorkerStage | None, dict]:
    """The worker's standing on ``stage`` (None before their first try; nothing is written)
    and their qualification state. ValidationError when they do not work the stage."""
    member = quality.member_of(worker=worker, stage=stage)
    standing = WorkerStage.objects.filter(member=member, stage=stage).first()
    return standing, _state(stage, standing, len(_training_ids(stage)), member.status)


def qualifications_for(*, worker: Any, project: Project | None = None) -> list[dict[str, Any]]:
    """The stages (of projects neither completed nor closed) that ask this worker for a
    qualification, with their state: to do, in progress, passed, failed with tries left,
    failed for good."""
    members = ProjectMember.objects.filter(user=worker).exclude(
        project__status__in=[Project.Status.COMPLETED, Project.Status.CLOSED])
    if project is not None:
        members = members.filter(project=project)
    roles = {(m.project_id, m.role): m for m in members}
    if not roles:
        return []
    stages = [stage for stage in Stage.objects.select_related("project")
              .filter(project_id__in={p for p, _ in roles}).order_by("project__name", "order")
              if not stage.kind_spec.automatic and _wanted(stage)
              and (stage.project_id, stage.kind_spec.role.value) in roles]
    standings = {(s.member_id, s.stage_id): s for s in WorkerStage.objects.filter(
        member__in=[m.pk for m in roles.values()], stage__in=[s.pk for s in stages])}
    available = dict(Item.objects.filter(stage__in=[s.pk for s in stages], gold="training",
                                         status=Item.Status.OPEN)
                     .values("stage").annotate(n=Count("id")).values_list("stage", "n"))
    rows = []
    for stage in stages:
        member = roles[(stage.project_id, stage.kind_spec.role.value)]
        rows.append(_state(stage, standings.get((member.pk, stage.pk)),
                           available.get(stage.pk, 0), member.status))
    return rows


def worker_accuracy(*, worker: Any, project: Project | None = None) -> list[dict[str, Any]]:
    """Per stage, the worker's own accuracy: training answers (count, mean score) and gold
    checks (count, mean score), with their standing there. Gold checks count from the day
    after they were answered: figures that moved with each check would tell the worker
    which of the tasks they just did was one (and gold items are shared by many workers)."""
    standings = (WorkerStage.objects.filter(member__user=worker)
                 .select_related("stage", "stage__project")
                 .order_by("stage__project__name", "stage__order"))
    if project is not None:
        standings = standings.filter(stage__project=project)
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    figures: dict[tuple[int, str], dict[str, Any]] = {
        (row["standing"], row["purpose"]): row
        for row in GoldAnswer.objects.filter(standing__in=standings)
        .exclude(purpose="check", created_at__gte=today)
        .values("standing", "purpose").annotate(n=Count("id"), mean=Avg("score"))
    }
    rows = []
    for standing in standings:
        training = figures.get((standing.pk, "training"), {})
        check = figures.get((standing.pk, "check"), {})
        if (not training and not check and not standing.qualified
                and standing.status == WS.ACTIVE):
            continue
        rows.append({
            "stage": standing.stage, "project": standing.stage.project,
            "training_count": training.get("n", 0), "training_mean": training.get("mean"),
            "check_count": check.get("n", 0), "check_mean": check.get("mean"),
            "qualified": standing.qualified, "qualification_score":
            standing.qualification_score, "status": standing.status,
            "status_label": WS(standing.status).label,  # the page shows it, translated
            "status_reason": standing.status_reason_shown,
        })
    return rows
