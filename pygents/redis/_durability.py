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
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import Pipeline
    from redis.commands.core import AsyncScript

__all__ = ["Replication"]

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
        # WAIT's timeout is in milliseconds, and 0 would mean "forever".
        pipe.wait(self.replicas, max(1, round(self.timeout * 1000)))

    async def run(
        self, client: Redis, script: AsyncScript, keys: list[str], args: list[Any]
    ) -> tuple[Any, Any]:
        """Run one script, then (when on) ``WAIT``, in one pipeline: (its result, the
        ``WAIT`` result or None)."""
        if not self:
            return await script(keys=keys, args=args), None
        # ``async with``: a pipeline that fails while loading its scripts keeps its
        # connection otherwise (redis-py), and leaks it.
        async with client.pipeline(transaction=False) as pipe:
            await script(keys=keys, args=args, client=pipe)  # queued
            self.wait_after(pipe)
            result, replicated = await pipe.execute()
        return result, replicated

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
