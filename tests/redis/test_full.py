"""A full Redis (``maxmemory`` with ``noeviction``): producers are told, workers drain.

Redis refuses writes that may grow its memory once ``maxmemory`` is reached; it still
takes acknowledgements and deletions, which is how the workers empty the mailbox.
"""

from __future__ import annotations

import asyncio

import pytest
from redis_helpers import Serving, eventually

from pygents import Agent, Turn, tool
from pygents.redis import (
    MailboxError,
    Mailboxes,
    MailboxFullError,
    RedisFullError,
    RedisServer,
    TurnHandle,
    Worker,
)

ARG = "x" * 4096


async def fill(mailboxes: Mailboxes) -> tuple[list[TurnHandle], RedisFullError]:
    """Put turns until Redis is full (bounded: far more than 3 MB would hold)."""
    handles: list[TurnHandle] = []
    for _ in range(500):
        try:
            handles += await mailboxes.put_many(
                "clerk", [Turn("echo", args=[ARG]) for _ in range(10)]
            )
        except RedisFullError as full:
            return handles, full
    raise AssertionError("Redis never filled up")


async def test_workers_drain_a_full_redis_and_put_says_it_is_full(
    full_redis: RedisServer, serving: Serving
) -> None:
    @tool()
    async def echo(text: str) -> int:
        """Returns the length of its argument."""
        return len(text)

    agent = Agent("clerk", "Does paperwork", [echo])
    async with Mailboxes(full_redis.url) as mailboxes:
        handles, full = await fill(mailboxes)
        assert isinstance(full, MailboxFullError)
        assert isinstance(full, MailboxError)
        assert f"Redis at {mailboxes.where} is full" in str(full)
        assert len(handles) >= 100

        # Started on the full Redis: its set-up (the consumer group) and its
        # heartbeats must not kill it.
        worker = Worker(mailboxes, agent, concurrency=8, visibility_timeout=0.2)
        await serving.start(worker)
        run = serving.runs[-1][1]
        async with asyncio.timeout(30):
            results = await asyncio.gather(*(h.result() for h in handles))
        assert results == [len(ARG)] * len(handles)
        assert not run.done()

        # Drained: Redis takes turns again.
        after = await mailboxes.put("clerk", Turn("echo", args=["after"]))
        async with asyncio.timeout(10):
            assert await after.result() == 5
        await serving.stop(worker)


async def test_a_worker_running_when_redis_fills_up_stays_alive_and_live(
    full_redis: RedisServer, serving: Serving
) -> None:
    @tool()
    async def echo(text: str) -> int:
        """Returns the length of its argument."""
        return len(text)

    agent = Agent("clerk", "Does paperwork", [echo])
    async with Mailboxes(full_redis.url) as mailboxes:
        keys = mailboxes.keys("clerk")
        worker = await serving.start(Worker(mailboxes, agent, visibility_timeout=0.2))
        run = serving.runs[-1][1]
        # Redis fills up: as if something else took its memory, it now holds more
        # than its limit (a limit below its use makes that certain, and lasting).
        await mailboxes.client.config_set("maxmemory", 1)
        with pytest.raises(RedisFullError):
            await mailboxes.put("clerk", Turn("echo", args=["refused"]))

        # The heartbeat goes on (the worker is still live) and the worker survives.
        beat = await mailboxes.client.zscore(keys.workers, worker.name)
        assert beat is not None
        await eventually(lambda: _beat_after(mailboxes, keys.workers, worker.name, beat), within=5)
        assert (await mailboxes.stats("clerk")).workers == 1
        assert not run.done()

        await mailboxes.client.config_set("maxmemory", 0)
        after = await mailboxes.put("clerk", Turn("echo", args=["after"]))
        async with asyncio.timeout(10):
            assert await after.result() == 5
        await serving.stop(worker)


async def _beat_after(mailboxes: Mailboxes, key: str, name: str, beat: float) -> bool:
    return ((await mailboxes.client.zscore(key, name)) or 0) > beat
