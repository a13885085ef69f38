"""A graceful stop: running turns finish, turns read ahead go back untouched."""

from __future__ import annotations

import asyncio

from redis_helpers import Serving, eventually

from pygents import Agent, Turn, tool
from pygents.redis import (
    Delivery,
    Mailboxes,
    RedisServer,
    Worker,
    current_delivery,
    served_stats,
)
from pygents.redis._lua.mailbox import GROUP


async def test_a_stopping_worker_starts_no_new_turn_and_hands_back_what_it_read_ahead(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    deliveries: list[Delivery | None] = []
    started = asyncio.Event()
    release = asyncio.Event()

    @tool()
    async def wait_for_gate(job: str) -> str:
        """Blocks until the test opens the gate."""
        deliveries.append(current_delivery())
        started.set()
        await release.wait()
        return f"done {job}"

    agent = Agent("clerk", "Does paperwork", [wait_for_gate])
    handles = await mailboxes.put_many(
        "clerk", [Turn("wait_for_gate", args=[str(n)]) for n in range(6)]
    )
    first = await serving.start(Worker(mailboxes, agent, concurrency=1, prefetch=5))
    await started.wait()
    await eventually(lambda: first.free == 0)  # one turn running, five read ahead

    first.stop()
    release.set()
    await serving.stop(first)

    assert [d.worker for d in deliveries if d] == [first.name]  # no new turn started
    pending = await mailboxes.client.xpending_range(
        mailboxes.keys("clerk").mailbox, GROUP, "-", "+", 10
    )
    assert len(pending) == 5
    assert {p["times_delivered"] for p in pending} == {0}  # handed back, not counted

    second = await serving.start(Worker(mailboxes, agent, concurrency=8))
    async with asyncio.timeout(10):
        results = await asyncio.gather(*(h.result() for h in handles))
    assert results == [f"done {n}" for n in range(6)]
    later = [d for d in deliveries[1:] if d]
    assert len(later) == 5
    assert {(d.worker, d.attempt) for d in later} == {(second.name, 1)}


async def test_a_worker_whose_redis_is_gone_when_it_stops_leaves_no_served_stats(
    redis_server: RedisServer,
) -> None:
    """Its goodbye to Redis fails; what this process reports as served must not stay
    (a dashboard would show a mailbox no worker here serves any more)."""

    @tool()
    async def note(text: str) -> str:
        """Takes a note."""
        return text

    async with Mailboxes(redis_server.url) as mailboxes:
        worker = Worker(mailboxes, Agent("scribe", "Takes notes", [note]), stats_interval=0.05)
        running = asyncio.create_task(worker.run())
        await eventually(lambda: "scribe" in served_stats())
        redis_server.stop()
        worker.stop()
        async with asyncio.timeout(60):
            await asyncio.gather(running, return_exceptions=True)
    assert "scribe" not in served_stats()


async def test_a_worker_cancelled_again_while_it_stops_leaves_no_served_stats(
    mailboxes: Mailboxes,
) -> None:
    """A supervisor that loses patience cancels the stopping worker a second time (a
    test fixture's clean-up does): its report of what it serves goes all the same."""

    @tool()
    async def note(text: str) -> str:
        """Takes a note."""
        return text

    worker = Worker(mailboxes, Agent("scribe", "Takes notes", [note]), stats_interval=0.05)
    running = asyncio.create_task(worker.run())
    await eventually(lambda: "scribe" in served_stats())
    running.cancel()
    for _ in range(3):  # into its clean-up, which awaits Redis
        await asyncio.sleep(0)
    running.cancel()
    async with asyncio.timeout(30):
        await asyncio.gather(running, return_exceptions=True)
    assert "scribe" not in served_stats()
