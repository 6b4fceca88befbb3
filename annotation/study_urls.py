"""URLs of marketplace studies: the workers' way in and the admins' studies page."""

from django.urls import path

from annotation import study_views

urlpatterns = [
    path("study/<str:token>/", study_views.study_entry, name="study_entry"),
    path("manage/projects/<id:pk>/studies/", study_views.study_list, name="study_list"),
    path("manage/projects/<id:pk>/studies/action/", study_views.study_action,
         name="study_action"),
]
