"""Every hook event, in every way of listening to it.

One scenario (``event_scenario.py``) drives all 31 events (turns that return, stream,
fail and time out, puts, a pause, and every context queue and pool operation). It runs
once per listener mode — instance hooks only, one global hook only, a subscriber to all
events, a subscriber to cold events only, and nobody — and each mode must see
exactly the documented events, once per occurrence, with the documented
arguments. The runtime picks which events to fire from cheap flags
(``BUS.hot``/``BUS.any``); this is what proves those choices right.
"""

from __future__ import annotations

from typing import Any, ClassVar

from event_scenario import ALL_EVENTS, Attach, Record, label, record, scenario

from pygents import (
    COLD_EVENTS,
    AgentHook,
    ContextPoolHook,
    ContextQueueHook,
    Event,
    HookType,
    StopReason,
    Subscriber,
    ToolHook,
    TurnHook,
    hook,
    subscribe,
)
from pygents._observe import BUS


def _instance_hooks(log: list[Record]) -> Attach:
    def attach(obj: object, enum: type) -> None:
        for member in enum:
            if member is ToolHook.ON_YIELD and not getattr(obj, "streaming", True):
                continue  # a coroutine tool never yields; its slot refuses the hook

            def make(event: HookType) -> Any:
                async def recorder(*args: Any, **kwargs: Any) -> None:
                    record(log, event, args, kwargs)

                recorder.__qualname__ = recorder.__name__ = f"record_{id(obj)}_{event.name}"
                return recorder

            getattr(obj, member.value)(make(member))

    return attach


R = StopReason
EXPECTED: list[Record] = [
    # two puts, then one run: a returning turn and a streaming turn
    (AgentHook.BEFORE_PUT, ["agent", "turn:ret"], {}),
    (AgentHook.AFTER_PUT, ["agent", "turn:ret"], {}),
    (AgentHook.BEFORE_PUT, ["agent", "turn:stream"], {}),
    (AgentHook.AFTER_PUT, ["agent", "turn:stream"], {}),
    (AgentHook.BEFORE_TURN, ["agent"], {}),
    (TurnHook.BEFORE_RUN, ["turn:ret"], {}),
    (ToolHook.BEFORE_INVOKE, [1], {}),
    (ToolHook.AFTER_INVOKE, [10], {}),
    (TurnHook.AFTER_RUN, ["turn:ret", 10], {}),
    (TurnHook.ON_COMPLETE, ["turn:ret", R.COMPLETED], {}),
    (AgentHook.ON_TURN_VALUE, ["agent", "turn:ret", 10], {}),
    (AgentHook.AFTER_TURN, ["agent", "turn:ret"], {}),
    (AgentHook.BEFORE_TURN, ["agent"], {}),
    (TurnHook.BEFORE_RUN, ["turn:stream"], {}),
    (ToolHook.BEFORE_INVOKE, [], {}),
    (ToolHook.ON_YIELD, [1], {}),
    (TurnHook.ON_VALUE, ["turn:stream", 1], {}),
    (AgentHook.ON_TURN_VALUE, ["agent", "turn:stream", 1], {}),
    (ToolHook.AFTER_INVOKE, [[1]], {}),
    (TurnHook.AFTER_RUN, ["turn:stream", [1]], {}),
    (TurnHook.ON_COMPLETE, ["turn:stream", R.COMPLETED], {}),
    (AgentHook.AFTER_TURN, ["agent", "turn:stream"], {}),
    # a failing turn
    (AgentHook.BEFORE_PUT, ["agent", "turn:fail"], {}),
    (AgentHook.AFTER_PUT, ["agent", "turn:fail"], {}),
    (AgentHook.BEFORE_TURN, ["agent"], {}),
    (TurnHook.BEFORE_RUN, ["turn:fail"], {}),
    (ToolHook.BEFORE_INVOKE, [], {}),
    (ToolHook.ON_ERROR, [], {"exc": "RuntimeError"}),
    (TurnHook.ON_ERROR, ["turn:fail", "RuntimeError"], {}),
    (TurnHook.ON_COMPLETE, ["turn:fail", R.ERROR], {}),
    (AgentHook.ON_TURN_ERROR, ["agent", "turn:fail", "RuntimeError"], {}),
    # a turn that times out
    (AgentHook.BEFORE_PUT, ["agent", "turn:blocks"], {}),
    (AgentHook.AFTER_PUT, ["agent", "turn:blocks"], {}),
    (AgentHook.BEFORE_TURN, ["agent"], {}),
    (TurnHook.BEFORE_RUN, ["turn:blocks"], {}),
    (ToolHook.BEFORE_INVOKE, [], {}),
    (ToolHook.ON_ERROR, [], {"exc": "TurnTimeoutError"}),
    (TurnHook.ON_TIMEOUT, ["turn:blocks"], {}),
    (TurnHook.ON_COMPLETE, ["turn:blocks", R.TIMEOUT], {}),
    (AgentHook.ON_TURN_TIMEOUT, ["agent", "turn:blocks"], {}),
    # the context queue: append, append two with eviction (of one of them too), clear
    (ContextQueueHook.BEFORE_APPEND, ["queue", ["item:a"], []], {}),
    (ContextQueueHook.AFTER_APPEND, [["item:a"], ["item:a"]], {}),
    (ContextQueueHook.BEFORE_APPEND, ["queue", ["item:b", "item:c"], ["item:a"]], {}),
    (ContextQueueHook.ON_EVICT, ["queue", "item:a"], {}),
    (ContextQueueHook.ON_EVICT, ["queue", "item:b"], {}),
    (ContextQueueHook.AFTER_APPEND, [["item:b", "item:c"], ["item:c"]], {}),
    (ContextQueueHook.BEFORE_CLEAR, ["queue", ["item:c"]], {}),
    (ContextQueueHook.AFTER_CLEAR, ["queue"], {}),
    # the context pool: add, add with eviction, remove, add, clear
    (ContextPoolHook.BEFORE_ADD, ["pool", "item:x"], {}),
    (ContextPoolHook.AFTER_ADD, ["pool", "item:x"], {}),
    (ContextPoolHook.ON_EVICT, ["pool", "item:x"], {}),  # room is made first
    (ContextPoolHook.BEFORE_ADD, ["pool", "item:y"], {}),
    (ContextPoolHook.AFTER_ADD, ["pool", "item:y"], {}),
    (ContextPoolHook.BEFORE_REMOVE, ["pool", "item:y"], {}),
    (ContextPoolHook.AFTER_REMOVE, ["pool", "item:y"], {}),
    (ContextPoolHook.BEFORE_ADD, ["pool", "item:z"], {}),
    (ContextPoolHook.AFTER_ADD, ["pool", "item:z"], {}),
    (ContextPoolHook.BEFORE_CLEAR, ["pool", {"z": "item:z"}], {}),
    (ContextPoolHook.AFTER_CLEAR, ["pool"], {}),
    # a paused agent: the queued turn (keyword arguments) waits at the gate, then runs
    (AgentHook.BEFORE_PUT, ["agent", "turn:ret"], {}),
    (AgentHook.AFTER_PUT, ["agent", "turn:ret"], {}),
    (AgentHook.ON_PAUSE, ["agent"], {}),
    (AgentHook.ON_RESUME, ["agent"], {}),
    (AgentHook.BEFORE_TURN, ["agent"], {}),
    (TurnHook.BEFORE_RUN, ["turn:ret"], {}),
    (ToolHook.BEFORE_INVOKE, [], {"x": 2}),
    (ToolHook.AFTER_INVOKE, [20], {}),
    (TurnHook.AFTER_RUN, ["turn:ret", 20], {}),
    (TurnHook.ON_COMPLETE, ["turn:ret", R.COMPLETED], {}),
    (AgentHook.ON_TURN_VALUE, ["agent", "turn:ret", 20], {}),
    (AgentHook.AFTER_TURN, ["agent", "turn:ret"], {}),
]
RESULTS = [[10, 1], [20]]


