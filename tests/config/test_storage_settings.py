"""STORAGES from the environment (config/storage.py) and the system checks of what processes
share (collector/checks.py): storages that cannot be imported, a per-process cache with a
broker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from collector import checks
from config.storage import FILESYSTEM, storages_from_env

REPO = Path(__file__).resolve().parents[2]
STATIC = "django.contrib.staticfiles.storage.StaticFilesStorage"


def _storages(**environ: str) -> dict:
    return storages_from_env(environ, staticfiles_backend=STATIC)


def test_the_default_is_the_file_system_under_media_root():
    storages = _storages()
    # No OPTIONS: FileSystemStorage follows MEDIA_ROOT (and its changes in tests).
    assert storages == {"default": {"BACKEND": FILESYSTEM}, "staticfiles": {"BACKEND": STATIC}}


def test_a_backend_by_alias_or_dotted_path_with_json_options():
    storages = _storages(CROWDQA_STORAGE_BACKEND="s3", CROWDQA_STORAGE_OPTIONS=(
        '{"bucket_name": "crowdqa", "endpoint_url": "https://s3.example.org"}'))
    assert storages["default"] == {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {"bucket_name": "crowdqa", "endpoint_url": "https://s3.example.org"}}
    assert "releases" not in storages  # releases follow the default storage
    storages = _storages(
        CROWDQA_RELEASE_STORAGE_BACKEND="django.core.files.storage.FileSystemStorage",
        CROWDQA_RELEASE_STORAGE_OPTIONS='{"location": "/srv/releases"}')
    assert storages["default"] == {"BACKEND": FILESYSTEM}
    assert storages["releases"] == {"BACKEND": FILESYSTEM,
                                    "OPTIONS": {"location": "/srv/releases"}}


@pytest.mark.parametrize(("environ", "message"), [
    ({"CROWDQA_STORAGE_BACKEND": "s3", "CROWDQA_STORAGE_OPTIONS": "{bucket: x}"},
     "CROWDQA_STORAGE_OPTIONS is not valid JSON: Expecting property name"),
    ({"CROWDQA_STORAGE_BACKEND": "s3", "CROWDQA_STORAGE_OPTIONS": '["x"]'},
     "CROWDQA_STORAGE_OPTIONS must be a JSON object of the storage's options, not list"),
    ({"CROWDQA_STORAGE_OPTIONS": '{"location": "/x"}'},
     "CROWDQA_STORAGE_OPTIONS is set but CROWDQA_STORAGE_BACKEND is not"),
    ({"CROWDQA_RELEASE_STORAGE_BACKEND": "dropbox"},
     "CROWDQA_RELEASE_STORAGE_BACKEND='dropbox' is neither a dotted path of a storage class "
     "nor one of azure, filesystem, gcs, s3"),
])
def test_bad_configuration_is_refused_naming_the_variable(environ, message):
    with pytest.raises(ImproperlyConfigured) as caught:
        _storages(**environ)
    assert str(caught.value).startswith(message)


def _check(*options: str, **environ: str) -> subprocess.CompletedProcess:
    """``manage.py check`` in a fresh process with ``environ`` over the test run's own."""
    # Not what other tests of the run left in the environment either (a bench module
    # imported by a test sets DEBUG=false and a SECRET_KEY of its own, for one).
    env = {k: v for k, v in os.environ.items()
           if k not in ("CELERY_BROKER_URL", "CACHE_URL", "DEBUG", "SECRET_KEY", "CROWDQA_ENV",
                        "ALLOWED_HOSTS")
           and not k.startswith(("CROWDQA_STOR", "SECURE_"))}
    return subprocess.run(
        [sys.executable, "manage.py", "check", *options], cwd=REPO, capture_output=True, text=True,
        env={**env, **environ, "DJANGO_SETTINGS_MODULE": "config.settings"}, timeout=120,
    )


def test_the_settings_read_the_environment_and_check_the_backend(tmp_path):
    shared = tmp_path / "shared"
    result = _check(CROWDQA_STORAGE_BACKEND="filesystem",
                    CROWDQA_STORAGE_OPTIONS=f'{{"location": "{shared}"}}')
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
    result = _check(CROWDQA_STORAGE_BACKEND="storages.backends.nowhere.Storage")
    assert result.returncode == 1
    assert ("(crowdqa.E001) STORAGES['default']: cannot import "
            "'storages.backends.nowhere.Storage'") in result.stderr
    assert "HINT: Check CROWDQA_STORAGE_BACKEND" in result.stderr
    result = _check(CROWDQA_STORAGE_OPTIONS="{")
    assert result.returncode == 1
    assert "ImproperlyConfigured: CROWDQA_STORAGE_OPTIONS is set but" in result.stderr


