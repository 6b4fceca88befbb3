"""Pages of the people at work: the role home pages (their work arrives with later stages)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotation.roles import Role, home_url_name, role_required


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return redirect(home_url_name(request.user))


@login_required
def no_role(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/no_role.html", status=403)


@role_required(Role.ANNOTATOR)
def annotator_home(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/annotator_home.html", {"tasks": []})


@role_required(Role.CHECKER)
def checker_home(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/checker_home.html", {"batches": []})


@role_required(Role.ADMIN)
def admin_home(request: HttpRequest) -> HttpResponse:
    from collector.models import Job

    jobs = Job.objects.select_related("created_by")[:10]
    return render(
        request, "annotation/admin_home.html", {"projects": [], "releases": [], "jobs": jobs}
    )
