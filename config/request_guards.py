"""Requests refused before they reach a view, and API errors kept in JSON.

* A NUL character (``%00``) anywhere in the path, the query string or a form's fields is
  refused with 400, in the reader's language: PostgreSQL text cannot hold one, so a lookup
  by such a value, or a value stored, would fail as a server error. A page view marked
  ``form_refuses_nul`` gets a post with one in a field's value: its form names the field.
  (JSON bodies: ``config.api_json``, with ``nul_path``; answers and parameters that hold
  JSON: the engine and the stage kinds.)
* Under ``/api/`` a 404 that Django answered in HTML (a URL no endpoint matches, such as a
  non-integer id) is answered in JSON, like every other API error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext, gettext_noop

API_PREFIX = "/api/"

#: The refusals of a NUL character, by where it is (``name``: the parameter or field).
NUL_IN_PATH = gettext_noop("The URL path contains a NUL character (%%00), which no URL here "
                           "accepts.")
NUL_IN_QUERY = gettext_noop("The query parameter %(name)s contains a NUL character (%%00), "
                            "which no URL here accepts.")
NUL_IN_FORM = gettext_noop("The form field %(name)s contains a NUL character (%%00), which no "
                           "form here accepts.")
NUL_IN_FORM_NAME = gettext_noop("A form field's name contains a NUL character (%%00), which no "
                                "form here accepts.")


def is_api_path(path: str) -> bool:
    return path.startswith(API_PREFIX)


FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


@dataclass(frozen=True)
class NulFound:
    """Where a request carries a NUL character: ``msgid`` (one of the ``NUL_IN_*``) with
    ``name``, the parameter or field; ``in_form_value``: only in a posted form field's
    value, which a page's form can refuse next to its field itself."""

    msgid: str
    name: str = ""
    in_form_value: bool = False

    def message(self) -> str:
        """The refusal in the active language."""
        return gettext(self.msgid) % {"name": self.name}


def _shown(key: str) -> str:
    return repr(key.replace(chr(0), "%00"))


def nul_in_request(request: HttpRequest) -> NulFound | None:
    """Which part of the URL or of a posted form carries a NUL character, or None."""
    if "\x00" in request.path:
        return NulFound(NUL_IN_PATH)
    for key, values in request.GET.lists():
        if "\x00" in key or any("\x00" in value for value in values):
            return NulFound(NUL_IN_QUERY, _shown(key))
    # The pages' forms (the API's fields are DRF's, which refuse a NUL themselves). A form
    # that cannot be parsed raises here as it would in the CSRF check: Django's 400.
    if request.method == "POST" and request.content_type in FORMS and not is_api_path(
            request.path):
        found = None
        for key, values in request.POST.lists():
            if "\x00" in key:
                return NulFound(NUL_IN_FORM_NAME)
            if found is None and any("\x00" in value for value in values):
                found = NulFound(NUL_IN_FORM, _shown(key), in_form_value=True)
        return found
    return None


def form_refuses_nul(view: Any = None, *, when: Callable[[HttpRequest], bool] | None = None
                     ) -> Any:
    """Mark a page view whose posted fields all go through a Django form (``when``: only
    the posts it accepts): a NUL character in a field's value reaches it, and the form
    names the field next to it (Django's fields refuse a NUL), instead of the guard's bare
    refusal. Every other view keeps the guard's 400."""
    def mark(function: Any) -> Any:
        function.form_refuses_nul = when or (lambda request: True)
        return function

    return mark(view) if view is not None else mark


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
    """After the language is known (the refusals are in the reader's language); a NUL only
    in a posted field's value waits for the view (``process_view``): a view marked with
    ``form_refuses_nul`` gets the post, and its form refuses the field."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        found = nul_in_request(request)
        if found is not None:
            if found.in_form_value:
                request.crowdqa_nul = found  # type: ignore[attr-defined]
            else:
                return nul_refused(request, found)
        response = self.get_response(request)
        if (
            response.status_code == 404
            and is_api_path(request.path)
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            return JsonResponse(
                {"detail": gettext("Not found: no API endpoint or object at %(path)s.")
                 % {"path": request.path}},
                status=404,
            )
        return response

    def process_view(self, request: HttpRequest, view: Any, args: Any, kwargs: Any
                     ) -> HttpResponse | None:
        found = getattr(request, "crowdqa_nul", None)
        if found is None:
            return None
        accepts = getattr(view, "form_refuses_nul", None)
        if accepts is not None and accepts(request):
            return None
        return nul_refused(request, found)


def nul_refused(request: HttpRequest, found: NulFound) -> HttpResponse:
    """The 400 of a NUL character: JSON under the API, else a page that says where."""
    message = found.message()
    if is_api_path(request.path):
        return JsonResponse({"detail": message}, status=400)
    return render(request, "bad_request.html", {"message": message}, status=400)
