"""URLs of the pay pages (included by annotation.urls)."""

from django.urls import path

from annotation import pay_views

urlpatterns = [
    path("manage/projects/<id:pk>/pay/", pay_views.project_pay, name="project_pay"),
    path("manage/payments/<id:pk>.csv", pay_views.payment_export_file,
         name="payment_export_file"),
    path("manage/payments/<id:pk>/prolific.txt", pay_views.payment_export_prolific,
         name="payment_export_prolific"),
]
