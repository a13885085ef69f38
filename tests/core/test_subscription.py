"""The subscription seam (SPEC §1.9) as turns and tools use it, plus pygents.testing."""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any

import pytest
from core_helpers import noop_turn

import pygents
from pygents import (
    Event,
    HookRegistry,
    Scope,
    ScopeKind,
    StopReason,
    Subscriber,
    ToolHook,
    ToolRegistry,
    Turn,
    TurnHook,
    TurnTimeoutError,
    current_scope,
    hook,
    subscribe,
    tool,
    unsubscribe,
)
from pygents.testing import RecordingSubscriber, isolated_registries

GUARD = 5  # seconds: only bounds a wait that would hang if the code under test is broken


def steps(rec: RecordingSubscriber) -> list[tuple[str, ScopeKind]]:
    return [(r.action, r.scope.kind) for r in rec.scopes]


def bound_arguments(fn: Any, event: Event) -> dict[str, Any]:
    """What the function would receive for a BEFORE_INVOKE event's args and kwargs."""
    return dict(inspect.signature(fn).bind(*event.args, **event.kwargs).arguments)


def pygents_errors(caplog: pytest.LogCaptureFixture, method: str) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name == "pygents" and r.levelno >= logging.ERROR and method in r.getMessage()
    ]


class EndSnapshot(Subscriber):
    """Keeps what each scope said about its outcome at the moment it ended."""

    def __init__(self) -> None:
        self.ended: dict[ScopeKind, tuple[StopReason | None, BaseException | None]] = {}

    def on_end(self, scope: Scope) -> None:
        self.ended[scope.kind] = (scope.stop_reason, scope.error)


# -- events ------------------------------------------------------------------------------


async def test_subscriber_sees_every_event_of_a_returning_turn() -> None:
    @tool
    async def add(a: int, b: int = 0) -> int:
        return a + b

    turn = Turn(add, args=[1], kwargs={"b": 2})
    with RecordingSubscriber().subscribed() as rec:
        assert await turn.returning() == 3

    assert rec.types() == [
        TurnHook.BEFORE_RUN,
        ToolHook.BEFORE_INVOKE,
        ToolHook.AFTER_INVOKE,
        TurnHook.AFTER_RUN,
        TurnHook.ON_COMPLETE,
    ]
    before_run, before_invoke, after_invoke, after_run, on_complete = rec.events
    for event in rec.events:
        assert event.turn is turn
        assert event.agent is None
    for event in (before_run, after_run, on_complete):
        assert event.source is turn
    for event in (before_invoke, after_invoke):
        assert event.source is add

    assert before_run.args == (turn,)
    assert bound_arguments(add.fn, before_invoke) == {"a": 1, "b": 2}
    assert after_invoke.args == (3,)
    assert after_run.args == (turn, 3)
    assert on_complete.args == (turn, StopReason.COMPLETED)
    assert dict(on_complete.kwargs) == {}


async def test_subscriber_sees_every_event_of_a_streaming_turn() -> None:
    @tool
    async def pair(prefix: str):
        yield f"{prefix}1"
        yield f"{prefix}2"

    turn = Turn(pair, kwargs={"prefix": "v"})
    with RecordingSubscriber().subscribed() as rec:
        assert [v async for v in turn.yielding()] == ["v1", "v2"]

    turn_events = [e for e in rec.events if isinstance(e.type, TurnHook)]
    tool_events = [e for e in rec.events if isinstance(e.type, ToolHook)]
    assert [(e.type, e.args) for e in turn_events] == [
        (TurnHook.BEFORE_RUN, (turn,)),
        (TurnHook.ON_VALUE, (turn, "v1")),
        (TurnHook.ON_VALUE, (turn, "v2")),
        (TurnHook.AFTER_RUN, (turn, ["v1", "v2"])),
        (TurnHook.ON_COMPLETE, (turn, StopReason.COMPLETED)),
    ]
    assert [e.type for e in tool_events] == [
        ToolHook.BEFORE_INVOKE,
        ToolHook.ON_YIELD,
        ToolHook.ON_YIELD,
        ToolHook.AFTER_INVOKE,
    ]
    assert bound_arguments(pair.fn, tool_events[0]) == {"prefix": "v"}
    assert [e.args for e in tool_events[1:]] == [("v1",), ("v2",), (["v1", "v2"],)]
    assert all(e.source is pair for e in tool_events)
    assert all(e.source is turn for e in turn_events)
    assert all(e.turn is turn for e in rec.events)
    # Each value is seen by the tool before the turn passes it on, and the tool's
    # lifecycle sits inside the turn's.
    types = rec.types()
    assert types[0] is TurnHook.BEFORE_RUN
    assert types[-2:] == [TurnHook.AFTER_RUN, TurnHook.ON_COMPLETE]
    for i, t in enumerate(types):
        if t is TurnHook.ON_VALUE:
            assert types[i - 1] is ToolHook.ON_YIELD


