"""The answer to a login refused by django-axes (too many failed logins)."""

from __future__ import annotations

from typing import Any

from axes.helpers import get_client_username, get_cool_off
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """HTTP 429 with a page (JSON for API clients) saying why and for how long, and a
    ``Retry-After`` header."""
    cool_off = get_cool_off(request)
    seconds = int(cool_off.total_seconds()) if cool_off else 0
    minutes = max(1, round(seconds / 60))
    message = (
        f"Too many failed logins for this account or from your address: logging in is "
        f"locked for {minutes} minutes after the last failed attempt. Wait, then try again, "
        f"or ask an admin to unlock the account."
    )
    status = settings.AXES_HTTP_RESPONSE_CODE
    accepts_json = "application/json" in request.headers.get("Accept", "")
    if accepts_json or request.headers.get("X-Requested-With") == "XMLHttpRequest":
        response: HttpResponse = JsonResponse({"detail": message}, status=status)
    else:
        response = render(request, settings.AXES_LOCKOUT_TEMPLATE, {
            "message": message,
            "username": get_client_username(request, credentials) or "",
            "failure_limit": settings.AXES_FAILURE_LIMIT,
        }, status=status)
    if seconds:
        response["Retry-After"] = str(seconds)
    return response
