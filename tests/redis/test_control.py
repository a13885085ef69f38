"""Control through Redis, seen from the producer's side, with real worker processes
(``control_worker.py``) on a real ``redis-server``: pause and resume, cancel a running
or a queued turn, retry and drop a dead letter, drain a worker — and the clear
refusals for names that do not exist. Every wait polls Redis with a bound."""

from __future__ import annotations

import asyncio
import subprocess
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from desk_tools import DeskTools
from redis_helpers import Serving, eventually, processes, recorded_outcomes, spawn

from pygents import Agent, StopReason, Turn, tool
from pygents._identity import IDENTITY
from pygents.redis import Mailboxes, MailboxNotFoundError, RedisServer, Survey, Worker


async def _surveyed(mailboxes: Mailboxes) -> Survey:
    return await mailboxes.survey(["desk"])


async def _workers(mailboxes: Mailboxes, count: int) -> bool:
    return (await _surveyed(mailboxes))["desk"].stats.workers == count


async def _pause(mailboxes: Mailboxes) -> None:
    """Pause ``desk`` and wait until every worker says it applies the pause."""
    await mailboxes.pause("desk")

    async def applied() -> bool:
        desk = (await _surveyed(mailboxes))["desk"]
        return desk.paused and all(w.paused for w in desk.workers)

    await eventually(applied)


async def _waiting(mailboxes: Mailboxes, turn_uuid: str) -> bool:
    """The turn waits in the mailbox: queued, or read by a read under way when the
    pause came and handed back at once (then it looks idle for years)."""
    desk = (await _surveyed(mailboxes))["desk"]
    back = [p.turn_uuid for p in desk.pending if p.idle > 1e6]
    return [q.turn_uuid for q in desk.queued] + back == [turn_uuid]


async def _started(mailboxes: Mailboxes, turn_uuid: str) -> bool:
    return turn_uuid in await mailboxes.client.lrange("started", 0, -1)


