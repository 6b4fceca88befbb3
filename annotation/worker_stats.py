"""Reads for the workers pages: per-worker figures of a project, one worker's submissions,
and the workers' work over time.

Every figure is aggregated per project in a fixed number of queries, never per worker.
What the columns mean:

* ``tasks``: the worker's submissions that count (gold checks included; an answer the worker
  corrected does not, its correction does); ``set_aside``: those set aside after they failed
  a stage's gold checks, counted apart and nowhere else.
* ``active_time_s``: the sum over counted submissions of the active time the task page
  measured, or of the time from claim to submit where it measured nothing, a correction's
  with the time of the answer it replaced; ``median_time_s``: the median of that same
  per-task time.
* ``gold_accuracy`` / ``gold_seen``: the mean score of the worker's gold checks and how many
  they answered, summed over their standings (``WorkerStage``) on the stages shown.
* ``competence``: estimated from the work alone over the project's non-gold items, per
  stage, by the kind of judgment (``collector.metrics.competence``): Dawid-Skene accuracy
  for categorical labels, leave-one-out span F1 with a bootstrap interval for extractive
  answers, the mean normalised pa-BLEU weight for free-text answers. Only items answered by
  at least two workers count; a worker's latest counted submission per item is used.
* ``agreement``: the share of the worker's answered items where the agreed result matches
  their answer (pooled over the stages shown): for labels, the item's Dawid-Skene label;
  for NewsQA spans, the consolidated consensus of the question (same SQuAD-normalised text
  from the first to the last span, or the same no-answer / bad-question flag; a question
  without agreement whose record reads noAnswer, e.g. all its answers rejected, counts for
  no one); for free text, not being flagged as an outlier by the consensus weighting
  (queries with at least the stage's ``min_answers`` answers). None when no item of
  theirs has such a result.
* ``rejections``: inspections that returned a batch the worker annotated (ReCO), of
  ``inspections`` finished on their batches.

The competence estimates are computed once per project and kept in the cache for
``COMPETENCE_TTL`` seconds, keyed by the project's submissions (their number, the latest id
and the number set aside) and its agreement results (the consolidated or weighted items
finished, and the latest finish), so new work and new results are seen at once. What an
estimate computed per item and per worker (span scores, bootstrap intervals, agreement with
the consensus) is kept for ``MEMO_TTL`` seconds, so the next estimate, after new work,
computes again only the items and workers that work changed: while a crowd of hundreds
works, the page costs what changed since the last view, not the whole project again. The
answers the estimate reads are kept too (in the process, ``_latest_answers``): after new
work only the answers above the last one read are read, once two sums over the others
(how many, the sum of their ids) show that none of them changed (set aside, its item made
gold or not, committed late); otherwise all are read again. The figures are those of a
computation from scratch.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

import orjson
from django.core.cache import cache
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import Count, Max, Min, Q, Sum
from django.db.models.functions import Coalesce, TruncDay, TruncHour
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from annotation.models import (
    GoldAnswer,
    Inspection,
    Item,
    Project,
    ProjectMember,
    Stage,
    Submission,
    WorkerStage,
)
from annotation.pay import submissions_per
from annotation.plots import Plot, hbar, line_plot
from annotation.roles import Role
from collector.consolidation import Answer, clean_answer
from collector.metrics import squad_normalize
from collector.metrics.competence import (
    freetext_competence,
    labels_competence,
    spans_competence,
)
from collector.metrics.errors import MetricsInputError
from collector.stored_text import stored_text_render

log = logging.getLogger(__name__)

WORKER_ROLES = (Role.ANNOTATOR.value, Role.CHECKER.value)
STATUS_RANK = {"active": 0, "paused": 1, "blocked": 2}
COMPETENCE_TTL = 120
MEMO_TTL = 3600  # the per-item and per-worker results new work starts from
ANSWERS_KEPT = 4  # projects whose counted answers a process keeps (``_latest_answers``)
#: Per project, the counted answers the last estimate read, least recently used first.
_ANSWERS: dict[str, dict[str, Any]] = {}
SPAN_RESAMPLES = 1000
SPAN_SEED = 0
TOP_WORKERS = 5
HOURLY_SPAN = timedelta(days=2)
SUBMISSIONS_PER_PAGE = 50


# Judgments of each stage kind ------------------------------------------------------------

def _validate_label(payload: dict[str, Any]) -> str:
    """NewsQA validation: the chosen unique answer's index, or the flag."""
    if payload.get("all_bad"):
        return "all_bad"
    if payload.get("bad_question"):
        return "bad_question"
    return f"answer {payload['choice']}"


def _judge_label(payload: dict[str, Any]) -> str:
    """MS MARCO query judgment: intent and keep/exclude decision together."""
    return f"{payload['intent']}/{payload['decision']}"


def _reco_label(payload: dict[str, Any]) -> str:
    """ReCO evidence: the answer type the annotator marked, or the rejection."""
    return "rejected" if payload.get("reject") else str(payload["answer"])


