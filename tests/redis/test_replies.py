"""The producer's side of results under faults: closing, trimming, re-runs, lost Redis.

Real ``redis-server`` processes (one per test), real workers — in this process, or
worker processes killed with SIGKILL. Every wait is bounded and waits on a condition.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio.cluster import RedisCluster
from redis_helpers import Serving, eventually

from pygents import Agent, StopReason, Tool, Turn, tool
from pygents.redis import (
    MailboxClosedError,
    Mailboxes,
    Outcome,
    RedisServer,
    RepliesLostError,
    TurnHandle,
    TurnLostError,
    TurnRerunError,
    Worker,
    _outage,
)

HERE = Path(__file__).resolve().parent


def echo_tool() -> Tool:
    """The tool of these tests, registered afresh in each (registries are per test)."""

    @tool()
    async def echo(text: str) -> str:
        """Says it back."""
        return text

    return echo


def echo_agent(echo: Tool) -> Agent:
    return Agent("echoer", "Echoes", [echo])


async def settle(tasks: list[asyncio.Task[Any]], within: float) -> list[Any]:
    """Each task's result or exception; fails (instead of hanging) past ``within``."""
    _, pending = await asyncio.wait(tasks, timeout=within)
    for task in pending:
        task.cancel()
    assert not pending, f"{len(pending)} of {len(tasks)} handles still wait after {within} s"
    return [task.exception() or task.result() for task in tasks]


# -- closing ----------------------------------------------------------------------------


@pytest.mark.parametrize("moment", ["as the reader starts", "while the reader blocks"])
async def test_leaving_mailboxes_with_an_unresolved_handle_ends_and_fails_the_handle(
    redis_server: RedisServer, moment: str
) -> None:
    echo = echo_tool()
    mailboxes = Mailboxes(redis_server.url)
    handle = await mailboxes.put("nobody", Turn(echo, args=["hello"]))  # nobody serves it
    waiting = asyncio.create_task(handle.result())
    if moment == "as the reader starts":
        await asyncio.sleep(0)  # the reader task exists and has not run yet
    else:
        await eventually(lambda: mailboxes.replies.reads > 0)  # in its blocking read

    closing = asyncio.create_task(mailboxes.aclose())
    done, _ = await asyncio.wait({closing}, timeout=10)

    assert closing in done, "aclose() did not return while a handle was unresolved"
    (failure,) = await settle([waiting], within=5)
    assert isinstance(failure, MailboxClosedError)
    assert f"turn {handle.turn_uuid}" in str(failure)
    assert "closed before its outcome arrived" in str(failure)
    with pytest.raises(MailboxClosedError):
        await handle.outcome()  # asked again, after the close: the same answer at once


# -- trimmed outcomes and the producer's own limits -------------------------------------


async def run_one_by_one(mailboxes: Mailboxes, echo: Tool, count: int) -> list[TurnHandle]:
    """Put ``count`` turns one after the other, each finished before the next is put,
    without reading a reply: each outcome is then an entry of its own."""
    handles = []
    mailbox = mailboxes.keys("echoer").mailbox
    for n in range(count):
        handles.append(await mailboxes.put("echoer", Turn(echo, args=[f"v{n}"])))
        await eventually(lambda: _empty(mailboxes, mailbox))
    return handles


async def _empty(mailboxes: Mailboxes, mailbox: str) -> bool:
    return await mailboxes.client.xlen(mailbox) == 0


async def small_stream_nodes(server: RedisServer, mailboxes: Mailboxes) -> None:
    # ``MAXLEN ~`` trims whole stream nodes (100 entries by default): with one-entry
    # nodes, a small reply_maxlen trims as precisely as a large one does in real use.
    client: Any = mailboxes.client
    if isinstance(client, RedisCluster):  # on every node: a reply stream may be on any
        await client.config_set("stream-node-max-entries", 1, target_nodes=RedisCluster.ALL_NODES)
    else:
        await client.config_set("stream-node-max-entries", 1)


async def test_outcomes_trimmed_before_they_were_read_fail_their_handles_with_replies_lost(
    redis_server: RedisServer,
) -> None:
    echo = echo_tool()
    url = redis_server.url
    async with (
        Mailboxes(url, reply_maxlen=10, reply_check_interval=0.2) as producer,
        Mailboxes(url, reply_maxlen=10) as served,
        Serving() as serving,
    ):
        await small_stream_nodes(redis_server, producer)
        await serving.start(Worker(served, echo_agent(echo)))
        handles = await run_one_by_one(producer, echo, 40)

        found = await settle([asyncio.create_task(h.result()) for h in handles], within=20)

    lost = [f for f in found if isinstance(f, RepliesLostError)]
    kept = [f for f in found if isinstance(f, str)]
    assert len(lost) + len(kept) == 40, found
    assert 25 <= len(lost) <= 31  # only ~10 entries were kept
    assert kept == [f"v{n}" for n in range(40 - len(kept), 40)]  # the newest survive
    assert "was trimmed from the reply stream before it was read" in str(lost[0])
    assert "reply_maxlen" in str(lost[0])


