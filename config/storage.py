"""Where files that every host must see live (uploads, release files), from the environment.

``CROWDQA_STORAGE_BACKEND`` names the storage class of Django's ``default`` storage: the
file system under ``MEDIA_ROOT`` when unset (``filesystem``), or any Django storage class
by dotted path, e.g. django-storages' ``storages.backends.s3.S3Storage`` (the short names
of ``ALIASES`` are accepted too). ``CROWDQA_STORAGE_OPTIONS`` is a JSON object of the class's
keyword arguments (for S3: ``bucket_name``, ``endpoint_url``, ``region_name``, ...).
``CROWDQA_RELEASE_STORAGE_BACKEND`` / ``CROWDQA_RELEASE_STORAGE_OPTIONS`` give releases a
storage of their own (``STORAGES["releases"]``); unset, releases live in the default
storage. See docs/deployment.md.

Kept free of Django imports beyond exceptions so settings can call it; the storage class is
imported when first used, and by the system check ``config.checks`` (which names the
variable when it cannot be imported).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ImproperlyConfigured

FILESYSTEM = "django.core.files.storage.FileSystemStorage"
ALIASES = {
    "filesystem": FILESYSTEM,
    "s3": "storages.backends.s3.S3Storage",
    "gcs": "storages.backends.gcloud.GoogleCloudStorage",
    "azure": "storages.backends.azure_storage.AzureStorage",
}
BACKEND_VAR = "CROWDQA_STORAGE_BACKEND"
OPTIONS_VAR = "CROWDQA_STORAGE_OPTIONS"
RELEASE_BACKEND_VAR = "CROWDQA_RELEASE_STORAGE_BACKEND"
RELEASE_OPTIONS_VAR = "CROWDQA_RELEASE_STORAGE_OPTIONS"


def _backend(value: str, *, variable: str) -> str:
    name = value.strip()
    name = ALIASES.get(name, name)
    if "." not in name:
        raise ImproperlyConfigured(
            f"{variable}={value!r} is neither a dotted path of a storage class nor one of "
            f"{', '.join(sorted(ALIASES))}"
        )
    return name


def _options(value: str, *, variable: str) -> dict[str, Any]:
    if not value.strip():
        return {}
    try:
        options = json.loads(value)
    except json.JSONDecodeError as exc:
        raise ImproperlyConfigured(f"{variable} is not valid JSON: {exc}") from exc
    if not isinstance(options, dict):
        raise ImproperlyConfigured(
            f"{variable} must be a JSON object of the storage's options, not "
            f"{type(options).__name__}"
        )
    return options


def storage_config(environ: Mapping[str, str], *, backend_var: str,
                   options_var: str) -> dict[str, Any] | None:
    """The ``STORAGES`` entry the two variables describe; None when neither is set."""
    backend = environ.get(backend_var, "")
    options = environ.get(options_var, "")
    if not backend.strip():
        if options.strip():
            raise ImproperlyConfigured(f"{options_var} is set but {backend_var} is not")
        return None
    entry: dict[str, Any] = {"BACKEND": _backend(backend, variable=backend_var)}
    if parsed := _options(options, variable=options_var):
        entry["OPTIONS"] = parsed
    return entry


def storages_from_env(environ: Mapping[str, str], *, staticfiles_backend: str) -> dict[str, Any]:
    """``STORAGES``: ``default`` (uploads and, unless configured apart, releases),
    optionally ``releases``, and ``staticfiles``. With nothing set, ``default`` is the
    file system under ``MEDIA_ROOT`` (no options, so it follows ``MEDIA_ROOT``)."""
    default = storage_config(environ, backend_var=BACKEND_VAR, options_var=OPTIONS_VAR)
    storages: dict[str, Any] = {
        "default": default or {"BACKEND": FILESYSTEM},
        "staticfiles": {"BACKEND": staticfiles_backend},
    }
    releases = storage_config(environ, backend_var=RELEASE_BACKEND_VAR,
                              options_var=RELEASE_OPTIONS_VAR)
    if releases is not None:
        storages["releases"] = releases
    return storages
