"""The production guard: refuse to start with insecure defaults.

Kept free of Django imports so settings can call it before Django is configured.
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_SECRET_KEY = "crowdqa-insecure-default-key-for-the-embedded-demo-only"  # noqa: S105


def production_problems(
    *, debug: bool, secret_key: str, allowed_hosts: Sequence[str]
) -> list[str]:
    """Return one message per insecure setting, each naming the variable to set."""
    problems = []
    if debug:
        problems.append("DEBUG is on: set DEBUG=false")
    if not secret_key.strip():
        problems.append("SECRET_KEY is empty: set SECRET_KEY to a long random value")
    elif secret_key == DEFAULT_SECRET_KEY:
        problems.append("SECRET_KEY is the built-in default: set SECRET_KEY to a long random value")
    if not [host for host in allowed_hosts if host.strip()]:
        problems.append(
            "ALLOWED_HOSTS is empty: set ALLOWED_HOSTS to the host names this site serves "
            "(comma-separated)"
        )
    return problems
