"""Collector pages: health and job progress (corpora, search and releases join later)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from annotation.roles import Role, has_role, role_required
from collector.models import Job


def _check_database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return {"ok": False, "vendor": connection.vendor, "error": str(exc)}
    return {"ok": True, "vendor": connection.vendor}


def _check_broker() -> dict:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"ok": True, "mode": "eager"}
    from config.celery import app

    url = settings.CELERY_BROKER_URL
    scheme = url.split("://", 1)[0]
    try:
        with app.connection_for_write(url) as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        return {"ok": False, "mode": scheme, "error": str(exc)}
    return {"ok": True, "mode": scheme}


def _check_index() -> dict:
    path = Path(settings.SEARCH_INDEX_DIR)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return {"ok": False, "path": str(path), "error": str(exc)}
    import os

    writable = os.access(path, os.W_OK)
    return {
        "ok": writable,
        "path": str(path),
        **({} if writable else {"error": "index directory is not writable"}),
    }


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness and readiness: database, broker (or eager), index directory."""
    checks = {
        "database": _check_database(),
        "broker": _check_broker(),
        "index": _check_index(),
    }
    ok = all(check["ok"] for check in checks.values())
    return JsonResponse({"status": "ok" if ok else "error", **checks}, status=200 if ok else 503)


@role_required(Role.ANNOTATOR, Role.CHECKER, Role.ADMIN)
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A job's progress: the whole page, or (htmx polling) just the progress partial."""
    from collector.jobs import job_progress

    job = get_object_or_404(Job, pk=pk)
    if job.created_by_id != request.user.pk and not has_role(request.user, Role.ADMIN):
        from django.core.exceptions import PermissionDenied

        raise PermissionDenied("Only the job's creator or an admin can follow this job.")
    context = {"job": job, "progress": job_progress(job)}
    template = "collector/job_detail.html"
    if request.htmx:
        template += "#job-progress"
    return render(request, template, context)
