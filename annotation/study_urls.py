"""URLs of the study pages (included by annotation.urls)."""

urlpatterns: list = []
