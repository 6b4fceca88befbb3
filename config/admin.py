"""The Django admin, opened to users with the admin role (not only to staff)."""

from django.contrib import admin
from django.http import HttpRequest

from annotation.roles import Role, has_role


class CrowdQAAdminSite(admin.AdminSite):
    site_header = "CrowdQA administration"
    site_title = "CrowdQA admin"

    def has_permission(self, request: HttpRequest) -> bool:
        return has_role(request.user, Role.ADMIN)
