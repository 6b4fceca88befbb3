"""Pages of marketplace studies: the worker's arrival (consent, MTurk preview), the next-task
page that ends in the completion code, and the admin's studies page."""

from __future__ import annotations

import time
from typing import Any

from axes.helpers import get_client_ip_address
from django.contrib import messages
from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation import engine, gold, pay, studies
from annotation.http import posted_or_404, whole_number
from annotation.markdown import render_markdown, stage_guidelines_html
from annotation.models import Assignment, Platform, Project, Study, StudySession
from annotation.roles import Role, role_required
from annotation.study_frame import FRAMED, frame_for_mturk

_BACKEND = "annotation.roles.RoleBackend"
# The browser's study: the session it came in by last, which ``/tasks/next/`` ends with.
STUDY_SESSION = "crowdqa_study_session"


def _problem(request: HttpRequest, *, title: str, message: str, status: int,
             study: Study | None = None) -> HttpResponse:
    return render(request, "annotation/study/problem.html",
                  {"title": title, "message": message, "study": study}, status=status)


def study_entry(request: HttpRequest, token: str) -> HttpResponse:
    """A marketplace worker's way in: the consent page (GET), "I agree" (POST) starts their
    session and takes them to their first task; MTurk's preview shows a sample task."""
    study = Study.objects.select_related("project").filter(token=token).first()
    if study is None:
        return _problem(request, title=_("No such study"), status=404, message=_(
            "This study link is not known here. Open the study again from the platform "
            "that sent you, or contact the researcher."))
    if study.platform == Platform.MTURK:
        frame_for_mturk(request)  # MTurk shows this page, and the HIT, in its own frame
    source = request.POST if request.method == "POST" else request.GET
    try:
        arrival = studies.arrival_parse(study=study, params=source)
    except ValidationError as exc:
        return _problem(request, title=_("This study link is incomplete"), status=400,
                        study=study, message=_(
                            "%(problem)s. Return to %(platform)s and open the study from "
                            "there.") % {"problem": exc.messages[0],
                                         "platform": study.get_platform_display()})
    if arrival.preview:
        return _preview(request, study)
    if study.status != Study.Status.OPEN and not studies.session_known(study=study,
                                                                       arrival=arrival):
        # Closed to new sessions; one that started before goes on (to its code).
        return _problem(request, title=_("This study is closed"), status=410, study=study,
                        message=_("The researcher closed this study; no new work is taken. "
                                  "Return to %(platform)s.")
                        % {"platform": study.get_platform_display()})
    if request.method == "POST":
        if not studies.new_worker_allowed(arrival=arrival,
                                          address=get_client_ip_address(request)):
            response = _problem(
                request, title=_("Too many new workers from your address"), status=429,
                study=study, message=_(
                    "Too many new workers have started this hour from your network address. "
                    "Try again in an hour, or contact the researcher through %(platform)s.")
                % {"platform": study.get_platform_display()})
            response["Retry-After"] = str(3600 - int(time.time()) % 3600)  # the next hour
            return response
        try:
            user, _member, session = studies.study_arrive(
                study=study, arrival=arrival,
                browser_user_id=request.user.pk if request.user.is_authenticated else None)
        except ValidationError as exc:
            return _problem(request, title=_("We could not start your session"), status=409,
                            study=study, message=exc.messages[0])
        if request.user.is_authenticated and request.user.pk != user.pk:
            request.session.flush()
        login(request, user, backend=_BACKEND)
        request.session[STUDY_SESSION] = session.pk
        if study.platform == Platform.MTURK:
            request.session[FRAMED] = True  # every page of this browser's HIT is framed
        else:
            request.session.pop(FRAMED, None)
        assignment = engine.task_claim(worker=user, project=study.project,
                                       role=Role.ANNOTATOR)
        if assignment is not None:
            return redirect("annotation:task_detail", pk=assignment.pk)
        return redirect("annotation:task_next")
    session = studies.session_of(study=study, arrival=arrival, user=request.user)
    if session is not None:  # agreed already: straight on, in this study
        request.session[STUDY_SESSION] = session.pk
        return redirect("annotation:task_next")
    return render(request, "annotation/study/consent.html", {
        "study": study, "project": study.project, "query": arrival.query(),
        "consent": render_markdown(study.project.consent),
        "fields": [(k, v) for k, v in source.items() if k in _arrival_fields(study)],
    })


def _arrival_fields(study: Study) -> set[str]:
    names = set(studies.PARAMS[study.platform])
    return names | ({studies.MTURK_SUBMIT_TO} if study.platform == Platform.MTURK else set())


def _preview(request: HttpRequest, study: Study) -> HttpResponse:
    """MTurk's preview: a sample task to look at; nothing is claimed, nobody signs in."""
    item = studies.sample_item(study=study)
    if item is None:
        return render(request, "annotation/study/problem.html", {
            "title": _("Preview"), "study": study,
            "message": _("There is no sample task to show yet. Accept the HIT to see whether "
                         "work is waiting.")})
    spec = item.stage.kind_spec
    return render(request, spec.template, {
        "assignment": Assignment(pk=0, item=item, stage=item.stage), "item": item,
        "stage": item.stage, "project": study.project, "task": spec.context(item),
        "errors": [], "form_values": spec.form_values(item, {}),
        "guidelines": stage_guidelines_html(item.stage), "done_today": 0,
        "preview": _("Preview: this is a sample task. Accept the HIT to start working."),
    })


