"""Search, filters and paging of the lists: projects, releases, jobs, batches and the
inspections waiting for checkers.

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
from django.utils.translation import gettext_lazy as _

from annotation.http import whole_number
from annotation.models import Batch, Inspection, Project, Release
from collector.models import Job

PER_PAGE = 25


class ProjectFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label=_("Search"))
    status = django_filters.ChoiceFilter(choices=Project.Status.choices, label=_("Status"),
                                         empty_label=_("Any status"))
    recipe = django_filters.ChoiceFilter(label=_("Recipe"), empty_label=_("Any recipe"))

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
    q = django_filters.CharFilter(method="search", label=_("Search"))
    status = django_filters.ChoiceFilter(choices=Release.Status.choices, label=_("Status"),
                                         empty_label=_("Any status"))

    class Meta:
        model = Release
        fields = ("q", "status")

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(project__name__icontains=value) | Q(version__icontains=value))


class JobFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label=_("Search"))
    kind = django_filters.ChoiceFilter(label=_("Kind"), empty_label=_("Any kind"))
    status = django_filters.ChoiceFilter(choices=Job.Status.choices, label=_("Status"),
                                         empty_label=_("Any status"))

    class Meta:
        model = Job
        fields = ("q", "kind", "status")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from collector.jobs import job_kind_label, job_kinds

        super().__init__(*args, **kwargs)
        self.filters["kind"].extra["choices"] = [(kind, job_kind_label(kind))
                                                 for kind in job_kinds()]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        """By id, by the creator's user name, or by a word of the error."""
        match = Q(created_by__username__icontains=value) | Q(error__icontains=value)
        if (number := whole_number(value.lstrip("#"))) is not None:
            match |= Q(pk=number)
        return queryset.filter(match)


def _batch_search(queryset: QuerySet, value: str, prefix: str = "") -> QuerySet:
    """Batches (``prefix``: the path to the batch) by number ("7" or "#7"), by the
    annotator's user name, or by a word of the project's or stage's name."""
    match = (Q(**{f"{prefix}annotator__username__icontains": value})
             | Q(**{f"{prefix}project__name__icontains": value})
             | Q(**{f"{prefix}stage__name__icontains": value}))
    if (number := whole_number(value.lstrip("#"))) is not None:
        match |= Q(**{f"{prefix}number": number})
    return queryset.filter(match)


class _ProjectChoiceMixin:
    """A ``project`` choice of the projects in the list's own queryset (a checker chooses
    among the projects they check)."""

    project_path = "project"
    filters: dict[str, Any]
    queryset: QuerySet

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        ids = self.queryset.order_by().values(self.project_path).distinct()
        self.filters["project"].extra["choices"] = list(
            Project.objects.filter(pk__in=ids).order_by("name").values_list("pk", "name"))


class BatchFilter(_ProjectChoiceMixin, django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label=_("Search"))
    project = django_filters.ChoiceFilter(label=_("Project"), empty_label=_("Any project"))
    status = django_filters.ChoiceFilter(choices=Batch.Status.choices, label=_("Status"),
                                         empty_label=_("Any status"))

    class Meta:
        model = Batch
        fields = ("q", "project", "status")

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return _batch_search(queryset, value)


class WaitingFilter(_ProjectChoiceMixin, django_filters.FilterSet):
    """The inspections waiting for a checker, by their batch."""

    q = django_filters.CharFilter(method="search", label=_("Search"))
    project = django_filters.ChoiceFilter(field_name="batch__project", label=_("Project"),
                                          empty_label=_("Any project"))

    project_path = "batch__project"

    class Meta:
        model = Inspection
        fields = ("q", "project")

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return _batch_search(queryset, value, prefix="batch__")


def filtered_page(filterset_class: type[django_filters.FilterSet], queryset: QuerySet,
                  request: HttpRequest, *, per_page: int | None = None,
                  ) -> tuple[django_filters.FilterSet, Page]:
    """The filter bound to the request's query string and the page it asks for (bad
    filter values show on the form and filter nothing; a page out of range gives the
    last). ``per_page``: ``PER_PAGE`` when not given."""
    filterset = filterset_class(request.GET or None, queryset=queryset, request=request)
    rows = filterset.qs if filterset.is_bound and filterset.is_valid() else queryset
    return filterset, Paginator(rows, per_page or PER_PAGE).get_page(request.GET.get("page"))
