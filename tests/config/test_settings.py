"""The production guard refuses each insecure default, naming the variable to set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from config.security import DEFAULT_SECRET_KEY, production_problems

REPO = Path(__file__).resolve().parents[2]
SAFE = {
    "CROWDQA_ENV": "production",
    "DEBUG": "false",
    "SECRET_KEY": "a-long-random-production-secret-0123456789abcdef",
    "ALLOWED_HOSTS": "crowdqa.example.org",
}


def _start(env_overrides: dict[str, str | None],
           code: str = "print('started')") -> subprocess.CompletedProcess:
    """Django set up in a fresh process with the safe production environment, changed by
    ``env_overrides`` (None removes a variable), then ``code`` run."""
    env = {k: v for k, v in os.environ.items() if k not in SAFE and k != "CONN_MAX_AGE"}
    env.update(SAFE)
    for key, value in env_overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=REPO, env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True, text=True, timeout=60,
    )


def test_production_with_safe_settings_starts():
    result = _start({})
    assert result.returncode == 0, result.stderr
    assert "started" in result.stdout


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"DEBUG": "true"}, "DEBUG is on: set DEBUG=false"),
        ({"DEBUG": None}, None),  # production defaults DEBUG to off
        ({"SECRET_KEY": None}, "SECRET_KEY is the built-in default: set SECRET_KEY"),
        ({"SECRET_KEY": DEFAULT_SECRET_KEY}, "SECRET_KEY is the built-in default"),
        ({"SECRET_KEY": ""}, "SECRET_KEY is empty: set SECRET_KEY"),
        ({"SECRET_KEY": "   "}, "SECRET_KEY is empty: set SECRET_KEY"),
        ({"ALLOWED_HOSTS": None}, "ALLOWED_HOSTS is empty: set ALLOWED_HOSTS"),
        ({"ALLOWED_HOSTS": ""}, "ALLOWED_HOSTS is empty: set ALLOWED_HOSTS"),
    ],
)
def test_production_guard_refuses_insecure_defaults(overrides, message):
    result = _start(overrides)
    if message is None:
        assert result.returncode == 0, result.stderr
        return
    assert result.returncode != 0
    assert "CROWDQA_ENV=production refuses to start" in result.stderr
    assert message in result.stderr


@pytest.mark.parametrize("value", ["Production", "prod", "production ", "staging", ""])
def test_an_unknown_crowdqa_env_is_refused_not_run_as_development(value):
    """A misspelt CROWDQA_ENV started the site in development mode (DEBUG on, the demo
    SECRET_KEY) without a word."""
    result = _start({"CROWDQA_ENV": value, "DEBUG": None, "SECRET_KEY": None})
    assert result.returncode != 0, result.stdout
    assert f"CROWDQA_ENV={value!r} is neither production nor development" in result.stderr


def test_crowdqa_env_development_is_accepted():
    result = _start({"CROWDQA_ENV": "development", "DEBUG": None, "SECRET_KEY": None})
    assert result.returncode == 0, result.stderr


def test_guard_lists_every_problem_at_once():
    problems = production_problems(debug=True, secret_key=DEFAULT_SECRET_KEY, allowed_hosts=[])
    assert [p.split(":")[0] for p in problems] == [
        "DEBUG is on", "SECRET_KEY is the built-in default", "ALLOWED_HOSTS is empty",
    ]
    assert production_problems(debug=False, secret_key="x" * 50, allowed_hosts=["a.org"]) == []


def test_embedded_default_is_sqlite_eager_and_local_index(settings):
    if os.environ.get("DATABASE_URL") or os.environ.get("CELERY_BROKER_URL"):
        pytest.skip("services configured: this test checks the embedded default")
    assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
    assert settings.CELERY_TASK_ALWAYS_EAGER is True


def test_database_url_switches_to_postgresql():
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.DATABASES['default']['ENGINE'], settings.CELERY_TASK_ALWAYS_EAGER)"
    )
    env = {
        **os.environ,
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/crowdqa",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/3",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    env.pop("CROWDQA_ENV", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=60, check=True).stdout.split()
    assert out == ["config.postgresql", "False"]  # Django's, with a cheaper health check


@pytest.mark.parametrize(("overrides", "expected"), [
    ({}, "60"),  # production keeps connections, and their prepared statements
    ({"CROWDQA_ENV": None}, "0"),  # development: a connection per request (runserver)
    ({"CONN_MAX_AGE": "5"}, "5"),
])
def test_connections_are_kept_in_production(overrides, expected):
    result = _start(overrides, "from django.conf import settings; "
                    "print(settings.DATABASES['default']['CONN_MAX_AGE'])")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [expected]


@pytest.mark.parametrize(("overrides", "expected"), [
    ({"CROWDQA_RELEASE_PROCESSES": None}, "2"),  # a second process for half the documents
    ({"CROWDQA_RELEASE_PROCESSES": "1"}, "1"),
])
def test_release_processes_come_from_the_environment(overrides, expected):
    result = _start(overrides, "from django.conf import settings; "
                    "print(settings.CROWDQA_RELEASE_PROCESSES)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [expected]


def test_the_embedded_default_passes_its_system_checks_without_warnings(tmp_path):
    """What `make demo` prints before serving: no warning that says nothing to its user
    (the search postings' covering index column exists for PostgreSQL's backend only)."""
    env = {k: v for k, v in os.environ.items()  # (CI's PostgreSQL stage sets the backend)
           if k not in ("CELERY_BROKER_URL", "CROWDQA_ENV", "CROWDQA_SEARCH_BACKEND")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'check.sqlite3'}"  # not the demo's file
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--database", "default"], cwd=REPO,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"}, capture_output=True,
        text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (1 silenced)." in result.stdout, (
        result.stdout + result.stderr)


@pytest.mark.parametrize(("overrides", "silenced"), [
    ({"SECURE_SSL_REDIRECT": None}, ["security.W008"]),  # the proxy redirects to HTTPS
    ({"SECURE_SSL_REDIRECT": "true"}, []),
])
def test_production_silences_only_what_its_deployment_answers(overrides, silenced):
    result = _start({"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/crowdqa", **overrides},
                    "from django.conf import settings; "
                    "print(sorted(settings.SILENCED_SYSTEM_CHECKS))")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == repr(silenced)


@pytest.mark.parametrize(("variable", "value"), [
    ("CROWDQA_LEASE_MINUTES", "thirty"),
    ("CROWDQA_LOGIN_FAILURE_LIMIT", "ten"),
    ("CONN_MAX_AGE", "1m"),
])
def test_a_variable_of_the_wrong_type_is_named(variable, value):
    """A number setting given a word stopped the process with a bare "invalid literal for
    int()" traceback naming no variable."""
    result = _start({variable: value})
    assert result.returncode != 0, result.stdout
    assert f"ImproperlyConfigured: {variable}={value!r} cannot be read" in result.stderr


