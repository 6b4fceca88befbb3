"""URLs of the pay pages (included by annotation.urls)."""

urlpatterns: list = []
