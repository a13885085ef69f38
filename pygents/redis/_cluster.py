"""What differs on a Redis Cluster, in one place: the client a URL asks for, queuing a
script or ``TIME`` in a pipeline, and closing every connection of a client.

Everything else is redis-py's own cluster client (``redis.asyncio.cluster``): it routes
each command to the shard of its keys, splits a pipeline by node, and refreshes its
slot map after a failover. pygents only chooses hash tags (`_lua.mailbox.Keys`), so that
every script names keys of one slot.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Final, cast

from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import ClusterDownError, ResponseError, SlotNotCoveredError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = [
    "CLUSTER_SCHEMES",
    "CONNECTION_ERRORS",
    "clustered",
    "connect",
    "connection_lost",
    "disconnect",
    "queue_script",
    "queue_time",
    "time_ms",
]

CONNECTION_ERRORS = (
    RedisConnectionError,
    RedisTimeoutError,
    OSError,
    # A Redis Cluster between a node's failure and its replica's promotion (the client
    # refreshes its slot map and a later try goes to the new primary):
    ClusterDownError,
    TryAgainError,
    SlotNotCoveredError,
)
"""What a lost or refused connection to Redis raises (retried with a backoff)."""


def connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` means the connection to Redis was lost: retry it with a backoff.

    `CONNECTION_ERRORS`, and anything else redis-py's own code raises but a server's
    reply (``ResponseError``: a missing group, a full Redis, a wrong key type — each
    handled where it can happen). redis-py's cluster client, refreshing its slot map
    after one command's connection failed, can close the connection under a concurrent
    command of the same client, which then fails inside redis-py with whatever that
    code trips on (``AttributeError: 'NoneType' object has no attribute
    'writelines'``), or cannot reach any node for a moment
    (``RedisClusterException``). Ten workers on one `Mailboxes` died of it at set-up;
    the command is lost with its connection, exactly as on a ``ConnectionError``.

    Cancellation (and any other non-``Exception``) is never a lost connection.
    """
    if isinstance(exc, CONNECTION_ERRORS):
        return True
    if not isinstance(exc, Exception) or isinstance(exc, ResponseError):
        return False
    tb = exc.__traceback__
    while tb is not None:  # bounded by the depth of the stack it was raised through
        module = tb.tb_frame.f_globals.get("__name__", "")
        if module == "redis" or (isinstance(module, str) and module.startswith("redis.")):
            return True
        tb = tb.tb_next
    return False


CLUSTER_SCHEMES: Final = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
"""URL schemes of a Redis Cluster, and the plain scheme its client is given."""


def clustered(url: str) -> bool:
    """Whether ``url`` names a Redis Cluster (``redis+cluster://``, ``rediss+cluster://``)."""
    return url.partition("://")[0] in CLUSTER_SCHEMES


def connect(url: str, **options: Any) -> Redis:
    """A client for ``url``: redis-py's ``RedisCluster`` for a cluster URL (given the
    node's address as a plain ``redis://`` URL: it finds the other nodes itself), else
    ``Redis``. Typed as ``Redis``: the cluster client has the same command methods, and
    the modules that only send commands need not know which they talk to."""
    scheme, _, rest = url.partition("://")
    if scheme in CLUSTER_SCHEMES:
        return cast(Redis, RedisCluster.from_url(f"{CLUSTER_SCHEMES[scheme]}://{rest}", **options))
    return Redis.from_url(url, **options)


async def queue_script(
    pipe: Any, script: AsyncScript, keys: Sequence[str], args: Sequence[Any]
) -> None:
    """Queue ``script`` in ``pipe``.

    A single server's pipeline loads the script before it runs (``EVALSHA``); a
    cluster pipeline does not, and a shard that lacks it (a new node, a promoted
    replica: the script cache is not replicated) would refuse it. There the pipeline
    sends the body with ``EVAL``, which Redis caches by its digest.
    """
    if isinstance(pipe, ClusterPipeline):
        pipe.eval(str(script.script), len(keys), *keys, *args)
    else:
        await script(keys=keys, args=args, client=pipe)


async def disconnect(client: Any) -> None:
    """Close every connection of ``client`` (a blocked read among them ends at once).

    Not on a cluster: its client takes a connection closed under a command for a
    failed node and rebuilds its slot map, with new connections that outlive the
    client's close. A reply reader there ends anyway within its one-second blocking
    read, on the flag `Replies.close` sets.
    """
    if isinstance(client, RedisCluster):
        return
    with contextlib.suppress(Exception):  # closing: a failure changes nothing
        await client.connection_pool.disconnect()


_TIME = "return redis.call('TIME')"


def queue_time(pipe: Any, key: str) -> None:
    """Queue ``TIME`` in ``pipe``: the server's clock, as (seconds, microseconds) — see
    `time_ms`. A cluster pipeline refuses ``TIME`` (it names no key, so no shard): there
    a read-only script asks the node of ``key``, whose clock scored what is compared."""
    if isinstance(pipe, ClusterPipeline):
        pipe.execute_command("EVAL_RO", _TIME, 1, key)
    else:
        pipe.time()


def time_ms(value: Any) -> int:
    """What `queue_time` queued, in milliseconds."""
    return int(value[0]) * 1000 + int(value[1]) // 1000
