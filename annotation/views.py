"""Pages of the people at work: task queue and task pages, review and project pages."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from annotation import engine, gold, pay, selectors, studies
from annotation.forms import StageParamsForm
from annotation.http import posted_id, posted_or_404
from annotation.markdown import stage_guidelines_html
from annotation.models import Assignment, Project, ProjectMember, Stage
from annotation.roles import Role, has_role, home_url_name, queue_home_url_name, role_required
from collector.importers.errors import ImportFailure
from collector.importers.source import text_decode
from config.request_guards import form_refuses_nul


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return redirect(home_url_name(request.user))


@login_required
def no_role(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/no_role.html", status=403)


@role_required(Role.ANNOTATOR)
def annotator_home(request: HttpRequest) -> HttpResponse:
    if studies.session_current(worker=request.user) is not None:
        return redirect("annotation:task_next")  # marketplace workers finish there
    why = None
    if posted_id(request.GET.get("project")) is not None:
        # Only a project they are a member of (the page names its stages).
        project = get_object_or_404(Project.objects.filter(members__user=request.user)
                                    .distinct(), pk=posted_id(request.GET["project"]))
        why = {"project": project,
               "reasons": selectors.availability_why(worker=request.user, project=project)}
    return render(request, "annotation/annotator_home.html", {
        "projects": selectors.worker_projects(worker=request.user), "why": why,
        "current": engine.task_current(worker=request.user),
        **_earned(request.user),
        "qualifications": gold.qualifications_for(worker=request.user),
        "recent": engine.worker_recent_submissions(worker=request.user),
        "returned_batches": selectors.batches_returned_to(worker=request.user),
    })


@role_required(Role.ANNOTATOR, Role.CHECKER)
@require_http_methods(["GET", "POST"])
def task_next(request: HttpRequest) -> HttpResponse:
    """Claim the next task (POST): annotation work, or with ``role=checker`` a review task.
    GET: the worker's next step (``study_views.next_page``; marketplace workers end there
    with their completion code)."""
    if request.method == "GET":
        from annotation.study_views import next_page

        if not has_role(request.user, Role.ANNOTATOR):
            return redirect(queue_home_url_name(Role.CHECKER))
        return next_page(request)
    role = Role.CHECKER if request.POST.get("role") == Role.CHECKER else Role.ANNOTATOR
    if not has_role(request.user, role):
        raise PermissionDenied(f"This needs the role: {role}.")
    project = None
    if request.POST.get("project"):
        projects = Project.objects.all()
        if not has_role(request.user, Role.ADMIN):
            # Only a project they are a member of: the message below names it.
            projects = projects.filter(members__user=request.user).distinct()
        project = posted_or_404(projects, request.POST["project"])
    assignment = engine.task_claim(worker=request.user, project=project, role=role)
    if assignment is None:
        if project is not None and role == Role.ANNOTATOR:
            # The home page says why, stage by stage (exclusions, limits, taken, waiting).
            messages.info(request, _("No task in %(project)s is waiting for you right now.")
                          % {"project": project.name})
            return redirect(f"{reverse('annotation:annotator_home')}?project={project.pk}")
        if role == Role.CHECKER:  # the checker home says why, project by project
            messages.info(request, _("No review task is waiting for you right now: "
                                     "see why under Answers to review."))
        else:
            messages.info(request, _("No task is waiting for you right now. Come back later."))
        return redirect(queue_home_url_name(role))
    return redirect("annotation:task_detail", pk=assignment.pk)


def _assignment_or_403(request: HttpRequest, pk: int) -> Assignment:
    try:
        return engine.assignment_for_worker(assignment_id=pk, worker=request.user)
    except engine.TaskError as exc:
        raise PermissionDenied(str(exc)) from exc


UNSENT_ANSWER = "crowdqa_unsent_answer"
UNSENT_ANSWER_MAX_CHARS = 200_000


def _answer_kept_across_login(view: Any) -> Any:
    """A task form sent after the worker's session had ended (logged out in another tab,
    the password changed, the session's age) went to the login page, and the task page
    after it was empty: the answer was lost. It is kept in the session, which logging in
    carries over, and the task page fills it in again (``_unsent_answer``)."""
    from functools import wraps

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method == "POST" and not request.user.is_authenticated:
            answer_keep(request, path=request.path, data={
                key: request.POST.getlist(key) for key in request.POST
                if key not in ("csrfmiddlewaretoken", "active_time_s")})
        return view(request, *args, **kwargs)

    return wrapped


def answer_keep(request: HttpRequest, *, path: str, data: Any, logged_out: bool = True) -> bool:
    """Keep a task page's unsent answer (``{field: [values]}``) in the session for the next
    GET of ``path`` (``_unsent_answer``): sent while logged out, or carried by the language
    switch (``config.i18n.language_set``; ``logged_out=False``). Anything else, or more
    than ``UNSENT_ANSWER_MAX_CHARS``, is not kept; says whether it was."""
    import json

    if not (isinstance(data, dict) and all(
            isinstance(key, str) and isinstance(values, list)
            and all(isinstance(value, str) for value in values)
            for key, values in data.items())):
        return False
    if len(json.dumps(data)) > UNSENT_ANSWER_MAX_CHARS:
        return False
    request.session[UNSENT_ANSWER] = {"path": path, "data": data, "logged_out": logged_out}
    return True


def _unsent_answer(request: HttpRequest, *, posted: Any = None) -> Any:
    """The answer kept for this task page (``answer_keep``), once, or None. When the worker
    had been logged out (not a language switch), a message says it was not saved; with
    ``posted``, only an answer that ``posted(data)`` accepts is shown (and said so)."""
    from django.http import QueryDict

    unsent = request.session.get(UNSENT_ANSWER)
    if request.method != "GET" or not unsent or unsent.get("path") != request.path:
        return None
    del request.session[UNSENT_ANSWER]
    data = QueryDict(mutable=True)
    for key, values in unsent["data"].items():
        data.setlist(key, values)
    logged_out = unsent.get("logged_out", True)
    if posted is not None and logged_out and not posted(data):
        return None
    if logged_out:
        messages.warning(request, _("You had been logged out, so your answer was not saved. "
                                    "Here it is again: check it and submit it."))
    return data


@_answer_kept_across_login
@role_required(Role.ANNOTATOR, Role.CHECKER)
def task_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A task page (GET) and its submission (POST)."""
    assignment = _assignment_or_403(request, pk)
    item, stage = assignment.item, assignment.stage
    spec = stage.kind_spec
    home = queue_home_url_name(spec.role)
    errors: list[str] = []
    if request.method == "POST":
        try:
            payload = spec.payload_from_form(item, request.POST)
            engine.task_submit(
                assignment_id=assignment.pk, worker=request.user, payload=payload,
                active_time_s=request.POST.get("active_time_s"),
            )
        except ValidationError as exc:
            errors = exc.messages
        except engine.TaskError as exc:
            if not _submitted_by(request, assignment):
                # Refused (its time ran out and the slot was taken, or the item needs no
                # more answers...): the answer they typed stays on the page to copy.
                return render(request, "annotation/tasks/refused.html", {
                    "error": str(exc), "home": home, "typed": _typed(request.POST),
                }, status=409)
            # A second click, a resent form: the first one saved it.
            live = _saved_already(request, assignment)
            differs = _resent_differs(request, assignment, payload)
            if live is not None:
                if differs:
                    # e.g. a rater pressed 5, then 4 before the page changed: the 4 is lost
                    messages.warning(request, _(
                        "This task was already submitted with a different answer, which is "
                        "kept. Here is your next task; correct the answer under “Your recent "
                        "answers” while its item waits for others."))
                else:
                    messages.success(request, _("Saved. Here is your next task."))
                return redirect("annotation:task_detail", pk=live.pk)
            # It was the last task: no task followed the first post.
            if differs:
                messages.warning(request, _(
                    "This task was already submitted with a different answer, which is kept. "
                    "Correct it under “Your recent answers” while its item waits for others."))
            else:
                messages.success(request, _("Saved. That was the last task for now."))
            return redirect(home)
        else:
            next_assignment = engine.task_claim(worker=request.user, project=stage.project,
                                                role=spec.role)
            if next_assignment is None:
                messages.success(request, _("Saved. That was the last task for now."))
                return redirect(home)
            messages.success(request, _("Saved. Here is your next task."))
            return redirect("annotation:task_detail", pk=next_assignment.pk)
    if assignment.status != Assignment.Status.ACTIVE:
        messages.info(request, _("This task is %(status)s.")
                      % {"status": str(assignment.get_status_display()).lower()})
        return redirect(home)
    if assignment.lease_expires_at and assignment.lease_expires_at <= timezone.now():
        # Its lease ran out (the periodic job has not yet put it back): a form would take
        # work that the submit then refuses.
        messages.info(request, _("Your time for this task ran out; take the next task."))
        return redirect(home)
    from annotation.batches import returned_feedback

    returned = returned_feedback(assignment=assignment)
    form_values = spec.form_values(item, request.POST)
    if returned and returned["previous"] and request.method != "POST":
        form_values = spec.payload_form_values(item, returned["previous"].payload)
    unsent = _unsent_answer(request)
    if unsent is not None:
        form_values = spec.form_values(item, unsent)
    return render(request, spec.template, {
        "assignment": assignment, "item": item, "stage": stage, "project": stage.project,
        "task": spec.context(item), "errors": errors,
        "field_errors": field_errors(errors),
        "form_values": form_values, "returned": returned,
        "guidelines": stage_guidelines_html(stage),
        **_lease_renewal(assignment),
        **_earned(request.user, stage.project),
    }, status=400 if errors else 200)