def test_the_scenario_covers_all_thirty_one_events() -> None:
    assert len(ALL_EVENTS) == 31
    assert {event for event, _, _ in EXPECTED} == set(ALL_EVENTS)


class _Recorder(Subscriber):
    def __init__(self) -> None:
        self.log: list[Record] = []

    def on_event(self, event: Event) -> None:
        record(self.log, event.type, event.args, event.kwargs)


class _ColdRecorder(_Recorder):
    event_types: ClassVar[frozenset[HookType] | None] = COLD_EVENTS


async def test_instance_hooks_alone_see_every_event_once_with_its_arguments() -> None:
    log: list[Record] = []
    assert await scenario(_instance_hooks(log)) == RESULTS
    assert log == EXPECTED


async def test_a_global_hook_alone_sees_every_event_once_with_its_arguments() -> None:
    calls: list[tuple[Any, Any]] = []

    @hook(ALL_EVENTS)
    async def everything(*args: Any, **kwargs: Any) -> None:
        calls.append((label(list(args)), label(kwargs)))

    # A global hook is not told which event fired it: its calls, in order, must be
    # the documented arguments of every event.
    assert BUS.hot
    assert BUS.any
    assert not BUS.listeners
    assert await scenario() == RESULTS
    assert calls == [(args, kwargs) for _, args, kwargs in EXPECTED]


async def test_a_subscriber_to_all_events_sees_every_event_once_with_its_arguments() -> None:
    recorder = _Recorder()
    with subscribe(recorder):
        assert BUS.hot
        assert BUS.any
        assert await scenario() == RESULTS
    assert recorder.log == EXPECTED


async def test_a_subscriber_to_cold_events_sees_exactly_the_cold_ones() -> None:
    recorder = _ColdRecorder()
    with subscribe(recorder):
        assert BUS.any
        assert not BUS.hot
        assert await scenario() == RESULTS
    cold = [record for record in EXPECTED if record[0] in COLD_EVENTS]
    assert recorder.log == cold
    assert {event for event, _, _ in cold} == set(COLD_EVENTS)


async def test_with_nobody_listening_nothing_fires_and_the_scenario_still_works() -> None:
    assert not BUS.hot
    assert not BUS.any
    assert await scenario() == RESULTS
