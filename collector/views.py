"""Collector pages: health, job progress, corpora and documents, search, import."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.core.paginator import Paginator
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from annotation.roles import Role, has_role, role_required
from collector.models import Corpus, Job
from config.request_guards import form_refuses_nul

logger = logging.getLogger(__name__)


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


def _check_cache() -> dict:
    """The shared cache (CACHE_URL): sessions, signed-in users and job progress go through
    it, so a site whose cache is down cannot sign anyone in."""
    from django.core.cache import caches

    cache = caches["default"]
    try:
        cache.set("crowdqa:healthz", 1, timeout=10)
        cache.get("crowdqa:healthz")
    except Exception as exc:
        return {"ok": False, "backend": type(cache).__name__, "error": str(exc)}
    return {"ok": True, "backend": type(cache).__name__}


def _check_index() -> dict:
    from collector.search import search_backend

    backend = search_backend()
    if not backend.uses_index_dir:  # in the database (checked above): nothing on this disk
        return {"ok": True, "backend": type(backend).__name__}
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
    """Liveness and readiness: database, broker (or eager), shared cache, index directory."""
    checks = {
        "database": _check_database(),
        "broker": _check_broker(),
        "cache": _check_cache(),
        "index": _check_index(),
    }
    ok = all(check["ok"] for check in checks.values())
    if not ok:
        logger.error("health check failed: %s", "; ".join(
            f"{name}: {check.get('error', 'failed')}"
            for name, check in checks.items() if not check["ok"]
        ))
    return JsonResponse({"status": "ok" if ok else "error", **checks}, status=200 if ok else 503)


@role_required(Role.ANNOTATOR, Role.CHECKER, Role.ADMIN)
@require_GET
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A job's progress: the whole page, or (htmx polling) just the progress partial; the
    partial stops polling once the job is done or failed."""
    from collector.jobs import job_describe, job_progress

    job = get_object_or_404(Job.objects.select_related("created_by"), pk=pk)
    if job.created_by_id != request.user.pk and not has_role(request.user, Role.ADMIN):
        from django.core.exceptions import PermissionDenied

        raise PermissionDenied("Only the job's creator or an admin can follow this job.")
    context = {"job": job, "progress": job_progress(job), "about": job_describe(job),
               "is_admin": has_role(request.user, Role.ADMIN)}
    template = "collector/job_detail.html"
    if request.htmx:
        template += "#job-progress"
    return render(request, template, context)


@role_required(Role.ADMIN)
@require_GET
def job_list(request: HttpRequest) -> HttpResponse:
    """Every background job, searched, filtered and paged."""
    from annotation.lists import JobFilter, filtered_page

    job_filter, page = filtered_page(JobFilter, Job.objects.select_related("created_by"),
                                     request)
    return render(request, "collector/job_list.html", {"filter": job_filter, "page": page})


@role_required(Role.ADMIN)
@require_POST
def job_retry(request: HttpRequest, pk: int) -> HttpResponse:
    """An admin queues a failed job again (same kind and parameters)."""
    from django.contrib import messages

    from collector.jobs import JobError
    from collector.jobs import job_retry as retry

    job = get_object_or_404(Job, pk=pk)
    try:
        retry(job=job, user=request.user)
    except JobError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("Job #%(pk)s queued again.") % {"pk": job.pk})
    return redirect("collector:job_detail", pk=job.pk)


# -- corpora, documents, search, import ------------------------------------------------
ANY_ROLE = (Role.ANNOTATOR, Role.CHECKER, Role.ADMIN)


@role_required(*ANY_ROLE)
@require_GET
def corpus_list(request: HttpRequest) -> HttpResponse:
    from collector.selectors import corpora_visible, sees_all_corpora
    from collector.selectors import corpus_list as corpora

    return render(request, "collector/corpus_list.html", {
        "corpora": corpora_visible(user=request.user, corpora=corpora()),
        "sees_all": sees_all_corpora(request.user)})


@role_required(*ANY_ROLE)
@require_GET
def corpus_detail(request: HttpRequest, name: str) -> HttpResponse:
    from collector.selectors import corpus_documents, corpus_get, corpus_import_runs
    from collector.services import index_count

    corpus = corpus_get(name=name, user=request.user)
    if corpus is None:
        raise Http404(f"No corpus named {name} that you may see.")
    documents = Paginator(corpus_documents(corpus=corpus), 50).get_page(request.GET.get("page"))
    context = {
        "corpus": corpus, "documents": documents,
        "runs": corpus_import_runs(corpus=corpus)[:20],
        "indexed": index_count(corpus=corpus),
    }
    return render(request, "collector/corpus_detail.html", context)


