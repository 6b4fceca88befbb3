"""URLs of the invite pages (included by annotation.urls)."""

urlpatterns: list = []
