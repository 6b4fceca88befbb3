"""Reads of the annotation app: worker queues, project lists and the project dashboard."""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils.translation import gettext, gettext_noop, ngettext

from annotation.eligibility import AVAILABLE_CAP
from annotation.http import posted_id
from annotation.models import Assignment, Item, Project, Submission
from annotation.plots import WIDTH, hbar, line_plot, vbar
from annotation.roles import Role, has_role

User = get_user_model()
AS, IS = Assignment.Status, Item.Status
MEMBERS_SHOWN = 30
#: People to add a page on the project page's members card.
CANDIDATES_PER_PAGE = 25
#: Recipes whose projects have checkers added from the project page (ReCO: test-set
#: adjudication; MS MARCO: outlier review).
CHECKED_RECIPES = ("reco", "marco")
#: Weighed queries (their answers, weights and outlier flags) a page on MS MARCO's page.
WEIGHED_QUERIES_PER_PAGE = 12
WORKERS_PLOTTED = 30  # bars of the project page's submissions per worker (then the rest in one)


@dataclass
class StageAvailability:
    """What one worker may take of one stage now, and why not when nothing."""

    stage_id: int
    order: int
    name: str
    kind: str
    count: int  # open slots the worker may take (up to eligibility.AVAILABLE_CAP + 1)
    reason: str = ""  # why the worker may take nothing here ("" when they may)
    rule: str = ""  # the rule that keeps them out (a name of eligibility's rules)

    @property
    def display_name(self) -> str:
        """The stage's name in the interface's language (``Stage.display_name``)."""
        return gettext(self.name) if self.name else self.name


@dataclass
class ProjectAvailability:
    project_id: int
    status: str
    stages: list[StageAvailability] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(stage.count for stage in self.stages)

    @property
    def more(self) -> bool:
        """The count stopped at the cap: more are open than shown."""
        return any(stage.count > AVAILABLE_CAP for stage in self.stages)

    @property
    def shown(self) -> str:
        return f"{AVAILABLE_CAP}+" if self.more else str(self.count)

    @property
    def reasons(self) -> list[str]:
        return [f"{stage.display_name}: {stage.reason}" for stage in self.stages
                if stage.reason]


_RULE_REASONS = {  # shown in the worker's language (gettext where they are used)
    "under_limit": gettext_noop("you took the most tasks of this stage one worker may take"),
    "session_left": gettext_noop("you finished the tasks of this session"),
    "not_paused": gettext_noop("you are paused on this stage"),
    "qualified": gettext_noop("you have not passed this stage's qualification yet"),
}


def worker_availability(*, worker: Any, role: Role = Role.ANNOTATOR,
                        project: Project | None = None) -> dict[int, ProjectAvailability]:
    """Per project where the worker is a ``role`` member: the open tasks of each of its
    human stages they may take now (``annotation.eligibility``, the rules the claim
    uses), and for each stage where they may take nothing, the reason. One query."""
    from annotation import engine, sql
    from annotation.eligibility import availability_sql, stage_rules

    query = availability_sql(worker_id=worker.pk, role=role.value,
                             kinds=engine._role_kinds(role),
                             batched_kinds=engine._batched_kinds(),
                             project_id=project.pk if project is not None else None)
    if query is None:
        return {}
    rule_names = [name for name, _ in stage_rules()[2:]]
    with sql.db().cursor() as cursor:
        cursor.execute(*query)
        rows = cursor.fetchall()
    out: dict[int, ProjectAvailability] = {}
    for (stage_id, project_id, order, name, kind, project_status, member_status,
         *rest) in rows:
        verdicts, (takeable, open_work, others, upstream) = rest[:len(rule_names)], \
            rest[len(rule_names):]
        entry = out.setdefault(project_id, ProjectAvailability(project_id, project_status))
        stage = StageAvailability(stage_id, order, name, kind, 0)
        failed = [rule for rule, ok in zip(rule_names, verdicts, strict=True) if not ok]
        if project_status != Project.Status.ACTIVE:
            stage.rule = "project_active"
            stage.reason = gettext("the project is %(status)s") % {
                "status": str(Project.Status(project_status).label).lower()}
        elif member_status != "active":
            stage.rule = "member_active"
            stage.reason = gettext("your membership of this project is %(status)s") % {
                "status": gettext(member_status)}
        elif failed:
            stage.rule, stage.reason = failed[0], gettext(_RULE_REASONS[failed[0]])
        elif takeable:
            stage.count = takeable
        elif open_work:
            stage.rule = "pool"
            stage.reason = (gettext("its open tasks are ones you already did or may not do")
                            if kind not in engine._batched_kinds()
                            else gettext("its open tasks are in other annotators' batches"))
        elif others:
            stage.rule = "taken"
            stage.reason = gettext("all its tasks are being worked on by others right now")
        elif upstream:
            stage.rule = "upstream"
            stage.reason = gettext("waiting for an earlier stage to send it work")
        else:
            stage.rule = "empty"
            stage.reason = gettext("nothing is left to do")
        entry.stages.append(stage)
    return out


