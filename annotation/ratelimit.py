"""Counts per clock hour in the shared cache, so every web process counts together."""

from __future__ import annotations

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