#: Kinds whose judgment is a category, and how to read it from a payload.
LABEL_KINDS: dict[str, Callable[[dict[str, Any]], str]] = {
    "newsqa_validate": _validate_label,
    "marco_judge": _judge_label,
    "reco_evidence": _reco_label,
    "reco_test_evidence": _reco_label,
}
SPAN_KINDS = ("newsqa_answer",)
FREETEXT_KINDS = ("marco_distill",)

METHODS = {
    "labels": "Dawid-Skene accuracy",
    "spans": "span F1 against the others' consensus",
    "freetext": "pa-BLEU weight",
}
AGREEMENT_BASIS = {
    "labels": "answer equals the item's Dawid-Skene label",
    "spans": "answer equals the consolidated consensus",
    "freetext": "answer not flagged as an outlier by the pa-BLEU consensus",
}


def _method(kind: str) -> str | None:
    if kind in LABEL_KINDS:
        return "labels"
    if kind in SPAN_KINDS:
        return "spans"
    if kind in FREETEXT_KINDS:
        return "freetext"
    return None


def _span_text(body: str, payload: dict[str, Any]) -> str:
    """An extractive answer as text: its spans joined; "" for no answer or a bad question."""
    return " ".join(body[s:e] for s, e in payload.get("spans") or [])


def _answer_range_text(body: str, answer: Answer) -> tuple[str, ...]:
    """What is compared with a NewsQA consensus: the flag, or the normalised text from the
    first start to the last end (how the consolidated record writes a consensus)."""
    if answer.no_answer:
        return ("none",)
    if answer.bad_question:
        return ("bad",)
    return (squad_normalize(body[answer.spans[0][0]:answer.spans[-1][1]]),)


def _consensus_text(body: str, consensus: dict[str, Any]) -> tuple[str, ...]:
    if consensus.get("noAnswer"):
        return ("none",)
    if consensus.get("badQuestion"):
        return ("bad",)
    return (squad_normalize(body[consensus["s"]:consensus["e"]]),)


# Competence, once per project ------------------------------------------------------------

#: The automatic stages whose finished items are what agreement compares with.
AGREEMENT_RESULT_KINDS = ("newsqa_consolidate", "marco_consensus")


def _fingerprint(project: Project, work: list[tuple]) -> tuple[Any, ...]:
    """The project's submissions in three numbers (count, latest id, set aside; from
    ``_work_by_stage``'s rows) and its agreement results in two (finished items, the latest
    finish): a consolidation that finishes after the last submission is seen at once too."""
    results = Item.objects.filter(
        project=project, stage__kind__in=AGREEMENT_RESULT_KINDS, status=Item.Status.DONE,
    ).aggregate(n=Count("id"), last=Max("finished_at"))
    last = results["last"].timestamp() if results["last"] else 0
    return (sum(r[2] + r[3] for r in work), max((r[5] for r in work), default=0),
            sum(r[3] for r in work), results["n"], last)


def _work_by_stage(stage_ids: list[int]) -> list[tuple]:
    """Each worker's submissions per stage, summed by the database: (worker id, stage id,
    counted, set aside, active seconds of the counted ones, latest id). A corrected answer
    is no task of its own (its correction is), but its time is part of the task's."""
    latest = Q(superseded_by__isnull=True)
    rows = (Submission.objects.filter(stage_id__in=stage_ids).order_by()
            .values("worker_id", "stage_id")
            .annotate(counted=Count("id", filter=Q(set_aside=False) & latest),
                      aside=Count("id", filter=Q(set_aside=True) & latest),
                      seconds=Sum(Coalesce("active_time_s", "time_on_task_s"),
                                  filter=Q(set_aside=False)),
                      latest=Max("id")))
    return [(r["worker_id"], r["stage_id"], r["counted"], r["aside"], r["seconds"] or 0.0,
             r["latest"]) for r in rows]


def _median_by_worker(stage_ids: list[int]) -> dict[int, float]:
    """Each worker's median active seconds per task over ``stage_ids``: the middle one, or
    the mean of the middle two (``statistics.median``), found by the database (window
    functions, on SQLite as on PostgreSQL). A task's time is its counted answer's with the
    times of the answers it corrected, however many corrections led to it."""
    if not stage_ids:
        return {}
    marks = ", ".join(["%s"] * len(stage_ids))
    spent = "COALESCE(s.active_time_s, s.time_on_task_s)"
    statement = (
        "WITH RECURSIVE chain(head, worker, id) AS ("  # noqa: S608 (placeholders)
        " SELECT s.id, s.worker_id, s.id FROM annotation_submission s"
        f" WHERE s.stage_id IN ({marks}) AND s.set_aside = %s AND s.superseded_by_id IS NULL"
        " UNION ALL SELECT c.head, c.worker, p.id FROM chain c"
        " JOIN annotation_submission p ON p.superseded_by_id = c.id),"
        f" task(w, t) AS (SELECT c.worker, SUM({spent}) FROM chain c"
        " JOIN annotation_submission s ON s.id = c.id GROUP BY c.head, c.worker)"
        " SELECT w, AVG(t) FROM (SELECT w, t, ROW_NUMBER() OVER (PARTITION BY w ORDER BY t)"
        " AS k, COUNT(*) OVER (PARTITION BY w) AS c FROM task) x"
        " WHERE k = (c + 1) / 2 OR k = (c + 2) / 2 GROUP BY w"
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, [*stage_ids, False])
        return {worker_id: median for worker_id, median in cursor.fetchall()}


