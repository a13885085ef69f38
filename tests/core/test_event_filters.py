"""Subscribers can listen to some event types only; cold-only listeners keep the
per-turn paths on their fast track."""

from __future__ import annotations

import asyncio
from typing import ClassVar

import pytest

from pygents import (
    COLD_EVENTS,
    HOT_EVENTS,
    Agent,
    AgentHook,
    ContextItem,
    ContextPoolHook,
    ContextQueueHook,
    Event,
    HookType,
    Subscriber,
    ToolHook,
    Turn,
    TurnHook,
    TurnTimeoutError,
    subscribe,
    tool,
)
from pygents._observe import BUS


class ColdRecorder(Subscriber):
    event_types: ClassVar[frozenset[HookType] | None] = COLD_EVENTS

    def __init__(self) -> None:
        self.seen: list[HookType] = []

    def on_event(self, event: Event) -> None:
        self.seen.append(event.type)


def test_hot_and_cold_events_partition_every_hook_type() -> None:
    everything = {
        member
        for enum in (TurnHook, AgentHook, ToolHook, ContextQueueHook, ContextPoolHook)
        for member in enum
    }
    assert everything == HOT_EVENTS | COLD_EVENTS
    assert len(everything) == 31
    assert HOT_EVENTS.isdisjoint(COLD_EVENTS)
    assert AgentHook.ON_PAUSE in COLD_EVENTS
    assert ContextPoolHook.ON_EVICT in COLD_EVENTS
    assert TurnHook.ON_COMPLETE in HOT_EVENTS


async def test_a_cold_listener_gets_cold_events_only_and_keeps_the_fast_paths() -> None:
    never = asyncio.Event()

    @tool()
    async def note() -> ContextItem[str]:
        return ContextItem(content="n")

    @tool()
    async def stuck() -> None:
        await never.wait()

    recorder = ColdRecorder()
    with subscribe(recorder):
        assert BUS.any
        assert not BUS.hot  # per-turn events are not dispatched at all
        agent = Agent("a", "", [note, stuck])
        await agent.put(Turn(note))
        await agent.put(Turn(stuck, timeout=0.05))
        with pytest.raises(TurnTimeoutError):
            async for _ in agent.run():
                pass
    assert set(recorder.seen) <= COLD_EVENTS
    for expected in (
        AgentHook.BEFORE_PUT,
        AgentHook.AFTER_PUT,
        ContextQueueHook.BEFORE_APPEND,
        ContextQueueHook.AFTER_APPEND,
        TurnHook.ON_TIMEOUT,
        AgentHook.ON_TURN_TIMEOUT,
    ):
        assert expected in recorder.seen, expected
    assert not BUS.any


async def test_a_listener_of_some_hot_event_turns_the_event_paths_on() -> None:
    class CompletionCounter(Subscriber):
        event_types: ClassVar[frozenset[HookType] | None] = frozenset((TurnHook.ON_COMPLETE,))

        def __init__(self) -> None:
            self.count = 0

        def on_event(self, event: Event) -> None:
            assert event.type is TurnHook.ON_COMPLETE
            self.count += 1

    @tool()
    async def work() -> int:
        return 1

    counter = CompletionCounter()
    with subscribe(counter):
        assert BUS.hot
        for _ in range(3):
            assert await Turn(work).returning() == 1
    assert counter.count == 3
