"""Behaviour under stress (SPEC §1.8): early exits, cancellation, errors, load, locks."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import pytest
from core_helpers import make_echo

from pygents import (
    Agent,
    AgentRegistry,
    ContextItem,
    ContextQueue,
    SafeExecutionError,
    StopReason,
    Turn,
    TurnHook,
    current_scope,
    hook,
    tool,
)
from stuck_tools import blocking_tool


async def values(agent: Agent) -> list[Any]:
    return [value async for _, value in agent.run()]


async def invite_interleaving() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


@dataclass
class Completions:
    """Records every ``ON_COMPLETE`` of an agent's turns."""

    seen: list[tuple[Turn, StopReason]]

    def of(self, turn: Turn) -> list[StopReason]:
        return [reason for t, reason in self.seen if t is turn]


def record_completions(agent: Agent) -> Completions:
    record = Completions([])

    @agent.on_complete
    async def completed(turn: Turn, reason: StopReason) -> None:
        record.seen.append((turn, reason))

    return record


async def assert_runs_again(agent: Agent, echo: Any) -> None:
    """The agent is idle and a fresh run works."""
    assert not agent.is_running
    assert agent.current_turn is None
    await agent.put(Turn(echo, kwargs={"x": "again"}))
    assert (await values(agent))[-1] == "echo:again"
    assert not agent.is_running


# -- (a) a consumer that leaves run() early -----------------------------------------------


async def test_breaking_out_of_run_mid_stream_cancels_the_streaming_turn() -> None:
    closed: list[bool] = []
    echo = make_echo()

    @tool()
    async def numbers() -> AsyncIterator[int]:
        try:
            for i in range(100):
                yield i
        finally:
            closed.append(True)

    agent = Agent("a", "", [numbers, echo])
    completions = record_completions(agent)
    streaming = Turn(numbers)
    await agent.put(streaming)
    later = Turn(echo, kwargs={"x": "later"})
    await agent.put(later)

    received = []
    async with aclosing(agent.run()) as stream:
        async for _, value in stream:
            received.append(value)
            if value == 2:
                break

    assert received == [0, 1, 2]
    assert streaming.stop_reason is StopReason.CANCELLED
    assert completions.of(streaming) == [StopReason.CANCELLED]
    assert len(completions.seen) == 1
    assert closed == [True]  # the tool's generator was closed
    assert not streaming.is_running
    assert not agent.is_running
    assert current_scope() is None
    assert agent.turns == [later]  # the run never took it
    await assert_runs_again(agent, echo)
    assert completions.of(later) == [StopReason.COMPLETED]


async def test_breaking_out_after_a_coroutine_turns_value_leaves_it_completed() -> None:
    echo = make_echo()
    agent = Agent("a", "", [echo])
    completions = record_completions(agent)
    first = Turn(echo, kwargs={"x": "1"})
    await agent.put(first)
    await agent.put(Turn(echo, kwargs={"x": "2"}))

    async with aclosing(agent.run()) as stream:
        async for _, value in stream:
            assert value == "echo:1"
            break

    assert first.stop_reason is StopReason.COMPLETED
    assert completions.seen == [(first, StopReason.COMPLETED)]
    assert not agent.is_running
    assert current_scope() is None
    await assert_runs_again(agent, echo)


# -- (b) a cancelled task -----------------------------------------------------------------


@pytest.mark.parametrize("where", ["coroutine tool", "streaming tool", "consumer body"])
async def test_cancelling_the_task_that_runs_run(where: str) -> None:
    reached, never = asyncio.Event(), asyncio.Event()
    scope_after_cancel: list[object] = []
    echo = make_echo()
    blocking = blocking_tool(reached)

    @tool()
    async def streaming() -> AsyncIterator[str]:
        yield "first"
        if where == "streaming tool":
            reached.set()
            await never.wait()
        yield "second"

    agent = Agent("a", "", [blocking, streaming, echo])
    completions = record_completions(agent)
    turn = Turn(blocking) if where == "coroutine tool" else Turn(streaming)
    await agent.put(turn)

    async def consume() -> None:
        try:
            async with aclosing(agent.run()) as stream:
                async for _ in stream:
                    if where == "consumer body":
                        reached.set()
                        await never.wait()
        except asyncio.CancelledError:
            scope_after_cancel.append(current_scope())
            raise

    task = asyncio.create_task(consume())
    await reached.wait()
    assert agent.is_running
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert turn.stop_reason is StopReason.CANCELLED
    assert completions.seen == [(turn, StopReason.CANCELLED)]
    assert not turn.is_running
    assert scope_after_cancel == [None]
    await assert_runs_again(agent, echo)