async def test_subscriber_sees_error_events() -> None:
    boom = ValueError("boom")

    @tool
    async def fails() -> None:
        raise boom

    turn = Turn(fails)
    with RecordingSubscriber().subscribed() as rec, pytest.raises(ValueError):
        await turn.returning()

    assert rec.types() == [
        TurnHook.BEFORE_RUN,
        ToolHook.BEFORE_INVOKE,
        ToolHook.ON_ERROR,
        TurnHook.ON_ERROR,
        TurnHook.ON_COMPLETE,
    ]
    tool_error, turn_error, complete = rec.events[2:]
    assert tool_error.source is fails
    assert dict(tool_error.kwargs) == {"exc": boom}
    assert turn_error.args == (turn, boom)
    assert complete.args == (turn, StopReason.ERROR)
    assert all(e.turn is turn for e in rec.events)


async def test_subscriber_sees_timeout_events() -> None:
    never = asyncio.Event()

    @tool
    async def stuck() -> None:
        await never.wait()

    turn = Turn(stuck, timeout=0.05)
    with RecordingSubscriber().subscribed() as rec, pytest.raises(TurnTimeoutError):
        await turn.returning()

    turn_events = [(e.type, e.args) for e in rec.events if isinstance(e.type, TurnHook)]
    assert turn_events == [
        (TurnHook.BEFORE_RUN, (turn,)),
        (TurnHook.ON_TIMEOUT, (turn,)),
        (TurnHook.ON_COMPLETE, (turn, StopReason.TIMEOUT)),
    ]


async def test_concurrent_turns_each_get_their_own_events() -> None:
    go_first, go_second = asyncio.Event(), asyncio.Event()
    gates = {"first": go_first, "second": go_second}

    @tool
    async def gated(name: str) -> str:
        await gates[name].wait()
        return name

    first = Turn(gated, kwargs={"name": "first"})
    second = Turn(gated, kwargs={"name": "second"})
    with RecordingSubscriber().subscribed() as rec:
        tasks = [asyncio.create_task(first.returning()), asyncio.create_task(second.returning())]
        async with asyncio.timeout(GUARD):
            await rec.wait_for(lambda r: len(r.of(ToolHook.BEFORE_INVOKE)) == 2)
        go_second.set()  # finish in the opposite order to the start
        assert await tasks[1] == "second"
        go_first.set()
        assert await tasks[0] == "first"

    turns = {"first": first, "second": second}
    for event in rec.of(ToolHook.BEFORE_INVOKE):
        assert event.turn is turns[event.kwargs["name"]]
    for event in rec.of(ToolHook.AFTER_INVOKE):
        assert event.turn is turns[event.args[0]]
    by_turn = {t: [e.type for e in rec.events if e.turn is t] for t in (first, second)}
    for types in by_turn.values():
        assert types == [
            TurnHook.BEFORE_RUN,
            ToolHook.BEFORE_INVOKE,
            ToolHook.AFTER_INVOKE,
            TurnHook.AFTER_RUN,
            TurnHook.ON_COMPLETE,
        ]