def _typed(posted: Any) -> list[tuple[str, str]]:
    """What a refused task form carried, field by field (not its token or timing), to
    show to the worker who typed it."""
    return [(key, value) for key in posted if key not in ("csrfmiddlewaretoken", "active_time_s")
            for value in posted.getlist(key) if value.strip()]


def _lease_renewal(assignment: Assignment) -> dict[str, int]:
    """While the worker is at work, the task page renews the lease a third of it at a time;
    the first time when half of what is left has passed, if that is sooner."""
    every = max(30, int(engine.lease_duration().total_seconds()) // 3)
    left = (every * 2 if assignment.lease_expires_at is None
            else (assignment.lease_expires_at - timezone.now()).total_seconds())
    return {"lease_renew_s": every, "lease_first_s": max(5, min(every, int(left) // 2))}


def _submitted_by(request: HttpRequest, assignment: Assignment) -> bool:
    """Whether the worker's refused submit of ``assignment`` came after a submit of theirs
    that saved it (a double click, a resend after a slow answer, the back button)."""
    return Assignment.objects.filter(pk=assignment.pk, worker=request.user,
                                     status=Assignment.Status.SUBMITTED).exists()


def _saved_already(request: HttpRequest, assignment: Assignment) -> Assignment | None:
    """When the worker's submit of ``assignment`` was refused because the same form was
    sent before and that submit saved it (``_submitted_by``): the live task of the project
    the worker was given after it, if any."""
    return (Assignment.objects.filter(
        worker=request.user, status=Assignment.Status.ACTIVE,
        stage__project_id=assignment.stage.project_id, lease_expires_at__gt=timezone.now(),
    ).order_by("-claimed_at", "-pk").first())


def _resent_differs(request: HttpRequest, assignment: Assignment,
                    payload: dict[str, Any]) -> bool:
    """Whether a resent form of a submitted task carries another answer than the one its
    first post saved (compared as the stage cleans them)."""
    from annotation.models import Submission

    saved = (Submission.objects.filter(assignment=assignment, worker=request.user)
             .order_by("-id").values_list("payload", flat=True).first())
    try:
        resent = assignment.stage.kind_spec.clean_payload(assignment.item, payload)
    except ValidationError:
        return True
    return saved is not None and resent != saved


def _earned(worker: Any, project: Project | None = None) -> dict[str, Any]:
    """The page context of the worker's figures: ``earned`` (in ``project`` when given)
    and ``done_today`` (every project), from one call (``pay.worker_earnings``)."""
    earned = pay.worker_earnings(worker=worker, project=project)
    return {"earned": earned, "done_today": earned["done_today"]}


def field_errors(errors: list[str]) -> dict[str, Any]:
    """Validation messages by the form field they name: stage kinds write them as
    "field: what is wrong" (``spans[2]: ...`` belongs to ``spans``), so a template shows
    each next to its field. Fields the form repeats (``question 2: ...``) go under
    ``<field>_by_number``, by number, for the template to show next to that one."""
    import re

    by_field: dict[str, Any] = {}
    for error in errors:
        match = re.match(r"([a-z_]+)(?:\[\d+\]| (\d+))?: ", error)
        if match and match.group(2):
            by_field.setdefault(f"{match.group(1)}_by_number", {}).setdefault(
                int(match.group(2)), []).append(error[match.end():])
        elif match:
            by_field.setdefault(match.group(1), []).append(error[match.end():])
    return by_field


@role_required(Role.ANNOTATOR, Role.CHECKER)
@require_http_methods(["GET", "POST"])
def submission_correct(request: HttpRequest, pk: int) -> HttpResponse:
    """The worker's last answer in its task form, pre-filled: sending it again records a
    new submission that supersedes the old one (``engine.submission_correct``)."""
    from annotation.models import Submission

    submission = get_object_or_404(
        Submission.objects.select_related("item", "item__document", "stage", "stage__project",
                                          "assignment"), pk=pk, worker=request.user)
    item, stage = submission.item, submission.stage
    item.stage = stage
    spec = stage.kind_spec
    why = engine.submission_correctable(submission=submission)
    if why and request.method == "POST" and _correction_resent(submission, request.POST):
        # A second tap on Submit, a resent form: the first one saved this very correction.
        messages.success(request, _("Corrected: your new answer replaces the old one "
                                    "(both are kept)."))
        return redirect(queue_home_url_name(spec.role))
    if why:
        messages.error(request, _("You cannot correct this answer: %(why)s.") % {"why": why})
        return redirect(queue_home_url_name(spec.role))
    errors: list[str] = []
    if request.method == "POST":
        try:
            payload = spec.payload_from_form(item, request.POST)
            engine.submission_correct(submission_id=submission.pk, worker=request.user,
                                      payload=payload,
                                      active_time_s=request.POST.get("active_time_s"))
        except ValidationError as exc:
            errors = exc.messages
        except engine.TaskError as exc:
            messages.error(request, str(exc))
            return redirect(queue_home_url_name(spec.role))
        else:
            messages.success(request, _("Corrected: your new answer replaces the old one "
                                        "(both are kept)."))
            return redirect(queue_home_url_name(spec.role))
    form_values = (spec.form_values(item, request.POST) if request.method == "POST"
                   else spec.payload_form_values(item, submission.payload))
    return render(request, spec.template, {
        "assignment": submission.assignment, "item": item, "stage": stage,
        "project": stage.project, "task": spec.context(item), "errors": errors,
        "field_errors": field_errors(errors), "form_values": form_values,
        "correcting": submission, "cancel_url": reverse(queue_home_url_name(spec.role)),
        "guidelines": stage_guidelines_html(stage),
        **_earned(request.user, stage.project),
    }, status=400 if errors else 200)


def _correction_resent(submission: Any, posted: Any) -> bool:
    """Whether ``posted`` is the correction that already superseded ``submission`` (the
    same answer, as the stage cleans it), sent again."""
    from annotation.models import Submission

    if submission.superseded_by_id is None:
        return False
    saved = (Submission.objects.filter(pk=submission.superseded_by_id)
             .values_list("payload", flat=True).first())
    spec = submission.stage.kind_spec
    try:
        resent = spec.clean_payload(submission.item, spec.payload_from_form(submission.item,
                                                                            posted))
    except ValidationError:
        return False
    return saved is not None and resent == saved


@role_required(Role.ANNOTATOR, Role.CHECKER)
@require_POST
def task_release(request: HttpRequest, pk: int) -> HttpResponse:
    role = _assignment_or_403(request, pk).stage.kind_spec.role
    try:
        engine.task_release(assignment_id=pk, worker=request.user)
    except (engine.TaskNotFound, engine.TaskNotYours) as exc:
        raise PermissionDenied(str(exc)) from exc
    except engine.TaskError as exc:
        # Theirs, but no longer held (submitted, released by a first click, expired): a
        # second click or the back button, not a forbidden request.
        messages.info(request, str(exc))
        return redirect(queue_home_url_name(role))
    messages.info(request, _("Task released: it went back to the pool."))
    return redirect(queue_home_url_name(role))


@role_required(Role.ANNOTATOR, Role.CHECKER)
@require_POST
def task_renew(request: HttpRequest, pk: int) -> HttpResponse:
    """The task page, while its worker is at work, keeps the task's lease from running out
    under them (``static/js/task.js``): 200 with the new expiry, or 409 with why not."""
    from django.http import JsonResponse

    try:
        expires = engine.task_lease_renew(assignment_id=pk, worker=request.user)
    except (engine.TaskNotFound, engine.TaskNotYours) as exc:
        raise PermissionDenied(str(exc)) from exc
    except engine.TaskError as exc:
        return JsonResponse({"error": str(exc)}, status=409)
    return JsonResponse({"lease_expires_at": expires.isoformat()})


@role_required(Role.ANNOTATOR)
@require_POST
def question_check(request: HttpRequest, pk: int) -> HttpResponse:
    """htmx: the verdict on one question as the worker types."""
    assignment = _assignment_or_403(request, pk)
    spec = assignment.stage.kind_spec
    if not hasattr(spec, "check"):
        raise PermissionDenied("this task has no question check")
    text = request.POST.get("question", "")
    verdict = spec.check(assignment.item, text) if text.strip() else None
    return render(request, "annotation/tasks/_question_verdict.html", {"verdict": verdict})


@role_required(Role.ANNOTATOR)
@require_POST
def spelling_check(request: HttpRequest, pk: int) -> HttpResponse:
    """htmx: possible misspellings in an answer as the worker types (a warning only)."""
    assignment = _assignment_or_403(request, pk)
    spec = assignment.stage.kind_spec
    if not hasattr(spec, "spelling"):
        raise PermissionDenied("this task has no spelling check")
    report = spec.spelling(assignment.item, request.POST.get("answer", ""))
    return render(request, "annotation/tasks/marco_spelling.html", {"report": report})


@role_required(Role.ANNOTATOR, Role.CHECKER, Role.ADMIN)
def stage_guidelines(request: HttpRequest, pk: int) -> HttpResponse:
    """A stage's guidelines, for the project's members and the admins."""
    stage = get_object_or_404(Stage.objects.select_related("project"), pk=pk)
    if not has_role(request.user, Role.ADMIN) and not ProjectMember.objects.filter(
            project_id=stage.project_id, user=request.user).exists():
        raise Http404("no such stage among your projects")
    return render(request, "annotation/guidelines.html", {
        "stage": stage, "guidelines": stage_guidelines_html(stage),
    })


@role_required(Role.CHECKER)
def checker_home(request: HttpRequest) -> HttpResponse:
    """The inspections waiting in the projects the checker checks (searched, filtered,
    paged), theirs, the review tasks they may take (or why none), the dashboard."""
    from annotation.lists import WaitingFilter, filtered_page

    queue = selectors.checker_queue(checker=request.user)
    waiting_filter, page = filtered_page(WaitingFilter, queue.pop("waiting"), request)
    return render(request, "annotation/checker_home.html", {
        **queue, "filter": waiting_filter, "page": page, "waiting": page.object_list,
        "reviews": selectors.review_projects(checker=request.user),
        "current_review": engine.task_current(worker=request.user, role=Role.CHECKER),
        "checked_projects": selectors.checker_projects(checker=request.user),
        # The review stages that ask for a qualification: their reasons above say so, and
        # this is the way there.
        "qualifications": [row for row in gold.qualifications_for(worker=request.user)
                           if row["stage"].kind_spec.role == Role.CHECKER],
    })


@role_required(Role.CHECKER)
def batch_list(request: HttpRequest) -> HttpResponse:
    """Every batch of the projects the user checks (admins: of every project), searched,
    filtered and paged, each with its last inspection."""
    from annotation.lists import BatchFilter, filtered_page

    batch_filter, page = filtered_page(BatchFilter, selectors.batches_for(user=request.user),
                                       request)
    return render(request, "annotation/batch_list.html",
                  {"filter": batch_filter, "page": page})


@role_required(Role.ADMIN)
@require_POST
def batch_put_back(request: HttpRequest, pk: int) -> HttpResponse:
    """An admin takes a batch from its annotator (gone, not answering): whoever takes a
    batch next gets it whole (``batches.batch_put_back``); back to the batch list."""
    from annotation import batches
    from annotation.models import Batch

    batch = get_object_or_404(Batch.objects.select_related("project", "annotator"), pk=pk)
    holder = batch.annotator.username if batch.annotator else ""
    try:
        batches.batch_put_back(batch_id=pk, actor=request.user, check_admin=True,
                               note=f"put back by {request.user.get_username()}")
    except ValidationError as exc:
        messages.info(request, exc.messages[0])
    else:
        messages.success(request, _("Batch %(number)s of %(project)s was taken from "
                                    "%(annotator)s: the next annotator to take a batch gets "
                                    "it.") % {"number": batch.number,
                                              "project": batch.project.name,
                                              "annotator": holder})
    return redirect(reverse("annotation:batch_list") + (
        f"?{request.POST['query']}" if request.POST.get("query") else ""))


@_answer_kept_across_login
@role_required(Role.CHECKER)
def inspection_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Claim (action=claim) and inspect a batch's sample; Accept or Return it (action) with
    the marks and comments. The paper's rule decides which of the two the marks allow
    (``batches.inspection_submit``)."""
    from annotation import batches
    from annotation.models import Inspection

    inspection = get_object_or_404(
        Inspection.objects.select_related("batch", "batch__stage", "batch__project",
                                          "batch__annotator"), pk=pk)
    if not selectors.inspects_project(user=request.user,
                                      project_id=inspection.batch.project_id):
        raise PermissionDenied("you are not a checker of this batch's project")
    errors: list[str] = []
    if request.method == "POST" and request.POST.get("action") == "release":
        try:
            batches.inspection_release(inspection_id=pk, user=request.user)
        except ValidationError as exc:
            messages.info(request, exc.messages[0])
        else:
            messages.info(request, _("Batch %(number)s of %(project)s is waiting for a "
                                     "checker again.")
                          % {"number": inspection.batch.number,
                             "project": inspection.batch.project.name})
        return redirect("annotation:checker_home")
    if (request.method == "POST" and inspection.status == Inspection.Status.DONE
            and inspection.checker_id == request.user.pk):
        messages.info(request, batches.inspection_done_message(inspection))
        return redirect("annotation:checker_home")
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "claim":
                batches.inspection_claim(inspection_id=pk, checker=request.user)
                return redirect("annotation:inspection_detail", pk=pk)
            if action not in batches.VERDICTS:
                raise ValidationError(_("verdict: press Accept batch or Return batch"))
            marks = {item_id: request.POST.getlist(f"rules-{item_id}")
                     for item_id in inspection.sample}
            done = batches.inspection_submit(
                inspection_id=pk, checker=request.user, marks=marks, verdict=action,
                comment=request.POST.get("comment", ""),
                item_comments={item_id: request.POST.get(f"comment-{item_id}", "")
                               for item_id in inspection.sample})
        except ValidationError as exc:
            errors = exc.messages
        else:
            batch = inspection.batch
            names = {"number": batch.number, "project": batch.project.name,
                     "annotator": batch.annotator.username,
                     "accuracy": f"{done.accuracy:.1%}", "threshold": f"{done.threshold:.0%}"}
            if done.passed:
                messages.success(request, _("Batch %(number)s of %(project)s (%(annotator)s): "
                                            "accuracy %(accuracy)s, accepted.") % names)
            else:
                messages.warning(request, _(
                    "Batch %(number)s of %(project)s (%(annotator)s): accuracy %(accuracy)s, "
                    "not above %(threshold)s: returned to %(annotator)s with your marks and "
                    "comments.") % names)
            return redirect("annotation:checker_home")
    held_by_other = (inspection.status == Inspection.Status.ACTIVE
                     and inspection.checker_id != request.user.pk)
    if held_by_other and not has_role(request.user, Role.ADMIN):
        raise PermissionDenied("another checker is inspecting this batch")
    from annotation.batches import violation_label
    from collector.filters.inspection import Violation

    spec = inspection.batch.stage.kind_spec
    rules = [Violation(rule) for rule in spec.inspection_rules]
    samples = selectors.inspection_samples(inspection=inspection)
    posted = request.POST if errors else None
    if (inspection.status == Inspection.Status.ACTIVE and not held_by_other
            and request.method == "GET"):
        # a verdict sent while logged out, or the marks carried by the language switch
        unsent = _unsent_answer(request,
                                posted=lambda data: data.get("action") in batches.VERDICTS)
        if unsent is not None:
            posted = unsent
    if posted is not None:  # show the marks and comments the checker posted
        for s in samples:
            s["marked"] = posted.getlist(f"rules-{s['item'].pk}")
            s["comment"] = posted.get(f"comment-{s['item'].pk}", "")
    return render(request, "annotation/inspection_detail.html", {
        "inspection": inspection, "batch": inspection.batch, "errors": errors,
        "held_by_other": held_by_other,
        "rules": [(r.value, violation_label(r), 1.0 if r.strict else 0.5) for r in rules],
        "template": spec.inspection_template, "samples": samples,
        # who labelled the inspected round: an earlier round's may not be the batch's
        # annotator now (a returned batch goes to the next annotator when theirs is paused)
        "round_annotators": sorted({s["submission"].worker.username for s in samples
                                    if s["submission"] is not None})
        or ([inspection.batch.annotator.username] if inspection.batch.annotator else []),
        "comment": posted.get("comment", inspection.comment) if posted is not None
        else inspection.comment,
        "guidelines": stage_guidelines_html(inspection.batch.stage),
    }, status=400 if errors else 200)


@role_required(Role.ADMIN)
def admin_home(request: HttpRequest) -> HttpResponse:
    """Projects (searched, filtered, paged), the latest releases and jobs."""
    from annotation.lists import ProjectFilter, filtered_page
    from collector.models import Job

    project_filter, page = filtered_page(ProjectFilter, selectors.project_list(), request)
    jobs = Job.objects.select_related("created_by")[:10]
    return render(request, "annotation/admin_home.html", {
        "filter": project_filter, "page": page, "projects": page.object_list, "jobs": jobs,
        "releases": selectors.releases_visible(user=request.user)[:10],
    })


@role_required(Role.ADMIN)
def release_list(request: HttpRequest) -> HttpResponse:
    from annotation.lists import ReleaseFilter, filtered_page

    release_filter, page = filtered_page(
        ReleaseFilter, selectors.releases_visible(user=request.user), request)
    return render(request, "annotation/release_list.html",
                  {"filter": release_filter, "page": page})


@form_refuses_nul
@role_required(Role.ADMIN)
def project_create(request: HttpRequest) -> HttpResponse:
    from annotation.forms import ProjectCreateForm

    form = ProjectCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = engine.project_create(user=request.user, **form.cleaned_data)
        except ValidationError as exc:
            form.add_error(None, exc.messages[0])
        else:
            messages.success(request, _("Project %(name)s created. Check the stage "
                                        "parameters, add members, then start it.")
                             % {"name": project.name})
            return redirect("annotation:project_detail", pk=project.pk)
    return render(request, "annotation/project_create.html", {"form": form})


@role_required(Role.ADMIN)
def project_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The project page. ``?outliers_page=``: a page of MS MARCO's weighed queries;
    ``?people=`` and ``?people_page=``: a search and a page of the people to add. htmx asks
    for one part (``?part=``): the polled ``dashboard``, ``outliers`` or ``people``."""
    project = get_object_or_404(Project.objects.select_related("corpus"), pk=pk)
    template = "annotation/project_detail.html"
    part = request.GET.get("part") if request.htmx else None
    if part == "outliers" and project.recipe == "marco":
        weights = selectors.marco_answer_weights(
            project=project, page=request.GET.get("outliers_page") or 1)
        return render(request, f"{template}#outliers", {
            "project": project, "answer_weights": weights["page"],
            "plots": {"weights": weights["plots"]}})
    if part == "people":
        return render(request, f"{template}#people",
                      {"project": project, **_people_to_add(request, project)})
    if part == "dashboard":
        template += "#dashboard"
    return _project_page(request, project, template=template)


def _people_to_add(request: HttpRequest, project: Project) -> dict[str, Any]:
    query = request.GET.get("people", "")[:150]
    return {"people_query": query, "candidates": selectors.member_candidates(
        project=project, query=query, page=request.GET.get("people_page") or 1)}


def _project_page(request: HttpRequest, project: Project, *,
                  template: str = "annotation/project_detail.html",
                  bound: StageParamsForm | None = None) -> HttpResponse:
    """The project page; ``bound`` is a refused parameters form shown with its errors."""
    from annotation.release_records import UNAGREED_CHOICES
    from annotation.releases import formats_for

    dashboard = selectors.project_dashboard(
        project=project, weights_page=request.GET.get("outliers_page") or 1)
    stages = [row["stage"] for row in dashboard["stage_rows"]]
    forms = [bound if bound is not None and bound.stage.pk == stage.pk
             else StageParamsForm(stage=stage) for stage in stages]
    context = {"project": project, **dashboard, "stage_forms": forms,
               "description_names": selectors.project_description_names(project=project),
               "releases": selectors.releases_visible(user=request.user, project=project),
               "release_formats": formats_for(project.recipe),
               "unagreed_choices": ([(value, _(text)) for value, text in UNAGREED_CHOICES.items()]
                                    if project.recipe == "newsqa" else ())}
    if "#" not in template:  # the whole page, not the polled dashboard
        context.update(_people_to_add(request, project))
    return render(request, template, context, status=400 if bound is not None else 200)


@form_refuses_nul(when=lambda request: request.POST.get("action") == "params")
@role_required(Role.ADMIN)
@require_POST
def project_action(request: HttpRequest, pk: int) -> HttpResponse:
    """Start the project, add members, or change a stage's parameters (before start; a
    refused parameters form comes back with its errors next to the fields)."""
    project = get_object_or_404(Project, pk=pk)
    action = request.POST.get("action")
    try:
        if action == "start":
            engine.project_start(project=project, actor=request.user)
            messages.success(request, _("Project started."))
        elif action == "members":
            added = selectors.users_with_role_names(request.POST.getlist("user"))
            for user, role in added:
                engine.project_member_add(project=project, user=user, role=role)
            messages.success(request, _("%(count)s membership(s) added.")
                             % {"count": len(added)})
        elif action == "params":
            stage = posted_or_404(Stage, request.POST.get("stage"), project=project)
            form = StageParamsForm(request.POST, stage=stage)
            if not (form.is_valid() and form.save()):
                messages.error(request, _("Parameters of stage %(order)s not saved: see the "
                                          "errors next to the fields.") % {"order": stage.order})
                return _project_page(request, Project.objects.select_related("corpus")
                                     .get(pk=project.pk), bound=form)
            messages.success(request, _("Parameters of stage %(order)s saved.")
                             % {"order": stage.order})
        else:
            messages.error(request, _("Unknown action %(action)s.") % {"action": repr(action)})
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
    except Exception as exc:
        from annotation.workflow import TransitionError

        if not isinstance(exc, TransitionError):
            raise
        messages.error(request, str(exc))
    url = reverse("annotation:project_detail", args=[project.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


@role_required(Role.ADMIN)
def item_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """An item with its lineage and submissions (admins see everything)."""
    from annotation.payload_display import generic_blocks

    item = get_object_or_404(
        selectors.items_with_context(), pk=pk,
    )
    spec = item.stage.kind_spec
    submissions = item.submissions.select_related("worker").order_by("id")
    return render(request, "annotation/item_detail.html", {
        "item": item, "lineage": selectors.item_lineage(item=item),
        "submissions": [(s, spec.payload_display(item, s.payload)) for s in submissions],
        "result": generic_blocks(item.result or {}), "data": generic_blocks(item.data),
    })


@role_required(Role.ANNOTATOR, Role.CHECKER, Role.ADMIN)
def release_file(request: HttpRequest, pk: int, path: str) -> HttpResponse:
    """Download one file of a release (unpublished releases: admins only), streamed from
    the release storage (``GET /api/v1/releases/<id>/files/<path>`` is the same file for
    an API client)."""
    from annotation.releases import release_download

    return release_download(user=request.user, release_id=pk, path=path)


@role_required(Role.ADMIN)
def release_detail(request: HttpRequest, pk: int) -> HttpResponse:
    from annotation.models import Release
    from collector.jobs import job_progress

    release = get_object_or_404(Release.objects.select_related("project", "job"), pk=pk)
    # Polls while the build may still change it: not once the release or its job is final.
    polling = release.status == Release.Status.BUILDING and not (
        release.job is not None and release.job.finished)
    context = {"release": release, "files": release.files.all(), "polling": polling,
               "progress": job_progress(release.job) if release.job else None,
               "is_admin": has_role(request.user, Role.ADMIN)}
    template = "annotation/release_detail.html"
    if request.htmx:
        template += "#release-status"
    return render(request, template, context)


@role_required(Role.ADMIN)
@require_POST
def release_action(request: HttpRequest, pk: int) -> HttpResponse:
    """Create a release of project ``pk`` (action=create), publish one (action=publish) or
    build a failed one again under its version (action=rebuild)."""
    from annotation import releases
    from annotation.models import Release

    action = request.POST.get("action")
    if action in ("publish", "rebuild"):
        release = posted_or_404(Release, request.POST.get("release"), project_id=pk)
        try:
            if action == "publish":
                releases.release_publish(release=release, actor=request.user)
            else:
                releases.release_rebuild(release=release, user=request.user)
        except ValidationError as exc:
            messages.error(request, exc.messages[0])
        else:
            messages.success(request, (_("Release %(version)s published.")
                                       if action == "publish" else
                                       _("Release %(version)s is being built again."))
                             % {"version": release.version})
        if action == "publish":
            return redirect("annotation:project_detail", pk=pk)
        return redirect("annotation:release_detail", pk=release.pk)
    project = get_object_or_404(Project, pk=pk)
    try:
        release = releases.release_create(
            project=project, version=request.POST.get("version", "").strip(),
            formats=request.POST.getlist("formats"), user=request.user,
            omit_workers=request.POST.get("omit_workers") == "on",
            unagreed_questions=request.POST.get("unagreed_questions") or "unanswerable",
        )
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
        return redirect("annotation:project_detail", pk=pk)
    return redirect("annotation:release_detail", pk=release.pk)


@role_required(Role.ADMIN)
def reco_filter_labels(request: HttpRequest, pk: int) -> HttpResponse:
    """ReCO: an admin labels a seeded sample of filtered queries keep / drop (without seeing
    the filter's verdicts) to measure the filter's precision and recall."""
    from annotation.stages import reco

    project = get_object_or_404(Project, pk=pk)
    stage = get_object_or_404(Stage, project=project, kind="reco_query_filter")
    if request.method == "POST" and request.POST.get("action") == "train":
        upload = request.FILES.get("labelled")
        try:
            if upload is None:
                raise ValidationError(_("labelled: attach a file of labelled queries"))
            try:
                text = text_decode(upload.read(), file=upload.name)
            except ImportFailure as exc:
                raise ValidationError(exc.text) from None
            samples = reco.labelled_queries_read(text, name=upload.name)
            trained = reco.intent_model_train(stage=stage, samples=samples,
                                              language=request.POST.get("language", "en"))
        except ValidationError as exc:
            messages.error(request, exc.messages[0])
        else:
            done = _("Intent classifier (%(language)s) trained on %(samples)s queries "
                     "(%(questions)s questions); intent mode %(mode)s.") % {
                "language": trained["language"], "samples": trained["samples"],
                "questions": trained["questions"], "mode": trained["mode"]}
            if trained["missing"]:
                done += " " + _("The filter uses it once a model for %(languages)s is trained "
                                "too.") % {"languages": ", ".join(trained["missing"])}
            messages.success(request, done)
        return redirect("annotation:reco_filter_labels", pk=project.pk)
    if request.method == "POST":
        choices = {"keep": True, "drop": False, "clear": None}
        labels = {posted_id(key[6:]): choices[value] for key, value in request.POST.items()
                  if key.startswith("label-") and posted_id(key[6:]) and value in choices}
        changed = reco.query_labels_save(stage=stage, labels=labels, user=request.user)
        messages.success(request, _("%(count)s label(s) saved.") % {"count": changed})
        return redirect("annotation:reco_filter_labels", pk=project.pk)
    sample = reco.query_label_sample(stage=stage)
    return render(request, "annotation/reco_filter_labels.html", {
        "project": project, "stage": stage,
        "rows": [{"item": item, "query": item.data.get("query", ""),
                  "label": item.data.get("admin_label", {}).get("keep")} for item in sample],
        "labelled": sum(1 for item in sample if "admin_label" in item.data),
    })
