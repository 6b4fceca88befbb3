from django.contrib.admin.apps import AdminConfig


class CrowdQAAdminConfig(AdminConfig):
    default_site = "config.admin.CrowdQAAdminSite"
