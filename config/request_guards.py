"""Requests refused before they reach a view, and API errors kept in JSON.

* A NUL character (``%00``) anywhere in the path, the query string or a form's fields is
  refused with 400: PostgreSQL text cannot hold one, so a lookup by such a value, or a
  value stored, would fail as a server error. (JSON bodies: ``config.api_json``, with
  ``nul_path``; answers and parameters that hold JSON: the engine and the stage kinds.)
* Under ``/api/`` a 404 that Django answered in HTML (a URL no endpoint matches, such as a
  non-integer id) is answered in JSON, like every other API error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse, JsonResponse

API_PREFIX = "/api/"


def is_api_path(path: str) -> bool:
    return path.startswith(API_PREFIX)


FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def nul_in_request(request: HttpRequest) -> str | None:
    """Which part of the URL or of a posted form carries a NUL character, or None."""
    if "\x00" in request.path:
        return "URL path"
    for key, values in request.GET.lists():
        if "\x00" in key or any("\x00" in value for value in values):
            return f"query parameter {key.replace(chr(0), '%00')!r}"
    # The pages' forms (the API's fields are DRF's, which refuse a NUL themselves). A form
    # that cannot be parsed raises here as it would in the CSRF check: Django's 400.
    if request.method == "POST" and request.content_type in FORMS and not is_api_path(
            request.path):
        for key, values in request.POST.lists():
            if "\x00" in key or any("\x00" in value for value in values):
                return f"form field {key.replace(chr(0), '%00')!r}"
    return None


def nul_path(value: Any, path: str = "") -> str | None:
    """Where in a JSON value (dicts, lists, text) a NUL character is, as ``a["b"][2]``
    from ``path``, or None. PostgreSQL's jsonb refuses one (``\u0000``) in text."""
    if isinstance(value, str):
        return path or "the value" if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            key_path = f"{path}[{str(key).replace(chr(0), '%00')!r}]"
            if "\x00" in str(key):
                return key_path
            found = nul_path(item, key_path)
            if found:
                return found
    elif isinstance(value, list | tuple):
        for number, item in enumerate(value):
            found = nul_path(item, f"{path}[{number}]")
            if found:
                return found
    return None


class UrlGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = nul_in_request(request)
        if where is not None:
            what = "form" if where.startswith("form") else "URL"
            message = f"The {where} contains a NUL character (%00), which no {what} here accepts."
            if is_api_path(request.path):
                return JsonResponse({"detail": message}, status=400)
            raise BadRequest(message)
        response = self.get_response(request)
        if (
            response.status_code == 404
            and is_api_path(request.path)
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            return JsonResponse(
                {"detail": f"Not found: no API endpoint or object at {request.path}."},
                status=404,
            )
        return response
