"""MTurk shows an external HIT inside an iframe on its own site, and the HIT ends with a
form that posts to MTurk's ``externalSubmit``. The site's policy refuses both everywhere
else (``frame-ancestors 'none'``, ``X-Frame-Options: DENY``, ``form-action 'self'``), so
the pages of an MTurk study (its entry page, and every page of a browser that came in by
one) allow MTurk's hosts to frame them and the completion form to post there. Inside that
cross-site frame the browser sends only ``SameSite=None`` cookies, so over HTTPS the
session, CSRF and worker cookies those pages set are marked so.

Everything else keeps the strict policy: a Prolific or invited worker, a checker or an
admin is never framed.
"""

from __future__ import annotations

from collections.abc import Callable

from csp.constants import SELF
from django.conf import settings
from django.http import HttpRequest, HttpResponse

#: The browser session's key that marks it as an MTurk worker's (``study_views``).
FRAMED = "crowdqa_study_framed"
#: The signed cookie naming the worker a browser arrived as (``study_views``).
WORKER_COOKIE = "crowdqa_worker"


def mturk_hosts() -> list[str]:
    """The origins allowed to frame an MTurk study's pages (MTurk's worker sites)."""
    return list(getattr(settings, "CROWDQA_MTURK_FRAME_ANCESTORS",
                        ["https://www.mturk.com", "https://workersandbox.mturk.com"]))


def frame_for_mturk(request: HttpRequest) -> None:
    """Mark this request's page as one MTurk may frame (an MTurk study's entry page)."""
    request.crowdqa_framed = True  # type: ignore[attr-defined]


class MturkFrameMiddleware:
    """Between the CSP middleware and the session middleware: it sees the cookies the
    session and CSRF middlewares set and the X-Frame-Options header, and leaves its policy
    changes for the CSP middleware to write."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not response.get("Content-Type", "").startswith("text/html"):
            return response  # the API and downloads are never framed
        session = getattr(request, "session", None)
        if not (getattr(request, "crowdqa_framed", False)
                or (session is not None and session.get(FRAMED))):
            return response
        hosts = mturk_hosts()
        if "X-Frame-Options" in response:
            del response["X-Frame-Options"]
        response._csp_replace = {"frame-ancestors": [SELF, *hosts]}  # type: ignore[attr-defined]
        response._csp_update = {"form-action": hosts}  # type: ignore[attr-defined]
        if request.is_secure():
            for name in (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME,
                         WORKER_COOKIE):
                if name in response.cookies:
                    response.cookies[name]["samesite"] = "None"
                    response.cookies[name]["secure"] = True
        return response
