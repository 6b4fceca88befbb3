from django.urls import path

from collector.api import views

urlpatterns = [
    path("corpora/", views.CorpusListApi.as_view(), name="api_corpus_list"),
    path("corpora/<str:name>/documents/", views.CorpusDocumentListApi.as_view(),
         name="api_corpus_documents"),
    path("corpora/<str:name>/search/", views.CorpusSearchApi.as_view(),
         name="api_corpus_search"),
]