async def test_subscriber_hears_an_event_before_its_hooks_run() -> None:
    order: list[str] = []

    class Listener(Subscriber):
        def on_event(self, event: Event) -> None:
            order.append(f"subscriber:{event.type.value}")

    turn = noop_turn()

    @turn.after_run
    async def after_hook(turn: Turn, output: Any) -> None:
        order.append("hook:after_run")

    with subscribe(Listener()):
        await turn.returning()
    position = order.index("hook:after_run")
    assert order[position - 1] == "subscriber:after_run"


async def test_unsubscribing_from_inside_on_event_is_safe() -> None:
    other = RecordingSubscriber()

    class OneShot(Subscriber):
        def __init__(self) -> None:
            self.seen: list[Any] = []

        def on_event(self, event: Event) -> None:
            self.seen.append(event.type)
            unsubscribe(self)
            subscribe(other)

    @tool
    async def shot() -> int:
        return 5

    one_shot = OneShot()
    turn = Turn(shot)
    try:
        with subscribe(one_shot):
            assert await turn.returning() == 5
    finally:
        unsubscribe(other)
    assert one_shot.seen == [TurnHook.BEFORE_RUN]
    assert other.types()[-1] is TurnHook.ON_COMPLETE
    assert TurnHook.BEFORE_RUN not in other.types()


# -- scopes --------------------------------------------------------------------------------


async def test_turn_and_tool_scopes_start_and_end() -> None:
    @tool
    async def scoped() -> int:
        return 1

    turn = Turn(scoped)
    with RecordingSubscriber().subscribed() as rec:
        await turn.returning()

    assert steps(rec) == [
        ("start", ScopeKind.TURN),
        ("start", ScopeKind.TOOL),
        ("enter", ScopeKind.TOOL),
        ("exit", ScopeKind.TOOL),
        ("end", ScopeKind.TOOL),
        ("end", ScopeKind.TURN),
    ]
    (turn_scope,) = rec.started(ScopeKind.TURN)
    (tool_scope,) = rec.started(ScopeKind.TOOL)
    assert rec.ended(ScopeKind.TURN) == [turn_scope]
    assert rec.ended(ScopeKind.TOOL) == [tool_scope]
    assert turn_scope.target is turn
    assert turn_scope.turn is turn
    assert turn_scope.parent is None  # a bare turn, not inside an agent
    assert tool_scope.target is scoped
    assert tool_scope.parent is turn_scope
    assert tool_scope.turn is turn


@pytest.mark.parametrize("kind", [ScopeKind.TURN, ScopeKind.TOOL])
async def test_scope_outcome_is_set_when_it_ends_on_success(kind: ScopeKind) -> None:
    @tool
    async def succeeds() -> str:
        return "ok"

    snap = EndSnapshot()
    with subscribe(snap):
        await Turn(succeeds).returning()
    assert snap.ended[kind] == (StopReason.COMPLETED, None)


@pytest.mark.parametrize("kind", [ScopeKind.TURN, ScopeKind.TOOL])
async def test_scope_outcome_is_set_when_it_ends_on_error(kind: ScopeKind) -> None:
    boom = RuntimeError("scope error")

    @tool
    async def raises_in_scope() -> None:
        raise boom

    snap = EndSnapshot()
    with subscribe(snap), pytest.raises(RuntimeError):
        await Turn(raises_in_scope).returning()
    assert snap.ended[kind] == (StopReason.ERROR, boom)


async def test_turn_scope_outcome_on_timeout_and_cancellation() -> None:
    never = asyncio.Event()
    started = asyncio.Event()

    @tool
    async def blocks_forever() -> None:
        started.set()
        await never.wait()

    snap = EndSnapshot()
    with subscribe(snap):
        with pytest.raises(TurnTimeoutError):
            await Turn(blocks_forever, timeout=0.05).returning()
        reason, error = snap.ended[ScopeKind.TURN]
        assert reason is StopReason.TIMEOUT
        assert isinstance(error, TurnTimeoutError)

        started.clear()
        task = asyncio.create_task(Turn(blocks_forever).returning())
        async with asyncio.timeout(GUARD):
            await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        reason, error = snap.ended[ScopeKind.TURN]
        assert reason is StopReason.CANCELLED
        assert isinstance(error, asyncio.CancelledError)


