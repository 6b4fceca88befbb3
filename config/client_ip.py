"""The client's network address, for login throttling and the per-address hourly limits.

django-axes reads it through ``AXES_CLIENT_IP_CALLABLE`` (``config.settings``); the
per-address limits of the study arrivals and the invite sign-ups read it through axes'
``get_client_ip_address``, so all of them count the same address.

Behind ``CROWDQA_PROXY_COUNT`` reverse proxies (``AXES_IPWARE_PROXY_COUNT``) the address is
the one that many hops from the right of ``X-Forwarded-For``: each proxy appends the
address it was reached from, so the right-most entries are the proxies' own and whatever
a client wrote into the header itself stays to their left, unread. Without proxies it is
the connection's (``REMOTE_ADDR``), whatever the header says. (axes would read the header
only with django-ipware installed; without it every client behind a proxy shared the
proxy's address: one guesser locked everybody's logins, and one address's hourly limits
were the whole site's.)
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def _address(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        return None


def client_ip_address(request: HttpRequest) -> str | None:
    """The client's address as the configured proxies report it (see the module)."""
    remote = request.META.get("REMOTE_ADDR")
    proxies = getattr(settings, "AXES_IPWARE_PROXY_COUNT", None) or 0
    if proxies > 0:
        hops = [hop for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
                if hop.strip()]
        if len(hops) >= proxies:
            found = _address(hops[-proxies])
            if found is not None:
                return found
    return remote