def next_page(request: HttpRequest) -> HttpResponse:
    """``GET /tasks/next/``: the worker's live task, their next step, or (marketplace
    workers whose quota is done or for whom nothing is left) the completion code."""
    current = engine.task_current(worker=request.user, role=Role.ANNOTATOR)
    if current is not None:
        return redirect("annotation:task_detail", pk=current.pk)
    # A task whose time ran out counts against the session's quota until it is expired (by
    # the periodic job, or a claim): expire the worker's own now, so that the quota read
    # below does not count it and end the session with a code for work not done.
    engine.leases_expire(worker=request.user)
    session = studies.session_current(worker=request.user,
                                      session_id=request.session.get(STUDY_SESSION))
    if session is None:
        return redirect("annotation:annotator_home")
    project, member = session.study.project, session.member
    quota_done = member.session_limit is not None and member.session_taken >= member.session_limit
    # A stage that asks for a qualification first: the worker qualifies before the code.
    qualifications = gold.qualifications_for(worker=request.user, project=project)
    qualify = [row for row in qualifications
               if row["state"] in ("todo", "failed", "in_progress")]
    if quota_done:
        studies.session_finish(session=session, outcome=StudySession.Outcome.QUOTA)
    elif member.status != member.Status.ACTIVE:  # blocked or paused in the project
        studies.session_finish(session=session, outcome=StudySession.Outcome.SCREENED_OUT)
    elif not qualify and not engine.work_waiting(worker=request.user, project=project):
        # Paused by the gold checks (or an admin) on a stage, or failed its qualification
        # with no try left, and nothing else is left for them: screened out, as a paused
        # member is, with no code.
        why = studies.screened_out_why(member=member, project=project,
                                       qualifications=qualifications)
        studies.session_finish(session=session, outcome=(
            StudySession.Outcome.SCREENED_OUT if why else StudySession.Outcome.NO_WORK))
    else:  # work came back after none was left: carry on
        studies.session_resume(session=session)
    finished = session.outcome != StudySession.Outcome.WORKING
    return render(request, "annotation/study/next.html", {
        "session": session, "study": session.study, "project": project,
        "submitted": studies.session_submitted(session), "quota": member.session_limit,
        "done": studies.completion(session=session) if finished else None,
        "earned": pay.worker_earnings(worker=request.user, project=project),
        "qualify": qualify,
    })


def _studies_context(project: Project, request: HttpRequest) -> dict[str, Any]:
    rows = (Study.objects.filter(project=project).annotate(
        n_sessions=Count("sessions"),
        n_quota=Count("sessions", filter=Q(sessions__outcome=StudySession.Outcome.QUOTA)),
        n_no_work=Count("sessions", filter=Q(sessions__outcome=StudySession.Outcome.NO_WORK)),
        n_screened_out=Count("sessions", filter=Q(
            sessions__outcome=StudySession.Outcome.SCREENED_OUT)),
        n_workers=Count("sessions__member", distinct=True),
    ).order_by("-created_at"))
    examples = {
        Platform.PROLIFIC: "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
                           "&SESSION_ID={{%SESSION_ID%}}",
        Platform.MTURK: "",
    }
    return {"project": project, "studies": [{
        "study": study, "url": request.build_absolute_uri(studies.study_path(study)),
        "example": examples[study.platform],
    } for study in rows], "platforms": Platform.choices}


@role_required(Role.ADMIN)
def study_list(request: HttpRequest, pk: int) -> HttpResponse:
    """A project's marketplace studies: their links, codes, quotas and sessions; the
    consent text every arrival reads."""
    project = get_object_or_404(Project, pk=pk)
    return render(request, "annotation/study/admin.html", _studies_context(project, request))


@role_required(Role.ADMIN)
@require_POST
def study_action(request: HttpRequest, pk: int) -> HttpResponse:
    """Create a study, close or reopen one, or save the project's consent text."""
    project = get_object_or_404(Project, pk=pk)
    action = request.POST.get("action")
    try:
        if action == "create":
            quota = request.POST.get("quota", "").strip()
            if quota and whole_number(quota) is None:
                raise ValidationError(f"quota: {quota[:40]!r} is not a whole number")
            study = studies.study_create(
                project=project, platform=request.POST.get("platform", ""),
                completion_code=request.POST.get("completion_code", "").strip(),
                no_work_code=request.POST.get("no_work_code", "").strip(),
                no_work_completes=request.POST.get("no_work_completes") == "on",
                quota=int(quota) if quota else None, name=request.POST.get("name", "").strip(),
                actor=request.user)
            messages.success(request, _("Study created: %(path)s")
                             % {"path": studies.study_path(study)})
            if study.platform == Platform.MTURK and project.currency != pay.MTURK_CURRENCY:
                messages.warning(request, _(
                    "MTurk pays bonuses in US dollars only and this project pays in "
                    "%(currency)s: set its currency to USD on the pay page before the first "
                    "payment export, or its MTurk workers cannot be paid through it.")
                    % {"currency": project.currency})
        elif action in ("close", "reopen"):
            study = posted_or_404(Study, request.POST.get("study"), project=project)
            studies.study_close(study=study, closed=action == "close")
            messages.success(request, (_("Study %(study)s closed.") if action == "close"
                                       else _("Study %(study)s reopened.")) % {"study": study})
        elif action == "consent":
            project.consent = request.POST.get("consent", "")
            project.save(update_fields=["consent"])
            messages.success(request, _("Consent text saved."))
        else:
            messages.error(request, _("Unknown action %(action)r.") % {"action": action})
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
    return redirect(reverse("annotation:study_list", args=[project.pk]))
