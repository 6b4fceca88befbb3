"""Pay pages (admins): a project's costs, workers' earnings and wages, bonuses, pay
settings and payment exports; the exported CSVs for download, and each export's Prolific
bulk bonus lines per study."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from annotation import pay
from annotation.models import PaymentExport, Project
from annotation.roles import Role, role_required

User = get_user_model()


@role_required(Role.ADMIN)
@require_http_methods(["GET", "POST"])
def project_pay(request: HttpRequest, pk: int) -> HttpResponse:
    """The pay page (GET; ``?page=``: a page of its workers); its forms post ``action`` =
    bonus (to the member named ``username``), settings, export (every worker owed) or
    unpaid (mark the export ``export`` not paid, ``confirm`` = yes, with a ``reason`` and
    the usernames ``still_paid`` by other means)."""
    project = get_object_or_404(Project, pk=pk)
    if request.method == "POST":
        _pay_action(request, project)
        return redirect("annotation:project_pay", pk=project.pk)
    figures = pay.project_pay(project=project, page=request.GET.get("page") or 1)
    return render(request, "annotation/pay/project_pay.html", {
        "project": project, **figures, "page": figures["workers"],
    })


def _pay_action(request: HttpRequest, project: Project) -> None:
    action = request.POST.get("action")
    try:
        if action == "bonus":
            username = request.POST.get("username", "").strip()
            worker = User.objects.filter(username=username).first() if username else None
            if worker is None:
                raise ValidationError(_("worker: nobody is named %(username)r.")
                                      % {"username": username})
            bonus = pay.bonus_add(project=project, worker=worker,
                                  amount=request.POST.get("amount", ""),
                                  reason=request.POST.get("reason", ""), actor=request.user)
            messages.success(request, _("Bonus of %(amount)s %(currency)s added for %(worker)s.")
                             % {"amount": bonus.amount, "currency": project.currency,
                                "worker": worker.get_username()})
        elif action == "settings":
            updated = pay.project_pay_settings_update(
                project=project, currency=request.POST.get("currency", ""),
                min_hourly_wage=request.POST.get("min_hourly_wage", ""))
            messages.success(request, _("Pay settings saved: %(currency)s, minimum hourly wage "
                                        "%(wage)s.") % {"currency": updated.currency,
                                                         "wage": updated.min_hourly_wage})
        elif action == "export":
            export = pay.payments_export(project=project, actor=request.user,
                                         reason=request.POST.get("reason", ""))
            rows = export.lines.count()
            messages.success(request, _("Payments exported: %(rows)s row(s), total %(total)s "
                                        "%(currency)s.") % {"rows": rows, "total": export.total,
                                                             "currency": export.currency}
                             + (f" {export.note}" if export.note else ""))
            for warning in export.warnings:
                messages.warning(request, warning)
        elif action == "unpaid":
            given = request.POST.get("export", "").strip()
            export = (PaymentExport.objects.filter(project=project, pk=int(given)).first()
                      if given.isdigit() else None)
            if export is None:
                raise ValidationError(_("export: no export %(export)s of this project.")
                                      % {"export": repr(given)})
            if request.POST.get("confirm") != "yes":
                raise ValidationError(_("Export %(export)s was not marked: tick the box to "
                                        "confirm that paying it failed.")
                                      % {"export": export.pk})
            export = pay.payment_export_mark_unpaid(
                export=export, actor=request.user, reason=request.POST.get("reason", ""),
                still_paid=request.POST.get("still_paid", ""))
            returned = export.lines.filter(returned_at__isnull=False)
            messages.success(request, _(
                "Export %(export)s marked not paid: %(rows)s row(s), %(total)s %(currency)s, "
                "are owed again and will be paid by the next export.") % {
                    "export": export.pk, "rows": returned.count(),
                    "total": sum((line.amount for line in returned), pay.ZERO),
                    "currency": export.currency})
        else:
            messages.error(request, _("Unknown action %(action)r.") % {"action": action})
    except ValidationError as exc:
        messages.error(request, exc.messages[0])


@role_required(Role.ADMIN)
@require_GET
def payment_export_file(request: HttpRequest, pk: int) -> HttpResponse:
    """An export's CSV, as stored, as an attachment."""
    export = get_object_or_404(PaymentExport.objects.select_related("unpaid_by"), pk=pk)
    refused = pay.payment_export_paying_refused(export)
    if refused:  # its CSV must not be paid from again: the next export pays what it owed
        return HttpResponse(refused, status=410, content_type="text/plain; charset=utf-8")
    response = HttpResponse(export.content, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="payments-{export.project_id}-{export.pk}.csv"')
    return response


@role_required(Role.ADMIN)
@require_GET
def payment_export_prolific(request: HttpRequest, pk: int) -> HttpResponse:
    """The export's Prolific bulk bonus lines (``participant_id,amount``) of the study
    ``?study=`` (none: participants whose study is unknown), as plain text to paste into
    the study's bulk bonus form; 404 when the export pays nobody there."""
    export = get_object_or_404(PaymentExport.objects.select_related("unpaid_by"), pk=pk)
    refused = pay.payment_export_paying_refused(export)
    if refused:
        return HttpResponse(refused, status=410, content_type="text/plain; charset=utf-8")
    study = request.GET.get("study", "").strip()
    lines = pay.prolific_bonus_lines(export, study=study)
    if lines is None:
        raise Http404(f"export {export.pk} pays no Prolific participant of study {study!r}")
    response = HttpResponse(lines, content_type="text/plain; charset=utf-8")
    name = f"prolific-bonuses-{export.project_id}-{export.pk}{'-' + study if study else ''}"
    response["Content-Disposition"] = f'inline; filename="{name}.txt"'
    return response
