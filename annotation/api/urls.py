from django.urls import path

from annotation.api import views

urlpatterns = [
    path("me/", views.MeApi.as_view(), name="api_me"),
    path("workers/", views.WorkerListApi.as_view(), name="api_workers"),
    path("users/", views.UserListApi.as_view(), name="api_users"),
]