async def test_a_turn_put_while_paused_is_not_taken_until_resume(
    desk_tools: DeskTools, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url
    with processes([spawn("control_worker.py", tmp_path, url, "w-pause")]):
        async with Mailboxes(url) as mailboxes:
            await eventually(lambda: _workers(mailboxes, 1), within=60)
            await _pause(mailboxes)
            handle = await mailboxes.put("desk", Turn(desk_tools.work, args=[7]))
            await eventually(lambda: _waiting(mailboxes, handle.turn_uuid))
            assert await mailboxes.client.llen("sidefx") == 0
            assert not handle.done

            await mailboxes.resume("desk")
            async with asyncio.timeout(10):
                assert await handle.result() == 7
            desk = (await _surveyed(mailboxes))["desk"]
            assert not desk.paused
            assert not any(w.paused for w in desk.workers)


async def test_cancelling_a_running_turn_ends_its_handle_cancelled_exactly_once(
    desk_tools: DeskTools, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url
    with processes([spawn("control_worker.py", tmp_path, url, "w-cancel")]):
        async with Mailboxes(url) as mailboxes:
            await eventually(lambda: _workers(mailboxes, 1), within=60)
            handle = await mailboxes.put("desk", Turn(desk_tools.hold))
            await eventually(lambda: _started(mailboxes, handle.turn_uuid))

            assert await mailboxes.cancel("desk", handle.turn_uuid) == "cancelling"
            async with asyncio.timeout(10):
                outcome = await handle.outcome()
            assert outcome.stop_reason is StopReason.CANCELLED
            assert outcome.worker == "w-cancel"
            assert outcome.deliveries == 1

            await eventually(lambda: _empty(mailboxes))
            assert await mailboxes.cancel("desk", handle.turn_uuid) == "not found"
            mine = [
                o for o in await recorded_outcomes(mailboxes) if o.turn_uuid == handle.turn_uuid
            ]
            assert len(mine) == 1
            # the lane goes on: the next turn runs on the same worker
            after = await mailboxes.put("desk", Turn(desk_tools.work, args=[1]))
            async with asyncio.timeout(10):
                assert await after.result() == 1


async def test_a_running_turn_that_swallows_the_first_cancellation_still_ends_cancelled_once(
    desk_tools: DeskTools, mailboxes: Mailboxes, serving: Serving
) -> None:
    # A turn's own code can absorb a cancellation: redis-py's send path on Python 3.11
    # awaits `asyncio.wait_for`, which returns the command's reply instead of raising
    # when the cancellation lands just as the command completes. Such a turn ran on,
    # its cancel request was never acted on again, and its handle waited for good
    # (the flaky test_cancelling_a_running_turn_ends_its_handle_cancelled_exactly_once).
    seen: list[str] = []  # the cancellations the tool saw
    running = asyncio.Event()

    @tool()
    async def stubborn() -> str:
        """Swallows the first cancellation, as an absorbing client call would."""
        running.set()
        for _ in range(2):
            try:
                await asyncio.Event().wait()  # until cancelled
            except asyncio.CancelledError:
                seen.append("cancelled")
                if len(seen) > 1:
                    raise
                asyncio.current_task().uncancel()  # type: ignore[union-attr]
        return "never cancelled"

    worker = await serving.start(
        Worker(
            mailboxes,
            Agent("desk", "Works", [desk_tools.work, stubborn]),
            name="clerk-3",
            control_interval=0.01,
        )
    )
    handle = await mailboxes.put("desk", Turn(stubborn))
    async with asyncio.timeout(10):
        await running.wait()
    assert await mailboxes.cancel("desk", handle.turn_uuid) == "cancelling"
    async with asyncio.timeout(10):
        outcome = await handle.outcome()
    assert outcome.stop_reason is StopReason.CANCELLED
    assert outcome.worker == "clerk-3"
    assert seen == ["cancelled", "cancelled"]
    mine = [o for o in await recorded_outcomes(mailboxes) if o.turn_uuid == handle.turn_uuid]
    assert len(mine) == 1
    # the lane goes on: the next turn runs, not cancelled by a leftover request
    async with asyncio.timeout(10):
        assert await (await mailboxes.put("desk", Turn(desk_tools.work, args=[5]))).result() == 5
    assert worker.counters.turns == 2


async def test_cancelling_a_queued_turn_removes_it_with_a_cancelled_outcome(
    desk_tools: DeskTools, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url
    with processes([spawn("control_worker.py", tmp_path, url, "w-queued")]):
        async with Mailboxes(url) as mailboxes:
            await eventually(lambda: _workers(mailboxes, 1), within=60)
            await _pause(mailboxes)
            handle = await mailboxes.put("desk", Turn(desk_tools.work, args=[3]))
            await eventually(lambda: _waiting(mailboxes, handle.turn_uuid))

            assert await mailboxes.cancel("desk", handle.turn_uuid) == "removed"
            async with asyncio.timeout(10):
                outcome = await handle.outcome()
            assert outcome.stop_reason is StopReason.CANCELLED
            assert outcome.deliveries == 0
            assert await mailboxes.cancel("desk", handle.turn_uuid) == "not found"

            await mailboxes.resume("desk")
            later = await mailboxes.put("desk", Turn(desk_tools.work, args=[4]))
            async with asyncio.timeout(10):
                assert await later.result() == 4
            effects = await mailboxes.client.lrange("sidefx", 0, -1)
            assert [line.split()[0] for line in effects] == [later.turn_uuid]


async def _dead_lettered(
    desk_tools: DeskTools,
    mailboxes: Mailboxes,
    tmp_path: Path,
    name: str,
    started: list[subprocess.Popen[bytes]],
) -> str:
    """Put a turn that looks delivered 10 times to a consumer that died, then start a
    worker: it takes the turn over and dead-letters it. Returns the turn's uuid."""
    client, keys = mailboxes.client, mailboxes.keys("desk")
    handle = await mailboxes.put("desk", Turn(desk_tools.work, args=[5]))
    await client.xgroup_create(keys.mailbox, "pygents", id="0")
    await client.xreadgroup("pygents", "ghost", {keys.mailbox: ">"}, count=1)
    await client.xclaim(
        keys.mailbox, "pygents", "ghost", 0, [handle.message_id],
        idle=10**9, retrycount=10, justid=True,
    )  # fmt: skip
    started.append(spawn("control_worker.py", tmp_path, mailboxes.url, name))
    async with asyncio.timeout(60):
        outcome = await handle.outcome()
    assert outcome.dead_letter
    return handle.turn_uuid


async def test_a_retried_dead_letter_runs_again_and_its_handle_gets_the_outcome(
    desk_tools: DeskTools, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url
    async with Mailboxes(url) as mailboxes:
        with processes([]) as started:
            turn_uuid = await _dead_lettered(desk_tools, mailboxes, tmp_path, "w-retry", started)
            (dead,) = (await _surveyed(mailboxes))["desk"].dead_letters
            assert (dead.turn_uuid, dead.tool, dead.deliveries) == (turn_uuid, "work", 11)
            assert "max_deliveries" in dead.reason
            assert dead.age >= 0

            handle = await mailboxes.retry_dead_letter("desk", dead.id)
            assert handle.turn_uuid == turn_uuid
            async with asyncio.timeout(10):
                outcome = await handle.outcome()
            assert outcome.ok
            assert outcome.output == 5
            assert outcome.deliveries == 1
            assert (await _surveyed(mailboxes))["desk"].dead_letters == ()
            with pytest.raises(MailboxNotFoundError, match="no such dead letter"):
                await mailboxes.retry_dead_letter("desk", dead.id)


async def test_a_dropped_dead_letter_is_gone_and_cannot_be_dropped_twice(
    desk_tools: DeskTools, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url
    async with Mailboxes(url) as mailboxes:
        with processes([]) as started:
            await _dead_lettered(desk_tools, mailboxes, tmp_path, "w-drop", started)
            (dead,) = (await _surveyed(mailboxes))["desk"].dead_letters
            await mailboxes.drop_dead_letter("desk", dead.id)
            desk = (await _surveyed(mailboxes))["desk"]
            assert desk.dead_letters == ()
            assert desk.stats.dead_letters == 0
            with pytest.raises(MailboxNotFoundError, match="no such dead letter"):
                await mailboxes.drop_dead_letter("desk", dead.id)
            with pytest.raises(MailboxNotFoundError, match="not a dead letter id"):
                await mailboxes.drop_dead_letter("desk", "garbage")
            assert await mailboxes.client.llen("sidefx") == 0  # it never ran


async def test_a_drained_worker_finishes_its_turn_exits_and_another_takes_the_rest(
    desk_tools: DeskTools, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url
    first = spawn("control_worker.py", tmp_path, url, "w-drained")
    with processes([first]) as started:
        async with Mailboxes(url) as mailboxes:
            await eventually(lambda: _workers(mailboxes, 1), within=60)
            running = await mailboxes.put("desk", Turn(desk_tools.hold))
            await eventually(lambda: _started(mailboxes, running.turn_uuid))
            started.append(second := spawn("control_worker.py", tmp_path, url, "w-other"))
            await eventually(lambda: _workers(mailboxes, 2), within=60)

            assert await mailboxes.drain_worker("w-drained") == ["desk"]

            async def draining() -> bool:
                rows = (await _surveyed(mailboxes))["desk"].workers
                return any(w.name == "w-drained" and w.draining for w in rows)

            await eventually(draining)
            rest = await mailboxes.put_many(
                "desk", [Turn(desk_tools.work, args=[n]) for n in range(20)]
            )
            async with asyncio.timeout(10):
                assert [await h.result() for h in rest] == list(range(20))
            assert first.poll() is None  # still finishing its turn
            await mailboxes.client.set("release", 1)
            async with asyncio.timeout(10):
                assert await running.result() == "released"
            assert await asyncio.to_thread(first.wait, 30) == 0
            rows = (await _surveyed(mailboxes))["desk"].workers
            assert [w.name for w in rows] == ["w-other"]
            pids = Counter(
                line.split()[1] for line in await mailboxes.client.lrange("sidefx", 0, -1)
            )
            assert pids == {str(second.pid): 20}
            with pytest.raises(MailboxNotFoundError, match="no live worker"):
                await mailboxes.drain_worker("w-drained")


async def test_control_refuses_what_this_redis_does_not_have(
    desk_tools: DeskTools, mailboxes: Mailboxes
) -> None:
    await mailboxes.put("known", Turn(desk_tools.work, args=[1]), reply=False)
    with pytest.raises(MailboxNotFoundError, match="has no mailbox"):
        await mailboxes.pause("nobody")
    with pytest.raises(MailboxNotFoundError, match="has no mailbox"):
        await mailboxes.cancel("nobody", "some-uuid")
    with pytest.raises(MailboxNotFoundError, match="no live worker"):
        await mailboxes.drain_worker("nobody")
    with pytest.raises(MailboxNotFoundError, match="no such dead letter"):
        await mailboxes.retry_dead_letter("known", "1-0")
    assert await mailboxes.cancel("known", "no-such-uuid") == "not found"


async def _empty(mailboxes: Mailboxes) -> bool:
    stats = (await _surveyed(mailboxes))["desk"].stats
    return stats.depth == 0 and stats.pending == 0


async def test_a_worker_serves_on_whatever_its_control_hash_holds(
    desk_tools: DeskTools, mailboxes: Mailboxes, serving: Serving
) -> None:
    control = mailboxes.keys("desk").control
    worker = await serving.start(
        Worker(mailboxes, Agent("desk", "Works", [desk_tools.work]), control_interval=0.01)
    )
    await mailboxes.client.rpush(control, "not a hash")
    async with asyncio.timeout(10):
        assert await (await mailboxes.put("desk", Turn(desk_tools.work, args=[1]))).result() == 1
    await mailboxes.client.delete(control)
    junk = {f"cancel:{n}-0": "x" for n in range(20_000)}
    await mailboxes.client.hset(control, mapping={**junk, "drain:someone-else": "1"})
    async with asyncio.timeout(10):
        assert await (await mailboxes.put("desk", Turn(desk_tools.work, args=[2]))).result() == 2
    assert worker.ready
    assert not worker.controls.draining
    assert worker.counters.connection_failures == 0


async def test_a_drain_request_left_for_a_dead_worker_does_not_stop_its_successor(
    desk_tools: DeskTools, mailboxes: Mailboxes, serving: Serving
) -> None:
    await mailboxes.client.hset(mailboxes.keys("desk").control, "drain:clerk-1", "1")
    worker = await serving.start(
        Worker(
            mailboxes,
            Agent("desk", "Works", [desk_tools.work]),
            name="clerk-1",
            control_interval=0.01,
        )
    )
    async with asyncio.timeout(10):
        for n in range(5):  # many control ticks
            assert (
                await (await mailboxes.put("desk", Turn(desk_tools.work, args=[n]))).result() == n
            )
    assert not worker.controls.draining
    assert await mailboxes.drain_worker("clerk-1") == ["desk"]
    await eventually(lambda: worker.controls.draining)


async def test_a_worker_says_who_it_is_in_its_telemetry_again_when_lost_and_not_after_leaving(
    desk_tools: DeskTools, mailboxes: Mailboxes, serving: Serving
) -> None:
    control = mailboxes.keys("desk").control
    field = "identity:clerk-2"

    async def said() -> list[tuple[str, str | None, str | None]]:
        desk = (await _surveyed(mailboxes))["desk"]
        return [(w.name, w.service, w.instance) for w in desk.workers]

    IDENTITY.set("desk-svc", "instance-1")  # what pygents_otel sets once it instruments
    try:
        agent = Agent("desk", "Works", [desk_tools.work])
        worker = Worker(mailboxes, agent, name="clerk-2", control_interval=0.01)
        await serving.start(worker)
        await eventually(lambda: _is(said, [("clerk-2", "desk-svc", "instance-1")]))
        await mailboxes.client.hdel(control, field)  # lost (an operator, a restore)
        await eventually(lambda: mailboxes.client.hexists(control, field))
        await mailboxes.client.hset(control, field, '["someone", "else"]')  # overwritten
        await eventually(lambda: _is(said, [("clerk-2", "desk-svc", "instance-1")]))
        await serving.stop(worker)
        assert not await mailboxes.client.hexists(control, field)
    finally:
        IDENTITY.clear()


async def _is(read: Callable[[], Awaitable[object]], expected: object) -> bool:
    return await read() == expected