def project_competence(*, project: Project, stages: list[Stage],
                       fingerprint: tuple[Any, ...]) -> dict[int, dict[str, Any]]:
    """Per stage id: the competence estimate and agreement of each worker (user id), cached
    for ``COMPETENCE_TTL`` seconds under the project's submissions and results
    fingerprint."""
    stamp = int(project.created_at.timestamp() * 1_000_000)
    key = f"crowdqa:workers:competence:{project.pk}:{stamp}:" + ":".join(map(str, fingerprint))
    cached = cache.get(key)
    if cached is None:
        # What the last estimate computed per item and per worker: new work recomputes
        # only the items and workers it changes (same figures, a fraction of the time).
        memo_key = f"crowdqa:workers:competence-memo:{project.pk}:{stamp}"
        memo = cache.get(memo_key) or {}
        # The answers read last time stay in this process (they check themselves against
        # the database, and would cost more to pickle into the cache than to keep).
        answers = _ANSWERS.pop(memo_key, None)
        if answers is not None:
            memo["answers"] = answers
        cached = _competence(project, stages, memo)
        if "answers" in memo:
            _ANSWERS[memo_key] = memo.pop("answers")
            while len(_ANSWERS) > ANSWERS_KEPT:
                _ANSWERS.pop(next(iter(_ANSWERS)))
        cache.set(key, cached, COMPETENCE_TTL)
        cache.set(memo_key, memo, MEMO_TTL)
    return cached


def _competence(project: Project, stages: list[Stage],
                memo: dict[str, Any] | None = None) -> dict[int, dict[str, Any]]:
    methods = {s.pk: _method(s.kind) for s in stages if _method(s.kind)}
    if not methods:
        return {}
    # The latest counted answer of each worker to each non-gold item (a returned batch's
    # items are labelled again by the same annotator); after new work, only what changed.
    latest, touched, since, now = _latest_answers(list(methods), memo)
    by_stage: dict[int, dict[int, list[tuple[int, dict[str, Any], str, int | None]]]] = \
        defaultdict(lambda: defaultdict(list))
    for (stage_id, item_id, worker_id), (payload, key, doc_id) in latest.items():
        by_stage[stage_id][item_id].append((worker_id, payload, key, doc_id))
    stage_of = {s.pk: s for s in stages}
    out: dict[int, dict[str, Any]] = {}
    bodies = _bodies(project, by_stage, methods)
    for stage_id, method in methods.items():
        items = {i: answers for i, answers in by_stage.get(stage_id, {}).items()
                 if len(answers) >= 2}
        if not items:
            continue
        stage = stage_of[stage_id]
        try:
            if method == "labels":
                # Dawid-Skene reads the stage's answers alone: unchanged answers, same fit.
                # (Only a fit made from the answers this refresh started from: another
                # process's memo may hold one made from fewer.)
                kept = memo.get(stage_id, {}).get("labels") if memo is not None else None
                result = kept[1] if kept is not None and kept[0] == since and \
                    stage_id not in touched else _labels(stage, items)
                if memo is not None:
                    memo.setdefault(stage_id, {})["labels"] = (now, result)
            elif method == "spans":
                result = _spans(project, stages, items, bodies,
                                memo.setdefault(stage_id, {}) if memo is not None else None)
            else:
                result = _freetext(project, stages, items)
        except MetricsInputError as exc:  # a malformed payload: no estimate for the stage
            log.warning("competence of stage %s not computed: %s", stage_id, exc)
            continue
        out[stage_id] = {"method": method, "label": METHODS[method],
                         "agreement_basis": AGREEMENT_BASIS[method], **result}
    return out


def _counted_answers(stage_ids: list[int]) -> Any:
    return Submission.objects.filter(stage_id__in=stage_ids, set_aside=False, item__gold="")


