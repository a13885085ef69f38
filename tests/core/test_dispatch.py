"""Events that only subscribers follow are told synchronously; hooks still run.

A turn with no hook bound to an event tells subscribers about it without awaiting
anything (the quiet paths). These tests pin the boundary: a single global hook on
any one event of a turn's life runs exactly once per turn, in order with what
subscribers see, whichever path the turn takes.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import pytest

from pygents import (
    Agent,
    AgentHook,
    DecoratedTool,
    HookRegistry,
    HookType,
    ToolHook,
    Turn,
    TurnHook,
    hook,
    tool,
)
from pygents.testing import RecordingSubscriber, drain

TURN_LIFE: list[HookType] = [
    AgentHook.BEFORE_TURN,
    TurnHook.BEFORE_RUN,
    ToolHook.BEFORE_INVOKE,
    ToolHook.AFTER_INVOKE,
    TurnHook.AFTER_RUN,
    TurnHook.ON_COMPLETE,
    AgentHook.ON_TURN_VALUE,
    AgentHook.AFTER_TURN,
]


@pytest.fixture
def double() -> DecoratedTool[[int], Coroutine[Any, Any, int]]:
    """Made per test: a tool defined at import would stay registered for every test."""

    @tool()
    async def double(x: int) -> int:
        return 2 * x

    return double


@pytest.mark.parametrize("event", TURN_LIFE, ids=str)
async def test_one_global_hook_on_any_event_of_a_turn_runs_once_per_turn_among_subscribed_events(
    event: HookType,
    recorder: RecordingSubscriber,
    double: DecoratedTool[[int], Coroutine[Any, Any, int]],
) -> None:
    seen: list[str] = []

    async def mark() -> None:
        seen.append(f"hook after {len(recorder.events)} events")

    marker = hook(event)(mark)
    try:
        agent = Agent("dispatcher", "doubles", [double])
        for x in (1, 2):
            await agent.put(Turn(double, kwargs={"x": x}))
        recorder.clear()
        assert await drain(agent) == [2, 4]
    finally:
        HookRegistry.discard(marker.metadata.name, marker)

    per_turn = [e.type for e in recorder.events[: len(TURN_LIFE)]]
    assert per_turn == TURN_LIFE
    assert [e.type for e in recorder.events[len(TURN_LIFE) :]] == TURN_LIFE
    # Subscribers hear of an event before its hooks run: the hook of the k-th event
    # of a turn runs once k events of that turn are recorded.
    k = TURN_LIFE.index(event) + 1
    assert seen == [f"hook after {k} events", f"hook after {len(TURN_LIFE) + k} events"]


@pytest.mark.parametrize("event", [ToolHook.AFTER_INVOKE, TurnHook.AFTER_RUN, TurnHook.ON_COMPLETE])
async def test_a_closing_hook_sees_a_returning_turn_end_even_with_only_subscribers_otherwise(
    event: HookType,
    recorder: RecordingSubscriber,
    double: DecoratedTool[[int], Coroutine[Any, Any, int]],
) -> None:
    calls: list[HookType] = []

    async def closing() -> None:
        calls.append(event)

    closer = hook(event)(closing)
    try:
        turn = Turn(double, kwargs={"x": 21})
        assert await turn.returning() == 42
    finally:
        HookRegistry.discard(closer.metadata.name, closer)
    assert calls == [event]
    assert [e.type for e in recorder.events] == [
        TurnHook.BEFORE_RUN,
        ToolHook.BEFORE_INVOKE,
        ToolHook.AFTER_INVOKE,
        TurnHook.AFTER_RUN,
        TurnHook.ON_COMPLETE,
    ]
    assert recorder.of(TurnHook.AFTER_RUN)[0]["output"] == 42
