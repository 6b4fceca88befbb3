"""URLs of the workers pages (included by annotation.urls)."""

urlpatterns: list = []
