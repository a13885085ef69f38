"""At least once: redelivery after a lost worker, dead letters, bad entries, outages."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest
from redis_helpers import Serving, eventually

from pygents import Agent, AgentRegistry, StopReason, Turn, tool
from pygents.redis import (
    Delivery,
    Mailboxes,
    MailboxUnavailableError,
    RedisServer,
    RemoteTurnError,
    Worker,
    _outage,
    current_delivery,
)
from pygents.redis._server.redis_server import free_port


class Gate:
    """A tool that waits for the test: it records each delivery and blocks until told."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery | None] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    def agent(self, name: str = "clerk") -> Agent:
        gate = self

        @tool()
        async def wait_for_gate(job: str) -> str:
            """Blocks until the test opens the gate."""
            gate.deliveries.append(current_delivery())
            gate.started.set()
            await gate.release.wait()
            return f"done {job}"

        @tool()
        async def echo(text: str) -> str:
            """Returns its argument."""
            return text

        return Agent(name, "Does paperwork", [wait_for_gate, echo])


async def test_a_turn_left_by_a_stopped_worker_is_taken_over_and_run_again(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    gate = Gate()
    agent = gate.agent()
    first = await serving.start(Worker(mailboxes, agent, visibility_timeout=0.2, stop_grace=0))
    handle = await mailboxes.put("clerk", Turn("wait_for_gate", args=["forms"]))
    await gate.started.wait()
    await serving.stop(first)  # the turn was running: cancelled, not acknowledged
    assert (await mailboxes.stats("clerk")).pending == 1

    gate.release.set()
    second = await serving.start(Worker(mailboxes, agent, visibility_timeout=0.2))

    assert await handle.result() == "done forms"
    outcome = await handle.outcome()
    assert (outcome.deliveries, outcome.worker) == (2, second.name)
    assert second.counters.claimed == 1
    # The tool saw the same idempotency key twice, and which attempt it was.
    assert [(d.turn_uuid, d.attempt) for d in gate.deliveries if d] == [
        (handle.turn_uuid, 1),
        (handle.turn_uuid, 2),
    ]
    assert [d.worker for d in gate.deliveries if d] == [first.name, second.name]
    stats = await mailboxes.stats("clerk")
    assert (stats.depth, stats.pending, stats.dead_letters) == (0, 0, 0)


async def test_a_turn_delivered_too_often_goes_to_the_dead_letters_with_its_last_error(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    gate = Gate()
    agent = gate.agent()
    first = await serving.start(Worker(mailboxes, agent, visibility_timeout=0.2, stop_grace=0))
    handle = await mailboxes.put("clerk", Turn("wait_for_gate", args=["poison"]))
    await gate.started.wait()
    await serving.stop(first)

    second = await serving.start(Worker(mailboxes, agent, visibility_timeout=0.2, max_deliveries=1))

    with pytest.raises(RemoteTurnError, match=r"dead-lettered: delivered 2 times"):
        await handle.result()
    (dead,) = await mailboxes.dead_letters("clerk")
    assert dead.message_id == handle.message_id
    assert dead.deliveries == 2
    assert "max_deliveries=1" in dead.reason
    assert dead.error == f"worker {first.name} stopped while the turn ran"
    assert dead.worker == second.name
    assert json.loads(dead.payload)["turn"]["uuid"] == handle.turn_uuid  # replayable
    assert len(gate.deliveries) == 1  # never run again
    assert second.counters.dead_lettered == 1
    stats = await mailboxes.stats("clerk")
    assert (stats.depth, stats.pending, stats.dead_letters) == (0, 0, 1)


async def test_malformed_entries_are_dead_lettered_with_the_reason_and_the_worker_goes_on(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    @tool()
    async def elsewhere() -> None:
        """Registered in the worker's process but not given to the agent."""

    Gate().agent()
    good = Turn("echo", args=["fine"]).to_dict()
    unknown = dict(good, uuid="u-unknown", tool_name="no_such_tool")
    foreign = dict(good, uuid="u-foreign", tool_name="elsewhere")
    planted = {
        "not JSON": {"turn": "{this is not json"},
        "wrong shape: expected": {"turn": "[1, 2, 3]"},
        "wrong shape: ValueError": {
            "turn": json.dumps({"reply": None, "turn": {"uuid": "u-short", "tool_name": "echo"}})
        },
        "no 'turn' field": {"payload": "x"},
        "unknown tool": {"turn": json.dumps({"reply": None, "turn": unknown})},
        "has no tool 'elsewhere'": {"turn": json.dumps({"reply": None, "turn": foreign})},
    }
    keys = mailboxes.keys("clerk")
    ids = {
        reason: await mailboxes.client.xadd(keys.mailbox, fields)
        for reason, fields in planted.items()
    }
    after = await mailboxes.put("clerk", Turn("echo", args=["still here"]))
    await serving.start(Worker(mailboxes, AgentRegistry.get("clerk")))

    assert await after.result() == "still here"
    await eventually(lambda: _settled(mailboxes))
    dead = {d.message_id: d for d in await mailboxes.dead_letters("clerk")}
    assert set(dead) == set(ids.values())
    for reason, message_id in ids.items():
        assert reason in dead[message_id].reason, dead[message_id].reason
        assert dead[message_id].payload == planted[reason].get("turn", "")
        assert dead[message_id].deliveries == 1


async def _settled(mailboxes: Mailboxes) -> bool:
    return (await mailboxes.stats("clerk")).depth == 0


async def test_a_caller_waiting_on_a_dead_lettered_turn_is_told_why(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    @tool()
    async def only_here() -> None:
        """Known to the producer, not to the worker's agent."""

    handle = await mailboxes.put("clerk", Turn(only_here))  # no worker announced tools yet
    await serving.start(Worker(mailboxes, Gate().agent()))

    outcome = await handle.outcome()
    assert outcome.dead_letter
    assert outcome.stop_reason is None
    assert "unknown tool" in (outcome.error or "")
    with pytest.raises(RemoteTurnError, match="dead-lettered: unknown tool"):
        await handle.result()


@pytest.mark.single_server  # it stops and restarts its one server
async def test_put_raises_a_clear_error_while_redis_is_away_and_workers_come_back(
    redis_server: RedisServer, serving: Serving
) -> None:
    agent = Gate().agent()
    async with Mailboxes(redis_server.url) as mailboxes:
        worker = await serving.start(
            Worker(mailboxes, agent, reconnect_delay=0.02, max_reconnect_delay=0.32)
        )
        assert await (await mailboxes.put("clerk", Turn("echo", args=["before"]))).result()

        redis_server.stop()
        stopped = time.monotonic()
        with pytest.raises(
            MailboxUnavailableError,
            match=rf"cannot reach Redis at redis://127\.0\.0\.1:{redis_server.port}/0 to put "
            r"a turn for agent 'clerk' .*check that Redis is running",
        ):
            await mailboxes.put("clerk", Turn("echo", args=["lost"]))
        # Backoff doubles up to the cap: 0.02, 0.04, 0.08, 0.16, then 0.32. Reaching the
        # cap takes four sleeps (0.30 s) in one loop, and only a handful of attempts in
        # all: a busy loop would have made thousands by then.
        await eventually(lambda: worker.counters.last_backoff >= 0.32)
        assert time.monotonic() - stopped >= 0.30
        assert 5 <= worker.counters.connection_failures <= 20
        assert not worker.ready

        redis_server.start()  # empty: no stream, no group
        await eventually(lambda: worker.ready)
        handle = await mailboxes.put("clerk", Turn("echo", args=["after"]))
        assert await handle.result() == "after"
        assert (await handle.outcome()).stop_reason is StopReason.COMPLETED
        await serving.stop(worker)


@pytest.mark.parametrize("scheme", ["redis", "redis+cluster"])
async def test_a_worker_given_a_wrong_url_says_where_once_then_at_intervals_and_keeps_trying(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    """Nothing listens at the URL: the worker's set-up fails in every loop, for as long
    as it runs. Its log says so in one line naming the URL (not its password) and the
    reason, then once per interval (shortened here), not once per retry; the worker
    neither dies (on a cluster URL redis-py raises RedisClusterException, not a
    ConnectionError) nor goes quiet."""
    monkeypatch.setattr(_outage, "REMIND_EVERY", 0.5)
    caplog.set_level(logging.WARNING, logger="pygents.redis")
    port = free_port()
    url = f"{scheme}://someone:s3cret@127.0.0.1:{port}" + ("/0" if scheme == "redis" else "")
    async with Mailboxes(url) as mailboxes:
        worker = Worker(mailboxes, Gate().agent(), reconnect_delay=0.001, max_reconnect_delay=0.01)
        run = asyncio.create_task(worker.run())
        try:

            def reminded_twice_or_died() -> bool:
                said = [r.getMessage() for r in caplog.records]
                return run.done() or sum("still cannot use Redis" in m for m in said) >= 2

            await eventually(reminded_twice_or_died, within=30)
            assert not run.done(), f"the worker died: {run.exception()!r}"
            failures = worker.counters.connection_failures
        finally:
            worker.stop()
            await asyncio.gather(run, return_exceptions=True)
    said = [r.getMessage() for r in caplog.records if r.name == "pygents.redis"]
    assert not any("s3cret" in m for m in said)
    where = f"{scheme}://127.0.0.1:{port}"
    first = [m for m in said if f"cannot use Redis at {where}" in m and "still" not in m]
    assert len(first) == 1, said
    assert "failed (" in first[0]
    assert "Error 111" in first[0] or "refused" in first[0], first[0]
    reminders = [m for m in said if f"still cannot use Redis at {where}" in m]
    assert 2 <= len(reminders) < failures // 3, (len(reminders), failures)
    # No per-loop line besides: the worker's one voice speaks for its five loops.
    assert not any("retrying with backoff" in m and "cannot use" not in m for m in said)


@pytest.mark.single_server  # it stops and restarts its one server
async def test_a_worker_says_once_that_redis_went_away_and_once_that_it_works_again(
    redis_server: RedisServer, serving: Serving, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="pygents.redis")
    async with Mailboxes(redis_server.url) as mailboxes:
        worker = await serving.start(
            Worker(
                mailboxes,
                Gate().agent(),
                visibility_timeout=2.0,  # the keeper retries every 0.5 s
                reconnect_delay=0.01,
                max_reconnect_delay=0.05,
            )
        )
        redis_server.stop()
        await eventually(lambda: worker.counters.connection_failures >= 10)
        redis_server.start()
        await eventually(lambda: any("again" in r.getMessage() for r in caplog.records))
        handle = await mailboxes.put("clerk", Turn("echo", args=["after"]))
        assert await handle.result() == "after"
        await serving.stop(worker)
    where = f"redis://127.0.0.1:{redis_server.port}/0"
    said = [r.getMessage() for r in caplog.records if r.name == "pygents.redis"]
    went = [m for m in said if f"{worker.name} cannot use Redis at {where}" in m]
    back = [m for m in said if f"{worker.name} uses Redis at {where} again" in m]
    assert (len(went), len(back)) == (1, 1), said  # ten failures and more, five loops
    assert "failures" in back[0]