MAIL = ("from django.conf import settings; "
        "print(settings.EMAIL_BACKEND.rsplit('.', 2)[1], getattr(settings, 'EMAIL_HOST', ''), "
        "getattr(settings, 'EMAIL_PORT', ''), getattr(settings, 'EMAIL_USE_TLS', ''), "
        "getattr(settings, 'EMAIL_FILE_PATH', '') or '-', settings.DEFAULT_FROM_EMAIL)")


@pytest.mark.parametrize(("overrides", "expected"), [
    # Outside production the mail is printed (the demo's runserver terminal).
    ({"CROWDQA_ENV": None, "DEBUG": None, "SECRET_KEY": None, "EMAIL_URL": None},
     "console localhost 25 False - CrowdQA <crowdqa@localhost>"),
    # In production without EMAIL_URL nothing is sent (crowdqa.W004 says so).
    ({"EMAIL_URL": None}, "dummy localhost 25 False - CrowdQA <crowdqa@localhost>"),
    ({"EMAIL_URL": "smtp+tls://crowdqa:secret@smtp.example.org:587",
      "DEFAULT_FROM_EMAIL": "noreply@example.org"},
     "smtp smtp.example.org 587 True - noreply@example.org"),
    ({"EMAIL_URL": "filemail:///var/tmp/crowdqa-mail"},
     "filebased None None False /var/tmp/crowdqa-mail CrowdQA <crowdqa@localhost>"),
])
def test_email_comes_from_email_url(overrides, expected):
    result = _start(overrides, MAIL)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected
