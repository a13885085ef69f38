"""Putting turns on mailboxes and getting their results back, through a real Redis."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from redis_helpers import Serving, eventually

from pygents import Agent, AgentRegistry, StopReason, Turn, UnregisteredToolError, tool
from pygents.redis import (
    DeadLetter,
    Mailboxes,
    MailboxFullError,
    Outcome,
    RedisServer,
    RemoteTurnError,
    RepliesLostError,
    TurnHandle,
    Worker,
)


def make_agent(name: str = "writer") -> Agent:
    @tool()
    async def shout(text: str) -> str:
        """Shouts."""
        return text.upper()

    @tool()
    async def spell(word: str) -> AsyncIterator[str]:
        """Spells a word, one letter at a time."""
        for letter in word:
            yield letter

    @tool()
    async def fail(why: str) -> str:
        """Always fails."""
        raise ValueError(why)

    @tool()
    async def dawdle() -> str:
        """Takes longer than its turn allows."""
        await asyncio.Event().wait()
        return "never"

    return Agent(name, "Writes things", [shout, spell, fail, dawdle])


async def test_a_turn_put_in_one_place_is_run_by_a_worker_and_its_result_comes_back(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    agent = make_agent()
    await serving.start(Worker(mailboxes, agent))

    handle = await mailboxes.put("writer", Turn("shout", kwargs={"text": "hello"}))

    assert await handle.result() == "HELLO"
    outcome = await handle.outcome()
    assert outcome.stop_reason is StopReason.COMPLETED
    assert outcome.deliveries == 1
    assert outcome.turn_uuid == handle.turn_uuid
    assert outcome.worker == serving.runs[0][0].name


async def test_a_streaming_turn_sends_its_values_in_order_then_ends(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    make_agent()
    await serving.start(Worker(mailboxes, AgentRegistry.get("writer")))

    handle = await mailboxes.put("writer", Turn("spell", args=["pygents"]))

    assert [letter async for letter in handle] == list("pygents")
    assert await handle.result() == list("pygents")
    assert (await handle.outcome()).values == 7


async def test_a_failing_turn_is_an_outcome_not_a_redelivery(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    await serving.start(Worker(mailboxes, make_agent()))

    failed = await mailboxes.put("writer", Turn("fail", args=["no ink"]))
    late = await mailboxes.put("writer", Turn("dawdle", timeout=0.05))

    with pytest.raises(RemoteTurnError, match=r"ended with error: ValueError: no ink") as info:
        await failed.result()
    assert info.value.outcome.error_type == "ValueError"
    assert info.value.outcome.deliveries == 1
    timed_out = await late.outcome()
    assert timed_out.stop_reason is StopReason.TIMEOUT
    assert timed_out.error_type == "TurnTimeoutError"
    stats = await mailboxes.stats("writer")
    assert (stats.depth, stats.pending, stats.dead_letters) == (0, 0, 0)


async def test_put_refuses_a_tool_the_agents_workers_do_not_have(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    @tool()
    async def unknown_here() -> None:
        """Not given to the agent."""

    before = await mailboxes.put("writer", Turn(unknown_here), reply=False)  # no worker yet
    assert before.message_id
    await serving.start(Worker(mailboxes, make_agent()))

    with pytest.raises(UnregisteredToolError, match=r"no tool 'unknown_here'.*register the tool"):
        await mailboxes.put("writer", Turn(unknown_here))
    dead = await eventually_dead(mailboxes, "writer", 1)
    assert "unknown tool" in dead[0].reason


async def eventually_dead(mailboxes: Mailboxes, agent: str, count: int) -> list[DeadLetter]:
    await eventually(lambda: _dead_count(mailboxes, agent, count))
    return await mailboxes.dead_letters(agent)


async def _dead_count(mailboxes: Mailboxes, agent: str, count: int) -> bool:
    return (await mailboxes.stats(agent)).dead_letters >= count


async def test_a_full_mailbox_refuses_more_turns_and_trims_nothing(
    redis_server: RedisServer, serving: Serving
) -> None:
    make_agent()
    async with Mailboxes(redis_server.url, maxlen=3) as small:
        handles = await small.put_many("writer", [Turn("shout", args=[str(i)]) for i in range(2)])
        with pytest.raises(MailboxFullError, match=r"holds 2 unfinished turns.*at most 3"):
            await small.put_many("writer", [Turn("shout", args=["x"]), Turn("shout", args=["y"])])
        third = await small.put("writer", Turn("shout", args=["2"]))
        with pytest.raises(MailboxFullError):
            await small.put("writer", Turn("shout", args=["3"]))
        assert (await small.stats("writer")).depth == 3

        worker = await serving.start(Worker(small, AgentRegistry.get("writer")))
        assert [await h.result() for h in [*handles, third]] == ["0", "1", "2"]
        assert await (await small.put("writer", Turn("shout", args=["ok"]))).result() == "OK"
        await serving.stop(worker)


async def test_one_worker_serves_several_agents(mailboxes: Mailboxes, serving: Serving) -> None:
    @tool()
    async def double(n: int) -> int:
        """Doubles."""
        return 2 * n

    writer = make_agent()
    maths = Agent("maths", "Counts", [double])
    worker = await serving.start(Worker(mailboxes, [writer, maths]))

    shouted = await mailboxes.put("writer", Turn("shout", args=["a"]))
    doubled = await mailboxes.put("maths", Turn(double, args=[21]))

    assert (await shouted.result(), await doubled.result()) == ("A", 42)
    assert {(await h.outcome()).worker for h in (shouted, doubled)} == {worker.name}
    assert sorted(await mailboxes.agents()) == ["maths", "writer"]


async def test_values_and_outputs_json_cannot_carry_become_clear_errors(
    mailboxes: Mailboxes, serving: Serving
) -> None:
    @tool()
    async def odd_output() -> object:
        """Returns something JSON cannot hold."""
        return {1, 2}

    @tool()
    async def odd_stream() -> AsyncIterator[object]:
        """Streams a fine value, then one JSON cannot hold."""
        yield "fine"
        yield object()

    await serving.start(Worker(mailboxes, Agent("odd", "Odd", [odd_output, odd_stream])))

    returned = await (await mailboxes.put("odd", Turn(odd_output))).outcome()
    assert (returned.stop_reason, returned.error_type) == (StopReason.ERROR, "TypeError")
    assert "returned a set, which JSON cannot carry" in (returned.error or "")
    streamed = await mailboxes.put("odd", Turn(odd_stream))
    got: list[object] = []

    async def read_all() -> None:
        async for value in streamed:
            got.append(value)

    with pytest.raises(RemoteTurnError, match=r"value #1 .* is a object, which JSON cannot"):
        await read_all()
    assert got == ["fine"]
    assert (await streamed.outcome()).values == 1


@pytest.mark.single_server  # reads the client's one reply stream (a cluster has one per mailbox)
async def test_the_reply_stream_is_bounded_and_expires(redis_server: RedisServer) -> None:
    make_agent()
    async with (
        Mailboxes(redis_server.url, reply_ttl=120, reply_maxlen=500) as mailboxes,
        Serving() as serving,
    ):
        await serving.start(Worker(mailboxes, AgentRegistry.get("writer")))
        assert await (await mailboxes.put("writer", Turn("shout", args=["x"]))).result() == "X"
        ttl = await mailboxes.client.pttl(mailboxes.replies.key)
        assert 0 < ttl <= 120_000
        info = await mailboxes.client.xinfo_stream(mailboxes.replies.key)
        assert info["length"] <= 500


def test_bad_settings_are_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match=r"maxlen=\.\.\.\) must be positive"):
        Mailboxes("redis://localhost:1/0", maxlen=0)
    with pytest.raises(TypeError, match=r"url=\.\.\.\) takes a redis:// URL"):
        Mailboxes(6379)  # type: ignore[arg-type]
    mailboxes = Mailboxes("redis://localhost:1/0")
    with pytest.raises(TypeError, match=r"takes an Agent or a non-empty list"):
        Worker(mailboxes, [])
    with pytest.raises(ValueError, match=r"max_deliveries=\.\.\.\) must be at least 1"):
        Worker(mailboxes, make_agent(), max_deliveries=0)


async def test_values_trimmed_before_they_were_read_are_reported_not_skipped() -> None:
    """Encoding only (no Redis): the reader hands records to handles by index."""
    async with Mailboxes("redis://localhost:1/0") as mailboxes:
        replies = mailboxes.replies
        handle = TurnHandle(replies, "writer", "u-1")
        replies.expect(handle)
        outcome = Outcome("u-1", "writer", StopReason.COMPLETED, values=3, streaming=True)
        batch = [["u-1", "v", 0, 1, "a"], ["u-1", "v", 0, 2, "a"], ["u-1", "v", 2, 2, "c"]]
        replies._deliver(json.dumps([*batch, ["u-1", "o", 0, 2, outcome.to_dict()]]))

        seen: list[str] = []

        async def read_all() -> None:
            async for value in handle:
                seen.append(value)

        with pytest.raises(RepliesLostError, match=r"values 1\.\.1 of turn u-1 were trimmed"):
            await read_all()
        assert seen == ["a"]  # index 0 once, though two deliveries sent it
        with pytest.raises(RepliesLostError):
            await handle.result()
        assert (await handle.outcome()).values == 3
