"""URLs of the gold pages (included by annotation.urls)."""

urlpatterns: list = []
