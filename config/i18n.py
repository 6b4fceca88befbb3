"""The interface language: English or Simplified Chinese, per user or from the browser.

Django's ``LocaleMiddleware`` picks the language from the language cookie or the browser's
``Accept-Language``. A signed-in user's own choice goes before both: it is stored on
``annotation.UserPreference`` (so it follows them to any device), copied into their
session when they sign in, and read from the session here (no query per request).
``language_set`` is the header's switcher: Django's ``set_language`` (cookie, redirect to
the page) that also stores the choice of a signed-in user.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.utils import translation
from django.views.decorators.http import require_POST
from django.views.i18n import set_language

#: The session key holding the signed-in user's language.
SESSION_KEY = "crowdqa_language"


def _supported(code: str | None) -> str | None:
    if not code:
        return None
    try:
        return translation.get_supported_language_variant(code)
    except LookupError:
        return None


class UserLanguageMiddleware:
    """Activates the signed-in user's stored language (after ``LocaleMiddleware`` and
    authentication); anonymous visitors keep what the cookie or the browser asked for."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        session = getattr(request, "session", None)
        language = _supported(session.get(SESSION_KEY)) if session is not None else None
        if language and request.user.is_authenticated:
            translation.activate(language)
            request.LANGUAGE_CODE = language
        response = self.get_response(request)
        if language:
            response.headers.setdefault("Content-Language", language)
        return response


@receiver(user_logged_in, dispatch_uid="crowdqa_language_on_login")
def _language_on_login(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    from annotation.models import UserPreference

    if request is None or not hasattr(request, "session"):
        return
    language = (UserPreference.objects.filter(user=user)
                .values_list("language", flat=True).first())
    if language:
        request.session[SESSION_KEY] = language


@require_POST
def language_set(request: HttpRequest) -> HttpResponse:
    """The language switcher: sets the cookie and returns to the page (Django's
    ``set_language``); a signed-in user's choice is stored for their next sessions too."""
    from annotation.models import UserPreference

    response = set_language(request)
    language = _supported(request.POST.get("language"))
    if language and request.user.is_authenticated:
        UserPreference.objects.update_or_create(user=request.user,
                                                defaults={"language": language})
        request.session[SESSION_KEY] = language
        _answer_carried(request, response)
    return response


def _answer_carried(request: HttpRequest, response: HttpResponse) -> None:
    """From a task or inspection page, the switch carries what the worker wrote so far
    (``unsent_answer``, JSON, put in by static/js/crowdqa.js); the page it returns to shows
    it again (``annotation.views.answer_keep``)."""
    import json
    from urllib.parse import urlsplit

    from annotation.views import answer_keep

    raw = request.POST.get("unsent_answer")
    if not raw or response.status_code != 302:
        return
    try:
        data = json.loads(raw)
    except ValueError:
        return
    answer_keep(request, path=urlsplit(response["Location"]).path, data=data,
                logged_out=False)
