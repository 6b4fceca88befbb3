"""URLs of the gold pages (included by annotation.urls)."""

from django.urls import path

from annotation import gold_views

urlpatterns = [
    path("stages/<id:pk>/qualify/", gold_views.qualification, name="qualification"),
    path("me/quality/", gold_views.my_quality, name="my_quality"),
    path("manage/stages/<id:pk>/gold/", gold_views.stage_gold, name="stage_gold"),
]