def test_a_per_process_cache_with_a_broker_is_an_error(tmp_path):
    broker = "redis://127.0.0.1:6379/15"  # never connected to: check only reads settings
    result = _check(CELERY_BROKER_URL=broker, CACHE_URL="locmemcache://")
    assert result.returncode == 1
    assert "(crowdqa.E002) CELERY_BROKER_URL is set" in result.stderr
    assert "LocMemCache, private to each process" in result.stderr
    # A file cache serves one host: right there, so only the deployment check warns (every
    # management command of a one-host install would print it otherwise).
    filecache = {"CELERY_BROKER_URL": broker, "CACHE_URL": f"filecache://{tmp_path}"}
    result = _check(**filecache)
    assert result.returncode == 0 and "no issues" in result.stdout, result.stderr
    result = _check("--deploy", **filecache)
    out = result.stderr + result.stdout
    assert "(crowdqa.W003)" in out and "only processes on this host share it" in out, out
    assert "(crowdqa.E" not in out, out  # Django's own deployment checks judge the rest
    for shared in ("redis://127.0.0.1:6379/14", "dbcache://crowdqa_cache"):
        result = _check(CELERY_BROKER_URL=broker, CACHE_URL=shared)
        assert result.returncode == 0 and "no issues" in result.stdout, result.stderr
    # Without a broker (eager jobs in the web process) any cache will do.
    result = _check(CACHE_URL="locmemcache://")
    assert result.returncode == 0 and "no issues" in result.stdout, result.stderr


def test_the_cache_check_in_process(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/15"
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
    assert [m.id for m in checks.progress_cache_shared()] == ["crowdqa.E002"]
    settings.CELERY_BROKER_URL = "memory://"  # Celery's in-process broker: no other process
    assert checks.progress_cache_shared() == []
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/15"
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": "/tmp/c"}}
    assert checks.progress_cache_shared() == []
    assert [m.id for m in checks.progress_cache_across_hosts()] == ["crowdqa.W003"]


def test_a_misspelt_storage_option_is_a_check_error_naming_the_variable(tmp_path):
    """``{"locaton": ...}`` passed ``manage.py check`` and then failed every upload and
    release download with a TypeError."""
    result = _check(CROWDQA_STORAGE_BACKEND="filesystem",
                    CROWDQA_STORAGE_OPTIONS=f'{{"locaton": "{tmp_path}"}}')
    assert result.returncode == 1, result.stdout + result.stderr
    assert ("(crowdqa.E003) STORAGES['default']: django.core.files.storage.FileSystemStorage "
            "refuses its options (TypeError: ") in result.stderr
    assert "'locaton'" in result.stderr
    assert "HINT: Check CROWDQA_STORAGE_OPTIONS" in result.stderr


def test_the_storage_options_check_in_process(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "releases": {
        "BACKEND": FILESYSTEM, "OPTIONS": {"location": str(tmp_path), "base_url": "/media/"}}}
    assert checks.storages_importable() == []
    settings.STORAGES = {**settings.STORAGES, "releases": {
        "BACKEND": FILESYSTEM, "OPTIONS": {"bucket_name": "crowdqa"}}}
    errors = checks.storages_importable()
    assert [m.id for m in errors] == ["crowdqa.E003"]
    assert "Check CROWDQA_RELEASE_STORAGE_OPTIONS" in errors[0].hint


def test_a_misspelt_search_backend_is_a_check_error(tmp_path):
    """CROWDQA_SEARCH_BACKEND=postgresql (Django's engine name) passed `check --deploy` and
    then failed every search with a 500."""
    result = _check(CROWDQA_SEARCH_BACKEND="postgresql", CROWDQA_SEARCH_PRELOAD="yes")
    assert result.returncode == 1, result.stdout + result.stderr
    assert ("(crowdqa.E004) the search backend cannot be made (ImproperlyConfigured: "
            "CROWDQA_SEARCH_BACKEND='postgresql': use one of") in result.stderr
    assert ("(crowdqa.E005) CROWDQA_SEARCH_PRELOAD='yes' is not one of auto, all, none"
            in result.stderr)


def test_the_search_settings_check_in_process(settings):
    assert checks.search_settings_valid() == []
    settings.CROWDQA_SEARCH_BACKEND = "collector.search.nosuch.Backend"
    settings.CROWDQA_SEARCH_PRELOAD = "none"
    assert [m.id for m in checks.search_settings_valid()] == ["crowdqa.E004"]
