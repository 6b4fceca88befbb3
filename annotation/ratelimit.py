"""Counts per clock hour in the shared cache, so every web process counts together."""

from __future__ import annotations

import ipaddress

from django.core.cache import cache
from django.utils import timezone


def hour_count(name: str) -> int:
    """Count one more ``name`` in the current clock hour; the count so far, this one
    included."""
    key = f"crowdqa:{name}:{int(timezone.now().timestamp()) // 3600}"
    cache.add(key, 0, timeout=3600)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr: this is the hour's first
        cache.set(key, 1, timeout=3600)
        return 1


#: The IPv6 prefix one client is counted by: a host is given a whole /64 (SLAAC, privacy
#: addresses) and may take any address in it, so counting addresses one by one would let
#: one host make as many accounts as it likes.
IPV6_CLIENT_PREFIX = 64


def client_network(address: str | None) -> str:
    """What a per-address limit counts ``address`` as: an IPv4 address itself (an
    IPv4-mapped IPv6 one too), an IPv6 address by its /64 network; "-" when unknown."""
    try:
        parsed = ipaddress.ip_address((address or "").strip())
    except ValueError:
        return "-"
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/{IPV6_CLIENT_PREFIX}", strict=False))
    return str(parsed)