def _latest_answers(stage_ids: list[int], memo: dict[str, Any] | None
                    ) -> tuple[dict[tuple[int, int, int], tuple[dict[str, Any], str, int | None]],
                               set[int], tuple | None, tuple]:
    """The latest counted answer of each worker to each non-gold item of ``stage_ids``,
    keyed (stage id, item id, worker id); the stages whose answers changed since the last
    call with the same ``memo`` (all of them the first time); and what the answers read
    were before this call (None: none kept) and are after it, as (last id, how many, sum
    of ids).

    The memo keeps the answers it read up to an id and two sums of what it read (how many,
    the sum of their ids): new answers are those above that id, and when the sums of the
    answers up to it no longer match, something changed under it (an answer set aside, an
    item made gold or no longer gold, an answer deleted, one committed after a later id was
    read), and everything is read again. A correction is a new answer, and an item finished
    or re-opened changes no answer: what it changes (the consensus) is read each time."""
    stage_ids = sorted(stage_ids)
    kept = memo.get("answers") if memo is not None else None
    if kept is not None and kept["stages"] == stage_ids:
        under = _counted_answers(stage_ids).filter(id__lte=kept["upto"]).aggregate(
            n=Count("id"), ids=Sum("id"))
        if (under["n"], under["ids"] or 0) != (kept["n"], kept["ids"]):
            kept = None
    else:
        kept = None
    if kept is None:
        kept = {"stages": stage_ids, "upto": 0, "n": 0, "ids": 0, "latest": {}}
        touched, since = set(stage_ids), None
    else:
        touched, since = set(), (kept["upto"], kept["n"], kept["ids"])
    latest = kept["latest"]
    for pk, stage_id, item_id, worker_id, payload, key, doc_id in (
        _counted_answers(stage_ids).filter(id__gt=kept["upto"]).order_by("id")
        .values_list("id", "stage_id", "item_id", "worker_id", "payload", "item__key",
                     "item__document_id").iterator()
    ):
        latest[(stage_id, item_id, worker_id)] = (payload, key, doc_id)
        touched.add(stage_id)
        kept["upto"] = pk
        kept["n"] += 1
        kept["ids"] += pk
    if memo is not None:
        memo["answers"] = kept
    return latest, touched, since, (kept["upto"], kept["n"], kept["ids"])


def _bodies(project: Project, by_stage: dict, methods: dict[int, str]) -> dict[int, str]:
    from collector.models import Document

    doc_ids = {doc_id for stage_id, method in methods.items() if method == "spans"
               for answers in by_stage.get(stage_id, {}).values()
               for _, _, _, doc_id in answers if doc_id}
    if not doc_ids:
        return {}
    return dict(Document.objects.filter(pk__in=doc_ids).values_list("id", "body"))


def _counts(items: dict[int, list[tuple]]) -> dict[int, int]:
    counted: dict[int, int] = defaultdict(int)
    for answers in items.values():
        for worker_id, *_ in answers:
            counted[worker_id] += 1
    return counted


def _labels(stage: Stage, items: dict[int, list[tuple]]) -> dict[str, Any]:
    read = LABEL_KINDS[stage.kind]
    rows = [{"item": str(item_id), "worker": str(worker_id), "label": read(payload)}
            for item_id, answers in items.items() for worker_id, payload, _, _ in answers]
    fit = labels_competence(rows)
    counted = _counts(items)
    agreement: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        tally = agreement[int(row["worker"])]
        tally[0] += int(fit["items"][row["item"]] == row["label"])
        tally[1] += 1
    return {
        "workers": {int(w): {"value": v["accuracy"], "low": None, "high": None,
                             "items": counted[int(w)]} for w, v in fit["workers"].items()},
        "agreement": dict(agreement),
    }


def _spans(project: Project, stages: list[Stage], items: dict[int, list[tuple]],
           bodies: dict[int, str], memo: dict[str, Any] | None = None) -> dict[str, Any]:
    """Span competence and agreement; ``memo`` (kept between calls) holds the metric's
    per-item and per-worker results and each answer's comparison with its consensus."""
    memo = {} if memo is None else memo
    rows = [{"item": str(item_id), "worker": str(worker_id),
             "answer": _span_text(bodies.get(doc_id, ""), payload)}
            for item_id, answers in items.items() for worker_id, payload, _, doc_id in answers]
    fit = spans_competence(rows, resamples=SPAN_RESAMPLES, seed=SPAN_SEED,
                           memo=memo.setdefault("fit", {}))
    counted = _counts(items)
    # Agreement with the consolidated consensus of each question (same key as the item).
    consolidate = next((s for s in stages if s.kind == "newsqa_consolidate"), None)
    gap = (consolidate.params.get("max_gap_words", 3) if consolidate else 3)
    # A question without agreement whose record reads noAnswer (its answers rejected as all
    # bad, or no consensus at all: NewsQA's files mark both so) has no result to agree
    # with; a tie broken by the earliest vote keeps its span as the consensus.
    consensus = {key: agreed for key, agreed, ok in Item.objects.filter(
        project=project, stage__kind="newsqa_consolidate", status=Item.Status.DONE,
        key__in=[answers[0][2] for answers in items.values()],
    ).values_list("key", "result__consensus", "result__agreed")
        if ok is not False or agreed != {"noAnswer": True}}
    agreement: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    known, used = memo.get("agrees", {}), {}
    written = {key: orjson.dumps(agreed, option=orjson.OPT_SORT_KEYS)
               for key, agreed in consensus.items() if isinstance(agreed, dict)}
    for answers in items.values():
        for worker_id, payload, key, doc_id in answers:
            agreed = consensus.get(key)
            if not isinstance(agreed, dict):
                continue
            seen = (doc_id, gap, orjson.dumps(payload, option=orjson.OPT_SORT_KEYS),
                    written[key])
            agrees = used.get(seen, known.get(seen))
            if agrees is None:
                body = bodies.get(doc_id, "")
                mine = clean_answer(body, Answer.from_record(payload), max_gap_words=gap)
                agrees = _answer_range_text(body, mine) == _consensus_text(body, agreed)
            used[seen] = agrees
            tally = agreement[worker_id]
            tally[0] += int(agrees)
            tally[1] += 1
    memo["agrees"] = used
    return {
        "workers": {int(w): {"value": v["f1"], "low": v["low"], "high": v["high"],
                             "items": counted[int(w)]} for w, v in fit["workers"].items()},
        "agreement": dict(agreement),
    }


