"""Django's Redis cache with one ``redis.Redis`` client per connection pool.

Django's ``RedisCacheClient.get_client`` builds a new ``redis.Redis`` around the pool for
every cache operation. The pool (and so the connection) is reused, but the client object is
not, and with redis-py 8 building one costs about as much as the round trip to Redis: on
this 2-core host 100 us of a ``cache.get`` of 237 us (``docs/benchmarks.md``). Every
request on the hot path reads the cache at least once (the signed-in user, the session), so
that was about a twentieth of an API request's CPU in the web process.

Here each pool gets its client once and keeps it. A ``redis.Redis`` is safe to share between
threads (each command takes a connection from the pool and gives it back), and after a fork
its pool notices the new process and opens connections of its own, so one client per pool
serves a gunicorn worker or a Celery worker as the fresh ones did. Everything else is
Django's backend: settings name it for ``CACHE_URL=redis://...`` (``config/settings.py``).
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends import redis as django_redis


class RedisCacheClient(django_redis.RedisCacheClient):
    """Django's client, keeping the ``redis.Redis`` it builds for each pool."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}  # id(pool) -> the client around it

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)  # kept in self._pools for good
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class RedisCache(django_redis.RedisCache):
    """``django.core.cache.backends.redis.RedisCache`` with the client above."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient
