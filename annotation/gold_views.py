"""Pages of gold items and qualification: a worker's qualification try on a stage, their
own accuracy, and the admins' gold page of a stage (import, take from a project)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from annotation import engine, gold
from annotation.http import posted_id
from annotation.markdown import stage_guidelines_html
from annotation.models import Assignment, Item, Project, ProjectMember, Stage, WorkerStage
from annotation.roles import Role, has_role, queue_home_url_name, role_required
from collector.importers.errors import ImportFailure
from collector.importers.source import text_decode

#: The largest JSONL file of gold items the stage's gold page accepts.
GOLD_UPLOAD_MAX_BYTES = 20 * 1024 * 1024


@role_required(Role.ANNOTATOR, Role.CHECKER)
@require_http_methods(["GET", "POST"])
def qualification(request: HttpRequest, pk: int) -> HttpResponse:
    """A worker's qualification on a stage: their state and a Start button (POST
    ``qualification_action=start``); ``?item=<id>`` the next training item in the stage's
    own task form, whose POST is the answer; ``?answered=<id>`` the score, the expected
    answer and the reason, then Next, and at the end of a try whether it passed."""
    stage = get_object_or_404(Stage.objects.select_related("project"), pk=pk)
    if not has_role(request.user, Role.ADMIN) and not ProjectMember.objects.filter(
            project_id=stage.project_id, user=request.user).exists():
        # As the guidelines page (the refusal below names the project).
        raise Http404("no such stage among your projects")
    spec = stage.kind_spec
    if spec.automatic or not has_role(request.user, spec.role):
        raise PermissionDenied(_("This stage is worked by annotators.")
                               if spec.role == Role.ANNOTATOR else
                               _("This stage is worked by checkers."))
    try:
        standing, state = gold.qualification_status(stage=stage, worker=request.user)
    except ValidationError as exc:
        raise PermissionDenied(exc.messages[0]) from exc
    url = reverse("annotation:qualification", args=[stage.pk])
    if request.method == "POST":
        if request.POST.get("qualification_action") == "start":
            try:
                standing = gold.qualification_start(stage=stage, worker=request.user)
            except ValidationError as exc:
                messages.error(request, exc.messages[0])
                return redirect(url)
            item = gold.qualification_item(standing=standing)
            return redirect(f"{url}?item={item.pk}" if item else url)
        return _answer(request, stage, standing, state, url)
    # A worker an admin paused or blocked sees their state, not their try's next item.
    current = (gold.qualification_item(standing=standing)
               if standing and state["state"] not in gold.STOPPED else None)
    answered, wanted = posted_id(request.GET.get("answered")), posted_id(request.GET.get("item"))
    if wanted is not None:
        if current is not None and current.pk == wanted:
            return _task_page(request, stage, standing, state, current)
        return redirect(f"{url}?answered={wanted}" if standing and gold.qualification_feedback(
            standing=standing, item_id=wanted) else url)
    feedback = None
    if answered is not None and standing is not None:
        feedback = gold.qualification_feedback(standing=standing, item_id=answered)
    return render(request, "annotation/gold/qualification.html", {
        "stage": stage, "project": stage.project, "state": state, "standing": standing,
        "feedback": feedback, "current": current,
        # Where "My tasks" leads: the queue of the stage's role (checkers have no annotator
        # home; it refused them).
        "home": queue_home_url_name(spec.role),
    })


def _answer(request: HttpRequest, stage: Stage, standing: WorkerStage | None,
            state: dict[str, Any], url: str) -> HttpResponse:
    """The answer to the training item the page showed (``?item=<id>`` of the form's URL;
    the task forms post to the page they are on)."""
    current = gold.qualification_item(standing=standing) if standing else None
    shown = posted_id(request.GET.get("item"))
    if current is None or (shown is not None and shown != current.pk):
        if standing is not None and shown is not None and gold.qualification_feedback(
                standing=standing, item_id=shown):
            messages.info(request, _("You answered this item already."))
            return redirect(f"{url}?answered={shown}")
        messages.error(request,
                       _("That item is not the next one of your qualification try."))
        return redirect(url)
    try:
        payload = stage.kind_spec.payload_from_form(current, request.POST)
        gold.qualification_answer(standing=standing, item=current, payload=payload)
    except gold.QualificationStopped as exc:  # paused or blocked: back to their state
        messages.error(request, exc.messages[0])
        return redirect(url)
    except ValidationError as exc:
        return _task_page(request, stage, standing, state, current, errors=exc.messages)
    return redirect(f"{url}?answered={current.pk}")


def _task_page(request: HttpRequest, stage: Stage, standing: WorkerStage, state: dict[str, Any],
               item: Item, *, errors: list[str] | None = None) -> HttpResponse:
    """A training item in the stage's own task template (an unsaved assignment: nothing is
    claimed), inside the qualification frame (no "I can't do this task")."""
    spec = stage.kind_spec
    return render(request, "annotation/gold/training_task.html", {
        "task_template": spec.template,
        "assignment": Assignment(pk=0, item=item, stage=stage), "item": item, "stage": stage,
        "project": stage.project, "task": spec.context(item), "errors": errors or [],
        "form_values": spec.form_values(item, request.POST),
        "guidelines": stage_guidelines_html(stage),
        "done_today": engine.worker_done_today(worker=request.user),
        "training": {"number": len(standing.training_scores) + 1,
                     "of": len(standing.training_items),
                     "try": standing.qualification_tries + 1, "tries": state["tries"]},
    }, status=400 if errors else 200)


@role_required(Role.ANNOTATOR, Role.CHECKER)
@require_GET
def my_quality(request: HttpRequest) -> HttpResponse:
    """The worker's own accuracy per stage (training and gold checks) and the
    qualifications stages ask of them."""
    return render(request, "annotation/gold/my_quality.html", {
        "accuracy": gold.worker_accuracy(worker=request.user),
        "qualifications": gold.qualifications_for(worker=request.user),
    })


@role_required(Role.ADMIN)
@require_http_methods(["GET", "POST"])
def stage_gold(request: HttpRequest, pk: int) -> HttpResponse:
    """A stage's gold items (GET); POST ``action`` = import (a JSONL file) or from_project
    (consolidated records of an earlier project of the same recipe)."""
    stage = get_object_or_404(Stage.objects.select_related("project"), pk=pk)
    errors: list[str] = []
    if request.method == "POST":
        try:
            created = _gold_action(request, stage)
        except ValidationError as exc:
            errors = exc.messages
        else:
            kinds = {item.gold for item in created}
            messages.success(request, _("%(count)s gold item(s) added (%(kinds)s).")
                             % {"count": len(created), "kinds": ", ".join(sorted(kinds))})
            return redirect("annotation:stage_gold", pk=stage.pk)
    spec = stage.kind_spec
    return render(request, "annotation/gold/stage_gold.html", {
        "stage": stage, "project": stage.project, "errors": errors,
        "scores_gold": spec.scores_gold and not spec.automatic, "batched": spec.batched,
        "from_records": stage.kind in gold.RECORD_GOLD,
        "rows": gold.gold_items_overview(stage=stage) if spec.scores_gold else [],
        "sources": Project.objects.filter(recipe=stage.project.recipe)
        .exclude(pk=stage.project_id).order_by("name"),
        "params": {name: stage.params.get(name) for name in (
            "qualification_items", "qualification_threshold", "qualification_tries",
            "gold_rate", "gold_min_items", "gold_min_accuracy") if name in stage.params},
        "posted": request.POST,
    }, status=400 if errors else 200)


def _gold_action(request: HttpRequest, stage: Stage) -> list[Item]:
    action = request.POST.get("action")
    purpose = request.POST.get("purpose", "")
    if action == "import":
        upload = request.FILES.get("file")
        if upload is None:
            raise ValidationError(_("file: attach a JSONL file of gold items"))
        if upload.size > GOLD_UPLOAD_MAX_BYTES:
            raise ValidationError(_("%(file)s: larger than %(limit)s MiB")
                                  % {"file": upload.name,
                                     "limit": GOLD_UPLOAD_MAX_BYTES // (1024 * 1024)})
        try:
            text = text_decode(upload.read(), file=upload.name)
        except ImportFailure as exc:
            raise ValidationError(exc.text) from None
        return gold.gold_items_import(stage=stage, text=text, name=upload.name,
                                      purpose=purpose)
    if action == "from_project":
        source_id = posted_id(request.POST.get("project"))
        limit = posted_id(request.POST.get("limit"))
        source = Project.objects.filter(pk=source_id).first() if source_id else None
        if source is None:
            raise ValidationError(_("project: choose the project to take gold items from"))
        if not limit:
            raise ValidationError(_("limit: how many records to take (1 or more)"))
        return gold.gold_items_from_project(stage=stage, source_project=source,
                                            purpose=purpose, limit=limit)
    raise ValidationError(_("unknown action %(action)s") % {"action": repr(action)})
