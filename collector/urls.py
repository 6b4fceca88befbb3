from django.urls import path

from collector import views

app_name = "collector"

urlpatterns = [
    path("jobs/", views.job_list, name="job_list"),
    path("jobs/<id:pk>/", views.job_detail, name="job_detail"),
    path("jobs/<id:pk>/retry/", views.job_retry, name="job_retry"),
    path("corpora/", views.corpus_list, name="corpus_list"),
    path("corpora/<str:name>/", views.corpus_detail, name="corpus_detail"),
    path("corpora/<str:name>/visibility/", views.corpus_visibility, name="corpus_visibility"),
    path("corpora/<str:name>/rebuild-index/", views.corpus_rebuild, name="corpus_rebuild"),
    path("documents/<id:pk>/", views.document_detail, name="document_detail"),
    path("search/", views.search, name="search"),
    path("import/", views.import_create, name="import"),
]
