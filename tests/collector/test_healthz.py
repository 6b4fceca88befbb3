from __future__ import annotations

import pytest
from django.urls import reverse


@pytest.mark.django_db
def test_healthz_reports_database_broker_and_index(client, settings, tmp_path):
    settings.SEARCH_INDEX_DIR = tmp_path / "index"
    response = client.get(reverse("healthz"))
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["broker"]["mode"] == ("eager" if settings.CELERY_TASK_ALWAYS_EAGER else
                                      settings.CELERY_BROKER_URL.split("://")[0])
    assert body["index"] == {"ok": True, "path": str(tmp_path / "index")}
    assert (tmp_path / "index").is_dir()


@pytest.mark.django_db
def test_healthz_fails_when_index_directory_is_unusable(client, settings, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    settings.SEARCH_INDEX_DIR = blocker / "index"
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    assert response.json()["index"]["ok"] is False


@pytest.mark.django_db
def test_healthz_reports_unreachable_broker(client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False
