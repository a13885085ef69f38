"""Putting turns on mailboxes and getting their results back, through a real Redis."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis_helpers import Serving, eventually

from pygents import Agent, AgentRegistry, StopReason, Turn, UnregisteredToolError, tool
from pygents.redis import (
    DeadLetter,
    Mailboxes,
    MailboxFullError,
    RedisServer,
    RemoteTurnError,
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
