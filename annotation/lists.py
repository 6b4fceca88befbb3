"""Search, filters and paging of the admins' lists: projects, releases, jobs.

Each list is a django-filter ``FilterSet`` over its queryset; ``filtered_page`` applies
one to the request's query string and cuts the result into pages. The template partial
``_list_controls.html`` renders the form and the pager, keeping the filters across pages.
"""

from __future__ import annotations

from typing import Any

import django_filters
from django.core.paginator import Page, Paginator
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from annotation.models import Project, Release
from collector.models import Job

PER_PAGE = 25


class ProjectFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search")
    status = django_filters.ChoiceFilter(choices=Project.Status.choices, empty_label="Any status")
    recipe = django_filters.ChoiceFilter(empty_label="Any recipe")

    class Meta:
        model = Project
        fields = ("q", "status", "recipe")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from annotation.recipes import RECIPES

        super().__init__(*args, **kwargs)
        self.filters["recipe"].extra["choices"] = [(name, name) for name in RECIPES]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(name__icontains=value) | Q(corpus__name__icontains=value)
                               | Q(description__icontains=value))


class ReleaseFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search")
    status = django_filters.ChoiceFilter(choices=Release.Status.choices, empty_label="Any status")

    class Meta:
        model = Release
        fields = ("q", "status")

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(project__name__icontains=value) | Q(version__icontains=value))


class JobFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search")
    kind = django_filters.ChoiceFilter(empty_label="Any kind")
    status = django_filters.ChoiceFilter(choices=Job.Status.choices, empty_label="Any status")

    class Meta:
        model = Job
        fields = ("q", "kind", "status")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from collector.jobs import job_kinds

        super().__init__(*args, **kwargs)
        self.filters["kind"].extra["choices"] = [(kind, kind) for kind in job_kinds()]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        """By id, by the creator's user name, or by a word of the error."""
        match = Q(created_by__username__icontains=value) | Q(error__icontains=value)
        if value.lstrip("#").isdigit():
            match |= Q(pk=int(value.lstrip("#")))
        return queryset.filter(match)


def filtered_page(filterset_class: type[django_filters.FilterSet], queryset: QuerySet,
                  request: HttpRequest, *, per_page: int = PER_PAGE,
                  ) -> tuple[django_filters.FilterSet, Page]:
    """The filter bound to the request's query string and the page it asks for (bad
    filter values show on the form and filter nothing; a page out of range gives the
    last)."""
    filterset = filterset_class(request.GET or None, queryset=queryset, request=request)
    rows = filterset.qs if filterset.is_bound and filterset.is_valid() else queryset
    return filterset, Paginator(rows, per_page).get_page(request.GET.get("page"))
