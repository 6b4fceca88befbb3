"""Requests refused before they reach a view, and API errors kept in JSON.

* A NUL character (``%00``) anywhere in the path or the query string is refused with 400:
  PostgreSQL text cannot hold one, so a lookup by such a value would fail as a server error.
* Under ``/api/`` a 404 that Django answered in HTML (a URL no endpoint matches, such as a
  non-integer id) is answered in JSON, like every other API error.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse, JsonResponse

API_PREFIX = "/api/"


def is_api_path(path: str) -> bool:
    return path.startswith(API_PREFIX)


def nul_in_request(request: HttpRequest) -> str | None:
    """Which part of the URL carries a NUL character, or None."""
    if "\x00" in request.path:
        return "URL path"
    for key, values in request.GET.lists():
        if "\x00" in key or any("\x00" in value for value in values):
            return f"query parameter {key.replace(chr(0), '%00')!r}"
    return None


class UrlGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = nul_in_request(request)
        if where is not None:
            message = f"The {where} contains a NUL character (%00), which no URL here accepts."
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