def worker_projects(*, worker: Any, role: Role = Role.ANNOTATOR) -> list[dict[str, Any]]:
    """Active projects where the worker is a ``role`` member with stages of that role, with
    the open tasks they may take in each (``worker_availability``) and, where none, why.
    Two queries."""
    available = worker_availability(worker=worker, role=role)
    projects = Project.objects.filter(
        pk__in=[pk for pk, entry in available.items()
                if entry.status == Project.Status.ACTIVE]).order_by("name")
    return [{"project": p, "open_slots": available[p.pk].shown,
             "available": available[p.pk]} for p in projects]


def availability_why(*, worker: Any, project: Project,
                     role: Role = Role.ANNOTATOR) -> list[str]:
    """Why the worker can take nothing in ``project`` now, one sentence per stage, with
    the details the list leaves out: which pool rule keeps each open task from them (and
    the reasons of their exclusions), the reason they were paused."""
    from annotation import engine, sql
    from annotation.eligibility import pool_blocked_sql, pool_rules
    from annotation.models import ItemExclusion, WorkerStage

    entry = worker_availability(worker=worker, role=role, project=project).get(project.pk)
    if entry is None:
        return [gettext("You are not a member of %(project)s as %(role)s.")
                % {"project": project.name, "role": gettext(role.value)}]
    if entry.stages and entry.stages[0].rule in ("project_active", "member_active"):
        return [entry.stages[0].reason[0].upper() + entry.stages[0].reason[1:] + "."]
    reasons = []
    for stage in entry.stages:
        if not stage.reason:
            continue
        text = f"{stage.display_name}: {stage.reason}"
        if stage.rule == "pool" and stage.kind not in engine._batched_kinds():
            with sql.db().cursor() as cursor:
                cursor.execute(*pool_blocked_sql(worker_id=worker.pk, stage_id=stage.stage_id))
                total, *blocked = cursor.fetchone()
            counts = dict(zip([name for name, _ in pool_rules()], blocked, strict=True))
            parts = []
            if counts["not_held_or_done"]:
                parts.append(gettext("%(n)d you already did or hold")
                             % {"n": counts["not_held_or_done"]})
            if counts["not_excluded"]:
                why = list(ItemExclusion.objects.filter(
                    user=worker, item__stage_id=stage.stage_id,
                    item__assignments__status=AS.OPEN).values_list("reason", flat=True)
                    .distinct().order_by("reason"))
                parts.append(gettext("%(n)d you may not do") % {"n": counts["not_excluded"]}
                             + (f" ({'; '.join(gettext(reason) for reason in why)})"
                                if why else ""))
            text = (gettext("%(stage)s: none of its %(total)d open task(s) is for you: ")
                    % {"stage": stage.display_name, "total": total} + ", ".join(parts))
        elif stage.rule == "not_paused":
            standing = WorkerStage.objects.filter(
                member__project=project, member__user=worker, stage_id=stage.stage_id,
            ).exclude(status="active").first()
            if standing is not None and standing.status_reason:
                text += f" ({standing.status_reason_shown})"
        reasons.append(text + ".")
    return reasons


def review_projects(*, checker: Any) -> list[dict[str, Any]]:
    """Active projects where ``checker`` is a checker member with stages worked by checkers
    (an outlier review): the review tasks this checker may take in each, by the rules of
    the claim, and where none, why (``worker_projects``)."""
    return worker_projects(worker=checker, role=Role.CHECKER)


def inspected_projects(*, user: Any) -> QuerySet[Any] | None:
    """The ids of the projects whose batches ``user`` inspects: those where they are an
    active checker member. None for admins, who oversee every project."""
    from annotation.models import ProjectMember

    if has_role(user, Role.ADMIN):
        return None
    return ProjectMember.objects.filter(
        user=user, role=Role.CHECKER.value, status=ProjectMember.Status.ACTIVE,
    ).values("project_id")


def inspects_project(*, user: Any, project_id: int) -> bool:
    """Whether ``user`` inspects the batches of the project (``inspected_projects``)."""
    projects = inspected_projects(user=user)
    return projects is None or projects.filter(project_id=project_id).exists()


def inspections_for(*, user: Any) -> QuerySet[Any]:
    """Inspections of the batches ``user`` may inspect (``inspected_projects``)."""
    from annotation.models import Inspection

    inspections = Inspection.objects.select_related(
        "batch", "batch__stage", "batch__project", "batch__annotator", "checker")
    projects = inspected_projects(user=user)
    return inspections if projects is None else inspections.filter(
        batch__project_id__in=projects)


def checker_projects(*, checker: Any) -> QuerySet[Project]:
    """Active projects where ``checker`` is an active checker member (their workers pages)."""
    return Project.objects.filter(
        status=Project.Status.ACTIVE, members__user=checker,
        members__role=Role.CHECKER.value, members__status="active",
    ).distinct().order_by("name")


def project_list() -> QuerySet[Project]:
    return Project.objects.select_related("corpus").annotate(
        n_items=Count("items"),
        n_done=Count("items", filter=Q(items__status=IS.DONE)),
    ).order_by("-created_at")


def users_with_role_names(values: list[str]) -> list[tuple[Any, Role]]:
    """Parse ``"<user id>:<role>"`` form values into (user, role) pairs."""
    pairs = []
    for value in values:
        user_id, _, role = value.partition(":")
        if posted_id(user_id) is None or role not in Role.__members__.values():
            continue
        user = User.objects.filter(pk=posted_id(user_id), is_active=True).first()
        if user is not None:
            pairs.append((user, Role(role)))
    return pairs


