"""URLs of the workers pages (included by annotation.urls)."""

from django.urls import path

from annotation import workers_views

urlpatterns = [
    path("manage/projects/<id:pk>/workers/", workers_views.project_workers,
         name="project_workers"),
    path("manage/projects/<id:pk>/workers/<id:user_id>/", workers_views.project_worker,
         name="project_worker"),
    path("manage/projects/<id:pk>/workers/<id:user_id>/standing/",
         workers_views.project_worker_standing, name="project_worker_standing"),
    path("manage/projects/<id:pk>/workers/<id:user_id>/erase/",
         workers_views.project_worker_erase, name="project_worker_erase"),
]
