"""The workers pages (admins, and checkers of the project): the workers table, sortable and
filterable, with plots over time; one worker's submissions; admins' decisions on a worker's
standing on a stage (resume, retrain, block)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from annotation import engine, quality, worker_stats
from annotation.http import posted_or_404
from annotation.models import MemberStatus, Project, ProjectMember, Stage
from annotation.roles import Role, has_role, role_required

User = get_user_model()
WORKERS_PER_PAGE = 100
ACTIONS = {
    "resume": gettext_lazy("%(worker)s resumed on %(stage)s (now %(status)s)."),
    "retrain": gettext_lazy("%(worker)s sent back to training on %(stage)s (now %(status)s)."),
    "block": gettext_lazy("%(worker)s blocked on %(stage)s (now %(status)s)."),
}


def _project_for(request: HttpRequest, pk: int) -> tuple[Project, bool]:
    """The project and whether the user is an admin; checkers only of their projects."""
    project = get_object_or_404(Project, pk=pk)
    if has_role(request.user, Role.ADMIN):
        return project, True
    if ProjectMember.objects.filter(project=project, user=request.user,
                                    role=Role.CHECKER.value,
                                    status=MemberStatus.ACTIVE).exists():
        return project, False
    raise PermissionDenied("Only the project's checkers and admins see its workers.")


class WorkersQueryForm(forms.Form):
    """The table's query string: sort column and order, filters, page."""

    sort = forms.ChoiceField(required=False, choices=[(k, v[0]) for k, v
                                                      in worker_stats.SORTS.items()])
    order = forms.ChoiceField(required=False, choices=[("desc", gettext_lazy("descending")),
                                                       ("asc", gettext_lazy("ascending"))])
    status = forms.ChoiceField(required=False, choices=[("", gettext_lazy("any status")),
                                                        *MemberStatus.choices])
    role = forms.ChoiceField(required=False, choices=[
        ("", gettext_lazy("any role")), (Role.ANNOTATOR.value, gettext_lazy("annotator")),
        (Role.CHECKER.value, gettext_lazy("checker"))])
    stage = forms.TypedChoiceField(required=False, coerce=int, empty_value=None)
    q = forms.CharField(required=False, max_length=150, strip=True)
    page = forms.IntegerField(required=False, min_value=1)

    def __init__(self, *args: Any, stages: list[Stage], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["stage"].choices = [("", gettext_lazy("all stages")),
                                        *((s.pk, f"{s.order}. {s.display_name}") for s in stages)]

    def value(self, name: str, default: Any = "") -> Any:
        """A field's cleaned value, or ``default`` when missing or invalid."""
        got = self.cleaned_data.get(name) if hasattr(self, "cleaned_data") else None
        return got if got not in (None, "") else default


def _query(params: dict[str, Any], **changes: Any) -> str:
    merged = {k: v for k, v in {**params, **changes}.items() if v not in (None, "")}
    return "?" + urlencode(merged)


@role_required(Role.ADMIN, Role.CHECKER)
@require_GET
def project_workers(request: HttpRequest, pk: int) -> HttpResponse:
    """The workers table (GET; htmx requests get the table alone)."""
    project, is_admin = _project_for(request, pk)
    human = [s for s in project.stages.order_by("order") if not s.kind_spec.automatic]
    form = WorkersQueryForm(request.GET, stages=human)
    form.is_valid()
    stage = next((s for s in human if s.pk == form.value("stage", None)), None)
    sort = form.value("sort", "tasks")
    order = form.value("order", "desc")
    rows = worker_stats.project_workers(project=project, stage=stage, external_ids=is_admin)
    shown = worker_stats.workers_filtered(rows, status=form.value("status"),
                                          role=form.value("role"), text=form.value("q"))
    shown = worker_stats.workers_sorted(shown, sort=sort, descending=order == "desc")
    page = Paginator(shown, WORKERS_PER_PAGE).get_page(form.value("page", 1))
    params = {"sort": sort, "order": order, "status": form.value("status"),
              "role": form.value("role"), "stage": stage.pk if stage else "",
              "q": form.value("q")}
    headers = []
    for key, (label, _sort_key) in worker_stats.SORTS.items():
        active = key == sort
        if active:
            then = "asc" if order == "desc" else "desc"
        else:  # names read best A to Z, figures best first
            then = "asc" if key in worker_stats.ASCENDING_FIRST else "desc"
        headers.append({"key": key, "label": label, "active": active, "order": order,
                        "url": _query(params, sort=key, order=then)})
    context = {
        "project": project, "is_admin": is_admin, "form": form, "stage": stage,
        "rows": page.object_list, "page": page, "total": len(rows), "matching": len(shown),
        "headers": headers, "params": params,
        "previous_url": _query(params, page=page.previous_page_number())
        if page.has_previous() else "",
        "next_url": _query(params, page=page.next_page_number()) if page.has_next() else "",
        "here": request.get_full_path(), "oob": bool(request.htmx),
        "by_status": {status: sum(1 for r in rows if r["status"] == status)
                      for status in MemberStatus.values},
    }
    if request.htmx:
        return render(request, "annotation/workers/project_workers.html#table", context)
    context["over_time"] = worker_stats.workers_over_time(project=project)
    return render(request, "annotation/workers/project_workers.html", context)


@role_required(Role.ADMIN, Role.CHECKER)
@require_GET
def project_worker(request: HttpRequest, pk: int, user_id: int) -> HttpResponse:
    """One worker's submissions to the project, paginated, and their standings."""
    project, is_admin = _project_for(request, pk)
    memberships = list(ProjectMember.objects.filter(
        project=project, user_id=user_id, role__in=worker_stats.WORKER_ROLES,
    ).select_related("user", "user__external_account").order_by("role"))
    if not memberships:
        raise PermissionDenied("Not a worker of this project.")
    worker = memberships[0].user
    work = worker_stats.worker_submissions(project=project, worker=worker,
                                           page=request.GET.get("page") or 1)
    return render(request, "annotation/workers/project_worker.html", {
        "project": project, "is_admin": is_admin, "worker": worker,
        "memberships": memberships,
        "account": getattr(worker, "external_account", None) if is_admin else None,
        "here": request.get_full_path(), **work,
    })


def _back(request: HttpRequest, project: Project) -> str:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()):
        return target
    return reverse("annotation:project_workers", args=[project.pk])


