"""CrowdQA settings, read from the environment.

With no variables set this is the embedded mode: SQLite under ``var/``, Celery tasks run
eagerly in the web process, and the Whoosh index lives under ``var/index/``. Setting
``DATABASE_URL`` (postgres://...) and ``CELERY_BROKER_URL`` (redis://... or amqp://...)
switches to PostgreSQL and real workers. ``CROWDQA_ENV=production`` refuses to start with
insecure defaults.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from whitenoise.compress import Compressor

from config.security import DEFAULT_SECRET_KEY, production_problems
from config.storage import storages_from_env

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"



class _Env(environ.Env):
    """django-environ, naming the variable whose value is not of its setting's type (a bare
    "invalid literal for int()" traceback says neither which variable nor what to set)."""

    def get_value(self, var: str, cast: Any = None, default: Any = environ.Env.NOTSET,
                  parse_default: bool = False) -> Any:
        try:
            return super().get_value(var, cast=cast, default=default,
                                     parse_default=parse_default)
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"{var}={self.ENVIRON.get(var)!r} cannot be read: {exc}"
            ) from None


env = _Env()

CROWDQA_ENV = env.str("CROWDQA_ENV", default="development")
if CROWDQA_ENV not in ("development", "production"):
    # A misspelt "production" (Production, prod, "production ") would otherwise start the
    # site in development mode: DEBUG on, the demo SECRET_KEY, none of the guard's checks.
    raise ImproperlyConfigured(
        f"CROWDQA_ENV={CROWDQA_ENV!r} is neither production nor development: set "
        "CROWDQA_ENV=production (or development, the default)"
    )
PRODUCTION = CROWDQA_ENV == "production"
SILENCED_SYSTEM_CHECKS: list[str] = []

DEBUG = env.bool("DEBUG", default=not PRODUCTION)
SECRET_KEY = env.str("SECRET_KEY", default=DEFAULT_SECRET_KEY)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=[] if PRODUCTION else ["127.0.0.1", "localhost"])

if PRODUCTION:
    _problems = production_problems(
        debug=DEBUG, secret_key=SECRET_KEY, allowed_hosts=ALLOWED_HOSTS
    )
    if _problems:
        raise ImproperlyConfigured(
            "CROWDQA_ENV=production refuses to start: " + "; ".join(_problems)
        )
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    # HTTPS: browsers that saw the site over HTTPS keep to it (the header is only sent on
    # HTTPS responses). The HTTP -> HTTPS redirect is the TLS-terminating proxy's job by
    # default (docs/operations.md); SECURE_SSL_REDIRECT=true makes Django redirect too.
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=365 * 24 * 3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
    if not SECURE_SSL_REDIRECT:
        # check --deploy's "SECURE_SSL_REDIRECT is not True": the proxy redirects instead.
        SILENCED_SYSTEM_CHECKS.append("security.W008")
# The load balancer's health check asks over plain HTTP: answered, not redirected, when
# SECURE_SSL_REDIRECT is on (a 301 counts as unhealthy for most balancers).
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
# Behind a proxy that terminates TLS: SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO,https
if _proxy_ssl_header := env.tuple("SECURE_PROXY_SSL_HEADER", default=()):
    SECURE_PROXY_SSL_HEADER = _proxy_ssl_header

CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "config.apps.CrowdQAAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "axes",
    "collector",
    "annotation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    # MTurk frames its workers' pages and takes their completion form: the pages of an
    # MTurk study allow that (annotation.study_frame); between CSP and the session.
    "annotation.study_frame.MturkFrameMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The interface language: the browser's Accept-Language or the language cookie, then the
    # signed-in user's stored choice (config.i18n.UserLanguageMiddleware, after auth).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "config.i18n.UserLanguageMiddleware",
    # A NUL character in the URL or a form refused in the reader's language (so after the
    # language is known); a page form's field with one goes to the form, which names it.
    "config.request_guards.UrlGuardMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes requires: turns a refused login into the lockout page (429).
    "axes.middleware.AxesMiddleware",
]
if PRODUCTION:
    # Static files from STATIC_ROOT (hashed, compressed, cached for good) right after the
    # security middleware; runserver and the live test server serve them from static/.
    MIDDLEWARE.insert(1, "whitenoise.middleware.WhiteNoiseMiddleware")

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
                "annotation.roles.roles_context",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'crowdqa.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    # A web process and the job thread write at once: WAL lets readers go on while one
    # writes; transactions take the write lock when they begin (IMMEDIATE), so they wait
    # for it (busy timeout) instead of failing with "database is locked" on upgrading a
    # read lock; jobs that still meet a lock are retried (collector.jobs).
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "timeout": env.int("SQLITE_BUSY_TIMEOUT_S", default=20),
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    })
    # "SQLite does not support indexes with non-key columns": the covering column of the
    # search postings' impact index serves the PostgreSQL search backend only (on SQLite
    # search is Whoosh's), so the warning every migrate and runserver printed says nothing.
    SILENCED_SYSTEM_CHECKS.append("models.W040")
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend, with a health check that needs no round trip (config/postgresql).
    DATABASES["default"]["ENGINE"] = "config.postgresql"
DATABASES["default"]["ATOMIC_REQUESTS"] = False
# Connections kept across requests (and with them the prepared claim and submit statements);
# 60 s in production, per request elsewhere (runserver opens a thread per request).
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60 if PRODUCTION else 0)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotation:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
# The interface in English and Simplified Chinese (locale/zh_Hans, compiled .mo committed).
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env.path("STATIC_ROOT", default=str(VAR_DIR / "staticfiles"))
# Production serves what `manage.py collectstatic` wrote to STATIC_ROOT, under hashed names
# (cached for ten years) with gzip and Brotli copies; elsewhere files come from static/ as
# they are, so tests and `make demo` need no collectstatic step.
# Uploads and release files go through Django's storage API, so that every web host and
# worker sees them: the file system under MEDIA_ROOT by default (one host, or a shared
# mount), any storage class with CROWDQA_STORAGE_BACKEND (dotted path, or s3 / gcs / azure
# for django-storages) and CROWDQA_STORAGE_OPTIONS (JSON); releases apart with
# CROWDQA_RELEASE_STORAGE_BACKEND / _OPTIONS. See config/storage.py, docs/deployment.md.
STORAGES = storages_from_env(
    env.ENVIRON,
    staticfiles_backend="config.static_storage.StaticStorage" if PRODUCTION
    else "django.contrib.staticfiles.storage.StaticFilesStorage",
)
# Cache lifetime of static files requested under their unhashed names (pages link the
# hashed names, which are cached for ten years).
WHITENOISE_MAX_AGE = env.int("STATIC_MAX_AGE", default=24 * 3600)
# Source maps (14 MB of the apps' vendored scripts: the API docs' Redoc and Swagger UI) are
# read only by a developer's browser tools: not compressed. Brotli took half of
# collectstatic's CPU on them (~35 of 66 s), and a test's collectstatic timed out on a
# loaded machine.
WHITENOISE_SKIP_COMPRESS_EXTENSIONS = (*Compressor.SKIP_COMPRESS_EXTENSIONS, "map")

# Content-Security-Policy: pages run the vendored htmx and the scripts and styles under
# static/ only (no inline scripts, styles or event handlers, no eval).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}
# The sites allowed to frame an MTurk study's pages and receive its completion form.
CROWDQA_MTURK_FRAME_ANCESTORS = ["https://www.mturk.com", "https://workersandbox.mturk.com"]
MEDIA_ROOT = env.path("MEDIA_ROOT", default=str(VAR_DIR / "media"))
MEDIA_URL = "media/"

# The cache also carries live job progress and signed-in users, so it must be shared by web
# and workers: a file cache in the embedded mode (one host), Redis (CACHE_URL=redis://...)
# with a broker; `manage.py check` refuses a per-process cache then (collector.checks).
CACHES = {
    "default": env.cache_url("CACHE_URL", default=f"filecache://{VAR_DIR / 'cache'}"),
}
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
    # Django's Redis cache, keeping its client object instead of building one per call.
    CACHES["default"]["BACKEND"] = "config.cache.RedisCache"
# Sessions are read from that cache and written through to the database: a signed-in
# page costs no session query once its session is cached (the hot path: task pages).
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

# Search index and uploads. CROWDQA_SEARCH_BACKEND: "whoosh" (local disk, the default),
# "postgres" (the shared database, for several hosts) or the dotted path of a
# collector.search.base.SearchBackend subclass.
SEARCH_INDEX_DIR = env.path("SEARCH_INDEX_DIR", default=str(VAR_DIR / "index"))
CROWDQA_SEARCH_BACKEND = env.str("CROWDQA_SEARCH_BACKEND", default="whoosh")
CROWDQA_INDEX_PROCS = env.int("CROWDQA_INDEX_PROCS", default=2)
# Processes a NewsQA release build on PostgreSQL splits its one pass between (a forked
# second process writes half the documents; 1 keeps the build in one process).
CROWDQA_RELEASE_PROCESSES = env.int("CROWDQA_RELEASE_PROCESSES", default=2)
# Search analyzers loaded at process start (web and worker): auto (the corpora's languages),
# all or none. See collector/search/preload.py.
CROWDQA_SEARCH_PRELOAD = env.str("CROWDQA_SEARCH_PRELOAD", default="auto")
CROWDQA_IMPORT_MAX_BYTES = env.int("CROWDQA_IMPORT_MAX_BYTES", default=2 * 1024**3)
# One record of an import (a line, a CSV record, one element of a JSON file's list).
CROWDQA_IMPORT_MAX_RECORD_BYTES = env.int("CROWDQA_IMPORT_MAX_RECORD_BYTES",
                                          default=32 * 1024**2)
CROWDQA_DEMO_PASSWORD = env.str("CROWDQA_DEMO_PASSWORD", default="crowdqa-demo")

# E-mail: EMAIL_URL (django-environ: smtp+tls://user:pass@host:587, smtp+ssl://...:465,
# consolemail://, filemail:///path) and DEFAULT_FROM_EMAIL. Without EMAIL_URL the mail is
# printed on the console (the demo's runserver terminal), except in production, where
# nothing can be sent: invite links restricted to e-mail domains confirm the address by
# mail, so invite_create refuses domains there and `manage.py check` warns
# (annotation.checks, crowdqa.W004).
EMAIL_URL = env.str("EMAIL_URL", default="")
if EMAIL_URL:
    vars().update(env.email_url_config(EMAIL_URL))
    if EMAIL_URL.startswith("filemail:"):
        # django-environ drops the leading "/" of filemail:///var/mail (a relative path).
        EMAIL_FILE_PATH = urlsplit(EMAIL_URL).path or str(VAR_DIR / "mail")
elif not PRODUCTION:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
else:
    EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="CrowdQA <crowdqa@localhost>")
# Seconds a mail server may take to answer (connect, each command) before a try fails.
EMAIL_TIMEOUT = env.float("EMAIL_TIMEOUT", default=10.0)
# Confirmation mails one invite link sends to one address in an hour (0: no limit).
CROWDQA_INVITE_MAILS_PER_HOUR = env.int("CROWDQA_INVITE_MAILS_PER_HOUR", default=3)
# A confirmation mail is sent by a worker (annotation.tasks.invite_mail_send_task): a mail
# server that fails is tried again this many times, first after CROWDQA_INVITE_MAIL_RETRY_S
# seconds, the pause doubling (at most 30 minutes), before the mail is failed.
CROWDQA_INVITE_MAIL_RETRIES = env.int("CROWDQA_INVITE_MAIL_RETRIES", default=5)
CROWDQA_INVITE_MAIL_RETRY_S = env.float("CROWDQA_INVITE_MAIL_RETRY_S", default=30.0)

# Celery: eager in the embedded mode, real workers once a broker is configured.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_BROKER_URL = CELERY_BROKER_URL or "memory://"
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="") or None
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# A message taken by a worker that died goes back to the queue after this many seconds
# (Redis; RabbitMQ returns it when the connection drops). A job that runs longer is not
# run twice: the second delivery finds it claimed and alive, and leaves it alone.
CROWDQA_BROKER_VISIBILITY_TIMEOUT_S = env.int("CROWDQA_BROKER_VISIBILITY_TIMEOUT_S",
                                              default=600)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CROWDQA_BROKER_VISIBILITY_TIMEOUT_S}
# Jobs: a running job stamps a heartbeat every CROWDQA_JOB_HEARTBEAT_S; silent for
# CROWDQA_JOB_LOST_AFTER_S, its worker counts as lost and the periodic check (every
# CROWDQA_PERIODIC_S) queues it again (idempotent kinds, up to CROWDQA_JOB_MAX_ATTEMPTS
# runs) or fails it with "worker lost".
CROWDQA_JOB_HEARTBEAT_S = env.float("CROWDQA_JOB_HEARTBEAT_S", default=10.0)
CROWDQA_JOB_LOST_AFTER_S = env.float("CROWDQA_JOB_LOST_AFTER_S", default=60.0)
CROWDQA_JOB_MAX_ATTEMPTS = env.int("CROWDQA_JOB_MAX_ATTEMPTS", default=3)
# A job still queued this long after it was sent to the workers: the periodic check asks the
# broker whether it still holds its message; if not (a Redis restart without persistence, a
# flushed queue) the job is sent again, and if that cannot be told it is marked stalled, with
# a Retry on its page. A job waiting behind others whose message is held is left alone.
# Confirmation mails (annotation.invites.invite_mails_recover) are checked after the same
# time: sent again when lost, left queued as "waiting for the mail worker" when unknown.
CROWDQA_JOB_QUEUED_LOST_AFTER_S = env.float("CROWDQA_JOB_QUEUED_LOST_AFTER_S", default=300.0)
CROWDQA_PERIODIC_S = env.float("CROWDQA_PERIODIC_S", default=30.0)
# The embedded mode runs the same schedule on a thread of the web process.
CROWDQA_EMBEDDED_BEAT_S = CROWDQA_PERIODIC_S
# A stage with pending items and no live run is run again by the periodic check, unless
# its last runs failed this many times in a row (then its failed job waits for a Retry).
CROWDQA_STAGE_PICKUP_FAILURES = env.int("CROWDQA_STAGE_PICKUP_FAILURES", default=3)
# Tries of a job or status change that met SQLite's "database is locked".
CROWDQA_LOCKED_RETRIES = env.int("CROWDQA_LOCKED_RETRIES", default=5)
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    "expire-leases": {"task": "annotation.tasks.leases_expire_task", "schedule": 60.0},
    "recover-jobs": {"task": "collector.tasks.jobs_recover_task",
                     "schedule": CROWDQA_PERIODIC_S},
    "pick-up-stages": {"task": "annotation.tasks.stages_pick_up_task",
                       "schedule": CROWDQA_PERIODIC_S},
    # Confirmation mails whose message the broker lost (annotation.invites).
    "recover-mails": {"task": "annotation.tasks.invite_mails_recover_task",
                      "schedule": CROWDQA_PERIODIC_S},
    # Unconfirmed sign-ups whose confirmation links expired free their usernames.
    "purge-signups": {"task": "annotation.tasks.signups_purge_task", "schedule": 3600.0},
}
CROWDQA_LEASE_MINUTES = env.int("CROWDQA_LEASE_MINUTES", default=30)
# New worker accounts that one client address may make through study links in an hour
# (0: no limit). The study URL is all that names a marketplace worker, so each made-up id
# is a new account that may hold a task for a lease; an honest crowd arrives from many
# addresses. The address is read as the login throttling reads it (CROWDQA_PROXY_COUNT).
CROWDQA_STUDY_NEW_WORKERS_PER_HOUR = env.int("CROWDQA_STUDY_NEW_WORKERS_PER_HOUR",
                                             default=30)
# New accounts that one client address may make through invite links in an hour (0: no
# limit): an open link (no use limit) makes an account for whoever has it, as a study link
# does; a link restricted to e-mail domains mails a confirmation for each. Counted as the
# study limit counts (an IPv6 address by its /64).
CROWDQA_INVITE_SIGNUPS_PER_HOUR = env.int("CROWDQA_INVITE_SIGNUPS_PER_HOUR", default=30)
# The claim and submit statements are prepared once per PostgreSQL session (annotation.sql).
# Turn off behind a connection pooler that does not keep session state (transaction mode).
CROWDQA_PREPARED_STATEMENTS = env.bool("CROWDQA_PREPARED_STATEMENTS", default=True)

REST_FRAMEWORK = {
    # Token first: DRF answers "who are you?" (no credentials, a wrong, malformed or
    # deactivated account's token) with the first class's challenge, a 401 with
    # `WWW-Authenticate: Token`; session auth has none, which made those a 403. A request
    # without `Authorization: Token` goes on to the session (the browser's calls, CSRF
    # checked); 403 is left for a known user without the role, or a failed CSRF check.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "annotation.auth.CachedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": [
        "config.api_json.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "config.api_json.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "config.api_json.exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}

# The OpenAPI schema (/api/v1/schema/) and its Swagger UI (/api/v1/docs/), whose assets come
# from the installed drf-spectacular-sidecar package, never from a CDN.
SPECTACULAR_SETTINGS = {
    "TITLE": "CrowdQA API",
    "DESCRIPTION": "Tasks for annotators, projects and releases for admins, corpora and "
                   "passage search for every role. Sign in (session) or send "
                   "`Authorization: Token <key>`. A 401 (`WWW-Authenticate: Token`) "
                   "means who asks is not known (no or a wrong token, a deactivated "
                   "account); a 403, a known account refused (the role, or CSRF).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # <id:pk> (annotation.http.IdConverter): an integer up to what a bigint holds.
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 0,
                                        "maximum": 2**63 - 1}},
    "ENUM_NAME_OVERRIDES": {
        "ProjectStatusEnum": "annotation.models.ProjectStatus",
        "AssignmentStatusEnum": "annotation.models.AssignmentStatus",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.api_schema.document_error_responses",
        "config.api_schema.document_task_payloads",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
}

# django-axes first: it refuses the login of a locked-out account or address before the
# password is checked.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "annotation.roles.RoleBackend"]

# Login throttling (django-axes): CROWDQA_LOGIN_FAILURE_LIMIT failed logins for one username,
# or from one address, within CROWDQA_LOGIN_COOLOFF_MINUTES lock that username or address out
# (HTTP 429 with a message, even with the right password) until that long after the last
# failure. Failures are counted in the database, so every web process sees them.
AXES_FAILURE_LIMIT = env.int("CROWDQA_LOGIN_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("CROWDQA_LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_LOCKOUT_CALLABLE = "config.lockout.lockout_response"
AXES_HTTP_RESPONSE_CODE = 429
AXES_RESET_ON_SUCCESS = False
# Behind N reverse proxies the client address is the N-th from the right of X-Forwarded-For
# (config.client_ip: axes itself reads the header only with django-ipware, not installed).
AXES_IPWARE_PROXY_COUNT = env.int("CROWDQA_PROXY_COUNT", default=0) or None
AXES_CLIENT_IP_CALLABLE = "config.client_ip.client_ip_address"
AXES_IPWARE_META_PRECEDENCE_ORDER = (
    ["HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"] if AXES_IPWARE_PROXY_COUNT else ["REMOTE_ADDR"]
)
AXES_VERBOSE = False

# How long the user behind a session or an API token, with their roles, stays in the shared
# cache (annotation.auth; dropped at once when the user, their groups or token change).
# 0 turns it off.
CROWDQA_AUTH_CACHE_SECONDS = env.int("CROWDQA_AUTH_CACHE_SECONDS", default=300)
