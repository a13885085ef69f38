"""The Redis client of a `Mailboxes`: built from a URL, or given ready-made.

A URL covers one server (``redis://``, ``rediss://``, ``unix://``). A client given
ready-made covers what a URL cannot say, above all a primary managed by Redis
Sentinel: ``Sentinel(...).master_for(name)`` returns a client whose connections ask
the sentinels where the primary is each time they connect, so after a failover the
next connection goes to the promoted replica — the workers' and the reply reader's
usual reconnection (backoff, then carry on) is all it takes.
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import urlsplit

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from pygents._errors import brief
from pygents.redis._cluster import clustered
from pygents.redis._cluster import connect as connect_url
from pygents.redis._mailbox_types import bounded

__all__ = ["DEFAULT_URL", "connect"]

DEFAULT_URL = "redis://localhost:6379/0"


def connect(
    url: str | None, client: Redis | RedisCluster | None, options: dict[str, Any]
) -> tuple[Redis, str]:
    """The client to use, and where it points (without credentials, for messages)."""
    if client is None:
        url = DEFAULT_URL if url is None else url
        if not isinstance(url, str):
            raise TypeError(f"Mailboxes(url=...) takes a redis:// URL string, got {brief(url)}")
        settings: dict[str, Any] = {
            # Fail fast when Redis is away: one quick retry covers a stale pooled
            # connection after a Redis restart; workers add their own backoff.
            "retry": Retry(ExponentialBackoff(cap=0.2, base=0.02), 1),
            "socket_connect_timeout": 5.0,
            **options,
            "decode_responses": True,
        }
        if clustered(url) and "retry" not in options:
            # A refreshed slot map after a failover needs a try of its own.
            settings["retry"] = Retry(ExponentialBackoff(cap=0.2, base=0.02), 3)
        return connect_url(url, **settings), _where(url)
    if url is not None or options:
        raise TypeError(
            "Mailboxes(client=...) takes the client alone: set the URL and connection "
            "options on the client itself"
        )
    if isinstance(client, RedisCluster):
        if not client.get_encoder().decode_responses:
            raise ValueError(
                "Mailboxes(client=...) needs a client built with decode_responses=True"
            )
        return cast(Redis, client), "a Redis Cluster (a client given ready-made)"
    if not isinstance(client, Redis):
        raise TypeError(f"Mailboxes(client=...) takes a redis.asyncio.Redis, got {brief(client)}")
    pool = client.connection_pool
    if not pool.connection_kwargs.get("decode_responses"):
        # Every reply is read as text; a client that returns bytes would fail later,
        # far from the cause.
        raise ValueError(
            "Mailboxes(client=...) needs a client built with decode_responses=True "
            "(e.g. sentinel.master_for(name, decode_responses=True))"
        )
    return client, _described(pool)


def _where(url: str) -> str:
    """The URL without credentials, for messages."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "localhost"
        port = parts.port or 6379
    except ValueError:
        return bounded(url.split("@")[-1], 80)
    return f"{parts.scheme}://{host}:{port}{parts.path or ''}"


def _described(pool: Any) -> str:
    """Where a given client's pool connects, without credentials."""
    service = getattr(pool, "service_name", None)
    if isinstance(service, str):  # a SentinelConnectionPool
        return f"the primary of Sentinel service {bounded(service, 80)!r}"
    found = pool.connection_kwargs
    if "path" in found:
        return f"unix://{bounded(str(found['path']), 80)}"
    host, port = found.get("host", "localhost"), found.get("port", 6379)
    return f"redis://{host}:{port}/{found.get('db', 0)}"
