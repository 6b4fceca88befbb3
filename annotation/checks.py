"""System checks of the annotation app (``manage.py check``; docs/deployment.md)."""

from __future__ import annotations

from typing import Any

from django.core import checks

from annotation.invites import mail_possible


@checks.register("crowdqa")
def invite_mail_possible(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """In production without ``EMAIL_URL`` no mail can be sent, so invite links restricted
    to e-mail domains cannot confirm addresses: new ones are refused, open ones join
    nobody."""
    if mail_possible():
        return []
    return [checks.Warning(
        "EMAIL_URL is not set: this site sends no e-mail, so invite links restricted to "
        "e-mail domains cannot confirm addresses (new ones are refused, and nobody joins "
        "through the ones made before).",
        hint="Set EMAIL_URL (e.g. smtp+tls://user:password@smtp.example.org:587) and "
             "DEFAULT_FROM_EMAIL (docs/deployment.md, \"E-mail\").",
        id="crowdqa.W004",
    )]