@pytest.mark.single_server  # reads the client's one reply stream (a cluster has one per mailbox)
async def test_the_producers_reply_maxlen_and_reply_ttl_bound_its_own_reply_stream(
    redis_server: RedisServer,
) -> None:
    echo = echo_tool()
    url = redis_server.url
    async with (
        Mailboxes(url, reply_maxlen=10, reply_ttl=600) as producer,
        Mailboxes(url, reply_maxlen=100_000, reply_ttl=5) as served,  # the worker's own
        Serving() as serving,
    ):
        await small_stream_nodes(redis_server, producer)
        await serving.start(Worker(served, echo_agent(echo)))
        await run_one_by_one(producer, echo, 30)

        length = await producer.client.xlen(producer.replies.key)
        ttl = await producer.client.pttl(producer.replies.key)

    assert length <= 11
    assert 500_000 < ttl <= 600_000


@pytest.mark.single_server  # uses the client's one reply stream (a cluster has one per mailbox)
async def test_a_turn_put_without_reply_limits_gets_the_workers_own(
    redis_server: RedisServer,
) -> None:
    """An envelope from an older producer (no limits in it) still gets its reply."""
    echo = echo_tool()
    url = redis_server.url
    async with (
        Mailboxes(url, reply_ttl=600) as producer,
        Mailboxes(url, reply_ttl=7) as served,
        Serving() as serving,
    ):
        await serving.start(Worker(served, echo_agent(echo)))
        handle = TurnHandle(producer.replies, "echoer", "old-1")
        producer.replies.expect(handle)
        turn = dict(Turn(echo, args=["old"]).to_dict(), uuid="old-1")
        envelope = {"reply": producer.replies.key, "turn": turn}
        handle.message_id = await producer.client.xadd(
            producer.keys("echoer").mailbox, {"turn": json.dumps(envelope)}
        )

        async with asyncio.timeout(10):
            assert await handle.result() == "old"
        ttl = await producer.client.pttl(producer.replies.key)

    assert 0 < ttl <= 7_000


@pytest.mark.single_server  # uses the client's one reply stream (a cluster has one per mailbox)
async def test_malformed_reply_limits_fall_back_to_the_workers_own(
    redis_server: RedisServer,
) -> None:
    echo = echo_tool()
    url = redis_server.url
    async with (
        Mailboxes(url) as producer,
        Mailboxes(url, reply_ttl=7) as served,
        Serving() as serving,
    ):
        await serving.start(Worker(served, echo_agent(echo)))
        handle = TurnHandle(producer.replies, "echoer", "odd-1")
        producer.replies.expect(handle)
        turn = dict(Turn(echo, args=["odd"]).to_dict(), uuid="odd-1")
        envelope = {"reply": producer.replies.key, "turn": turn, "reply_maxlen": "lots"}
        envelope["reply_ttl_ms"] = -5
        handle.message_id = await producer.client.xadd(
            producer.keys("echoer").mailbox, {"turn": json.dumps(envelope)}
        )

        async with asyncio.timeout(10):
            assert await handle.result() == "odd"
        ttl = await producer.client.pttl(producer.replies.key)

    assert 0 < ttl <= 7_000


# -- a streaming turn re-run after its worker was killed --------------------------------