@role_required(Role.ADMIN)
@require_POST
def corpus_visibility(request: HttpRequest, name: str) -> HttpResponse:
    """Open the corpus to annotators (``open=1``) or close it to them again."""
    from django.contrib import messages

    corpus = get_object_or_404(Corpus, name=name)
    corpus.open_to_annotators = request.POST.get("open") == "1"
    corpus.save(update_fields=["open_to_annotators"])
    if corpus.open_to_annotators:
        text = _("Corpus %(name)s is now open to annotators.")
    else:
        text = _("Corpus %(name)s is now for checkers and admins only.")
    messages.success(request, text % {"name": corpus.name})
    return redirect("collector:corpus_detail", name=corpus.name)


@role_required(Role.ADMIN)
@require_POST
def corpus_rebuild(request: HttpRequest, name: str) -> HttpResponse:
    from collector.jobs import job_create

    corpus = get_object_or_404(Corpus, name=name)
    job = job_create(kind="index_rebuild", params={"corpus": corpus.name}, user=request.user)
    return redirect("collector:job_detail", pk=job.pk)


@role_required(*ANY_ROLE)
@require_GET
def document_detail(request: HttpRequest, pk: int) -> HttpResponse:
    from collector.selectors import document_get, document_passages, sees_all_corpora

    document = document_get(pk=pk, user=request.user)
    if document is None:
        raise Http404("No such document that you may see.")
    # Source questions carry their gold answers: checkers and admins only.
    questions = (document.questions.order_by("id")[:50] if sees_all_corpora(request.user)
                 else None)
    context = {"document": document, "passages": document_passages(document=document),
               "questions": questions}
    return render(request, "collector/document_detail.html", context)


@role_required(*ANY_ROLE)
@require_GET
def search(request: HttpRequest) -> HttpResponse:
    """Passage search: the whole page, or (htmx) just the results partial."""
    from collector.forms import SearchForm
    from collector.selectors import corpora_visible
    from collector.services import search_page

    corpora = list(corpora_visible(user=request.user).order_by("name"))
    form = SearchForm(request.GET or None, corpora=corpora)
    results = corpus = None
    if form.is_valid():
        corpus = next(c for c in corpora if c.name == form.cleaned_data["corpus"])
        results = search_page(corpus=corpus, text=form.cleaned_data["q"],
                              page=form.cleaned_data["page"] or 1)
    context = {"form": form, "results": results, "corpus": corpus, "corpora": corpora}
    template = "collector/search.html"
    if request.htmx and not request.htmx.boosted:
        template += "#search-results"
    return render(request, template, context)


@form_refuses_nul
@role_required(Role.ADMIN)
def import_create(request: HttpRequest) -> HttpResponse:
    """Upload a file to import. ``action=preview`` (the page's first step) stores it, detects
    its format unless one is chosen, and shows its first records, read by the import's own
    readers; importing then runs as a job whose page shows its progress."""
    from collector.forms import ImportForm
    from collector.importers import ImportFailure, mapping_parse
    from collector.services.uploads import (
        import_job_start,
        import_preview,
        upload_store,
        upload_token,
    )

    form = ImportForm(request.POST or None, request.FILES or None)
    preview = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if request.POST.get("action") == "preview" or not data["format"]:
            stored = upload_store(upload=data["file"]) if data["file"] else data["upload"]
            mapping = data["mapping"].strip()
            failure = None
            try:
                preview = import_preview(relative=stored[0], original=stored[1],
                                         fmt=data["format"],
                                         mapping=mapping_parse(mapping) if mapping else None)
            except ImportFailure as exc:
                failure = str(exc)
            # The form again, bound to the stored upload (and the detected format) so that
            # importing, or previewing with other choices, needs no second upload.
            values = {**form.data.dict(), "upload": upload_token(relative=stored[0],
                                                                 original=stored[1])}
            if preview is not None:
                values["format"] = preview.format
            form = ImportForm(values)
            form.is_valid()
            if failure:
                form.add_error("format", failure)
        else:
            job = import_job_start(upload=data["file"],
                                   stored=None if data["file"] else data["upload"],
                                   options=data, user=request.user)
            return redirect("collector:job_detail", pk=job.pk)
    jobs = Job.objects.filter(kind__in=["corpus_import", "queries_import", "index_rebuild"])
    context = {"form": form, "preview": preview, "corpora": Corpus.objects.order_by("name"),
               "jobs": jobs[:10]}
    return render(request, "collector/import.html", context)