def items_with_context() -> QuerySet[Item]:
    return Item.objects.select_related("stage", "project", "document", "parent")


def item_lineage(*, item: Item) -> list[Item]:
    chain = []
    node = item.parent
    while node is not None:
        chain.append(node)
        node = node.parent
    return list(reversed(chain))


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _stage_median_time(submissions: QuerySet, stage_id: int, n: int) -> float | None:
    """The median time on task of the stage's ``n`` submissions: the middle one or two,
    read from the database sorted."""
    if not n:
        return None
    middle = list(submissions.filter(stage_id=stage_id).order_by("time_on_task_s")
                  .values_list("time_on_task_s", flat=True)[(n - 1) // 2:n // 2 + 1])
    return _median(middle)


def _workers_plot(workers: list[tuple[str, int]]) -> Any:
    """Submissions per worker: the ``WORKERS_PLOTTED`` busiest, then one bar for the rest."""
    shown = [(name, [(n, "bar", gettext("%(n)s submissions") % {"n": n})])
             for name, n in workers[:WORKERS_PLOTTED]]
    rest = workers[WORKERS_PLOTTED:]
    if rest:
        total = sum(n for _, n in rest)
        shown.append((ngettext("%(count)s more worker", "%(count)s more workers", len(rest))
                      % {"count": len(rest)},
                      [(total, "bar", gettext("%(n)s submissions") % {"n": total})]))
    return hbar(shown, label=gettext("Submissions per worker"), width=WIDTH)


def project_dashboard(*, project: Project, weights_page: Any = 1) -> dict[str, Any]:
    """Everything the project page's dashboard shows: per-stage progress and the paper's
    figures; for MS MARCO, page ``weights_page`` of the weighed queries
    (``answer_weights``, ``marco_answer_weights``), whose queries are also the figures'
    ``weighed_queries``."""
    stages = list(project.stages.order_by("order"))
    by_stage: dict[int, Counter] = defaultdict(Counter)
    for stage_id, status, n in (
        Item.objects.filter(project=project, gold="").values_list("stage_id", "status")
        .annotate(n=Count("id")).order_by()
    ):
        by_stage[stage_id][status] = n
    # Counted and sorted by the database: a query per worked stage, never a row per
    # submission (a crowd's project holds hundreds of thousands).
    submissions = Submission.objects.filter(stage__project=project).order_by()
    per_worker: Counter = Counter(dict(
        submissions.values("worker__username").annotate(n=Count("id"))
        .values_list("worker__username", "n")))
    per_stage = dict(submissions.values("stage_id").annotate(n=Count("id"))
                     .values_list("stage_id", "n"))
    rows = []
    for stage in stages:
        counts = by_stage[stage.pk]
        total = sum(counts.values())
        done = counts.get(IS.DONE, 0)
        rows.append({
            "stage": stage, "total": total, "counts": dict(counts), "done": done,
            "percent": round(100 * done / total) if total else 0,
            "median_time_s": _stage_median_time(submissions, stage.pk,
                                                per_stage.get(stage.pk, 0)),
            "submissions": per_stage.get(stage.pk, 0),
        })
    figures = (_newsqa_figures(project) if project.recipe == "newsqa"
               else _reco_figures(project) if project.recipe == "reco"
               else _marco_figures(project) if project.recipe == "marco" else {})
    weights = (marco_answer_weights(project=project, page=weights_page)
               if project.recipe == "marco" else None)
    if weights is not None:
        figures["weighed_queries"] = list(weights["page"].object_list)
    workers = sorted(per_worker.items(), key=lambda kv: (-kv[1], kv[0]))
    plots = {
        "stages": hbar([
            (f"{r['stage'].order}. {r['stage'].display_name}", [
                (r["done"], "bar-done", gettext("done %(n)s") % {"n": r["done"]}),
                (r["counts"].get(IS.OPEN, 0), "bar-open",
                 gettext("open %(n)s") % {"n": r["counts"].get(IS.OPEN, 0)}),
                # batched stages: labelled, waiting for the batch's inspection
                (r["counts"].get(IS.REVIEW, 0), "bar-review",
                 gettext("in review %(n)s") % {"n": r["counts"].get(IS.REVIEW, 0)}),
                (r["counts"].get(IS.PENDING, 0), "bar-pending",
                 gettext("pending %(n)s") % {"n": r["counts"].get(IS.PENDING, 0)}),
            ]) for r in rows
        ], label=gettext("Items per stage by status"), width=WIDTH),  # stage names in full
        "workers": _workers_plot(workers),
        "answers": vbar([(str(n), c) for n, c in figures.get("answers_distribution", [])],
                        label=gettext("Questions by number of answers"),
                        x_label=gettext("answers collected"), y_label=gettext("questions"))
        if figures.get("answers_distribution") else None,
        **(_reco_plots(figures) if project.recipe == "reco" else {}),
        **(_marco_plots(figures) if project.recipe == "marco" else {}),
        **({"weights": weights["plots"]} if weights is not None else {}),
    }
    reports = stage_run_reports(stages=stages)
    for row in rows:
        row["report"] = reports.get(row["stage"].pk)
    return {
        "plots": plots,
        "stage_rows": rows,
        "stalled": project_stalled(project=project, rows=rows),
        "figures": figures,
        "workers": workers,
        # The first members; the members page lists them all (a crowd can be thousands).
        "members": project.members.select_related("user").order_by("role", "user__username")
        [:MEMBERS_SHOWN],
        "member_count": project.members.count(),
        "answer_weights": weights["page"] if weights is not None else None,
    }


def member_candidates(*, project: Project, query: str = "", page: Any = 1,
                      per_page: int | None = None) -> Page:
    """One page (by username) of the people the project page offers to add: active
    accounts with a role, not marketplace workers (they join through their studies),
    whose username holds ``query`` (any case), and not yet a member in every role offered
    (annotator; checker too in ReCO and MS MARCO, whose checkers adjudicate or review
    outliers). Each carries ``is_annotator`` and ``is_checker``: the roles they hold in the
    project already. Two queries whatever the number of people (the count, the page)."""
    from django.contrib.auth.models import Group

    from annotation.models import ProjectMember

    def member(role: Role) -> Exists:
        return Exists(ProjectMember.objects.filter(project=project, user=OuterRef("pk"),
                                                   role=role.value))

    roles = Group.objects.filter(user=OuterRef("pk"), name__in=[r.value for r in Role])
    people = (User.objects.filter(Exists(roles), is_active=True,
                                  external_account__isnull=True)
              .annotate(is_annotator=member(Role.ANNOTATOR), is_checker=member(Role.CHECKER)))
    wanted = Q(is_annotator=False)
    if project.recipe in CHECKED_RECIPES:
        wanted |= Q(is_checker=False)
    people = people.filter(wanted)
    if query.strip():
        people = people.filter(username__icontains=query.strip())
    return Paginator(people.order_by("username", "pk"),
                     per_page or CANDIDATES_PER_PAGE).get_page(page)


def stage_run_reports(*, stages: list[Any]) -> dict[int, dict[str, Any]]:
    """The last finished run of each automatic stage: when, its job, and what it
    received, passed on and dropped with the reasons, with its notes (the ``run`` result,
    ``annotation.stages.run_result``), or the error of a failed run; reasons, notes and
    error in the reader's language."""
    from annotation.stages import run_texts
    from collector.models import Job

    reports = {}
    for stage in stages:
        if not stage.kind_spec.automatic:
            continue
        job = (Job.objects.filter(kind="stage_run", params__stage_id=stage.pk,
                                  status__in=[Job.Status.DONE, Job.Status.FAILED])
               .order_by("-id").first())
        if job is None:
            continue
        result = job.result or {}
        dropped, notes = run_texts(result)  # in the reader's language
        if not isinstance(result.get("dropped"), dict):  # a bare count (ReCO's, before)
            count = result.get("dropped")
            dropped = [(gettext("dropped by the stage"), count)] if isinstance(count, int) \
                and count else []
        reports[stage.pk] = {
            "job": job, "failed": job.status == Job.Status.FAILED, "error": job.error_shown,
            "received": result.get("received"), "passed": result.get("passed"),
            "dropped": sorted(dropped, key=lambda kv: -kv[1]),
            "notes": notes,
        }
    return reports


def project_stalled(*, project: Project, rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """An active project whose first stage received nothing, or whose first automatic
    run passed nothing on: what happened and why (the run's drops, the corpus's
    imports). None when the project is moving."""
    if (project.status != Project.Status.ACTIVE or not rows
            or any(row["total"] for row in rows[1:])):
        return None
    first = rows[0]
    report = first.get("report")
    if first["stage"].kind_spec.automatic:
        if report is None or (not report["failed"] and first["counts"].get(IS.PENDING)):
            return None  # its first run has not finished yet
    elif first["total"]:
        return None
    causes = []
    if report is not None and report["failed"]:
        causes.append(gettext("its run (job #%(job)s) failed: %(error)s")
                      % {"job": report["job"].pk, "error": report["error"]})
    elif report is not None:
        for reason, n in report["dropped"]:
            causes.append(gettext("%(count)s of %(received)s dropped: %(reason)s")
                          % {"count": n, "received": report["received"], "reason": reason})
        if report["received"] == 0:
            causes.append(gettext("the corpus %(corpus)s gave it nothing")
                          % {"corpus": project.corpus.name}
                          if project.corpus_id else gettext("the project has no corpus"))
    if not causes and not first["stage"].kind_spec.automatic:
        causes.append(gettext("no item was sent to it"))
    return {"stage": first["stage"], "causes": causes,
            "imports": corpus_imports(corpus=project.corpus) if project.corpus_id else []}


def corpus_imports(*, corpus: Any, shown: int = 10) -> list[dict[str, Any]]:
    """The corpus's last import jobs in words: the file, what was created, what was
    skipped as already present (documents imported before, e.g. from another format,
    keep what that import gave them)."""
    from collector.models import Job

    out = []
    for job in (Job.objects.filter(kind__in=["corpus_import", "queries_import"],
                                   params__corpus=corpus.name).order_by("-id")[:shown]):
        result = job.result or {}
        out.append({
            "job": job, "file": job.params.get("filename") or job.params.get("upload", ""),
            "format": job.params.get("format", ""),
            "created": result.get("documents_created", result.get("queries_created")),
            "skipped": result.get("documents_skipped", result.get("queries_skipped")),
        })
    return out


def _newsqa_figures(project: Project) -> dict[str, Any]:
    """Agreement rate, share needing validation (paper 43.2%), share agreed after it (86.0%),
    answers per question (paper 2.73). Counted by the database: the rows read do not grow
    with the questions (one per distinct number of answers)."""
    def done(kind: str) -> QuerySet[Item]:
        return Item.objects.filter(project=project, stage__kind=kind, status=IS.DONE)

    agreed = Q(result__agreed=True)
    first = done("newsqa_agreement").aggregate(n=Count("id"), agreed=Count("id", filter=agreed))
    after = done("newsqa_consolidate").aggregate(n=Count("id"),
                                                 agreed=Count("id", filter=agreed))
    # The answers that count: a corrected answer once (its correction), none set aside.
    counted = (Submission.objects.filter(item=OuterRef("pk"), superseded_by__isnull=True,
                                         set_aside=False)
               .order_by().values("item").annotate(n=Count("id")).values("n"))
    distribution = {n: questions for n, questions in (
        done("newsqa_answer").annotate(n=Coalesce(Subquery(counted), 0)).order_by()
        .values("n").annotate(questions=Count("id")).values_list("n", "questions"))}
    answered = sum(distribution.values())
    checked, agreed_first = first["n"], first["agreed"]

    def share(part: int, whole: int) -> float | None:
        return round(100 * part / whole, 1) if whole else None

    return {
        "questions": Item.objects.filter(project=project, stage__kind="newsqa_answer",
                                         gold="").count(),
        "checked": checked,
        "agreement_rate": share(agreed_first, checked),
        "needed_validation": share(checked - agreed_first, checked),
        "consolidated": after["n"],
        "agreed_after_validation": share(after["agreed"], after["n"]),
        "answers_per_question": round(sum(n * q for n, q in distribution.items()) / answered, 2)
        if answered else None,
        "answers_distribution": sorted(distribution.items()),
    }


def _reco_figures(project: Project, *, shown: int = 10) -> dict[str, Any]:
    """ReCO: queries kept and dropped per filter step with their reasons, documents dropped
    by the document filter, batches per status, acceptance rate and rounds, answers, the
    test-set protocol, the final set, and the filter's precision / recall on the admin's
    labels."""
    from annotation.models import Batch, Inspection
    from annotation.stages.reco import (
        ANSWERS,
        query_drop_reason,
        query_filter_evaluation,
        verdict_reason,
    )

    def done(kind: str) -> QuerySet[Item]:
        return Item.objects.filter(project=project, stage__kind=kind, status=IS.DONE)

    steps: dict[str, Counter] = defaultdict(Counter)
    reasons: Counter = Counter()
    refused: list[dict[str, Any]] = []
    kept = 0
    for pk, data, verdict in done("reco_query_filter").order_by("id").values_list(
            "id", "data", "result").iterator():
        for step in verdict.get("steps", []):
            steps[step["step"]]["kept" if step["passed"] else "dropped"] += 1
        if verdict.get("accepted"):
            kept += 1
        else:
            reasons[query_drop_reason(verdict)] += 1
            refused.append({"item": pk, "query": data.get("query", ""),
                            "step": verdict.get("failed_step"), "reason": verdict_reason(verdict)})
    rules: Counter = Counter()
    documents = dropped_docs = no_documents = 0
    dropped: list[dict[str, Any]] = []
    for pk, data, result in done("reco_doc_filter").order_by("id").values_list(
            "id", "data", "result").iterator():
        documents += len(result.get("documents", []))
        no_documents += result.get("outcome") == "no documents"
        for doc in result.get("documents", []):
            if not doc.get("kept"):
                dropped_docs += 1
                rules[doc.get("rule") or "?"] += 1
                dropped.append({"item": pk, "query": data.get("query", ""),
                                "title": doc.get("title") or doc.get("external_id", ""),
                                "rule": doc.get("rule"), "score": doc.get("score"),
                                "reason": verdict_reason(doc)})
    batches = Counter(Batch.objects.filter(project=project, stage__kind="reco_evidence")
                      .values_list("status", flat=True))
    inspections = list(Inspection.objects.filter(
        batch__project=project, status=Inspection.Status.DONE).values_list("round", "passed"))
    accepted_rounds = list(Batch.objects.filter(
        project=project, stage__kind="reco_evidence", status=Batch.Status.ACCEPTED,
    ).values_list("round", flat=True))
    outcomes = Counter(result.get("outcome", "?") for result in
                       done("reco_evidence").values_list("result", flat=True))
    test = list(done("reco_test_evidence").values_list("result", flat=True))
    finals = list(done("reco_final").order_by("-id").values_list("id", "result"))
    answers = Counter(record.get("answer_type") for _, record in finals)
    evaluation = None
    stage = project.stages.filter(kind="reco_query_filter").first()
    if stage is not None:
        evaluation = query_filter_evaluation(stage=stage)

    def share(part: int, whole: int) -> float | None:
        return round(100 * part / whole, 1) if whole else None

    checked = kept + sum(reasons.values())
    return {
        "queries": checked, "queries_kept": kept, "queries_dropped": checked - kept,
        "kept_rate": share(kept, checked),
        "steps": [(name, steps[name]["kept"], steps[name]["dropped"])
                  for name in ("intent", "blocklist", "yesno") if name in steps],
        "drop_reasons": reasons.most_common(), "dropped_queries": refused[-shown:][::-1],
        "documents": documents, "documents_dropped": dropped_docs,
        "documents_dropped_rate": share(dropped_docs, documents),
        "drop_rules": rules.most_common(), "dropped_documents": dropped[-shown:][::-1],
        "queries_without_documents": no_documents,
        "batches": [(status.label, batches.get(status.value, 0)) for status in Batch.Status],
        "inspections": len(inspections),
        "acceptance_rate": share(sum(1 for _, p in inspections if p), len(inspections)),
        "first_round_acceptance": share(sum(1 for r, p in inspections if p and r == 1),
                                        sum(1 for r, _ in inspections if r == 1)),
        "mean_rounds": round(statistics.mean(accepted_rounds), 2) if accepted_rounds else None,
        "answered": outcomes.get("answered", 0), "rejected": outcomes.get("rejected", 0),
        "answers": [(k, answers.get(k, 0)) for k in ANSWERS],
        "test_labelled": len(test), "test_agreed": sum(1 for r in test if r.get("agreed")),
        "test_choices": done("reco_evidence_choice").count(),
        "test_adjudicated": done("reco_adjudicate").count(),
        "records": len(finals),
        "records_by_split": sorted(Counter(r.get("split", "") for _, r in finals).items()),
        "final": [{"item": pk, **record} for pk, record in finals[:20]],
        "filter_evaluation": evaluation,
    }


def _reco_plots(figures: dict[str, Any]) -> dict[str, Any]:
    return {
        "reco_steps": hbar([(step, [(k, "bar-done", gettext("kept %(n)s") % {"n": k}),
                                    (d, "bar-pending", gettext("dropped %(n)s") % {"n": d})])
                            for step, k, d in figures["steps"]],
                           label=gettext("Queries kept and dropped per filter step"))
        if figures["steps"] else None,
        "reco_batches": hbar([(label, [(n, "bar", gettext("%(n)s batches") % {"n": n})])
                              for label, n in figures["batches"]],
                             label=gettext("Batches per status")),
        "reco_answers": vbar(figures["answers"],
                             label=gettext("Final answers by kind (paper: 5 : 4 : 1)"),
                             x_label=gettext("answer kind"), y_label=gettext("records"))
        if any(n for _, n in figures["answers"]) else None,
    }


def _marco_figures(project: Project) -> dict[str, Any]:
    """MS MARCO distillation: judgment and curation outcomes with their exclusion reasons,
    passages selected per query, checker decisions and time per human stage (the answers
    with their weights: ``marco_answer_weights``)."""
    from annotation.stages.marco import EXCLUSIONS, UNANSWERABLE

    def results(kind: str) -> list[dict[str, Any]]:
        return list(Item.objects.filter(project=project, stage__kind=kind, status=IS.DONE)
                    .order_by("id").values_list("result", flat=True))

    judged, curated = results("marco_judge"), results("marco_curate")
    consensus, reviewed = results("marco_consensus"), results("marco_review")
    labels = {"navigational": "Navigational", "transactional": "Transactional", **EXCLUSIONS}
    reasons: Counter = Counter(labels.get(r, r) for j in judged if not j.get("kept")
                               for r in j.get("reasons", []))
    unanswerable = sum(1 for c in curated if c.get("unanswerable"))
    if unanswerable:
        reasons[UNANSWERABLE.capitalize()] += unanswerable
    selected = Counter(len(c.get("selected", [])) for c in curated if not c.get("unanswerable"))
    decisions = Counter(d for r in reviewed for d in r.get("decisions", {}).values())
    times: dict[str, list[float]] = defaultdict(list)
    active: dict[str, list[float]] = defaultdict(list)
    for name, seconds, active_s in Submission.objects.filter(stage__project=project).values_list(
            "stage__name", "time_on_task_s", "active_time_s").order_by("stage__order", "id"):
        times[name].append(seconds)
        if active_s is not None:
            active[name].append(active_s)
    return {
        "queries_judged": len(judged),
        "queries_kept": sum(1 for j in judged if j.get("kept")),
        "queries_excluded": sum(1 for j in judged if not j.get("kept")),
        "curated": len(curated),
        "unanswerable": unanswerable,
        "conflicts": sum(1 for c in curated if c.get("conflict")),
        "exclusion_reasons": reasons.most_common(),
        "selected_distribution": sorted(selected.items()),
        "passages_selected_per_query": round(
            sum(n * c for n, c in selected.items()) / sum(selected.values()), 2)
        if selected else None,
        "queries_weighed": len(consensus),
        "answers_per_query": round(sum(len(c["weights"]) for c in consensus) / len(consensus),
                                   2) if consensus else None,
        "answers_flagged": sum(len(c["flagged"]) for c in consensus),
        "queries_flagged": sum(1 for c in consensus if c["flagged"]),
        "kept_after_review": decisions.get("keep", 0),
        "dropped_after_review": decisions.get("drop", 0),
        "records": Item.objects.filter(project=project, stage__kind="marco_record",
                                       status=IS.DONE).count(),
        "time_per_stage": [
            {"stage": name, "median_s": _median(values), "median_active_s": _median(active[name]),
             "submissions": len(values)} for name, values in times.items()
        ],
    }


def _marco_plots(figures: dict[str, Any]) -> dict[str, Any]:
    return {
        "exclusions": hbar([(reason, [(n, "bar", gettext("%(n)s queries") % {"n": n})])
                            for reason, n in figures["exclusion_reasons"]],
                           label=gettext("Excluded queries by reason"))
        if figures["exclusion_reasons"] else None,
        "selected": vbar([(str(n), c) for n, c in figures["selected_distribution"]],
                         label=gettext("Queries by passages selected"),
                         x_label=gettext("passages selected"), y_label=gettext("queries"))
        if figures["selected_distribution"] else None,
        # Stage names in the interface's language, as Stage.display_name gives them.
        "stage_times": hbar([(gettext(row["stage"]), [(row["median_s"] or 0, "bar",
                                              gettext("median %(seconds)s s")
                                              % {"seconds": row["median_s"]})])
                             for row in figures["time_per_stage"]],
                            label=gettext("Median time on task per stage"), total=" s")
        if figures["time_per_stage"] else None,
    }


def marco_answer_weights(*, project: Project, page: Any = 1,
                         per_page: int | None = None) -> dict[str, Any]:
    """One page of an MS MARCO project's weighed queries (its consensus stage's finished
    items, the latest first, ``WEIGHED_QUERIES_PER_PAGE`` a page): ``page``, a Paginator
    page of ``{item, query_id, query, answers}``, each answer with its text, pa-BLEU
    weight, whether it was flagged as an outlier and the checker's decision; and
    ``plots``, each query's weights plot. Three queries whatever the number of queries
    (the count, the page, the page's review decisions)."""
    from annotation.stages.marco import answer_rows, weights_plot

    weighed = (Item.objects.filter(project=project, stage__kind="marco_consensus",
                                   status=IS.DONE)
               .order_by("-id").values("id", "key", "data", "result"))
    shown = Paginator(weighed, per_page or WEIGHED_QUERIES_PER_PAGE).get_page(page)
    rows = list(shown.object_list)
    review_decisions = {
        key: result.get("decisions", {}) for key, result in
        Item.objects.filter(project=project, stage__kind="marco_review", status=IS.DONE,
                            key__in=[w["key"] for w in rows]).values_list("key", "result")
    } if rows else {}
    queries = []
    for w in rows:
        data = {**w["data"], **{k: w["result"].get(k) for k in ("weights", "shares", "flagged")}}
        queries.append({
            "item": w["id"], "query_id": w["data"].get("query_id"), "query": w["data"]["query"],
            "answers": [{k: row[k] for k in ("number", "text", "weight", "flagged", "decision")}
                        for row in answer_rows(data, review_decisions.get(w["key"]))],
        })
    shown.object_list = queries
    return {"page": shown, "plots": [
        {"query": q, "plot": weights_plot(q["answers"], label=f"Weights: {q['query']}")}
        for q in queries]}


def consolidated_items(*, project: Project) -> QuerySet[Item]:
    """Finished items of the project's last stage, in order (the consolidated records)."""
    last = project.stages.order_by("-order").first()
    return (
        Item.objects.filter(stage=last, status=IS.DONE)
        .select_related("document").only("id", "split", "result", "document__external_id")
        .order_by("id")
    )


def batches_for(*, user: Any) -> QuerySet[Any]:
    """The batches of the projects ``user`` inspects (``inspected_projects``), newest
    first, with their inspections, the last first (``inspections_latest``)."""
    from django.db.models import Prefetch

    from annotation.models import Batch, Inspection

    batches = (Batch.objects.select_related("project", "stage", "annotator")
               .prefetch_related(Prefetch(
                   "inspections", to_attr="inspections_latest",
                   queryset=Inspection.objects.select_related("checker").order_by("-round")))
               .order_by("-id"))
    projects = inspected_projects(user=user)
    return batches if projects is None else batches.filter(project_id__in=projects)


def checker_queue(*, checker: Any) -> dict[str, Any]:
    """Inspections waiting in the projects this checker inspects (``inspected_projects``:
    where they are a checker member), those they hold, and the figures of the checker
    dashboard over those projects. ``waiting`` is a queryset (the page filters and pages
    it)."""
    from annotation.batches import violation_label
    from annotation.models import Batch, Inspection

    inspections = inspections_for(user=checker)
    waiting = (inspections.filter(status=Inspection.Status.OPEN)
               .exclude(batch__annotator=checker).order_by("created_at", "id"))
    mine = list(inspections.filter(status=Inspection.Status.ACTIVE, checker=checker))
    done = list(inspections.filter(status=Inspection.Status.DONE).order_by("finished_at"))
    reasons: Counter = Counter()
    for inspection in done:
        for marked in inspection.marks.values():
            for rule in marked:
                reasons[violation_label(rule)] += 1
    by_annotator: dict[str, list[float]] = defaultdict(list)
    for inspection in done:
        by_annotator[inspection.batch.annotator.username].append(inspection.accuracy)
    # The dashed pass line is the inspections' own threshold (a stage parameter), drawn only
    # when they share one: at 0.95 a batch accepted at 0.92 under 0.9 looked failed.
    thresholds = {inspection.threshold for inspection in done}
    threshold = next(iter(thresholds)) if len(thresholds) == 1 else None
    accepted = Batch.objects.filter(status=Batch.Status.ACCEPTED)
    projects = inspected_projects(user=checker)
    if projects is not None:
        accepted = accepted.filter(project_id__in=projects)
    rounds = Counter(accepted.values_list("round", flat=True))
    return {
        "waiting": waiting,
        "mine": mine,
        "recent": list(reversed(done[-20:])),
        "reasons": reasons.most_common(),
        "plots": {
            # Accuracy runs from 0 to 1: a failed inspection is drawn at its real value.
            "accuracy": line_plot(
                {name: values for name, values in sorted(by_annotator.items())},
                label=gettext("Accuracy per inspection, by annotator"),
                threshold=threshold, lo=0, hi=1,
                x_label=gettext("inspections, in order"), y_label=gettext("accuracy"),
                threshold_label=(gettext("threshold %(value)s") % {"value": threshold}
                                 if threshold is not None else ""),
            ) if done else None,
            "rounds": vbar([(str(r), n) for r, n in sorted(rounds.items())],
                           label=gettext("Accepted batches by rounds needed"),
                           x_label=gettext("inspection rounds needed"),
                           y_label=gettext("batches"))
            if rounds else None,
        },
    }


def inspection_samples(*, inspection: Any) -> list[dict[str, Any]]:
    """The sampled items with the submission of the inspected round, as the stage shows
    them to checkers. Only the batch's own annotator's work appears."""
    items = (
        Item.objects.filter(pk__in=inspection.sample).select_related("document", "stage")
        .order_by("id")
    )
    subs = {
        s.item_id: s for s in Submission.objects.filter(
            item_id__in=inspection.sample, assignment__round=inspection.round,
            superseded_by__isnull=True,
        ).select_related("worker").order_by("id")
    }
    spec = inspection.batch.stage.kind_spec
    marks = inspection.marks or {}
    return [
        {"item": item, "submission": subs.get(item.pk),
         "view": spec.inspection_view(item, subs[item.pk]) if item.pk in subs else {},
         "marked": marks.get(str(item.pk), []),
         "comment": (inspection.item_comments or {}).get(str(item.pk), "")}
        for item in items
    ]


def releases_visible(*, user: Any, project: Project | None = None) -> QuerySet:
    """Releases a user may see: all for admins, published ones for everybody else."""
    from annotation.models import Release
    from annotation.roles import Role, has_role

    qs = Release.objects.select_related("project").prefetch_related("files")
    if project is not None:
        qs = qs.filter(project=project)
    if not has_role(user, Role.ADMIN):
        qs = qs.filter(status=Release.Status.PUBLISHED)
    return qs.order_by("-created_at", "-id")


def batches_returned_to(*, worker: Any) -> list[dict[str, Any]]:
    """The worker's batches a checker returned for relabelling, with the inspection that
    returned each (accuracy, threshold, the checker's comment) and how many of its items
    are still to relabel."""
    from annotation.models import Batch, Inspection

    batches = list(Batch.objects.filter(annotator=worker, status=Batch.Status.RETURNED)
                   .select_related("project", "stage").order_by("project__name", "number"))
    inspections = {
        (i.batch_id, i.round): i for i in Inspection.objects.filter(
            batch__in=batches, status=Inspection.Status.DONE).select_related("checker")
    }
    open_items = dict(Item.objects.filter(batch__in=batches, status=IS.OPEN).order_by()
                      .values("batch_id").annotate(n=Count("id")).values_list("batch_id", "n"))
    return [{"batch": b, "inspection": inspections.get((b.pk, b.round - 1)),
             "to_relabel": open_items.get(b.pk, 0)} for b in batches]


def usernames_in_text(text: str, usernames: Any) -> list[str]:
    """The ``usernames`` that ``text`` names as whole words (any case), sorted.

    A project's description is copied verbatim into every release's datasheet and dataset
    card: worker names there would publish who did the work.
    """
    if not text:
        return []
    lowered = text.lower()
    return sorted(
        name for name in set(usernames)
        if name and re.search(rf"(?<![\w.@+-]){re.escape(name.lower())}(?![\w@+-]|\.\w)", lowered)
    )


def project_description_names(*, project: Project) -> list[str]:
    """Usernames of the project's members that its description names."""
    members = project.members.values_list("user__username", flat=True)
    return usernames_in_text(project.description, members)


def role_holder_names() -> QuerySet:
    """Usernames of everyone holding a CrowdQA role (a project's possible members)."""
    return (User.objects.filter(groups__name__in=[role.value for role in Role])
            .values_list("username", flat=True).distinct())