async def test_enter_and_exit_bracket_the_tool_body() -> None:
    inside: list[tuple[Scope | None, list[tuple[str, ScopeKind]]]] = []
    rec = RecordingSubscriber()

    @tool
    async def body() -> str:
        inside.append((current_scope(), steps(rec)))
        return "done"

    turn = Turn(body)
    assert current_scope() is None
    with rec.subscribed():
        await turn.returning()
    assert current_scope() is None

    ((scope, seen_so_far),) = inside
    assert scope is not None
    assert scope.kind is ScopeKind.TOOL
    assert scope.target is body
    assert scope.turn is turn
    assert seen_so_far[-1] == ("enter", ScopeKind.TOOL)
    assert rec.scopes[2].scope is scope  # the enter record is for this very scope
    assert ("exit", ScopeKind.TOOL) not in seen_so_far


async def test_current_scope_without_subscribers() -> None:
    inside: list[Scope | None] = []

    @tool
    async def unobserved() -> None:
        inside.append(current_scope())

    turn = Turn(unobserved)
    await turn.returning()
    (scope,) = inside
    assert scope is not None
    assert scope.kind is ScopeKind.TOOL
    assert scope.turn is turn
    assert current_scope() is None
    assert pygents.current_scope is current_scope


async def test_enter_and_exit_bracket_every_step_of_a_stream() -> None:
    rec = RecordingSubscriber()
    inside: list[tuple[Scope | None, str]] = []

    @tool
    async def stepping():
        for i in range(3):
            inside.append((current_scope(), rec.scopes[-1].action))
            yield i
        inside.append((current_scope(), rec.scopes[-1].action))

    turn = Turn(stepping)
    between: list[Scope | None] = []
    with rec.subscribed():
        async for _ in turn.yielding():
            between.append(current_scope())
    assert current_scope() is None

    (tool_scope,) = rec.started(ScopeKind.TOOL)
    assert len(inside) == 4
    for scope, last_action in inside:
        assert scope is tool_scope  # the tool scope is current in the generator body
        assert last_action == "enter"  # and on_enter announced it
    assert between == [None, None, None]  # the consumer's code is not inside the tool

    brackets = [r for r in rec.scopes if r.action in ("enter", "exit")]
    assert all(r.scope is tool_scope for r in brackets)
    actions = [r.action for r in brackets]
    assert len(actions) >= 2 * 4  # at least one bracket per step (3 values + the end)
    assert actions == ["enter", "exit"] * (len(actions) // 2)
    # All brackets happen between the tool scope's start and end.
    kinds_and_actions = steps(rec)
    first_bracket = kinds_and_actions.index(("enter", ScopeKind.TOOL))
    assert kinds_and_actions.index(("start", ScopeKind.TOOL)) < first_bracket
    last_exit = len(kinds_and_actions) - 1 - kinds_and_actions[::-1].index(("exit", ScopeKind.TOOL))
    assert last_exit < kinds_and_actions.index(("end", ScopeKind.TOOL))


async def test_enter_and_exit_balanced_when_a_stream_is_left_early() -> None:
    @tool
    async def many():
        for i in range(10):
            yield i

    turn = Turn(many)
    with RecordingSubscriber().subscribed() as rec:
        stream = turn.yielding()
        assert await anext(stream) == 0
        await stream.aclose()
    actions = [r.action for r in rec.scopes if r.action in ("enter", "exit")]
    assert actions.count("enter") == actions.count("exit") >= 1
    assert rec.ended(ScopeKind.TURN)[0].stop_reason is StopReason.CANCELLED
    assert len(rec.ended(ScopeKind.TOOL)) == 1
    assert current_scope() is None


# -- subscriber errors are contained -----------------------------------------------------------

SUBSCRIBER_METHODS = ["on_event", "on_start", "on_end", "on_enter", "on_exit"]


def raising_subscriber(method: str) -> Subscriber:
    """A subscriber whose ``method`` raises every time (and counts its calls)."""

    def fail(self: Any, arg: Any) -> None:
        self.calls += 1
        raise RuntimeError(f"subscriber bug in {method}")

    cls = type(f"Raises_{method}", (Subscriber,), {method: fail, "calls": 0})
    return cls()  # type: ignore[no-any-return]


@pytest.mark.parametrize("method", SUBSCRIBER_METHODS)
async def test_subscriber_errors_are_contained_and_logged_once(
    method: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="pygents")

    @tool
    async def robust(x: int) -> int:
        return x + 1

    @tool
    async def robust_stream():
        yield "a"
        yield "b"

    bad = raising_subscriber(method)
    with subscribe(bad), RecordingSubscriber().subscribed() as good:
        assert await Turn(robust, args=[1]).returning() == 2
        assert await Turn(robust, args=[2]).returning() == 3
        stream_turn = Turn(robust_stream)
        assert [v async for v in stream_turn.yielding()] == ["a", "b"]

    assert stream_turn.stop_reason is StopReason.COMPLETED
    assert bad.calls >= 2  # type: ignore[attr-defined]
    assert len(pygents_errors(caplog, method)) == 1
    # A broken subscriber does not starve the others.
    assert good.types().count(TurnHook.ON_COMPLETE) == 3
    assert len(good.ended(ScopeKind.TURN)) == 3


async def test_each_failing_subscriber_is_logged_separately(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="pygents")

    @tool
    async def twice() -> None:
        pass

    first, second = raising_subscriber("on_event"), raising_subscriber("on_event")
    with subscribe(first), subscribe(second):
        await Turn(twice).returning()
        await Turn(twice).returning()
    assert len(pygents_errors(caplog, "on_event")) == 2


async def test_subscriber_error_inside_tool_body_keeps_current_scope(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="pygents")
    inside: list[Scope | None] = []

    @tool
    async def observed() -> str:
        inside.append(current_scope())
        return "fine"

    turn = Turn(observed)
    with subscribe(raising_subscriber("on_enter")):
        assert await turn.returning() == "fine"
    assert inside[0] is not None
    assert inside[0].kind is ScopeKind.TOOL
    assert current_scope() is None
    assert turn.stop_reason is StopReason.COMPLETED


async def test_user_hook_errors_propagate_unlike_subscriber_errors() -> None:
    @tool
    async def hooked() -> int:
        return 1

    turn = Turn(hooked)

    @turn.after_run
    async def user_bug(turn: Turn, output: int) -> None:
        raise RuntimeError("user hook bug")

    with subscribe(raising_subscriber("on_event")), pytest.raises(RuntimeError, match="user hook"):
        await turn.returning()
    assert turn.stop_reason is StopReason.ERROR


# -- subscribing and unsubscribing at any time ---------------------------------------------------


async def test_subscribe_from_inside_a_running_tool() -> None:
    late = RecordingSubscriber()

    @tool
    async def subscribes_midway() -> str:
        subscribe(late)
        return "value"

    turn = Turn(subscribes_midway)
    try:
        assert await turn.returning() == "value"
    finally:
        unsubscribe(late)

    assert TurnHook.BEFORE_RUN not in late.types()
    assert late.types()[-3:] == [ToolHook.AFTER_INVOKE, TurnHook.AFTER_RUN, TurnHook.ON_COMPLETE]
    assert late.of(TurnHook.AFTER_RUN)[0].args == (turn, "value")
    # It never saw the tool body entered, so it is not told it was exited.
    actions = [r.action for r in late.scopes]
    assert actions.count("exit") <= actions.count("enter")
    assert actions.count("end") <= actions.count("start")
    assert turn.stop_reason is StopReason.COMPLETED


async def test_subscribe_between_stream_steps_sees_the_rest() -> None:
    @tool
    async def three():
        yield 1
        yield 2
        yield 3

    late = RecordingSubscriber()
    turn = Turn(three)
    try:
        async for value in turn.yielding():
            if value == 1:
                subscribe(late)
    finally:
        unsubscribe(late)
    assert [e.args for e in late.of(TurnHook.ON_VALUE)] == [(turn, 2), (turn, 3)]
    assert late.types()[-1] is TurnHook.ON_COMPLETE
    actions = [r.action for r in late.scopes]
    assert actions.count("enter") == actions.count("exit")


async def test_unsubscribe_from_inside_a_running_tool() -> None:
    rec = RecordingSubscriber()

    @tool
    async def unsubscribes_midway() -> str:
        unsubscribe(rec)
        return "value"

    turn = Turn(unsubscribes_midway)
    subscribe(rec)
    try:
        assert await turn.returning() == "value"
    finally:
        unsubscribe(rec)

    # Scopes started while subscribed still end; the body's enter gets its exit.
    assert [s.target for s in rec.started()] == [turn, unsubscribes_midway]
    assert len(rec.ended(ScopeKind.TURN)) == 1
    assert len(rec.ended(ScopeKind.TOOL)) == 1
    actions = [r.action for r in rec.scopes]
    assert actions.count("enter") == actions.count("exit") == 1
    # Events after unsubscribing are no longer delivered.
    assert rec.types() == [TurnHook.BEFORE_RUN, ToolHook.BEFORE_INVOKE]
    assert turn.stop_reason is StopReason.COMPLETED


async def test_with_subscribe_unsubscribes_on_exit() -> None:
    @tool
    async def observed_once() -> None:
        pass

    rec = RecordingSubscriber()
    with subscribe(rec) as subscription:
        assert subscription is not None
        await Turn(observed_once).returning()
    seen = len(rec.events)
    assert seen > 0
    await Turn(observed_once).returning()
    assert len(rec.events) == seen
    assert len(rec.scopes) == 6  # one run's worth of scope records only


async def test_with_subscribe_unsubscribes_on_error() -> None:
    @tool
    async def after_error() -> None:
        pass

    rec = RecordingSubscriber()
    with pytest.raises(KeyError), subscribe(rec):
        raise KeyError("leaving the block")
    await Turn(after_error).returning()
    assert rec.events == []


async def test_subscription_close_and_idempotent_unsubscribe() -> None:
    @tool
    async def closed() -> None:
        pass

    rec = RecordingSubscriber()
    subscription = subscribe(rec)
    subscription.close()
    subscription.close()
    unsubscribe(rec)
    unsubscribe(RecordingSubscriber())  # never subscribed: no error
    await Turn(closed).returning()
    assert rec.events == []


async def test_subscribing_twice_delivers_once() -> None:
    @tool
    async def once() -> None:
        pass

    rec = RecordingSubscriber()
    with subscribe(rec), subscribe(rec):
        await Turn(once).returning()
    assert rec.types().count(TurnHook.ON_COMPLETE) == 1
    assert len(rec.started(ScopeKind.TURN)) == 1


@pytest.mark.parametrize(
    "not_a_subscriber", [object(), None, "subscriber", Subscriber, lambda event: None]
)
def test_subscribe_rejects_non_subscribers(not_a_subscriber: Any) -> None:
    with pytest.raises(TypeError, match="Subscriber"):
        subscribe(not_a_subscriber)


def test_public_names() -> None:
    for name in (
        "subscribe",
        "unsubscribe",
        "Subscriber",
        "Event",
        "Scope",
        "ScopeKind",
        "current_scope",
    ):
        assert hasattr(pygents, name), name
    assert {k.value for k in ScopeKind} >= {"turn", "tool"}


# -- pygents.testing ---------------------------------------------------------------------------


async def test_wait_for_wakes_on_an_event_from_another_task() -> None:
    release = asyncio.Event()

    @tool
    async def waits_for_release() -> str:
        await release.wait()
        return "released"

    with RecordingSubscriber().subscribed() as rec:
        turn = Turn(waits_for_release)
        task = asyncio.create_task(turn.returning())
        async with asyncio.timeout(GUARD):
            await rec.wait_for(lambda r: ToolHook.BEFORE_INVOKE in r.types())
        assert not task.done()
        assert TurnHook.ON_COMPLETE not in rec.types()

        waiter = asyncio.create_task(rec.wait_for(lambda r: TurnHook.ON_COMPLETE in r.types()))
        await asyncio.sleep(0)  # let the waiter start waiting
        assert not waiter.done()
        release.set()
        async with asyncio.timeout(GUARD):
            await waiter
        assert rec.types()[-1] is TurnHook.ON_COMPLETE
        assert await task == "released"


async def test_wait_for_returns_at_once_when_already_true() -> None:
    """'At once' means without suspending: stepping the coroutine once finishes it.
    The control shows the same stepping suspends while the condition is false."""

    @tool
    async def already() -> None:
        pass

    with RecordingSubscriber().subscribed() as rec:
        pending = rec.wait_for(lambda r: len(r.ended(ScopeKind.TURN)) == 1)
        pending.send(None)  # nothing has ended yet: it suspends instead of returning
        pending.close()

        await Turn(already).returning()
        done = rec.wait_for(lambda r: len(r.ended(ScopeKind.TURN)) == 1)
        with pytest.raises(StopIteration):
            done.send(None)


def test_recording_subscriber_helpers() -> None:
    rec = RecordingSubscriber()
    assert isinstance(rec, Subscriber)
    assert rec.types() == []
    assert rec.of(TurnHook.ON_COMPLETE) == []
    assert rec.started() == []
    assert rec.ended() == []


async def test_recording_subscriber_clear_and_of() -> None:
    @tool
    async def cleared() -> None:
        pass

    with RecordingSubscriber().subscribed() as rec:
        await Turn(cleared).returning()
        assert [e.type for e in rec.of(TurnHook.BEFORE_RUN, TurnHook.ON_COMPLETE)] == [
            TurnHook.BEFORE_RUN,
            TurnHook.ON_COMPLETE,
        ]
        rec.clear()
        assert rec.events == []
        assert rec.scopes == []


async def test_recorder_fixture_is_subscribed(recorder: RecordingSubscriber) -> None:
    @tool
    async def fixture_tool() -> None:
        pass

    await Turn(fixture_tool).returning()
    assert recorder.types()[-1] is TurnHook.ON_COMPLETE


async def test_isolated_registries_restores_tools_and_hooks() -> None:
    calls: list[str] = []

    @tool
    async def kept_tool() -> None:
        pass

    @hook(TurnHook.ON_COMPLETE)
    async def kept_hook(turn: Turn, stop_reason: StopReason) -> None:
        calls.append("kept")

    with isolated_registries():

        @tool
        async def temporary_tool() -> None:
            pass

        @hook(TurnHook.ON_COMPLETE)
        async def temporary_hook(turn: Turn, stop_reason: StopReason) -> None:
            calls.append("temporary")

        ToolRegistry.unregister("kept_tool")
        assert "temporary_tool" in ToolRegistry
        assert "kept_tool" not in ToolRegistry
        await Turn(temporary_tool).returning()
        assert sorted(calls) == ["kept", "temporary"]

    assert "temporary_tool" not in ToolRegistry
    assert "temporary_hook" not in HookRegistry
    assert ToolRegistry.get("kept_tool") is kept_tool
    assert HookRegistry.get("kept_hook") is kept_hook

    calls.clear()
    await Turn("kept_tool").returning()
    assert calls == ["kept"]  # the temporary global hook no longer fires


def test_isolated_registries_restores_after_an_exception() -> None:
    def define_then_fail() -> None:
        with isolated_registries():

            @tool
            async def doomed_tool() -> None:
                pass

            assert "doomed_tool" in ToolRegistry
            raise RuntimeError("leave")

    before = set(ToolRegistry)
    with pytest.raises(RuntimeError):
        define_then_fail()
    assert set(ToolRegistry) == before
    assert "doomed_tool" not in ToolRegistry
