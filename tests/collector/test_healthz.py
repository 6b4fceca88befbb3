from __future__ import annotations

import pytest
from django.urls import reverse


@pytest.mark.django_db
def test_healthz_reports_database_broker_and_index(client, settings, tmp_path):
    settings.CROWDQA_SEARCH_BACKEND = "whoosh"
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
    settings.CROWDQA_SEARCH_BACKEND = "whoosh"
    settings.SEARCH_INDEX_DIR = blocker / "index"
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    assert response.json()["index"]["ok"] is False


@pytest.mark.django_db
def test_an_index_in_the_database_needs_no_index_directory(client, settings, tmp_path):
    """With the PostgreSQL backend a web host keeps nothing on its disk: the health check
    does not create (nor need) SEARCH_INDEX_DIR."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("needs DATABASE_URL=postgres://... (CI runs the suite on PostgreSQL)")
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    settings.CROWDQA_SEARCH_BACKEND = "postgres"
    settings.SEARCH_INDEX_DIR = blocker / "index"
    response = client.get(reverse("healthz"))
    assert response.json()["index"] == {"ok": True, "backend": "PostgresBackend"}
    assert response.status_code == 200


@pytest.mark.django_db
def test_healthz_reports_unreachable_broker(client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False


@pytest.mark.django_db
def test_healthz_reports_unreachable_cache_and_logs_why(client, settings, caplog):
    """Sessions and signed-in users go through the shared cache: with it down nobody can
    sign in, so the load balancer must see the host as unhealthy, and the log say why."""
    settings.CACHES = {"default": {"BACKEND": "config.cache.RedisCache",
                                   "LOCATION": "redis://127.0.0.1:1/0"}}
    with caplog.at_level("ERROR", logger="collector.views"):
        response = client.get(reverse("healthz"))
    assert response.status_code == 503
    body = response.json()
    assert body["cache"]["ok"] is False
    assert body["database"]["ok"] is True
    assert any("health check failed: cache:" in message for message in caplog.messages)


@pytest.mark.django_db
def test_healthz_checks_the_shared_cache(client):
    body = client.get(reverse("healthz")).json()
    assert body["cache"]["ok"] is True
    assert body["cache"]["backend"] != "ConnectionProxy"  # the backend, not the proxy


@pytest.mark.django_db
def test_healthz_answers_plain_http_when_django_redirects_to_https(client, settings):
    """With SECURE_SSL_REDIRECT on, a load balancer's plain-HTTP health check got a 301 and
    took every web host for unhealthy."""
    settings.SECURE_SSL_REDIRECT = True
    assert client.get(reverse("healthz")).status_code == 200
    assert client.get(reverse("login")).status_code == 301
