from django.urls import path

from annotation.api import views

urlpatterns = [
    path("me/", views.MeApi.as_view(), name="api_me"),
    path("workers/", views.WorkerListApi.as_view(), name="api_workers"),
    path("users/", views.UserListApi.as_view(), name="api_users"),
    path("tasks/next/", views.TaskNextApi.as_view(), name="api_task_next"),
    path("tasks/<id:pk>/", views.TaskDetailApi.as_view(), name="api_task_detail"),
    path("tasks/<id:pk>/submit/", views.TaskSubmitApi.as_view(), name="api_task_submit"),
    path("tasks/<id:pk>/release/", views.TaskReleaseApi.as_view(), name="api_task_release"),
    path("projects/", views.ProjectListApi.as_view(), name="api_projects"),
    path("projects/<id:pk>/", views.ProjectDetailApi.as_view(), name="api_project_detail"),
    path("projects/<id:pk>/releases/", views.ProjectReleasesApi.as_view(),
         name="api_project_releases"),
    path("releases/<id:pk>/files/<path:path>", views.ReleaseFileApi.as_view(),
         name="api_release_file"),
    path("releases/<id:pk>/publish/", views.ReleasePublishApi.as_view(),
         name="api_release_publish"),
    path("releases/<id:pk>/score/", views.ReleaseScoreApi.as_view(), name="api_release_score"),
    path("projects/<id:pk>/records/", views.ProjectRecordsApi.as_view(),
         name="api_project_records"),
]