def _freetext(project: Project, stages: list[Stage], items: dict[int, list[tuple]]
              ) -> dict[str, Any]:
    rows = [{"item": str(item_id), "worker": str(worker_id), "answer": payload["answer"]}
            for item_id, answers in items.items() for worker_id, payload, _, _ in answers]
    fit = freetext_competence(rows)
    # Agreement: the answer was not flagged by the consensus weighting.
    consensus_stage = next((s for s in stages if s.kind == "marco_consensus"), None)
    least = consensus_stage.params.get("min_answers", 3) if consensus_stage else 3
    agreement: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for answers, flagged in Item.objects.filter(
        project=project, stage__kind="marco_consensus", status=Item.Status.DONE,
    ).values_list("data__answers", "result__flagged"):
        if not isinstance(answers, list) or len(answers) < least:
            continue
        outliers = set(flagged or [])
        for n, answer in enumerate(answers):
            worker_id = answer.get("worker_id")
            if worker_id is None:
                continue
            tally = agreement[int(worker_id)]
            tally[0] += int(n not in outliers)
            tally[1] += 1
    return {
        "workers": {int(w): {"value": v["weight"], "relative": v["relative"], "low": None,
                             "high": None, "items": v["items"]}
                    for w, v in fit["workers"].items()},
        "agreement": dict(agreement),
    }


# The workers table -----------------------------------------------------------------------

def duration(seconds: float | None) -> str:
    """Seconds for people: "42 s", "12 min 5 s", "3 h 04 min"."""
    if seconds is None:
        return "—"
    whole = int(round(seconds))
    if whole < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _worst(statuses: Iterable[tuple[str, str, str]]) -> tuple[str, str, str]:
    """The worst (status, reason, where) of a worker's: blocked > paused > active."""
    worst = ("active", "", "")
    for each in statuses:
        if STATUS_RANK.get(each[0], 0) > STATUS_RANK.get(worst[0], 0):
            worst = each
    return worst


