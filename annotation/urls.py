from django.urls import path

from annotation import views

app_name = "annotation"

urlpatterns = [
    path("", views.home, name="home"),
    path("tasks/", views.annotator_home, name="annotator_home"),
    path("review/", views.checker_home, name="checker_home"),
    path("manage/", views.admin_home, name="admin_home"),
    path("no-role/", views.no_role, name="no_role"),
]
