"""The Django admin for the pipeline: projects, stages, items, assignments, submissions,
and the invites' confirmation mails.

Read-mostly: statuses change only through ``annotation.workflow`` and stage parameters
only through the project page (which validates them), so these pages list, filter,
search and show; nothing is added or deleted here. A project's description, consent and
minimum wage stay editable. Big tables (items, assignments, submissions) list without
their JSON and without an exact total count.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.timesince import timesince
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.models import (
    Assignment,
    InviteMail,
    Item,
    Project,
    ProjectMember,
    Stage,
    Submission,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Lists and shows; never adds, changes or deletes."""

    show_full_result_count = False  # no COUNT(*) of a big table per page
    list_per_page = 50

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class StageInline(admin.TabularInline):
    model = Stage
    fields = ("order", "kind", "name", "params")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "recipe", "corpus", "status", "language", "created_by",
                    "created_at")
    list_filter = ("status", "recipe", "language")
    search_fields = ("name", "description", "corpus__name")
    list_select_related = ("corpus", "created_by")
    fields = ("name", "recipe", "corpus", "language", "status", "created_by", "created_at",
              "description", "consent", "currency", "min_hourly_wage")
    readonly_fields = ("name", "recipe", "corpus", "language", "status", "created_by",
                       "created_at", "currency")
    inlines = [StageInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # projects come from recipes (the project page)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Stage)
class StageAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "project", "order", "kind", "name")
    list_filter = ("kind", "project")
    search_fields = ("name", "kind", "project__name")
    list_select_related = ("project",)


@admin.register(ProjectMember)
class ProjectMemberAdmin(ReadOnlyAdmin):
    list_display = ("user", "project", "role", "status", "source", "joined_at")
    list_filter = ("role", "status", "source", "project")
    search_fields = ("user__username", "user__email", "project__name")
    list_select_related = ("user", "project")


@admin.register(Item)
class ItemAdmin(ReadOnlyAdmin):
    list_display = ("id", "project", "stage", "status", "key", "split", "gold", "overlap",
                    "created_at", "finished_at")
    list_filter = ("status", "gold", "split", "stage__kind", "project")
    search_fields = ("=id", "key", "project__name")
    list_select_related = ("project", "stage", "stage__project")
    raw_id_fields = ("document", "parent", "batch")

    def get_queryset(self, request: HttpRequest) -> Any:
        queryset = super().get_queryset(request)
        # The change list does not load the items' JSON; the item's page does.
        if request.resolver_match and request.resolver_match.url_name.endswith("_changelist"):
            queryset = queryset.defer("data", "result")
        return queryset


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ("id", "item_id", "stage", "status", "worker", "reserved_for", "round",
                    "claimed_at", "lease_expires_at", "submitted_at")
    list_filter = ("status", "stage__kind", "stage__project")
    search_fields = ("=id", "=item__id", "worker__username")
    list_select_related = ("stage", "stage__project", "worker", "reserved_for")


@admin.register(Submission)
class SubmissionAdmin(ReadOnlyAdmin):
    list_display = ("id", "item_id", "stage", "worker", "set_aside", "time_on_task_s",
                    "active_time_s", "created_at")
    list_filter = ("set_aside", "stage__kind", "stage__project")
    search_fields = ("=id", "=item__id", "worker__username")
    list_select_related = ("stage", "stage__project", "worker")

    def get_queryset(self, request: HttpRequest) -> Any:
        queryset = super().get_queryset(request)
        if request.resolver_match and request.resolver_match.url_name.endswith("_changelist"):
            queryset = queryset.defer("payload")
        return queryset


@admin.register(InviteMail)
class InviteMailAdmin(ReadOnlyAdmin):
    """Where each confirmation mail stands (queued, sent, failed: how many tries, when).
    Its address is not shown, here or in its error (the other pages show a worker by
    username only); the rows go after ``invites.MAIL_ROWS_KEPT``, or with their worker's
    erasure (``services.worker_erase``)."""

    list_display = ("id", "invite", "project", "user", "newcomer", "status", "waiting",
                    "attempts", "created_at", "attempted_at", "sent_at")
    list_filter = ("status", "newcomer", "invite__project")
    search_fields = ("=id", "user__username", "invite__project__name")
    list_select_related = ("invite__project", "user")
    ordering = ("-id",)
    fields = ("invite", "user", "newcomer", "language", "site_root", "status", "waiting",
              "attempts", "error_shown", "created_at", "queued_at", "stalled_at",
              "attempted_at", "sent_at")
    readonly_fields = fields

    @admin.display(description=gettext_lazy("Waiting"), ordering="queued_at")
    def waiting(self, mail: InviteMail) -> str:
        """How long a queued mail has waited for the mail worker; a stalled one (the broker
        cannot tell whether it holds its message: ``invites.invite_mails_recover``) says so,
        its reason under Error."""
        if mail.status != InviteMail.Status.QUEUED:
            return ""
        age = timesince(mail.queued_at)
        if mail.stalled_at is not None:
            return _("waiting for the mail worker for %(age)s; the broker cannot tell whether "
                     "it still holds the message (see Error)") % {"age": age}
        return _("waiting for the mail worker for %(age)s") % {"age": age}

    @admin.display(description=gettext_lazy("Project"), ordering="invite__project__name")
    def project(self, mail: InviteMail) -> str:
        return mail.invite.project.name

    @admin.display(description=gettext_lazy("Error"))
    def error_shown(self, mail: InviteMail) -> str:
        """The mail server's complaint without the address (an SMTP refusal names it)."""
        if not mail.email:
            return mail.error
        return re.sub(re.escape(mail.email), "<address>", mail.error, flags=re.IGNORECASE)
