"""The worker's reads of new turns: one ``XREADGROUP`` for every served mailbox on a
single server; on a Redis Cluster, one per hash slot.

A multi-key command must stay within one slot on a cluster, and each served mailbox has
its own (`Keys.of`). A blocking read per slot, awaited together, would hold turns found
on a busy mailbox until the reads of the idle ones time out; so each slot's read runs as
a task of its own, and a call returns as soon as any of them has found something —
reads still blocking stay pending for the next call (the worker never loses what a read
took: a stopping worker cancels them, then hands back whatever it holds and did not
start). Each read asks for an equal share of ``count``, so that together they never
take more than the worker has room for.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from redis.crc import key_slot

from pygents.redis._worker.intake import Entry, read

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["Reads"]

_Found = list[tuple[str, list[Entry]]]


class Reads:
    """``await reads(mailboxes, count, block_ms)``: new entries by mailbox key."""

    __slots__ = ("_pending", "client", "clustered", "consumer")

    def __init__(self, client: Redis, consumer: str, *, clustered: bool) -> None:
        self.client = client
        self.consumer = consumer
        self.clustered = clustered
        self._pending: dict[tuple[str, ...], asyncio.Task[_Found]] = {}

    async def __call__(self, mailboxes: list[str], count: int, block_ms: int) -> _Found:
        if not self.clustered:
            return await read(self.client, self.consumer, mailboxes, count, block_ms)
        by_slot: dict[int, list[str]] = {}
        for key in mailboxes:
            by_slot.setdefault(key_slot(key.encode()), []).append(key)
        share = max(1, -(-count // len(by_slot)))
        for keys in by_slot.values():
            if tuple(keys) not in self._pending:
                self._pending[tuple(keys)] = asyncio.create_task(
                    read(self.client, self.consumer, keys, share, block_ms)
                )
        await asyncio.wait(self._pending.values(), return_when=asyncio.FIRST_COMPLETED)
        found: _Found = []
        failure: BaseException | None = None
        for group, task in list(self._pending.items()):
            if task.done():
                del self._pending[group]
                error = task.exception()
                if error is None:
                    found += task.result()
                else:
                    failure = failure or error
        if failure is not None and not found:
            raise failure  # the worker's guard backs off and reads again
        return found

    async def close(self) -> None:
        """Cancel the reads still blocking (a stopping worker)."""
        tasks = list(self._pending.values())
        self._pending.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