async def test_a_run_left_by_break_without_aclosing_lets_the_next_run_start_at_once() -> None:
    echo = make_echo()

    @tool()
    async def numbers() -> AsyncIterator[int]:
        for i in range(100):
            yield i

    agent = Agent("a", "", [numbers, echo])
    completions = record_completions(agent)
    streaming = Turn(numbers)
    later = Turn(echo, kwargs={"x": "later"})
    await agent.put(streaming)
    await agent.put(later)

    async for _, value in agent.run():  # no aclosing(): the generator is just dropped
        assert value == 0
        break

    # The next run waits for the event loop to close the dropped one, then runs.
    assert await values(agent) == ["echo:later"]
    assert streaming.stop_reason is StopReason.CANCELLED
    assert completions.seen == [
        (streaming, StopReason.CANCELLED),  # the abandoned turn ended first
        (later, StopReason.COMPLETED),
    ]
    assert not agent.is_running


async def test_a_run_still_held_by_its_consumer_refuses_a_second_one_and_says_how() -> None:
    echo = make_echo()
    agent = Agent("a", "", [echo])
    await agent.put(Turn(echo, kwargs={"x": "1"}))
    await agent.put(Turn(echo, kwargs={"x": "2"}))

    first = agent.run()
    assert await anext(first) is not None  # suspended, but still held here
    with pytest.raises(SafeExecutionError, match=r"already running.*aclosing\(agent\.run\(\)\)"):
        await anext(agent.run())

    assert [value async for _, value in first] == ["echo:2"]  # the first run carries on
    assert not agent.is_running


async def test_cancelling_a_task_that_iterates_without_aclosing_still_frees_the_agent() -> None:
    reached = asyncio.Event()
    echo = make_echo()
    blocking = blocking_tool(reached)

    agent = Agent("a", "", [blocking, echo])
    completions = record_completions(agent)
    turn = Turn(blocking)
    await agent.put(turn)

    task = asyncio.create_task(values(agent))
    await reached.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert turn.stop_reason is StopReason.CANCELLED
    assert completions.seen == [(turn, StopReason.CANCELLED)]
    await assert_runs_again(agent, echo)


# -- (c) a tool that raises while streaming -----------------------------------------------


async def test_a_tool_raising_mid_stream_ends_its_turn_in_error() -> None:
    echo = make_echo()

    @tool()
    async def flaky() -> AsyncIterator[int]:
        yield 1
        raise RuntimeError("stream broke")

    agent = Agent("a", "", [flaky, echo])
    completions = record_completions(agent)
    turn = Turn(flaky)
    await agent.put(turn)

    received: list[int] = []

    async def consume() -> None:
        async for _, value in agent.run():
            received.append(value)

    with pytest.raises(RuntimeError, match="stream broke"):
        await consume()

    assert received == [1]
    assert turn.stop_reason is StopReason.ERROR
    assert turn.output == [1]
    assert completions.seen == [(turn, StopReason.ERROR)]
    assert not turn.is_running
    assert current_scope() is None
    await assert_runs_again(agent, echo)


# -- (d) hundreds of agents sending to each other -----------------------------------------

AGENTS = 300
HOPS = 3
STARTING_TURNS = 2


async def test_hundreds_of_agents_sending_turns_lose_none_and_run_none_twice() -> None:
    created: set[str] = set()
    executed: list[str] = []
    invocations = Counter[int]()
    completed = Counter[str]()

    def name(i: int) -> str:
        return f"agent-{i}"

    @tool()
    async def hop(at: int, hops_left: int) -> int:
        invocations[at] += 1
        await asyncio.sleep(0)
        if hops_left:
            target = (at * 7 + 1) % AGENTS
            follow_up = Turn(hop, kwargs={"at": target, "hops_left": hops_left - 1})
            created.add(follow_up.uuid)
            await AgentRegistry.get(name(at)).send(name(target), follow_up)
        await asyncio.sleep(0)
        return at

    @hook(TurnHook.ON_COMPLETE)
    async def count_completion(turn: Turn, reason: StopReason) -> None:
        assert reason is StopReason.COMPLETED
        completed[turn.uuid] += 1

    agents = [Agent(name(i), "", [hop]) for i in range(AGENTS)]
    for i, agent in enumerate(agents):
        for _ in range(STARTING_TURNS):
            turn = Turn(hop, kwargs={"at": i, "hops_left": HOPS})
            created.add(turn.uuid)
            await agent.put(turn)

    async def drain(agent: Agent) -> None:
        async for turn, at in agent.run():
            assert agent.name == name(at)  # it ran on the agent it was sent to
            executed.append(turn.uuid)

    passes = 0
    while any(agent.turns for agent in agents):
        passes += 1
        assert passes <= HOPS + 2, "queues did not empty within the bounded number of hops"
        await asyncio.gather(*(drain(agent) for agent in agents))

    expected = AGENTS * STARTING_TURNS * (HOPS + 1)
    assert len(created) == expected
    assert len(executed) == expected
    assert set(executed) == created  # none lost
    assert Counter(executed).most_common(1)[0][1] == 1  # none run twice
    assert set(completed) == created
    assert set(completed.values()) == {1}  # ON_COMPLETE exactly once per turn
    assert invocations.total() == expected
    assert not any(agent.is_running for agent in agents)


