from django.urls import path

from annotation import judgment_views as views

urlpatterns = [
    path("manage/projects/<id:pk>/judgment/import/", views.judgment_import,
         name="judgment_import"),
    path("manage/projects/<id:pk>/judgment/", views.judgment_report, name="judgment_report"),
    path("manage/projects/<id:pk>/judgment/run/", views.judgment_run, name="judgment_run"),
    path("manage/projects/<id:pk>/judgment/report.<str:fmt>", views.judgment_download,
         name="judgment_download"),
]
