"""Search, filters and paging of the admins' project, release and job lists."""

from __future__ import annotations

from django.urls import reverse

from annotation import engine
from annotation.roles import Role
from collector.models import Job
from tests.factories import user_with_roles


def test_project_list_searches_filters_and_pages(client, db):
    admin = user_with_roles("boss", Role.ADMIN)
    for n in range(30):
        engine.project_create(name=f"Project {n:02d}", recipe="newsqa" if n % 2 else "marco")
    client.force_login(admin)
    url = reverse("annotation:admin_home")
    page = client.get(url).content.decode()
    assert page.count('data-testid="project-row-link"') == 25
    assert "Page 1 of 2 (30 in all)" in page
    page = client.get(url, {"page": 2}).content.decode()
    assert page.count('data-testid="project-row-link"') == 5
    page = client.get(url, {"q": "Project 1", "recipe": "newsqa"}).content.decode()
    # 11, 13, 15, 17, 19: the search and the filter together.
    assert page.count('data-testid="project-row-link"') == 5
    assert "Project 13" in page and "Project 12" not in page
    page = client.get(url, {"status": "nonsense"}).content.decode()
    assert "Select a valid choice" in page


def test_job_and_release_lists_are_for_admins_and_filter(client, db):
    admin = user_with_roles("boss", Role.ADMIN)
    annotator = user_with_roles("ann", Role.ANNOTATOR)
    jobs = [Job.objects.create(kind="selfcheck", status="done", created_by=admin)
            for _ in range(3)]
    Job.objects.create(kind="stage_run", status="failed", error="stage 9 no longer exists")
    client.force_login(annotator)
    assert client.get(reverse("collector:job_list")).status_code == 403
    assert client.get(reverse("annotation:release_list")).status_code == 403
    client.force_login(admin)
    page = client.get(reverse("collector:job_list"), {"status": "failed"}).content.decode()
    assert "Stage run #" in page and "Self-check #" not in page
    page = client.get(reverse("collector:job_list"), {"q": f"#{jobs[1].pk}"}).content.decode()
    assert f"Self-check #{jobs[1].pk}" in page and f"Self-check #{jobs[0].pk}<" not in page
    page = client.get(reverse("collector:job_list"), {"q": "no longer"}).content.decode()
    assert "Stage run #" in page
    page = client.get(reverse("annotation:release_list"), {"q": "zzz"}).content.decode()
    assert "No release matches these filters." in page