def project_workers(*, project: Project, stage: Stage | None = None,
                    external_ids: bool = False) -> list[dict[str, Any]]:
    """One row per annotator or checker member of the project (a person who is both has one
    row), with the figures the module docstring defines; with ``stage``, figures and
    standings of that stage only. Marketplace ids only with ``external_ids`` (admins)."""
    stages = list(project.stages.order_by("order"))
    stage_of = {s.pk: s for s in stages}
    members = list(ProjectMember.objects.filter(project=project, role__in=WORKER_ROLES)
                   .select_related("user", "user__external_account")
                   .order_by("user__username", "role"))
    member_user = {m.pk: m.user_id for m in members}
    standings: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in (WorkerStage.objects.filter(member__project=project)
                .values("member_id", "stage_id", "status", "status_reason", "status_reason_text",
                        "gold_seen", "gold_score_sum", "qualified", "qualification_score")):
        if row["member_id"] in member_user and (stage is None or row["stage_id"] == stage.pk):
            # The reason in the reader's language (words only: as they are).
            row["status_reason"] = stored_text_render(row.pop("status_reason_text"),
                                                      row["status_reason"])
            standings[member_user[row["member_id"]]].append(row)

    work = _work_by_stage(list(stage_of))
    competence = project_competence(project=project, stages=stages,
                                    fingerprint=_fingerprint(project, work))
    tasks: dict[int, int] = defaultdict(int)
    seconds: dict[int, float] = defaultdict(float)
    aside: dict[int, int] = defaultdict(int)
    worked: dict[int, set[int]] = defaultdict(set)
    for worker_id, stage_id, counted, set_aside, active, _ in work:
        if stage is not None and stage_id != stage.pk:
            continue
        worked[worker_id].add(stage_id)
        aside[worker_id] += set_aside
        tasks[worker_id] += counted
        seconds[worker_id] += active
    medians = _median_by_worker([stage.pk] if stage is not None else list(stage_of))

    inspected = Inspection.objects.filter(batch__project=project, passed__isnull=False)
    if stage is not None:
        inspected = inspected.filter(batch__stage=stage)
    inspections = {
        row["batch__annotator_id"]: row for row in inspected.order_by()
        .values("batch__annotator_id")
        .annotate(done=Count("id"), returned=Count("id", filter=Q(passed=False)))
    }

    by_user: dict[int, list[ProjectMember]] = defaultdict(list)
    for member in members:
        by_user[member.user_id].append(member)
    rows = []
    for user_id, memberships in by_user.items():
        user = memberships[0].user
        own = sorted(standings.get(user_id, []), key=lambda r: stage_of[r["stage_id"]].order)
        status, reason, where = _worst(
            [(m.status, f"membership {m.get_status_display().lower()}", "project")
             for m in memberships]
            + [(s["status"], s["status_reason"], stage_of[s["stage_id"]].display_name)
               for s in own])
        seen = sum(s["gold_seen"] for s in own)
        median = medians.get(user_id)
        median = round(median, 1) if median is not None else None
        spent = seconds[user_id] if tasks.get(user_id) else 0  # none counted: 0 s
        entries = []
        matched = counted = 0
        for each in stages:
            if stage is not None and each.pk != stage.pk:
                continue
            estimate = competence.get(each.pk)
            if not estimate:
                continue
            mine = estimate["workers"].get(user_id)
            if mine is not None:
                entries.append({"stage": each, "method": estimate["method"],
                                "label": estimate["label"], **mine})
            hit, total = estimate["agreement"].get(user_id, (0, 0))
            matched, counted = matched + hit, counted + total
        inspection = inspections.get(user_id, {})
        account = getattr(user, "external_account", None)
        standing_stages = {s["stage_id"] for s in own} | worked.get(user_id, set())
        row = {
            "user_id": user_id,
            "username": user.get_username(),
            "roles": [m.role for m in memberships],
            "role": ", ".join(m.role for m in memberships),
            "source": memberships[0].get_source_display(),
            "status": status, "status_reason": reason, "status_where": where,
            "tasks": tasks.get(user_id, 0), "set_aside": aside.get(user_id, 0),
            "active_time_s": round(spent, 1), "active_time": duration(spent),
            "median_time_s": median, "median_time": duration(median),
            "gold_seen": seen,
            "gold_accuracy": (sum(s["gold_score_sum"] for s in own) / seen) if seen else None,
            "competence": entries,
            "competence_score": entries[0]["value"] if entries else None,
            "agreement": matched / counted if counted else None,
            "agreement_matched": matched, "agreement_items": counted,
            "inspections": inspection.get("done", 0),
            "rejections": inspection.get("returned", 0),
            "standings": _standings(own, standing_stages, stage_of, memberships),
            "platform": "", "external_id": "",
        }
        if external_ids and account is not None:
            row["platform"] = account.get_platform_display()
            row["external_id"] = account.external_id
        rows.append(row)
    return rows


def _standings(own: list[dict[str, Any]], stage_ids: set[int], stage_of: dict[int, Stage],
               memberships: list[ProjectMember]) -> list[dict[str, Any]]:
    """The worker's standing on each human stage they have one on or worked, in stage
    order (stages without a standing row are active)."""
    roles = {m.role for m in memberships}
    recorded = {s["stage_id"]: s for s in own}
    out = []
    for stage_id in sorted(stage_ids, key=lambda pk: stage_of[pk].order):
        stage = stage_of[stage_id]
        spec = stage.kind_spec
        if spec.automatic or spec.role.value not in roles:
            continue
        s = recorded.get(stage_id, {})
        seen = s.get("gold_seen", 0)
        out.append({
            "stage": stage, "status": s.get("status", "active"),
            "reason": s.get("status_reason", ""), "qualified": s.get("qualified", False),
            "qualification_score": s.get("qualification_score"), "gold_seen": seen,
            "gold_accuracy": s["gold_score_sum"] / seen if seen else None,
        })
    return out


# Sorting and filtering -----------------------------------------------------------------

SORTS: dict[str, tuple[str, Callable[[dict[str, Any]], Any]]] = {
    "username": (gettext_lazy("Worker"), lambda r: r["username"].lower()),
    "role": (gettext_lazy("Role"), lambda r: r["role"]),
    "source": (gettext_lazy("Source"), lambda r: r["source"]),
    "status": (gettext_lazy("Status"), lambda r: STATUS_RANK.get(r["status"], 0)),
    "tasks": (gettext_lazy("Tasks"), lambda r: r["tasks"]),
    "active_time": (gettext_lazy("Active time"), lambda r: r["active_time_s"]),
    "median_time": (gettext_lazy("Median per task"), lambda r: r["median_time_s"]),
    "gold": (gettext_lazy("Gold accuracy"), lambda r: r["gold_accuracy"]),
    "competence": (gettext_lazy("Competence"), lambda r: r["competence_score"]),
    "agreement": (gettext_lazy("Agreement"), lambda r: r["agreement"]),
    "rejections": (gettext_lazy("Batches returned"), lambda r: r["rejections"]),
}