@role_required(Role.ADMIN)
@require_POST
def project_worker_standing(request: HttpRequest, pk: int, user_id: int) -> HttpResponse:
    """An admin's decision on the worker's standing on one stage: ``action`` = resume,
    retrain or block, ``stage`` = the stage's id; back to ``next``."""
    project = get_object_or_404(Project, pk=pk)
    worker = get_object_or_404(User, pk=user_id)
    stage = posted_or_404(Stage, request.POST.get("stage"), project=project)
    action = request.POST.get("action", "")
    member = ProjectMember.objects.filter(project=project, user=worker,
                                          role=stage.kind_spec.role.value).first()
    if action not in ACTIONS:
        messages.error(request, _("Unknown action %(action)r: use resume, retrain or block.")
                       % {"action": action})
    elif stage.kind_spec.automatic or member is None:
        messages.error(request, _("%(worker)s does not work %(stage)s.")
                       % {"worker": worker.get_username(), "stage": stage.display_name})
    else:
        try:
            standing = engine.standing_decide(
                standing=quality.standing_for(member=member, stage=stage), action=action,
                actor=request.user)
        except ValidationError as exc:
            messages.error(request, exc.messages[0])
        else:
            messages.success(request, ACTIONS[action] % {
                "worker": worker.get_username(), "stage": stage.display_name,
                "status": str(standing.get_status_display()).lower()})
    return redirect(_back(request, project))


@role_required(Role.ADMIN)
@require_POST
def project_worker_erase(request: HttpRequest, pk: int, user_id: int) -> HttpResponse:
    """An admin erases a worker's personal identifiers on their request (``confirm`` must
    be checked): ``services.worker_erase``; back to the worker's page, which says what was
    removed and what stays."""
    from annotation.services import worker_erase

    project = get_object_or_404(Project, pk=pk)
    member = (ProjectMember.objects.filter(project=project, user_id=user_id,
                                           role__in=worker_stats.WORKER_ROLES)
              .select_related("user").first())
    if member is None:
        raise Http404("Not a worker of this project.")
    back = reverse("annotation:project_worker", args=[project.pk, user_id])
    if request.POST.get("confirm") != "on":
        messages.error(request, _("Check the box to confirm the erasure: it cannot be undone."))
        return redirect(back)
    if member.user_id == request.user.pk or has_role(member.user, Role.ADMIN):
        messages.error(request, _("Admins are not erased here: remove the admin role first."))
        return redirect(back)
    summary = worker_erase(user=member.user, actor=request.user)
    messages.success(request, _(
        "Erased: %(removed)s. The account is now %(username)s and deactivated. Their answers "
        "stay, anonymised under the same account, so releases, agreement and payments stay "
        "reproducible.") % {"removed": ", ".join(str(r) for r in summary.removed),
                            "username": summary.username})
    return redirect(back)
