"""Waiting for replicas: what ``Mailboxes(replicas=..., replica_timeout=...)`` does.

Redis replicates asynchronously: the primary answers a write before any replica has
it. If the primary dies in between and a replica is promoted (by Sentinel), the write
is gone although the client was told it succeeded — a turn ``put()`` returned, or an
outcome a worker recorded. ``WAIT n timeout`` closes that gap from the client's side:
it blocks until ``n`` replicas have acknowledged every write *this connection* made
so far, or until ``timeout``, and says how many did.

Because WAIT is about the connection's own earlier writes, it must travel on the same
connection, right after the write: the write and the WAIT go in one pipeline (one
connection, one round trip), never as two commands that the pool could send on two
connections (a WAIT on a connection that wrote nothing returns at once, proving
nothing).

``WAITAOF`` (Redis 7.2: wait until the write is in the append-only file of the
primary and/or replicas) is not offered: the Redis this project is tested against
(7.0) does not have it, and an option that cannot be tested here would be a promise
we cannot check. ``WAIT`` covers the failover case, which is what loses writes on a
healthy machine.

On a Redis Cluster, ``WAIT`` names no key (the cluster client cannot route it) and
counts the replicas of one node only; and a cluster pipeline promises no particular
connection. There `Replication.on_nodes` asks the cluster client which node owns each
write's key (``get_node_from_key``) and sends that node's writes and a ``WAIT`` as one
pipeline on one of its connections (``ClusterNode.execute_pipeline``, what redis-py's
own cluster pipeline runs per node). A node that is gone, or answers ``MOVED``/``ASK``
after a failover, fails that node's writes with a retryable error, and the client's
slot map is refreshed so that the next try finds the promoted replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redis.asyncio.cluster import PipelineCommand, RedisCluster
from redis.exceptions import AskError, SlotNotCoveredError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import Pipeline
    from redis.asyncio.cluster import ClusterNode
    from redis.commands.core import AsyncScript

__all__ = ["NodeCommand", "Replication"]

NodeCommand = tuple[str, Sequence[Any]]
"""A command for `Replication.on_nodes`: the key that routes it, and its arguments."""

_log = logging.getLogger("pygents.redis")


@dataclass(frozen=True, slots=True)
class Replication:
    """How many replicas must confirm a write, and how long to wait for them."""

    replicas: int  # 0: do not wait (Redis's default behaviour)
    timeout: float  # seconds

    def __bool__(self) -> bool:
        return self.replicas > 0

    def wait_after(self, pipe: Pipeline) -> None:
        """Queue ``WAIT`` on ``pipe``, after the writes already queued there."""
        pipe.wait(self.replicas, self._timeout_ms())

    async def run(
        self, client: Redis, script: AsyncScript, keys: list[str], args: list[Any]
    ) -> tuple[Any, Any]:
        """Run one script, then (when on) ``WAIT``, in one pipeline: (its result, the
        ``WAIT`` result or None)."""
        if not self:
            return await script(keys=keys, args=args), None
        found: Any = client  # `_cluster.connect` types a cluster client as `Redis`
        if isinstance(found, RedisCluster):
            command = ("EVAL", str(script.script), len(keys), *keys, *args)
            (result,), replicated = await self.on_nodes(found, [(keys[0], command)])
            if isinstance(result, Exception):
                raise result
            return result, replicated
        # ``async with``: a pipeline that fails while loading its scripts keeps its
        # connection otherwise (redis-py), and leaks it.
        async with client.pipeline(transaction=False) as pipe:
            await script(keys=keys, args=args, client=pipe)  # queued
            self.wait_after(pipe)
            result, replicated = await pipe.execute()
        return result, replicated

    async def on_nodes(
        self, client: RedisCluster, commands: Sequence[NodeCommand]
    ) -> tuple[list[Any], int]:
        """Run ``commands`` on a cluster, each on the node that owns its key, each
        node's followed by ``WAIT`` on the same connection: (their results in order,
        errors as values as ``execute(raise_on_error=False)`` gives them; the fewest
        replicas any node confirmed).

        Scripts go as ``EVAL`` with their body (a promoted replica lacks the script
        cache, as `_cluster.queue_script` explains)."""
        await client.initialize()  # the slot map (once; at once when already known)
        groups: dict[str, tuple[ClusterNode, list[PipelineCommand]]] = {}
        for position, (key, args) in enumerate(commands):
            node = client.get_node_from_key(key)
            if node is None:  # only for replica=True; no slot raises SlotNotCoveredError
                raise SlotNotCoveredError(f"no node owns the slot of {key!r}")
            _, queued = groups.setdefault(node.name, (node, []))
            queued.append(PipelineCommand(position, *args))
        waits = [PipelineCommand(-1, "WAIT", self.replicas, self._timeout_ms()) for _ in groups]
        results: list[Any] = [None] * len(commands)
        stale: set[str] = set()  # a key of each node that failed or moved its slot

        async def one(node: ClusterNode, queued: list[PipelineCommand], wait: Any) -> None:
            try:
                await node.execute_pipeline([*queued, wait])
            except Exception as exc:  # the node is gone (killed, or failed over)
                stale.add(commands[queued[0].position][0])
                # Redis's replies are kept per command, not raised: what is raised is the
                # connection failing (redis-py's cluster client can even close it under
                # this pipeline from another task, which shows as an AttributeError).
                if not isinstance(exc, RedisConnectionError | RedisTimeoutError | OSError):
                    exc = RedisConnectionError(f"the connection to {node.name} failed: {exc!r}")
                for command in (*queued, wait):
                    command.result = exc
            for command in queued:
                if isinstance(command.result, AskError):  # MOVED too: the slot moved
                    stale.add(commands[command.position][0])
                    command.result = TryAgainError(f"not written, slot moved: {command.result}")
                results[command.position] = command.result

        await asyncio.gather(
            *(
                one(node, queued, wait)
                for (node, queued), wait in zip(groups.values(), waits, strict=True)
            )
        )
        for key in stale:
            # The slot map is out of date: a read of that key through the cluster
            # client's own path lets it find the new owner (it refreshes its map after
            # a MOVED or a lost node, under its own lock), for the next try. Not retried
            # here: a write whose answer was lost may have been made. A failure of the
            # read is the next try's.
            with contextlib.suppress(Exception):
                await client.exists(key)
        return results, min((self.confirmed(w.result) for w in waits), default=0)

    def _timeout_ms(self) -> int:
        # WAIT's timeout is in milliseconds, and 0 would mean "forever".
        return max(1, round(self.timeout * 1000))

    def confirmed(self, result: Any) -> int:
        """How many replicas the ``WAIT`` result says have the writes."""
        return result if isinstance(result, int) else 0

    def short(self, result: Any) -> bool:
        """Fewer replicas than asked for confirmed the writes."""
        return self.confirmed(result) < self.replicas

    def short_of(self, result: Any) -> bool:
        """On, and fewer replicas than asked for confirmed the writes."""
        return bool(self) and self.short(result)

    def warn_outcomes(self, count: int, result: Any) -> None:
        """Log outcomes recorded on the primary that too few replicas confirmed.

        They are written, and the turns acknowledged: writing them again would record
        them twice. A failover before the replicas catch up would lose them, and the
        turns would run again (at least once, as after a worker's crash)."""
        _log.warning(
            "pygents.redis: %d outcomes recorded, but only %d of %d replicas confirmed "
            "them within %.3g s; a failover now could lose them and run their turns again",
            count,
            self.confirmed(result),
            self.replicas,
            self.timeout,
        )
