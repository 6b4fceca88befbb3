"""The Redis cache keeps one client per connection pool (config/cache.py)."""

from __future__ import annotations

import os
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient

from config.cache import RedisCache, RedisCacheClient
from tests.config.test_settings import _start
from tests.conftest import skip_or_fail


@pytest.mark.parametrize(("url", "backend"), [
    ("redis://127.0.0.1:6379/4", "config.cache.RedisCache"),
    ("rediss://127.0.0.1:6379/4", "config.cache.RedisCache"),
    ("filecache:///tmp/crowdqa-cache-test", "django.core.cache.backends.filebased.FileBasedCache"),
])
def test_cache_url_names_the_backend(url, backend):
    result = _start({"CACHE_URL": url},
                    "from django.conf import settings; print(settings.CACHES['default'])")
    assert result.returncode == 0, result.stderr
    assert f"'BACKEND': '{backend}'" in result.stdout


def test_each_pool_gets_its_client_once():
    # Nothing connects here: a client and its pool open connections on the first command.
    cache = RedisCache("redis://127.0.0.1:6379/4", {})
    client = cache._cache
    assert isinstance(client, RedisCacheClient)
    first = client.get_client("k")
    assert client.get_client("other") is first
    assert client.get_client("k", write=True) is first  # one server: reads and writes
    assert first.connection_pool is client._pools[0]
    # Django's own client builds a new one per call: the cost this backend removes.
    plain = DjangoRedisCacheClient(["redis://127.0.0.1:6379/4"])
    assert plain.get_client("k") is not plain.get_client("k")


def test_reads_may_go_to_replicas_each_with_its_client():
    cache = RedisCache("redis://127.0.0.1:6379/4,redis://127.0.0.1:6380/4", {})
    client = cache._cache
    write = client.get_client(write=True)
    read = client.get_client()  # the only replica: the second server
    assert read is not write
    assert client.get_client() is read
    assert write.connection_pool.connection_kwargs["port"] == 6379
    assert read.connection_pool.connection_kwargs["port"] == 6380


@pytest.fixture
def redis_cache():
    """This backend on the Redis that CI's broker runs on (the database after the
    multihost test's), under a prefix of its own."""
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis://"):
        skip_or_fail("no Redis broker configured (CELERY_BROKER_URL=redis://...)",
                     required_by="CROWDQA_REQUIRE_WORKER")
    parts = urlsplit(broker)
    location = urlunsplit(parts._replace(path=f"/{int(parts.path.strip('/') or 0) + 2}"))
    cache = RedisCache(location, {"KEY_PREFIX": f"test-cache-{uuid.uuid4().hex}"})
    yield cache
    cache.delete_many(["a", "b", "n", "fork"])
    cache.close()


def test_the_cache_works_through_one_client(redis_cache):
    redis_cache.set("a", {"user": 1}, 30)
    assert redis_cache.add("a", "other", 30) is False
    assert redis_cache.get("a") == {"user": 1}
    redis_cache.set_many({"b": [1, 2]}, 30)
    assert redis_cache.get_many(["a", "b", "missing"]) == {"a": {"user": 1}, "b": [1, 2]}
    redis_cache.set("n", 1, 30)
    assert redis_cache.incr("n", 4) == 5
    redis_cache.delete_many(["a", "b"])
    assert redis_cache.get("a") is None and redis_cache.get("b") is None
    assert len(redis_cache._cache._clients) == 1


def test_a_forked_process_reads_through_connections_of_its_own(redis_cache):
    """gunicorn forks its workers: the client kept before the fork must not share the
    parent's socket with the child."""
    redis_cache.set("fork", "from the parent", 30)
    parent_client = redis_cache._cache.get_client()
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if it read the value on a connection it opened
        code = 1
        try:
            client = redis_cache._cache.get_client()
            value = redis_cache.get("fork")
            pool = client.connection_pool
            code = 0 if (client is parent_client and value == "from the parent"
                         and pool.pid == os.getpid()) else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert redis_cache.get("fork") == "from the parent"  # the parent's connection still good
    assert parent_client.connection_pool.pid == os.getpid()