#: Columns whose first click sorts A to Z (the others: highest first).
ASCENDING_FIRST = ("username", "role", "source")


def workers_sorted(rows: list[dict[str, Any]], *, sort: str = "tasks",
                   descending: bool = True) -> list[dict[str, Any]]:
    """Rows by one column (``SORTS``); rows without a value last either way, ties by
    username."""
    key = SORTS.get(sort, SORTS["tasks"])[1]
    by_name = sorted(rows, key=lambda r: r["username"].lower())
    known = [r for r in by_name if key(r) is not None]
    unknown = [r for r in by_name if key(r) is None]
    return sorted(known, key=key, reverse=descending) + unknown


def workers_filtered(rows: list[dict[str, Any]], *, status: str = "", role: str = "",
                     text: str = "") -> list[dict[str, Any]]:
    """Rows of one status, one role, and usernames containing ``text`` (any case)."""
    text = text.strip().lower()
    return [r for r in rows
            if (not status or r["status"] == status)
            and (not role or role in r["roles"])
            and (not text or text in r["username"].lower())]


# One worker's submissions --------------------------------------------------------------

def _summary(kind: str, item: Item, payload: dict[str, Any]) -> str:
    """A payload in a few words, by stage kind."""
    if payload.get("no_answer"):
        return gettext("no answer in the article")
    if payload.get("bad_question"):
        return gettext("the question makes no sense")
    if payload.get("reject"):
        return gettext("rejected the query")
    if payload.get("all_bad"):
        return gettext("all answers are bad")
    if kind == "newsqa_question":
        return " · ".join(payload.get("questions", []))
    if kind == "newsqa_answer" and item.document_id:
        return "“" + " … ".join(item.document.body[s:e] for s, e in payload["spans"]) + "”"
    if kind == "newsqa_validate":
        return gettext("chose answer %(n)s") % {"n": payload["choice"] + 1}
    if kind == "marco_judge":
        excluded = ", ".join(payload.get("exclusions") or [])
        return f"{payload['intent']}, {payload['decision']}" + (f" ({excluded})"
                                                                if excluded else "")
    if kind == "marco_curate":
        if payload.get("unanswerable"):
            return gettext("not answerable by the passages")
        return gettext("selected passages %(ranks)s") % {
            "ranks": ", ".join(map(str, payload.get("selected", [])))}
    if kind == "marco_distill":
        return payload.get("answer", "")
    if kind == "marco_review":
        decisions = payload.get("decisions", {})
        return ", ".join(gettext("answer %(n)s: %(decision)s") % {"n": int(n) + 1, "decision": d}
                         for n, d in decisions.items()) or "—"
    if kind in ("reco_evidence", "reco_test_evidence") and "answer" in payload:
        from annotation.stages.reco import ANSWERS

        alternative = (payload.get("alternatives") or {}).get(payload["answer"], "")
        return f"{ANSWERS.get(payload['answer'], payload['answer'])}: {alternative}"
    if kind in ("reco_evidence_choice", "reco_adjudicate") and "choice" in payload:
        return gettext("chose label %(label)s") % {"label": "AB"[payload["choice"]]}
    return json.dumps(payload, ensure_ascii=False)


def worker_submissions(*, project: Project, worker: Any, page: Any = 1,
                       per_page: int = SUBMISSIONS_PER_PAGE) -> dict[str, Any]:
    """One page of the worker's submissions to the project, latest first: stage, item,
    payload summary, time, gold check score, set-aside mark; their standings on the
    project's stages, and their qualification (training) answers with scores."""
    submissions = (Submission.objects.filter(stage__project=project, worker=worker)
                   .select_related("stage", "item", "item__document")
                   .order_by("-created_at", "-id"))
    paged = Paginator(submissions, per_page).get_page(page)
    subs = list(paged.object_list)
    gold_items = {s.item_id for s in subs if s.item.gold}
    scores: dict[int, list[float]] = defaultdict(list)
    if gold_items:
        for item_id, score in (GoldAnswer.objects.filter(
                standing__member__project=project, standing__member__user=worker,
                item_id__in=gold_items, purpose="check").order_by("id")
                .values_list("item_id", "score")):
            scores[item_id].append(score)
    # Gold answers pair with the submissions to the same item in order.
    taken: dict[int, int] = defaultdict(int)
    rows = []
    for sub in sorted(subs, key=lambda s: s.pk):
        score = None
        if sub.item.gold:
            n = taken[sub.item_id]
            if n < len(scores[sub.item_id]):
                score = scores[sub.item_id][n]
            taken[sub.item_id] += 1
        rows.append({
            "submission": sub, "stage": sub.stage, "item": sub.item,
            "summary": _summary(sub.stage.kind, sub.item, sub.payload),
            "time": duration(sub.active_time_s if sub.active_time_s is not None
                             else sub.time_on_task_s),
            "measured": sub.active_time_s is not None,
            "gold": sub.item.gold, "gold_score": score, "set_aside": sub.set_aside,
        })
    rows.reverse()
    training = list(GoldAnswer.objects.filter(
        standing__member__project=project, standing__member__user=worker, purpose="training",
    ).select_related("item", "standing__stage").order_by("-id")[:100])
    standings = list(WorkerStage.objects.filter(member__project=project, member__user=worker)
                     .select_related("stage").order_by("stage__order"))
    return {"page": paged, "rows": rows, "training": training, "standings": standings}


