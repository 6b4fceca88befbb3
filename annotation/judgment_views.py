"""Admin pages of the judgment recipe: import the questions and the systems' answers, run
the study, read its report (tables, plots) and download it as CSV or JSON."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh

from annotation.http import posted_or_404
from annotation.models import Project, Release
from annotation.roles import Role, role_required
from annotation.stages.judgment import TYPE_LABELS
from annotation.stages.judgment_import import Upload, refusal
from collector.importers.errors import ImportFailure
from collector.importers.source import text_decode


def _project(pk: int) -> Project:
    project = get_object_or_404(Project, pk=pk)
    if project.recipe != "judgment":
        raise Http404("not a judgment project")
    return project


def _upload(file: UploadedFile) -> Upload:
    try:
        return Upload(file.name, text_decode(file.read(), file=file.name))
    except ImportFailure as exc:
        raise refusal(exc) from None


#: Rows of the import form, each a system's name and its prediction file.
SYSTEM_ROWS = 5


def _systems(request: HttpRequest) -> tuple[list[str], list[UploadedFile]]:
    """The systems' names and prediction files, paired as the form's rows pair them
    (``system-N`` with ``predictions-N``); a row with a name and no file, or a file and no
    name, is refused. A client posting lists ``system`` and ``predictions`` pairs them in
    order."""
    names: list[str] = []
    files: list[UploadedFile] = []
    for n in range(1, SYSTEM_ROWS + 1):
        name, file = request.POST.get(f"system-{n}", "").strip(), request.FILES.get(
            f"predictions-{n}")
        if name and file is None:
            raise ValidationError(_("System %(n)s (%(name)s): attach its prediction file")
                                  % {"n": n, "name": name})
        if file is not None and not name:
            raise ValidationError(_("System %(n)s (%(file)s): name the system")
                                  % {"n": n, "file": file.name})
        if file is not None:
            names.append(name)
            files.append(file)
    # The form's name fields left empty (it has several) name no file: a browser
    # without JavaScript sends them, and sends no empty file field.
    listed = [n for n in request.POST.getlist("system") if n.strip()]
    listed_files = request.FILES.getlist("predictions")
    if len(listed) != len(listed_files):
        raise ValidationError(_("predictions: give one system name per prediction file"))
    return names + listed, files + listed_files


@role_required(Role.ADMIN)
@require_http_methods(["GET", "POST"])
def judgment_import(request: HttpRequest, pk: int) -> HttpResponse:
    """Upload the references (or take a release's) and one prediction file per system."""
    from annotation.stages.judgment_import import judgment_import as import_questions
    from annotation.stages.judgment_import import release_references

    project = _project(pk)
    releases = Release.objects.filter(
        status__in=(Release.Status.READY, Release.Status.PUBLISHED),
        files__format="dureader").select_related("project").distinct()
    errors: list[str] = []
    if request.method == "POST":
        try:
            if request.POST.get("release"):
                release = posted_or_404(releases, request.POST["release"])
                references = release_references(release)
            elif request.FILES.get("references"):
                references = _upload(request.FILES["references"])
            else:
                raise ValidationError(_("references: attach a reference file or choose a "
                                        "release"))
            names, files = _systems(request)
            result = import_questions(project=project, references=references,
                                      predictions=[(n, _upload(f))
                                                   for n, f in zip(names, files, strict=True)])
        except ValidationError as exc:
            errors = exc.messages
        else:
            by_type = ", ".join(f"{_(TYPE_LABELS[t])} {n}" for t, n in result["by_type"].items())
            params = {"questions": result["questions"], "systems": ", ".join(result["systems"]),
                      "by_type": by_type, "skipped": result["skipped"]}
            messages.success(request, (_(
                "%(questions)s questions imported with the answers of %(systems)s "
                "(%(by_type)s); %(skipped)s without a reference answer left out.")
                if result["skipped"] else _(
                "%(questions)s questions imported with the answers of %(systems)s "
                "(%(by_type)s).")) % params)
            return redirect("annotation:project_detail", pk=project.pk)
    return render(request, "annotation/judgment/import.html", {
        "project": project, "releases": releases, "errors": errors,
        "rows": [(n, request.POST.get(f"system-{n}", "")) for n in range(1, SYSTEM_ROWS + 1)],
        "release_chosen": request.POST.get("release", ""),
        "imported": project.items.filter(stage__kind="judgment_sample").count(),
    }, status=400 if errors else 200)


def _study_stage(project: Project):
    stage = project.stages.filter(kind="judgment_study").order_by("order").first()
    if stage is None:
        raise Http404("this project has no study stage")
    return stage


def _study_job(stage):
    from collector.models import Job

    return (Job.objects.filter(kind="stage_run", params__stage_id=stage.pk)
            .order_by("-created_at", "-id").first())


@role_required(Role.ADMIN)
def judgment_report(request: HttpRequest, pk: int) -> HttpResponse:
    """The report: Tables 1-3 laid out as in the paper, bootstrap, sweeps, scores."""
    from annotation.stages import judgment_report as jr
    from collector.jobs import job_progress

    project = _project(pk)
    stage = _study_stage(project)
    saved = jr.report_latest(project=project)
    job = _study_job(stage)
    context = {"project": project, "stage": stage, "saved": saved, "job": job,
               "running": job is not None and job.status in ("queued", "running"),
               "progress": job_progress(job) if job else None}
    if saved is not None:
        context.update({"tables": jr.report_tables(saved.report),
                        "plots": jr.report_plots(saved.report), "report": saved.report})
    template = "annotation/judgment/report.html"
    if request.htmx and request.GET.get("part") == "status":
        if not context["running"]:
            return HttpResponseClientRefresh()  # the run ended: show its report
        template += "#study-status"
    return render(request, template, context)


@role_required(Role.ADMIN)
@require_POST
def judgment_run(request: HttpRequest, pk: int) -> HttpResponse:
    """Run the study now (a job with progress); a new report when it finishes."""
    from annotation.engine import stage_run_enqueue

    project = _project(pk)
    if project.status == Project.Status.DRAFT:
        messages.error(request, _("Start the project first: the study needs ratings."))
    else:
        stage_run_enqueue(stage=_study_stage(project), user=request.user)
        messages.success(request, _("The study is running."))
    return redirect("annotation:judgment_report", pk=project.pk)


@role_required(Role.ADMIN)
def judgment_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """The latest report as CSV (candidates, then the tables) or JSON (everything)."""
    from annotation.stages import judgment_report as jr

    if fmt not in ("csv", "json"):
        raise Http404("downloads are report.csv and report.json")
    project = _project(pk)
    saved = jr.report_latest(project=project)
    if saved is None:
        raise Http404("no report yet: run the study")
    name = f"judgment-{project.pk}-report-{saved.pk}"
    if fmt == "csv":
        response = HttpResponse(jr.report_csv(saved.report),
                                content_type="text/csv; charset=utf-8")
    else:
        response = HttpResponse(json.dumps(saved.report, ensure_ascii=False, indent=1),
                                content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response
