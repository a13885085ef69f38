"""The shortcuts taken when nothing observes the runtime must never change behaviour.

Covers the agent run's shared watchdog timer, the run- and stream-level frames that
stand in for the current-scope context variable, and hooks or subscribers that
appear after the fast path was taken.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from pygents import (
    Agent,
    ScopeKind,
    StopReason,
    Tool,
    ToolHook,
    Turn,
    TurnHook,
    TurnTimeoutError,
    current_scope,
    hook,
    tool,
)
from pygents.testing import RecordingSubscriber

GUARD = 5.0


def _blocking_tool() -> Any:
    never = asyncio.Event()

    @tool()
    async def blocks() -> None:
        await never.wait()

    return blocks


@pytest.fixture
def fastpath_value() -> Tool:
    """A quick tool, declared per test (declared at import, it would stay registered
    for the rest of the run)."""

    @tool()
    async def fastpath_value(x: int = 0) -> int:
        return x

    return fastpath_value


async def _drain(agent: Agent) -> list[Any]:
    async with asyncio.timeout(GUARD):
        return [value async for _, value in agent.run()]


async def test_a_shorter_timeout_after_a_longer_one_still_fires(
    fastpath_value: Tool,
) -> None:
    blocks = _blocking_tool()
    agent = Agent("a", "", [fastpath_value, blocks])
    await agent.put(Turn(fastpath_value, kwargs={"x": 1}, timeout=60))
    await agent.put(Turn(blocks, timeout=0.05))
    with pytest.raises(TurnTimeoutError):
        await _drain(agent)
    assert agent.turns == []


async def test_a_longer_timeout_after_a_shorter_one_rearms_the_shared_timer(
    fastpath_value: Tool,
) -> None:
    blocks = _blocking_tool()
    agent = Agent("a", "", [fastpath_value, blocks])
    await agent.put(Turn(fastpath_value, timeout=0.01))
    slow = Turn(blocks, timeout=0.1)
    await agent.put(slow)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(TurnTimeoutError):
        await _drain(agent)
    # It fired for the slow turn's own deadline, not the fastpath_value turn's earlier one.
    assert loop.time() - started >= 0.1
    assert slow.stop_reason is StopReason.TIMEOUT


async def test_many_quick_turns_then_a_blocking_one_times_out(
    fastpath_value: Tool,
) -> None:
    blocks = _blocking_tool()
    agent = Agent("a", "", [fastpath_value, blocks])
    for i in range(200):
        await agent.put(Turn(fastpath_value, kwargs={"x": i}, timeout=0.05))
    await agent.put(Turn(blocks, timeout=0.05))
    with pytest.raises(TurnTimeoutError):
        await _drain(agent)


async def test_quick_turns_are_not_cut_by_an_earlier_turns_timer(
    fastpath_value: Tool,
) -> None:
    gate = asyncio.Event()

    @tool()
    async def waits() -> str:
        await gate.wait()
        return "done"

    agent = Agent("a", "", [fastpath_value, waits])
    await agent.put(Turn(fastpath_value, timeout=0.02))
    await agent.put(Turn(waits, timeout=30))
    loop = asyncio.get_running_loop()
    # Opened well after the first turn's 0.02 s deadline has passed.
    loop.call_later(0.1, gate.set)
    assert await _drain(agent) == [0, "done"]


async def test_hooks_and_subscribers_added_later_take_effect(
    fastpath_value: Tool,
) -> None:
    agent = Agent("a", "", [fastpath_value])
    await agent.put(Turn(fastpath_value, kwargs={"x": 1}))
    assert await _drain(agent) == [1]  # nothing observed: the fast path

    seen: list[str] = []

    @hook(TurnHook.AFTER_RUN)
    async def global_after(turn: Turn, output: Any) -> None:
        seen.append(f"global {output}")

    @fastpath_value.after_invoke
    async def tool_after(result: Any) -> None:
        seen.append(f"tool {result}")

    turn = Turn(fastpath_value, kwargs={"x": 2})

    @turn.on_complete
    async def turn_done(turn: Turn, reason: StopReason) -> None:
        seen.append(f"turn {reason}")

    recorder = RecordingSubscriber()
    with recorder.subscribed():
        await agent.put(turn)
        assert await _drain(agent) == [2]
    assert seen == ["tool 2", "global 2", "turn completed"]
    assert TurnHook.ON_COMPLETE in recorder.types()
    fastpath_value.hooks.clear()


async def test_a_tool_hook_added_mid_stream_fires_for_later_values() -> None:
    yielded: list[int] = []

    @tool()
    async def numbers():
        for n in range(4):
            yield n

    agent = Agent("a", "", [numbers])
    await agent.put(Turn(numbers))
    async with contextlib.aclosing(agent.run()) as stream:
        async for _, value in stream:
            if value == 1:

                @numbers.on_yield
                async def late(value: int) -> None:
                    yielded.append(value)

    assert yielded == [2, 3]


async def test_current_scope_between_values_is_the_consumers_own() -> None:
    inside: list[Any] = []

    @tool()
    async def numbers():
        inside.append(current_scope())
        yield 1
        inside.append(current_scope())
        yield 2

    @tool()
    async def single() -> str:
        inside.append(current_scope())
        return "x"

    agent = Agent("a", "", [numbers, single])
    await agent.put(Turn(numbers))
    await agent.put(Turn(single))
    between: list[Any] = []
    async for _ in agent.run():
        between.append(current_scope())
    assert between == [None, None, None]
    assert [s.kind for s in inside] == [ScopeKind.TOOL] * 3
    assert [s.agent for s in inside] == [agent] * 3
    assert current_scope() is None


async def test_nested_agent_run_inside_a_tool_sees_the_tool_scope_between_values() -> None:
    @tool()
    async def inner_numbers():
        yield 1
        yield 2

    inner = Agent("inner", "", [inner_numbers])
    seen: list[Any] = []

    @tool()
    async def outer() -> list[int]:
        mine = current_scope()
        await inner.put(Turn(inner_numbers))
        values = []
        async for _, value in inner.run():
            seen.append(current_scope() is mine)
            values.append(value)
        seen.append(current_scope() is mine)
        return values

    agent = Agent("outer", "", [outer])
    await agent.put(Turn(outer))
    assert await _drain(agent) == [[1, 2]]
    assert seen == [True, True, True]


async def test_stream_tool_events_carry_the_enclosing_turn_on_the_fast_path() -> None:
    @tool()
    async def numbers():
        yield 1

    recorder = RecordingSubscriber()
    agent = Agent("a", "", [numbers])
    turn = Turn(numbers)
    await agent.put(turn)
    with recorder.subscribed():
        await _drain(agent)
    on_yield = recorder.of(ToolHook.ON_YIELD)
    assert [e.turn for e in on_yield] == [turn]
    assert [e.agent for e in on_yield] == [agent]