# -- (e) lock=True serializes a tool across agents ----------------------------------------


@dataclass
class Gauge:
    current: int = 0
    peak: int = 0
    calls: int = 0

    def enter(self) -> None:
        self.current += 1
        self.calls += 1
        self.peak = max(self.peak, self.current)

    def leave(self) -> None:
        self.current -= 1


LOCK_AGENTS = 40
TURNS_PER_TOOL = 3


@pytest.mark.parametrize("streaming", [False, True], ids=["coroutine", "streaming"])
async def test_a_locked_tool_never_overlaps_while_its_unlocked_twin_does(
    streaming: bool,
) -> None:
    gauges = {True: Gauge(), False: Gauge()}

    def make(locked: bool) -> Any:
        gauge = gauges[locked]
        if streaming:

            async def work(i: int) -> AsyncIterator[int]:
                gauge.enter()
                try:
                    for step in range(3):
                        await invite_interleaving()
                        yield i * 10 + step
                finally:
                    gauge.leave()

        else:

            async def work(i: int) -> int:  # type: ignore[misc]
                gauge.enter()
                try:
                    await invite_interleaving()
                    return i
                finally:
                    gauge.leave()

        work.__name__ = "locked_work" if locked else "free_work"
        return tool(lock=locked)(work)

    locked, free = make(True), make(False)
    agents = [Agent(f"agent-{n}", "", [locked, free]) for n in range(LOCK_AGENTS)]
    for agent in agents:
        # Free turns first: alternating would let the lock queue the agents up in a
        # convoy where no two of them ever reach the free tool at the same moment.
        for twin in (free, locked):
            for i in range(TURNS_PER_TOOL):
                await agent.put(Turn(twin, kwargs={"i": i}))

    results = await asyncio.gather(*(values(agent) for agent in agents))

    per_turn = 3 if streaming else 1
    assert all(len(r) == 2 * TURNS_PER_TOOL * per_turn for r in results)
    assert gauges[True].calls == gauges[False].calls == LOCK_AGENTS * TURNS_PER_TOOL
    assert gauges[True].peak == 1
    assert gauges[False].peak > 1
    assert gauges[True].current == gauges[False].current == 0


# -- (f) context variables are restored ---------------------------------------------------


@pytest.mark.parametrize("exit_by", ["break", "cancel"])
async def test_the_injection_context_does_not_outlive_an_early_exit(exit_by: str) -> None:
    seen_in_tool: list[object] = []
    seen_by_consumer: list[object] = []
    after: list[object] = []
    consumer_got_value, never = asyncio.Event(), asyncio.Event()

    echo = make_echo()

    @tool()
    async def stream(memory: ContextQueue[Any]) -> AsyncIterator[Any]:
        seen_in_tool.append((current_scope(), memory))
        yield ContextItem(content="routed first")  # routing runs code in the run's scope too
        yield Turn(echo, kwargs={"x": "routed"})
        for i in range(10):
            yield i

    agent = Agent("a", "", [stream, echo])
    await agent.put(Turn(stream))

    async def consume() -> None:
        try:
            async with aclosing(agent.run()) as run:
                async for _ in run:
                    seen_by_consumer.append(current_scope())
                    consumer_got_value.set()
                    if exit_by == "break":
                        break
                    await never.wait()
        finally:
            after.append(current_scope())

    assert current_scope() is None
    task = asyncio.create_task(consume())
    await consumer_got_value.wait()
    if exit_by == "cancel":
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task

    scope, memory = seen_in_tool[0]  # type: ignore[misc]
    assert scope is not None  # the context was set while the tool ran...
    assert memory is agent.context_queue
    assert seen_by_consumer == [None]  # ...but never leaked to the consumer
    assert after == [None]
    assert current_scope() is None
    assert not agent.is_running
    assert [i.content for i in agent.context_queue] == ["routed first"]