def spawn(url: str, name: str, logs: Path) -> subprocess.Popen[bytes]:
    with (logs / f"{name}.log").open("wb") as log:
        return subprocess.Popen(
            [sys.executable, str(HERE / "rerun_worker.py"), url, name],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


async def test_a_streaming_turn_re_run_after_a_kill_fails_the_stream_it_already_fed(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    @tool()
    async def count(n: int) -> AsyncIterator[str]:
        """The producer's view of the worker's tool (same name, same arguments)."""
        for index in range(n):
            yield str(index)

    url = redis_server.url
    first = spawn(url, "rerun-a", tmp_path)
    processes = [first]
    try:
        async with Mailboxes(url) as mailboxes:
            await eventually(lambda: _workers(mailboxes, 1), within=60)
            followed = await mailboxes.put("relay", Turn(count, args=[12]))
            unread = await mailboxes.put("relay", Turn(count, args=[12]))

            seen: list[str] = []
            values = followed.__aiter__()
            async with asyncio.timeout(30):
                while len(seen) < 5:
                    seen.append(await anext(values))
            # Both turns delivered to the first worker before it dies (it reads them
            # apart on a cluster, one slot at a time): each is then run again, as
            # its second delivery, by the worker that takes it over.
            await eventually(lambda: _delivered(mailboxes, 2), within=60)
            first.send_signal(signal.SIGKILL)  # mid-stream: five values out of twelve
            first.wait()
            processes.append(spawn(url, "rerun-b", tmp_path))  # takes the turns over

            async def read_on() -> None:
                async for value in values:
                    seen.append(value)

            with pytest.raises(TurnRerunError, match="was run again") as raised:
                await asyncio.wait_for(read_on(), 60)
            # The same bound as the takeover above: worker B runs both turns again, from
            # their start, after it takes them over from the dead worker.
            async with asyncio.timeout(60):
                followed_result = await followed.result()
                unread_result = await unread.result()
                outcome = await followed.outcome()
    finally:
        for process in processes[1:]:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    assert seen == [f"a1-{n}" for n in range(5)]  # never a value of the second run
    assert "5 values" in str(raised.value)
    rerun = [f"a2-{n}" for n in range(12)]
    assert followed_result == rerun  # the values of the run whose outcome is recorded
    assert unread_result == rerun
    assert (outcome.deliveries, outcome.values) == (2, 12)
    assert [value async for value in unread] == rerun  # nothing yielded before: afresh


async def _workers(mailboxes: Mailboxes, count: int) -> bool:
    return (await mailboxes.stats("relay")).workers == count


async def _delivered(mailboxes: Mailboxes, count: int) -> bool:
    return (await mailboxes.stats("relay")).pending == count


# -- Redis comes back empty -------------------------------------------------------------


@pytest.mark.single_server  # it stops and restarts its one server
async def test_handles_whose_turns_vanished_with_redis_fail_with_turn_lost(
    redis_server: RedisServer,
) -> None:
    echo = echo_tool()
    async with Mailboxes(redis_server.url, reply_check_interval=0.2) as mailboxes:
        handles = await mailboxes.put_many("nobody", [Turn(echo, args=[str(n)]) for n in range(20)])
        waiting = [asyncio.create_task(h.result()) for h in handles]
        await eventually(lambda: mailboxes.replies.reads > 0)

        redis_server.stop()  # no persistence: every turn is gone
        redis_server.start()

        found = await settle(waiting, within=20)

    assert all(isinstance(f, TurnLostError) for f in found), found
    assert f"turn {handles[0].turn_uuid}" in str(found[0])
    assert "no longer in the mailbox of agent 'nobody'" in str(found[0])


async def test_a_handle_whose_turn_is_still_queued_keeps_waiting_through_checks(
    redis_server: RedisServer,
) -> None:
    echo = echo_tool()
    async with (
        Mailboxes(redis_server.url, reply_check_interval=0.05) as mailboxes,
        Serving() as serving,
    ):
        handle = await mailboxes.put("echoer", Turn(echo, args=["later"]))
        waiting = asyncio.create_task(handle.result())
        await eventually(lambda: mailboxes.replies.checks >= 3)
        assert not waiting.done()  # three checks found the turn queued: it waits

        await serving.start(Worker(mailboxes, echo_agent(echo)))
        assert await settle([waiting], within=10) == ["later"]


async def test_a_reply_reader_that_meets_a_server_error_reads_again_and_its_handle_resolves(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The reader alone resolves the handles that wait on it: an error that is not a
    lost connection (here WRONGTYPE: the reply key made a string) must back off and
    read again, never end the reader and leave the handle waiting for good."""
    echo = echo_tool()
    async with Mailboxes(redis_server.url) as mailboxes, Serving() as serving:
        key = mailboxes.replies.key_for("echoer")
        await mailboxes.client.set(key, "not a stream")
        handle = await mailboxes.put("echoer", Turn(echo, args=["still here"]))
        waiting = asyncio.create_task(handle.result())
        # A read failed, and the reader read again (a dead reader reads once).
        await eventually(lambda: mailboxes.replies.reads >= 2)
        assert "reading replies failed (ResponseError:" in caplog.text
        assert "WRONGTYPE" in caplog.text

        await mailboxes.client.delete(key)
        await serving.start(Worker(mailboxes, echo_agent(echo)))
        assert await settle([waiting], within=10) == ["still here"]
    assert "reading replies works again" in caplog.text


# -- what the reader hands to a handle (no Redis: records given directly) ---------------


async def test_result_takes_the_values_of_the_run_that_recorded_the_outcome() -> None:
    """Two runs write values at once (the first worker was cut off, not dead); the
    outcome names the run that won, and only its values make the result."""
    async with Mailboxes("redis://localhost:1/0") as mailboxes:
        replies = mailboxes.replies
        handle = TurnHandle(replies, "relay", "u-1")
        replies.expect(handle)
        outcome = Outcome("u-1", "relay", StopReason.COMPLETED, values=2, streaming=True)
        records = [
            ["u-1", "v", 0, 1, "a1-0"],
            ["u-1", "v", 0, 2, "a2-0"],
            ["u-1", "v", 1, 1, "a1-1"],
            ["u-1", "v", 1, 2, "a2-1"],
            ["u-1", "v", 2, 2, "a2-2"],
            ["u-1", "o", 0, 1, dict(outcome.to_dict(), deliveries=1)],
        ]
        replies._deliver(json.dumps(records))

        assert await handle.result() == ["a1-0", "a1-1"]
        assert [value async for value in handle] == ["a1-0", "a1-1"]


async def test_malformed_reply_records_are_skipped_and_the_handle_still_resolves(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with Mailboxes("redis://localhost:1/0") as mailboxes:
        replies = mailboxes.replies
        handle = TurnHandle(replies, "relay", "u-1")
        replies.expect(handle)
        outcome = Outcome("u-1", "relay", StopReason.COMPLETED, output="fine")
        junk: list[Any] = [
            {"u-1": "v"},  # not a list
            ["u-1", "v", "0", 1, "x"],  # index not a number
            ["u-1", "o", 0, 1, "not an outcome"],
            ["u-1", "x", 0, 1, {}],  # unknown kind
            ["u-1", "v", 0],  # too short
        ]
        replies._deliver(json.dumps(junk))
        replies._deliver('{"not": "a list"}')
        assert not handle.done
        replies._deliver(json.dumps([["u-1", "o", 0, 1, outcome.to_dict()]]))

        assert await handle.result() == "fine"
    assert caplog.text.count("a malformed reply record") == 6


# -- no worker --------------------------------------------------------------------------


async def test_a_producer_waiting_on_a_mailbox_no_worker_serves_says_so_then_at_intervals(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nobody heartbeats on the mailbox: the reader's checks say so in one line (at the
    second check in a row, not the first: a worker may be starting), then once per
    interval — not once per check — and the handle goes on waiting until a worker
    comes and serves it."""
    monkeypatch.setattr(_outage, "REMIND_EVERY", 3600.0)
    caplog.set_level(logging.WARNING, logger="pygents.redis")
    echo = echo_tool()

    def lines() -> list[str]:
        return [
            r.getMessage() for r in caplog.records if "no worker has heartbeated" in r.getMessage()
        ]

    async with (
        Mailboxes(redis_server.url, reply_check_interval=0.05) as mailboxes,
        Serving() as serving,
    ):
        handles = await mailboxes.put_many("echoer", [Turn(echo, args=["late"]) for _ in range(2)])
        waiting = [asyncio.create_task(h.result()) for h in handles]
        await eventually(lambda: mailboxes.replies.checks >= 4, within=30)
        assert not any(w.done() for w in waiting)  # it still waits
        (said,) = lines()  # four checks, one line
        mailbox = mailboxes.keys("echoer").mailbox
        assert f"on mailbox {mailbox} (agent 'echoer')" in said
        assert "this client's 2 waiting turns stay queued" in said

        monkeypatch.setattr(_outage, "REMIND_EVERY", 0.0)  # every check may say it now
        await eventually(lambda: len(lines()) >= 2, within=30)

        gate = asyncio.Event()

        @tool()
        async def held(text: str) -> str:
            """Waits for the test."""
            await gate.wait()
            return text

        await serving.start(Worker(mailboxes, Agent("echoer", "Echoes", [echo, held])))
        assert await settle(waiting, within=10) == ["late", "late"]
        heard = len(lines())
        handle = await mailboxes.put("echoer", Turn(held, args=["served"]))
        served = asyncio.create_task(handle.result())
        checks = mailboxes.replies.checks
        # Checks while a live worker runs the turn: each would say it, were it unserved.
        await eventually(lambda: mailboxes.replies.checks >= checks + 3, within=30)
        gate.set()
        assert await settle([served], within=10) == ["served"]
    assert len(lines()) == heard
