from django.urls import include, path

from annotation import views

app_name = "annotation"

urlpatterns = [
    path("", views.home, name="home"),
    path("tasks/", views.annotator_home, name="annotator_home"),
    path("tasks/next/", views.task_next, name="task_next"),
    path("tasks/<id:pk>/", views.task_detail, name="task_detail"),
    path("tasks/answers/<id:pk>/correct/", views.submission_correct,
         name="submission_correct"),
    path("tasks/<id:pk>/release/", views.task_release, name="task_release"),
    path("tasks/<id:pk>/renew/", views.task_renew, name="task_renew"),
    path("tasks/<id:pk>/check-question/", views.question_check, name="question_check"),
    path("tasks/<id:pk>/check-spelling/", views.spelling_check, name="spelling_check"),
    path("stages/<id:pk>/guidelines/", views.stage_guidelines, name="stage_guidelines"),
    path("review/", views.checker_home, name="checker_home"),
    path("review/batches/", views.batch_list, name="batch_list"),
    path("manage/batches/<id:pk>/put-back/", views.batch_put_back, name="batch_put_back"),
    path("review/inspections/<id:pk>/", views.inspection_detail, name="inspection_detail"),
    path("manage/", views.admin_home, name="admin_home"),
    path("manage/projects/new/", views.project_create, name="project_create"),
    path("manage/projects/<id:pk>/", views.project_detail, name="project_detail"),
    path("manage/projects/<id:pk>/action/", views.project_action, name="project_action"),
    path("manage/items/<id:pk>/", views.item_detail, name="item_detail"),
    path("manage/projects/<id:pk>/releases/", views.release_action, name="release_action"),
    path("manage/releases/", views.release_list, name="release_list"),
    path("manage/releases/<id:pk>/", views.release_detail, name="release_detail"),
    path("releases/<id:pk>/files/<path:path>", views.release_file, name="release_file"),
    path("manage/projects/<id:pk>/reco/filter-labels/", views.reco_filter_labels,
         name="reco_filter_labels"),
    path("no-role/", views.no_role, name="no_role"),
    # The crowd: invite links and members, marketplace studies, pay.
    path("", include("annotation.invite_urls")),
    path("", include("annotation.study_urls")),
    path("", include("annotation.pay_urls")),
    # Worker quality: gold items and qualification, the workers table.
    path("", include("annotation.gold_urls")),
    path("", include("annotation.workers_urls")),
    # The judgment recipe: import, study report and its downloads.
    path("", include("annotation.judgment_urls")),
]
