"""Pay pages (admins): a project's costs, workers' earnings and wages, bonuses, pay
settings and payment exports; the exported CSVs for download."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotation import pay
from annotation.http import posted_id
from annotation.models import PaymentExport, Project
from annotation.roles import Role, role_required

User = get_user_model()


@role_required(Role.ADMIN)
@require_http_methods(["GET", "POST"])
def project_pay(request: HttpRequest, pk: int) -> HttpResponse:
    """The pay page (GET); its forms post ``action`` = bonus, settings or export."""
    project = get_object_or_404(Project, pk=pk)
    if request.method == "POST":
        _pay_action(request, project)
        return redirect("annotation:project_pay", pk=project.pk)
    return render(request, "annotation/pay/project_pay.html", {
        "project": project, **pay.project_pay(project=project),
    })


def _pay_action(request: HttpRequest, project: Project) -> None:
    action = request.POST.get("action")
    try:
        if action == "bonus":
            worker_id = posted_id(request.POST.get("worker"))
            worker = User.objects.filter(pk=worker_id).first() if worker_id else None
            bonus = pay.bonus_add(project=project, worker=worker,
                                  amount=request.POST.get("amount", ""),
                                  reason=request.POST.get("reason", ""), actor=request.user)
            messages.success(request, f"Bonus of {bonus.amount} {project.currency} added for "
                                      f"{worker.get_username()}.")
        elif action == "settings":
            updated = pay.project_pay_settings_update(
                project=project, currency=request.POST.get("currency", ""),
                min_hourly_wage=request.POST.get("min_hourly_wage", ""))
            messages.success(request, f"Pay settings saved: {updated.currency}, minimum hourly "
                                      f"wage {updated.min_hourly_wage}.")
        elif action == "export":
            export = pay.payments_export(project=project, actor=request.user)
            rows = export.lines.count()
            messages.success(request, f"Payments exported: {rows} row(s), total "
                                      f"{export.total} {export.currency}. {export.note}")
        else:
            messages.error(request, f"Unknown action {action!r}.")
    except ValidationError as exc:
        messages.error(request, exc.messages[0])


@role_required(Role.ADMIN)
@require_GET
def payment_export_file(request: HttpRequest, pk: int) -> HttpResponse:
    """An export's CSV, as stored, as an attachment."""
    export = get_object_or_404(PaymentExport, pk=pk)
    response = HttpResponse(export.content, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="payments-{export.project_id}-{export.pk}.csv"')
    return response