# Over time -------------------------------------------------------------------------------

def _bucket_label(moment: datetime, hourly: bool) -> str:
    local = timezone.localtime(moment)
    return local.strftime("%Y-%m-%d %H:00") if hourly else local.date().isoformat()


def _labels_between(first: datetime, last: datetime, hourly: bool) -> list[str]:
    step = timedelta(hours=1) if hourly else timedelta(days=1)
    labels: list[str] = []
    moment = first
    end = _bucket_label(last, hourly)
    while moment <= last + step:
        label = _bucket_label(moment, hourly)
        if label <= end and (not labels or labels[-1] != label):
            labels.append(label)
        moment += step
    return labels


def _counts_plot(series: dict[str, list[float]], labels: list[str], *, unit: str) -> Plot:
    """A line per worker over the buckets (bars per worker when there is one bucket)."""
    title = submissions_per(unit == "hour")
    if len(labels) == 1:
        return hbar([(name, [(values[0], "bar", gettext("%(n)s submissions")
                              % {"n": f"{values[0]:g}"})])
                     for name, values in series.items()],
                    label=gettext("%(title)s (%(when)s)") % {"title": title, "when": labels[0]})
    peak = max((v for values in series.values() for v in values), default=0) or 1
    return line_plot(series, label=title, lo=0, hi=peak, x_span=(labels[0], labels[-1]))


def workers_over_time(*, project: Project, top: int = TOP_WORKERS) -> dict[str, Any]:
    """Submissions per day (per hour when the work spans under two days) of the ``top``
    workers with most submissions, and the cumulative gold accuracy of the ``top`` workers
    with most gold checks after each check; with their plots."""
    subs = Submission.objects.filter(stage__project=project)
    span = subs.aggregate(first=Min("created_at"), last=Max("created_at"))
    if span["first"] is None:
        return {"unit": None, "labels": [], "workers": [], "plots": {}}
    hourly = span["last"] - span["first"] < HOURLY_SPAN
    trunc = TruncHour if hourly else TruncDay
    per: dict[str, dict[str, int]] = defaultdict(dict)
    totals: dict[str, int] = defaultdict(int)
    for row in (subs.order_by().annotate(bucket=trunc("created_at"))
                .values("bucket", "worker__username").annotate(n=Count("id"))):
        label = _bucket_label(row["bucket"], hourly)
        name = row["worker__username"]
        per[name][label] = per[name].get(label, 0) + row["n"]
        totals[name] += row["n"]
    labels = _labels_between(span["first"], span["last"], hourly)
    leaders = sorted(totals, key=lambda n: (-totals[n], n))[:top]
    unit = "hour" if hourly else "day"
    series = {name: [per[name].get(label, 0) for label in labels] for name in leaders}
    plots: dict[str, Plot] = {"submissions": _counts_plot(series, labels, unit=unit)}

    gold: dict[str, list[float]] = defaultdict(list)
    thresholds = set()
    for name, score, params in (GoldAnswer.objects.filter(
            standing__member__project=project, purpose="check").order_by("id")
            .values_list("standing__member__user__username", "score",
                         "standing__stage__params").iterator()):
        gold[name].append(score)
        thresholds.add((params or {}).get("gold_min_accuracy", 0.7))
    gold_series: dict[str, list[float]] = {}
    for name in sorted(gold, key=lambda n: (-len(gold[n]), n))[:top]:
        running, curve = 0.0, []
        for n, score in enumerate(gold[name], start=1):
            running += score
            curve.append(round(running / n, 3))
        gold_series[name] = curve
    if gold_series and max(len(c) for c in gold_series.values()) == 1:
        plots["gold"] = hbar([(name, [(curve[0], "bar", gettext("accuracy %(value)s")
                                       % {"value": f"{curve[0]:g}"})])
                              for name, curve in gold_series.items()],
                             label=gettext("Gold accuracy after the first check"))
    elif gold_series:
        plots["gold"] = line_plot(
            gold_series, label=gettext("Gold accuracy after each check (cumulative)"), lo=0,
            hi=1,
            threshold=thresholds.pop() if len(thresholds) == 1 else None)
    return {"unit": unit, "labels": labels, "workers": leaders, "series": series,
            "gold": gold_series, "plots": plots}

