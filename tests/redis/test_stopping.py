"""A graceful stop: running turns finish, turns read ahead go back untouched."""

from __future__ import annotations

import asyncio

from redis_helpers import Serving, eventually

from pygents import Agent, Turn, tool
from pygents.redis import Delivery, Mailboxes, Worker, current_delivery
from pygents.redis._mailbox_lua import GROUP


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
