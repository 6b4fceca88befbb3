from django.urls import path

from collector import views

app_name = "collector"

urlpatterns = [
    path("jobs/<int:pk>/", views.job_detail, name="job_detail"),
]
