"""Turns: construction, running, re-entrancy, timeouts, cancellation and hooks (SPEC §1.3).

Coordination is done with ``asyncio.Event``; the only clocks involved are turn
timeouts that expire while a tool (or a consumer) is blocked on an event that is
never set, so outcomes do not depend on machine speed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import time
from collections.abc import AsyncIterator, Coroutine, Iterable
from datetime import datetime
from typing import Any

import pytest
from core_helpers import noop_turn

from pygents import (
    Agent,
    SafeExecutionError,
    StopReason,
    ToolHook,
    Turn,
    TurnHook,
    TurnTimeoutError,
    UnregisteredToolError,
    WrongRunMethodError,
    hook,
    tool,
)
from stuck_tools import blocking_tool

GUARD = 5  # seconds: only bounds a wait that would hang if the code under test is broken

_hook_ids = itertools.count()


def record(turn: Turn, log: list[tuple[Any, ...]], *events: TurnHook) -> list[tuple[Any, ...]]:
    """Attach one instance hook per event (all TurnHook events by default).

    Each appends ``(event, *hook_args)`` to ``log``.
    """
    for event in events or tuple(TurnHook):

        async def recorder(*args: Any, _event: TurnHook = event) -> None:
            log.append((_event, *args))

        recorder.__name__ = f"record_{event.value}_{next(_hook_ids)}"
        getattr(turn, event.value)(recorder)
    return log


def kinds(log: list[tuple[Any, ...]]) -> list[Any]:
    return [entry[0] for entry in log]


def count(log: list[tuple[Any, ...]], event: TurnHook) -> int:
    return kinds(log).count(event)


async def collect(stream: Any, into: list[Any]) -> None:
    """Consume ``stream``, appending each value to ``into`` (kept if the stream raises)."""
    async for value in stream:
        into.append(value)


async def cancel_once_reached(
    run: Coroutine[Any, Any, Any], reached: asyncio.Event
) -> asyncio.Task[Any]:
    """Run ``run`` in a task, cancel it once ``reached`` is set, and check it ends cancelled."""
    task = asyncio.create_task(run)
    async with asyncio.timeout(GUARD):
        await reached.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return task


def assert_aware(value: datetime | None) -> None:
    assert isinstance(value, datetime)
    assert value.tzinfo is not None
    assert value.utcoffset() is not None


# -- construction ---------------------------------------------------------------------


async def test_tool_by_registered_name_or_object() -> None:
    @tool
    async def echo(x: int) -> int:
        return x

    by_name = Turn("echo", args=[1])
    by_object = Turn(echo, args=[2])
    assert by_name.tool is echo
    assert by_object.tool is echo
    assert await by_name.returning() == 1
    assert await by_object.returning() == 2


def test_unknown_tool_name_raises_unregistered() -> None:
    with pytest.raises(UnregisteredToolError, match="no_such_tool"):
        Turn("no_such_tool")


def test_tool_of_wrong_type_is_type_error() -> None:
    async def not_decorated() -> None:
        pass

    for bad in (42, None, not_decorated):
        with pytest.raises(TypeError, match="tool"):
            Turn(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"args": "abc"}, TypeError, "args"),
        ({"args": {"a": 1}}, TypeError, "args"),
        ({"args": 5}, TypeError, "args"),
        ({"kwargs": [("a", 1)]}, TypeError, "kwargs"),
        ({"kwargs": "a=1"}, TypeError, "kwargs"),
        ({"kwargs": {1: "a"}}, TypeError, "kwargs"),
        ({"timeout": "5"}, TypeError, "timeout"),
        ({"timeout": None}, TypeError, "timeout"),
        ({"timeout": True}, TypeError, "timeout"),
        ({"timeout": 0}, ValueError, "timeout"),
        ({"timeout": -1}, ValueError, "timeout"),
        ({"timeout": -0.5}, ValueError, "timeout"),
        ({"timeout": math.inf}, ValueError, "timeout"),
        ({"timeout": math.nan}, ValueError, "timeout"),
        ({"tags": "io"}, TypeError, "tags"),
        ({"tags": 3}, TypeError, "tags"),
        ({"tags": ["ok", 3]}, TypeError, "tag"),
        ({"metadata": [("k", "v")]}, TypeError, "metadata"),
        ({"metadata": "k=v"}, TypeError, "metadata"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict[str, Any], error: type, match: str) -> None:
    @tool
    async def target() -> None:
        pass

    with pytest.raises(error, match=match):
        Turn(target, **kwargs)


def test_string_tags_message_suggests_a_list() -> None:
    @tool
    async def tagged() -> None:
        pass

    with pytest.raises(TypeError) as info:
        Turn(tagged, tags="io")
    assert "'io'" in str(info.value)


def test_defaults() -> None:
    @tool
    async def plain() -> None:
        pass

    turn = Turn(plain)
    assert turn.args == ()
    assert turn.kwargs == {}
    assert turn.timeout == 60
    assert turn.tags == frozenset()
    assert isinstance(turn.tags, frozenset)
    assert turn.metadata == {}
    assert type(turn.metadata) is dict
    assert turn.hooks == []
    assert isinstance(turn.hooks, list)
    assert turn.output is None
    assert turn.start_time is None
    assert turn.end_time is None
    assert turn.stop_reason is None
    assert turn.is_running is False


def test_attributes_from_constructor() -> None:
    @tool
    async def shaped(a: int, b: int = 0) -> int:
        return a + b

    turn = Turn(
        shaped, args=(1,), kwargs={"b": 2}, timeout=1.5, tags={"x", "y"}, metadata={"k": "v"}
    )
    assert list(turn.args) == [1]
    assert turn.kwargs == {"b": 2}
    assert turn.timeout == 1.5
    assert turn.tags == frozenset({"x", "y"})
    assert isinstance(turn.tags, frozenset)
    assert turn.metadata == {"k": "v"}


def test_uuid_is_a_unique_stable_string() -> None:
    @tool
    async def ident() -> None:
        pass

    turns = [Turn(ident) for _ in range(50)]
    uuids = [t.uuid for t in turns]
    assert all(isinstance(u, str) and u for u in uuids)
    assert len(set(uuids)) == len(uuids)
    assert turns[0].uuid == uuids[0]  # stable on re-read


def test_metadata_is_a_free_dict() -> None:
    @tool
    async def free() -> None:
        pass

    turn = Turn(free)
    turn.metadata["trace"] = "abc"
    turn.metadata["nested"] = {"a": [1, 2]}
    assert turn.metadata == {"trace": "abc", "nested": {"a": [1, 2]}}
    turn.metadata = {"replaced": True}
    assert turn.metadata == {"replaced": True}


def test_setters_validate_when_idle() -> None:
    @tool
    async def settable() -> None:
        pass

    turn = Turn(settable)
    with pytest.raises(TypeError, match="tags"):
        turn.tags = "io"  # type: ignore[assignment]
    with pytest.raises(ValueError, match="timeout"):
        turn.timeout = 0
    with pytest.raises(UnregisteredToolError):
        turn.tool = "missing_tool"  # type: ignore[assignment]
    with pytest.raises(TypeError):
        turn.hooks = ["not a hook"]  # type: ignore[list-item]
    turn.timeout = 3
    turn.tags = ["a"]  # type: ignore[assignment]
    assert turn.timeout == 3
    assert turn.tags == frozenset({"a"})


# -- running ----------------------------------------------------------------------------


async def test_returning_runs_a_coroutine_tool() -> None:
    @tool
    async def add(a: int, b: int) -> int:
        return a + b

    turn = Turn(add, args=[2], kwargs={"b": 3})
    assert await turn.returning() == 5
    assert turn.output == 5
    assert turn.stop_reason is StopReason.COMPLETED
    assert_aware(turn.start_time)
    assert_aware(turn.end_time)
    assert turn.start_time <= turn.end_time  # type: ignore[operator]
    assert turn.is_running is False


async def test_yielding_runs_a_generator_tool() -> None:
    @tool
    async def count_to(n: int):
        for i in range(1, n + 1):
            yield i

    turn = Turn(count_to, kwargs={"n": 3})
    seen = [v async for v in turn.yielding()]
    assert seen == [1, 2, 3]
    assert turn.output == [1, 2, 3]
    assert turn.stop_reason is StopReason.COMPLETED
    assert_aware(turn.start_time)
    assert_aware(turn.end_time)
    assert turn.is_running is False


async def test_wrong_run_method() -> None:
    @tool
    async def single() -> int:
        return 1

    @tool
    async def stream():
        yield 1

    single_turn = Turn(single)
    stream_turn = Turn(stream)
    completes: list[tuple[Any, ...]] = []
    record(single_turn, completes, TurnHook.ON_COMPLETE)
    record(stream_turn, completes, TurnHook.ON_COMPLETE)

    with pytest.raises(WrongRunMethodError, match="returning"):
        async for _ in single_turn.yielding():
            pass
    with pytest.raises(WrongRunMethodError, match="yielding"):
        await stream_turn.returning()

    # Never started: nothing fired, nothing left running, the right method still works.
    assert completes == []
    assert not single_turn.is_running
    assert not stream_turn.is_running
    assert await single_turn.returning() == 1
    assert [v async for v in stream_turn.yielding()] == [1]


async def test_turn_can_run_again_after_completion() -> None:
    calls: list[int] = []

    @tool
    async def again(x: int) -> int:
        calls.append(x)
        return x * 2

    turn = Turn(again, args=[4])
    uuid = turn.uuid
    assert await turn.returning() == 8
    first_end = turn.end_time
    turn.args = [5]  # type: ignore[assignment]
    assert await turn.returning() == 10
    assert calls == [4, 5]
    assert turn.output == 10
    assert turn.stop_reason is StopReason.COMPLETED
    assert turn.end_time >= first_end  # type: ignore[operator]
    assert turn.uuid == uuid


async def test_turn_can_run_again_after_an_error() -> None:
    fail = True

    @tool
    async def flaky() -> str:
        if fail:
            raise RuntimeError("first time")
        return "ok"

    turn = Turn(flaky)
    with pytest.raises(RuntimeError):
        await turn.returning()
    assert turn.stop_reason is StopReason.ERROR
    fail = False
    assert await turn.returning() == "ok"
    assert turn.stop_reason is StopReason.COMPLETED


# -- re-entrancy and read-only while running ---------------------------------------------


async def test_running_turn_cannot_start_again() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def held() -> str:
        started.set()
        await release.wait()
        return "done"

    turn = Turn(held)
    first = asyncio.create_task(turn.returning())
    async with asyncio.timeout(GUARD):
        await started.wait()
    assert turn.is_running

    with pytest.raises(SafeExecutionError):
        await turn.returning()

    release.set()
    assert await first == "done"  # the first run is unaffected
    assert turn.stop_reason is StopReason.COMPLETED
    assert not turn.is_running


async def test_streaming_turn_cannot_start_again() -> None:
    got_first, release = asyncio.Event(), asyncio.Event()

    @tool
    async def held_stream():
        yield 1
        await release.wait()
        yield 2

    turn = Turn(held_stream)

    async def consume() -> list[int]:
        out = []
        async for value in turn.yielding():
            out.append(value)
            got_first.set()
        return out

    first = asyncio.create_task(consume())
    async with asyncio.timeout(GUARD):
        await got_first.wait()

    with pytest.raises(SafeExecutionError):
        async for _ in turn.yielding():
            pass

    release.set()
    assert await first == [1, 2]
    assert turn.output == [1, 2]
    assert not turn.is_running


async def test_attributes_are_read_only_while_running_but_metadata_is_free() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def busy(x: int = 0) -> int:
        started.set()
        await release.wait()
        return x

    @tool
    async def other() -> None:
        pass

    async def spare_hook(turn: Turn) -> None:
        pass

    turn = Turn(busy, args=[1], kwargs={}, timeout=30, tags=["t"], metadata={"a": 1})
    task = asyncio.create_task(turn.returning())
    async with asyncio.timeout(GUARD):
        await started.wait()

    attempts: dict[str, Any] = {
        "tool": other,
        "args": [2],
        "kwargs": {"x": 3},
        "timeout": 5,
        "tags": ["u"],
        "hooks": [],
    }
    for name, value in attempts.items():
        with pytest.raises(SafeExecutionError):
            setattr(turn, name, value)
    assert turn.tool is busy
    assert list(turn.args) == [1]
    assert turn.kwargs == {}
    assert turn.timeout == 30
    assert turn.tags == frozenset({"t"})

    turn.metadata["b"] = 2
    assert turn.metadata == {"a": 1, "b": 2}
    turn.metadata = {"c": 3}
    assert turn.metadata == {"c": 3}

    release.set()
    assert await task == 1
    assert turn.metadata == {"c": 3}
    turn.timeout = 5  # allowed again once finished
    assert turn.timeout == 5


# -- arguments by reference --------------------------------------------------------------


async def test_arguments_by_reference_are_evaluated_at_run_time() -> None:
    state = {"value": 1}
    evaluations: list[str] = []

    def current() -> int:
        evaluations.append("arg")
        return state["value"]

    @tool
    async def show(a: int, b: int, c: Any) -> tuple[int, int, Any]:
        return a, b, c

    def needs_one(x: int) -> int:
        return x

    turn = Turn(
        show,
        args=[current],
        kwargs={"b": lambda: state["value"] * 10, "c": needs_one},
    )
    assert evaluations == []  # not at construction
    state["value"] = 7
    a, b, c = await turn.returning()
    assert (a, b) == (7, 70)
    assert c is needs_one  # a callable that needs an argument passes through unchanged
    assert evaluations == ["arg"]

    state["value"] = 8
    assert (await turn.returning())[:2] == (8, 80)  # evaluated again on every run


async def test_arguments_by_reference_for_streaming_tools() -> None:
    source = {"n": 0}

    @tool
    async def upto(n: int):
        for i in range(n):
            yield i

    turn = Turn(upto, kwargs={"n": lambda: source["n"]})
    source["n"] = 3
    assert [v async for v in turn.yielding()] == [0, 1, 2]


async def test_plain_values_pass_through_unchanged() -> None:
    payload = {"key": [1, 2]}

    @tool
    async def identity(value: Any) -> Any:
        return value

    result = await Turn(identity, kwargs={"value": payload}).returning()
    assert result is payload


# -- timeouts -----------------------------------------------------------------------------


async def test_default_timeout_is_60_seconds() -> None:
    @tool
    async def quick() -> None:
        pass

    assert Turn(quick).timeout == 60


async def test_returning_timeout() -> None:
    never = asyncio.Event()
    cleaned_up: list[bool] = []

    @tool
    async def stuck() -> None:
        try:
            await never.wait()
        finally:
            cleaned_up.append(True)

    turn = Turn(stuck, timeout=0.05)
    log = record(turn, [])
    with pytest.raises(TurnTimeoutError):
        await turn.returning()

    assert turn.stop_reason is StopReason.TIMEOUT
    assert_aware(turn.end_time)
    assert not turn.is_running
    assert cleaned_up == [True]
    assert kinds(log) == [TurnHook.BEFORE_RUN, TurnHook.ON_TIMEOUT, TurnHook.ON_COMPLETE]
    assert log[1] == (TurnHook.ON_TIMEOUT, turn)
    assert log[2] == (TurnHook.ON_COMPLETE, turn, StopReason.TIMEOUT)


async def test_returning_timeout_message_names_the_turn() -> None:
    never = asyncio.Event()

    @tool
    async def slow_named() -> None:
        await never.wait()

    with pytest.raises(TurnTimeoutError, match="slow_named"):
        await Turn(slow_named, timeout=0.05).returning()


async def test_yielding_timeout_counts_consumer_time() -> None:
    resumed: list[bool] = []
    finalized: list[bool] = []

    @tool
    async def ticks():
        try:
            yield 1
            resumed.append(True)
            yield 2
        finally:
            finalized.append(True)

    turn = Turn(ticks, timeout=0.05)
    log = record(turn, [])
    stream = turn.yielding()
    assert await anext(stream) == 1

    # The consumer is busy well past the turn's deadline. The deadline must not
    # interrupt the consumer's own await, but the next step must fail at once.
    wake = asyncio.Event()
    asyncio.get_running_loop().call_later(0.3, wake.set)
    await wake.wait()
    assert wake.is_set()

    with pytest.raises(TurnTimeoutError):
        await anext(stream)
    assert resumed == []  # the generator was not stepped past the deadline
    assert finalized == [True]
    assert turn.stop_reason is StopReason.TIMEOUT
    assert turn.output == [1]
    assert_aware(turn.end_time)
    assert not turn.is_running
    assert count(log, TurnHook.ON_TIMEOUT) == 1
    assert count(log, TurnHook.ON_COMPLETE) == 1
    assert count(log, TurnHook.ON_ERROR) == 0
    assert log[-1] == (TurnHook.ON_COMPLETE, turn, StopReason.TIMEOUT)


async def test_yielding_timeout_when_generator_blocks_mid_stream() -> None:
    never = asyncio.Event()
    finalized: list[bool] = []

    @tool
    async def stalls():
        try:
            yield "a"
            yield "b"
            await never.wait()
            yield "c"
        finally:
            finalized.append(True)

    turn = Turn(stalls, timeout=0.05)
    log = record(turn, [], TurnHook.ON_TIMEOUT, TurnHook.ON_ERROR, TurnHook.ON_COMPLETE)
    seen: list[str] = []
    with pytest.raises(TurnTimeoutError):
        await collect(turn.yielding(), seen)

    assert seen == ["a", "b"]
    assert turn.output == ["a", "b"]
    assert turn.stop_reason is StopReason.TIMEOUT
    assert finalized == [True]
    assert not turn.is_running
    assert log == [(TurnHook.ON_TIMEOUT, turn), (TurnHook.ON_COMPLETE, turn, StopReason.TIMEOUT)]


async def test_yielding_timeout_before_the_first_value() -> None:
    never = asyncio.Event()

    @tool
    async def silent():
        await never.wait()
        yield 1

    turn = Turn(silent, timeout=0.05)
    with pytest.raises(TurnTimeoutError):
        async for _ in turn.yielding():
            pass
    assert turn.stop_reason is StopReason.TIMEOUT
    assert turn.output == []


async def test_outer_cancellation_is_not_turned_into_a_timeout() -> None:
    started = asyncio.Event()
    turn = Turn(blocking_tool(started), timeout=30)
    log = record(turn, [], TurnHook.ON_TIMEOUT, TurnHook.ON_ERROR, TurnHook.ON_COMPLETE)
    task = await cancel_once_reached(turn.returning(), started)
    assert task.cancelled()
    assert turn.stop_reason is StopReason.CANCELLED
    assert log == [(TurnHook.ON_COMPLETE, turn, StopReason.CANCELLED)]


async def test_enclosing_asyncio_timeout_is_not_reported_as_turn_timeout() -> None:
    never = asyncio.Event()

    @tool
    async def under_outer_timeout() -> None:
        await never.wait()

    turn = Turn(under_outer_timeout, timeout=30)
    with pytest.raises(TimeoutError) as info:
        async with asyncio.timeout(0.05):
            await turn.returning()
    # The caller's own timeout fired, not the turn's: a plain TimeoutError.
    assert not isinstance(info.value, TurnTimeoutError)
    assert turn.stop_reason is StopReason.CANCELLED
    assert not turn.is_running


def _let_the_clock_pass(seconds: float) -> None:
    """Block the event loop (not a wait for an event): makes a deadline pass for sure."""
    time.sleep(seconds)


async def test_outer_cancel_and_deadline_together_still_cancel() -> None:
    started = asyncio.Event()
    turn = Turn(blocking_tool(started), timeout=0.05)
    task = asyncio.create_task(turn.returning())
    async with asyncio.timeout(GUARD):
        await started.wait()
    # An outside cancel due just after the turn's deadline; then block the loop past
    # both, so that the deadline fires and the outside cancel arrives (in that order)
    # before the task resumes.
    asyncio.get_running_loop().call_later(0.06, task.cancel)
    _let_the_clock_pass(0.1)
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert turn.stop_reason is StopReason.CANCELLED
    assert not turn.is_running


# -- the deadline bounds the turn's own hooks ---------------------------------------------

_BOUNDED_HOOKS = [
    pytest.param(TurnHook.BEFORE_RUN, False, id="before_run"),
    pytest.param(TurnHook.AFTER_RUN, False, id="after_run"),
    pytest.param(ToolHook.BEFORE_INVOKE, False, id="before_invoke"),
    pytest.param(ToolHook.AFTER_INVOKE, False, id="after_invoke"),
    pytest.param(TurnHook.BEFORE_RUN, True, id="stream-before_run"),
    pytest.param(TurnHook.ON_VALUE, True, id="stream-on_value"),
    pytest.param(ToolHook.ON_YIELD, True, id="stream-on_yield"),
    pytest.param(ToolHook.AFTER_INVOKE, True, id="stream-after_invoke"),
    pytest.param(TurnHook.AFTER_RUN, True, id="stream-after_run"),
]


def stalling_turn(event: TurnHook | ToolHook, streaming: bool, cut: list[str]) -> Turn:
    """A 50 ms turn whose ``event`` hook would never return unless cancelled."""
    never = asyncio.Event()

    @tool
    async def one() -> int:
        return 1

    @tool
    async def many() -> AsyncIterator[int]:
        yield 1
        yield 2

    used: Any = many if streaming else one
    turn = Turn(used, timeout=0.05)

    async def stall() -> None:
        try:
            await never.wait()
        except asyncio.CancelledError:
            cut.append(event.value)
            raise

    getattr(turn if isinstance(event, TurnHook) else used, event.value)(stall)
    return turn


async def run_turn(turn: Turn) -> Any:
    async with asyncio.timeout(GUARD):  # a TimeoutError, not a TurnTimeoutError, if broken
        if turn.tool.streaming:
            return [value async for value in turn.yielding()]
        return await turn.returning()


async def run_agent(agent: Agent) -> list[Any]:
    async with asyncio.timeout(GUARD):  # a TimeoutError, not a TurnTimeoutError, if broken
        return [value async for _, value in agent.run()]


@pytest.mark.parametrize(("event", "streaming"), _BOUNDED_HOOKS)
async def test_a_hook_that_never_returns_times_its_turn_out(
    event: TurnHook | ToolHook, streaming: bool
) -> None:
    cut: list[str] = []
    turn = stalling_turn(event, streaming, cut)
    log = record(turn, [], TurnHook.ON_TIMEOUT, TurnHook.ON_ERROR, TurnHook.ON_COMPLETE)

    with pytest.raises(TurnTimeoutError, match=r"timed out after 0\.05 s"):
        await run_turn(turn)

    assert cut == [event.value]  # the hook was cancelled at the deadline
    assert turn.stop_reason is StopReason.TIMEOUT
    assert isinstance(turn.error, TurnTimeoutError)
    assert log == [(TurnHook.ON_TIMEOUT, turn), (TurnHook.ON_COMPLETE, turn, StopReason.TIMEOUT)]
    assert not turn.is_running
    assert_aware(turn.end_time)


@pytest.mark.parametrize(("event", "streaming"), _BOUNDED_HOOKS)
async def test_in_an_agent_a_hook_that_never_returns_times_its_turn_out(
    event: TurnHook | ToolHook, streaming: bool
) -> None:
    cut: list[str] = []
    turn = stalling_turn(event, streaming, cut)
    agent = Agent("a", "", [turn.tool])
    timed_out: list[Turn] = []

    @agent.on_turn_timeout
    async def note(a: Agent, t: Turn) -> None:
        timed_out.append(t)

    completions = record(turn, [], TurnHook.ON_COMPLETE)
    await agent.put(turn)

    with pytest.raises(TurnTimeoutError):
        await run_agent(agent)

    assert cut == [event.value]
    assert turn.stop_reason is StopReason.TIMEOUT
    assert timed_out == [turn]
    assert completions == [(TurnHook.ON_COMPLETE, turn, StopReason.TIMEOUT)]
    assert not agent.is_running


@pytest.mark.parametrize("streaming", [False, True], ids=["coroutine", "stream"])
async def test_a_closing_tool_hook_that_raises_fails_the_turn_with_on_error(
    streaming: bool,
) -> None:
    @tool
    async def one() -> int:
        return 1

    @tool
    async def many() -> AsyncIterator[int]:
        yield 1

    used: Any = many if streaming else one
    turn = Turn(used)

    @used.after_invoke
    async def refuse() -> None:
        raise ValueError("refused after the call")

    log = record(turn, [], TurnHook.AFTER_RUN, TurnHook.ON_ERROR, TurnHook.ON_COMPLETE)
    with pytest.raises(ValueError, match="refused"):
        await run_turn(turn)

    assert turn.stop_reason is StopReason.ERROR
    assert kinds(log) == [TurnHook.ON_ERROR, TurnHook.ON_COMPLETE]  # as for any hook error
    assert log[0] == (TurnHook.ON_ERROR, turn, turn.error)
    assert isinstance(turn.error, ValueError)


async def test_a_hook_that_swallows_the_deadlines_cancellation_still_times_out() -> None:
    never = asyncio.Event()

    @tool
    async def one() -> int:
        return 1

    turn = Turn(one, timeout=0.05)
    swallowed: list[bool] = []

    @turn.after_run
    async def stubborn() -> None:
        try:
            await never.wait()
        except asyncio.CancelledError:  # misbehaves: carries on as if not cancelled
            swallowed.append(True)

    log = record(turn, [], TurnHook.ON_TIMEOUT, TurnHook.ON_ERROR, TurnHook.ON_COMPLETE)
    with pytest.raises(TurnTimeoutError):
        await run_turn(turn)

    assert swallowed == [True]
    assert turn.stop_reason is StopReason.TIMEOUT
    assert log == [(TurnHook.ON_TIMEOUT, turn), (TurnHook.ON_COMPLETE, turn, StopReason.TIMEOUT)]


def past_the_deadline() -> asyncio.Event:
    """An event set well after a 50 ms deadline (the wait may only end later, never sooner)."""
    later = asyncio.Event()
    asyncio.get_running_loop().call_later(0.3, later.set)
    return later


async def test_outcome_hooks_run_to_their_end_after_the_deadline() -> None:
    finished: list[Any] = []

    @tool
    async def quick() -> int:
        return 1

    done = Turn(quick, timeout=0.05)

    @done.on_complete
    async def slow_report(turn: Turn, reason: StopReason) -> None:
        await past_the_deadline().wait()
        finished.append(reason)

    assert await done.returning() == 1  # ON_COMPLETE outlived the deadline, uncut
    assert finished == [StopReason.COMPLETED]
    assert done.stop_reason is StopReason.COMPLETED

    never = asyncio.Event()

    @tool
    async def stuck() -> None:
        await never.wait()

    late = Turn(stuck, timeout=0.05)

    @late.on_timeout
    async def slow_alert(turn: Turn) -> None:
        await past_the_deadline().wait()
        finished.append("alerted")

    with pytest.raises(TurnTimeoutError):
        await late.returning()
    assert finished == [StopReason.COMPLETED, "alerted"]
    assert late.stop_reason is StopReason.TIMEOUT


# -- cancellation and early exit ---------------------------------------------------------


async def test_cancelling_returning() -> None:
    started = asyncio.Event()
    never = asyncio.Event()
    cleaned_up: list[bool] = []

    @tool
    async def cancellable() -> None:
        started.set()
        try:
            await never.wait()
        finally:
            cleaned_up.append(True)

    turn = Turn(cancellable)
    log = record(turn, [])
    await cancel_once_reached(turn.returning(), started)

    assert turn.stop_reason is StopReason.CANCELLED
    assert not turn.is_running
    assert cleaned_up == [True]
    assert_aware(turn.end_time)
    assert count(log, TurnHook.ON_COMPLETE) == 1
    assert count(log, TurnHook.ON_ERROR) == 0
    assert count(log, TurnHook.AFTER_RUN) == 0
    assert log[-1] == (TurnHook.ON_COMPLETE, turn, StopReason.CANCELLED)


@pytest.mark.parametrize("point", [TurnHook.BEFORE_RUN, TurnHook.AFTER_RUN, TurnHook.ON_VALUE])
async def test_cancelling_while_a_turn_hook_blocks_ends_the_turn_cancelled(point: TurnHook) -> None:
    in_hook = asyncio.Event()
    never = asyncio.Event()
    ran: list[bool] = []
    finalized: list[bool] = []

    @tool
    async def returns_first() -> str:
        ran.append(True)
        return "result"

    @tool
    async def values():
        ran.append(True)
        try:
            yield 1
            yield 2
        finally:
            finalized.append(True)

    async def blocks(*_: Any) -> None:
        in_hook.set()
        await never.wait()

    turn = Turn(values if point is TurnHook.ON_VALUE else returns_first)
    getattr(turn, point.value)(blocks)
    log = record(turn, [], TurnHook.ON_ERROR, TurnHook.ON_COMPLETE)
    run = collect(turn.yielding(), []) if point is TurnHook.ON_VALUE else turn.returning()
    await cancel_once_reached(run, in_hook)

    assert ran == ([] if point is TurnHook.BEFORE_RUN else [True])
    assert finalized == ([True] if point is TurnHook.ON_VALUE else [])
    assert turn.stop_reason is StopReason.CANCELLED
    assert not turn.is_running
    assert log == [(TurnHook.ON_COMPLETE, turn, StopReason.CANCELLED)]


async def test_cancelling_a_task_iterating_yielding() -> None:
    got_first = asyncio.Event()
    never = asyncio.Event()
    finalized: list[bool] = []

    @tool
    async def endless():
        try:
            yield 1
            await never.wait()
            yield 2
        finally:
            finalized.append(True)

    turn = Turn(endless)
    log = record(turn, [])
    seen: list[int] = []

    async def consume() -> None:
        async for value in turn.yielding():
            seen.append(value)
            got_first.set()

    await cancel_once_reached(consume(), got_first)

    assert seen == [1]
    assert turn.output == [1]
    assert turn.stop_reason is StopReason.CANCELLED
    assert finalized == [True]
    assert not turn.is_running
    assert count(log, TurnHook.ON_COMPLETE) == 1
    assert count(log, TurnHook.ON_ERROR) == 0
    assert log[-1] == (TurnHook.ON_COMPLETE, turn, StopReason.CANCELLED)


async def test_cancelling_a_consumer_blocked_in_its_own_body() -> None:
    got_first = asyncio.Event()
    never = asyncio.Event()
    finalized: list[bool] = []

    turn = Turn(_streaming_tool_with_cleanup(finalized, range(100)))
    log = record(turn, [], TurnHook.ON_ERROR, TurnHook.ON_COMPLETE)

    async def consume() -> None:
        async with contextlib.aclosing(turn.yielding()) as stream:
            async for _ in stream:
                got_first.set()
                await never.wait()

    await cancel_once_reached(consume(), got_first)
    assert turn.stop_reason is StopReason.CANCELLED
    assert turn.output == [0]
    assert finalized == [True]
    assert not turn.is_running
    assert log == [(TurnHook.ON_COMPLETE, turn, StopReason.CANCELLED)]


def _streaming_tool_with_cleanup(finalized: list[bool], items: Iterable[Any] = "abcdef") -> Any:
    """A streaming tool yielding ``items`` that notes in ``finalized`` when it is closed."""

    @tool
    async def letters():
        try:
            for item in items:
                yield item
        finally:
            finalized.append(True)

    return letters


async def test_early_exit_with_aclosing_and_break() -> None:
    finalized: list[bool] = []
    turn = Turn(_streaming_tool_with_cleanup(finalized))
    log = record(turn, [])

    seen = []
    async with contextlib.aclosing(turn.yielding()) as stream:
        async for value in stream:
            seen.append(value)
            if len(seen) == 2:
                break

    assert seen == ["a", "b"]
    assert turn.stop_reason is StopReason.CANCELLED
    assert turn.output == ["a", "b"]
    assert finalized == [True]
    assert not turn.is_running
    assert count(log, TurnHook.ON_COMPLETE) == 1
    assert count(log, TurnHook.ON_ERROR) == 0
    assert count(log, TurnHook.AFTER_RUN) == 0
    assert log[-1] == (TurnHook.ON_COMPLETE, turn, StopReason.CANCELLED)


async def test_early_exit_with_explicit_aclose() -> None:
    finalized: list[bool] = []
    turn = Turn(_streaming_tool_with_cleanup(finalized))
    log = record(turn, [])

    stream = turn.yielding()
    assert await anext(stream) == "a"
    assert await anext(stream) == "b"
    assert await anext(stream) == "c"
    await stream.aclose()

    assert turn.stop_reason is StopReason.CANCELLED
    assert turn.output == ["a", "b", "c"]
    assert finalized == [True]
    assert not turn.is_running
    assert count(log, TurnHook.ON_COMPLETE) == 1
    assert count(log, TurnHook.ON_ERROR) == 0
    assert log[-1] == (TurnHook.ON_COMPLETE, turn, StopReason.CANCELLED)
    # Not stuck: it runs again, to completion this time.
    assert [v async for v in turn.yielding()] == list("abcdef")
    assert turn.stop_reason is StopReason.COMPLETED


# -- errors -------------------------------------------------------------------------------


async def test_tool_error() -> None:
    boom = ValueError("boom")

    @tool
    async def explodes() -> None:
        raise boom

    turn = Turn(explodes)
    log = record(turn, [])
    with pytest.raises(ValueError, match="boom") as info:
        await turn.returning()

    assert info.value is boom
    assert turn.stop_reason is StopReason.ERROR
    assert not turn.is_running
    assert_aware(turn.end_time)
    assert log == [
        (TurnHook.BEFORE_RUN, turn),
        (TurnHook.ON_ERROR, turn, boom),
        (TurnHook.ON_COMPLETE, turn, StopReason.ERROR),
    ]


async def test_tool_error_while_streaming() -> None:
    boom = KeyError("mid-stream")

    @tool
    async def breaks():
        yield 1
        yield 2
        raise boom

    turn = Turn(breaks)
    log = record(turn, [])
    seen: list[int] = []
    with pytest.raises(KeyError) as info:
        await collect(turn.yielding(), seen)

    assert info.value is boom
    assert seen == [1, 2]
    assert turn.output == [1, 2]
    assert turn.stop_reason is StopReason.ERROR
    assert not turn.is_running
    assert log == [
        (TurnHook.BEFORE_RUN, turn),
        (TurnHook.ON_VALUE, turn, 1),
        (TurnHook.ON_VALUE, turn, 2),
        (TurnHook.ON_ERROR, turn, boom),
        (TurnHook.ON_COMPLETE, turn, StopReason.ERROR),
    ]


async def test_before_run_hook_raising() -> None:
    ran: list[bool] = []
    oops = RuntimeError("refused")

    @tool
    async def guarded_tool() -> None:
        ran.append(True)

    turn = Turn(guarded_tool)

    @turn.before_run
    async def refuse(turn: Turn) -> None:
        raise oops

    log = record(turn, [], TurnHook.AFTER_RUN, TurnHook.ON_ERROR, TurnHook.ON_COMPLETE)
    with pytest.raises(RuntimeError, match="refused"):
        await turn.returning()
    assert ran == []
    assert turn.stop_reason is StopReason.ERROR
    assert not turn.is_running
    assert log == [(TurnHook.ON_ERROR, turn, oops), (TurnHook.ON_COMPLETE, turn, StopReason.ERROR)]


async def test_after_run_hook_raising() -> None:
    oops = RuntimeError("after failed")

    @tool
    async def fine() -> int:
        return 1

    turn = Turn(fine)

    @turn.after_run
    async def after_fails(turn: Turn, output: int) -> None:
        raise oops

    log = record(turn, [], TurnHook.ON_ERROR, TurnHook.ON_COMPLETE)
    with pytest.raises(RuntimeError, match="after failed"):
        await turn.returning()
    assert turn.stop_reason is StopReason.ERROR
    assert not turn.is_running
    assert log == [(TurnHook.ON_ERROR, turn, oops), (TurnHook.ON_COMPLETE, turn, StopReason.ERROR)]


async def test_after_run_hook_raising_on_a_stream() -> None:
    @tool
    async def short_stream():
        yield 1

    turn = Turn(short_stream)

    @turn.after_run
    async def stream_after_fails(turn: Turn, output: list[int]) -> None:
        raise LookupError("after stream")

    log = record(turn, [], TurnHook.ON_COMPLETE)
    with pytest.raises(LookupError):
        async for _ in turn.yielding():
            pass
    assert turn.stop_reason is StopReason.ERROR
    assert log == [(TurnHook.ON_COMPLETE, turn, StopReason.ERROR)]


# -- hooks --------------------------------------------------------------------------------


async def test_hook_order_and_arguments_for_returning() -> None:
    @tool
    async def answer() -> int:
        return 42

    turn = Turn(answer)
    log = record(turn, [])
    assert await turn.returning() == 42
    assert log == [
        (TurnHook.BEFORE_RUN, turn),
        (TurnHook.AFTER_RUN, turn, 42),
        (TurnHook.ON_COMPLETE, turn, StopReason.COMPLETED),
    ]


async def test_hook_order_and_arguments_for_yielding() -> None:
    @tool
    async def pair():
        yield "x"
        yield "y"

    turn = Turn(pair)
    log = record(turn, [])
    async for value in turn.yielding():
        log.append(("consumer", value))

    assert log == [
        (TurnHook.BEFORE_RUN, turn),
        (TurnHook.ON_VALUE, turn, "x"),
        ("consumer", "x"),
        (TurnHook.ON_VALUE, turn, "y"),
        ("consumer", "y"),
        (TurnHook.AFTER_RUN, turn, ["x", "y"]),
        (TurnHook.ON_COMPLETE, turn, StopReason.COMPLETED),
    ]


async def test_before_run_fires_before_the_tool_body() -> None:
    order: list[str] = []

    @tool
    async def body() -> None:
        order.append("tool")

    turn = Turn(body)

    @turn.before_run
    async def first(turn: Turn) -> None:
        order.append("before_run")

    @turn.on_complete
    async def last(turn: Turn, stop_reason: StopReason) -> None:
        order.append(f"on_complete:{stop_reason}")

    await turn.returning()
    assert order == ["before_run", "tool", "on_complete:completed"]


async def test_instance_decorators_with_options_and_called_form() -> None:
    seen: list[str] = []

    @tool
    async def decorated() -> str:
        return "v"

    turn = Turn(decorated)

    @turn.after_run(lock=True)
    async def with_options(turn: Turn, output: str) -> None:
        seen.append(f"after:{output}")

    async def called(turn: Turn, stop_reason: StopReason) -> None:
        seen.append(f"complete:{stop_reason}")

    attached = turn.on_complete(called)
    assert [h.metadata.name for h in turn.hooks] == ["with_options", "called"]
    assert attached in turn.hooks
    await turn.returning()
    assert seen == ["after:v", "complete:completed"]


async def test_instance_hooks_fire_only_for_their_turn() -> None:
    seen: list[str] = []

    @tool
    async def shared() -> None:
        pass

    mine, theirs = Turn(shared), Turn(shared)

    @mine.on_complete
    async def only_mine(turn: Turn, stop_reason: StopReason) -> None:
        seen.append(turn.uuid)

    await theirs.returning()
    await mine.returning()
    assert seen == [mine.uuid]


async def test_hooks_append_works_and_ignores_tags() -> None:
    seen: list[tuple[str, str]] = []

    @tool
    async def appended() -> None:
        pass

    @hook(TurnHook.ON_COMPLETE, tags=["only-tagged"])
    async def tagged_complete(turn: Turn, stop_reason: StopReason) -> None:
        seen.append((turn.uuid, str(stop_reason)))

    @hook(TurnHook.AFTER_RUN)
    async def untagged_after(turn: Turn, output: Any) -> None:
        seen.append((turn.uuid, "after"))

    with_hook, without_hook = Turn(appended), Turn(appended)
    with_hook.hooks.append(tagged_complete)
    with_hook.hooks.append(untagged_after)
    await without_hook.returning()  # untagged: only the untagged global hook fires
    await with_hook.returning()  # instance hooks: each fires once, tags ignored
    assert seen == [
        (without_hook.uuid, "after"),
        (with_hook.uuid, "after"),
        (with_hook.uuid, "completed"),
    ]


async def test_global_hooks_fire_after_instance_hooks_and_honour_tags() -> None:
    order: list[str] = []

    @tool
    async def globally() -> None:
        pass

    @hook(TurnHook.AFTER_RUN)
    async def global_any(turn: Turn, output: Any) -> None:
        order.append("global_any")

    @hook(TurnHook.AFTER_RUN, tags=["red"])
    async def global_red(turn: Turn, output: Any) -> None:
        order.append("global_red")

    red = Turn(globally, tags=["red"])

    @red.after_run
    async def own(turn: Turn, output: Any) -> None:
        order.append("own")

    await red.returning()
    assert order == ["own", "global_any", "global_red"]
    order.clear()
    await Turn(globally, tags=["blue"]).returning()
    assert order == ["global_any"]


async def test_hook_exception_stops_later_hooks() -> None:
    seen: list[str] = []

    turn = noop_turn()

    @turn.after_run
    async def first_fails(turn: Turn, output: Any) -> None:
        raise OSError("first")

    @turn.after_run
    async def second_skipped(turn: Turn, output: Any) -> None:
        seen.append("second")

    with pytest.raises(OSError, match="first"):
        await turn.returning()
    assert seen == []


async def test_timeout_hooks_for_yielding() -> None:
    never = asyncio.Event()

    @tool
    async def hangs_after_one():
        yield 1
        await never.wait()
        yield 2

    turn = Turn(hangs_after_one, timeout=0.05)
    log = record(turn, [])
    with pytest.raises(TurnTimeoutError):
        async for _ in turn.yielding():
            pass
    assert log == [
        (TurnHook.BEFORE_RUN, turn),
        (TurnHook.ON_VALUE, turn, 1),
        (TurnHook.ON_TIMEOUT, turn),
        (TurnHook.ON_COMPLETE, turn, StopReason.TIMEOUT),
    ]


async def test_on_complete_fires_exactly_once_per_run() -> None:
    completes: list[StopReason] = []
    fail = False

    @tool
    async def toggle() -> None:
        if fail:
            raise ValueError("x")

    turn = Turn(toggle)

    @turn.on_complete
    async def counted(turn: Turn, stop_reason: StopReason) -> None:
        completes.append(stop_reason)

    await turn.returning()
    fail = True
    with pytest.raises(ValueError):
        await turn.returning()
    assert completes == [StopReason.COMPLETED, StopReason.ERROR]


# -- stress: deadlines, cancellation and abandoned streams ---------------------------------


async def test_timeout_withdraws_its_cancellation_request() -> None:
    never = asyncio.Event()

    @tool
    async def withdrawn() -> None:
        await never.wait()

    @tool
    async def withdrawn_stream():
        yield 1
        await never.wait()

    task = asyncio.current_task()
    assert task is not None
    with pytest.raises(TurnTimeoutError):
        await Turn(withdrawn, timeout=0.05).returning()
    assert task.cancelling() == 0
    with pytest.raises(TurnTimeoutError):
        async for _ in Turn(withdrawn_stream, timeout=0.05).yielding():
            pass
    assert task.cancelling() == 0
    # The task is healthy: its own awaits are not interrupted afterwards.
    done = asyncio.Event()
    asyncio.get_running_loop().call_later(0.1, done.set)
    await done.wait()


async def test_a_finished_turn_leaves_no_deadline_behind() -> None:
    @tool
    async def instant() -> int:
        return 1

    @tool
    async def instant_stream():
        yield 1

    assert await Turn(instant, timeout=0.05).returning() == 1
    assert [v async for v in Turn(instant_stream, timeout=0.05).yielding()] == [1]
    # Wait (on an event, in this same task) past both deadlines: nothing cancels us.
    past_deadlines = asyncio.Event()
    asyncio.get_running_loop().call_later(0.2, past_deadlines.set)
    await past_deadlines.wait()
    assert past_deadlines.is_set()


async def test_stream_timeout_when_each_step_runs_in_its_own_task() -> None:
    """As with ``asyncio.wait_for(anext(stream), ...)``, which runs each step in a new
    task: the stream still has one deadline, and it interrupts the stalled step."""
    never = asyncio.Event()

    @tool
    async def stalls_later():
        yield 1
        await never.wait()
        yield 2

    turn = Turn(stalls_later, timeout=0.05)
    stream = turn.yielding()

    async def step() -> Any:
        return await anext(stream)

    assert await asyncio.create_task(step()) == 1
    stalled = asyncio.create_task(step())
    done, _ = await asyncio.wait({stalled}, timeout=GUARD)
    if not done:
        stalled.cancel()
        with contextlib.suppress(BaseException):
            await stalled
        pytest.fail("the turn's 0.05 s deadline never interrupted the stalled step")
    with pytest.raises(TurnTimeoutError):
        stalled.result()
    assert turn.stop_reason is StopReason.TIMEOUT
    assert not turn.is_running


async def test_abandoned_stream_still_ends_the_turn() -> None:
    """``break`` without ``aclosing``: the stream is finalised by the event loop."""
    completed = asyncio.Event()
    finalized: list[bool] = []

    turn = Turn(_streaming_tool_with_cleanup(finalized, range(10)))
    reasons: list[StopReason] = []

    @turn.on_complete
    async def note_abandoned(turn: Turn, stop_reason: StopReason) -> None:
        reasons.append(stop_reason)
        completed.set()

    async for value in turn.yielding():
        if value == 1:
            break
    async with asyncio.timeout(GUARD):
        await completed.wait()
    assert reasons == [StopReason.CANCELLED]
    assert turn.output == [0, 1]
    assert finalized == [True]
    assert not turn.is_running


async def test_inner_turn_timeout_is_an_error_of_the_outer_turn() -> None:
    """The outer turn did not time out: its tool raised (a nested turn's timeout)."""
    never = asyncio.Event()

    @tool
    async def inner() -> None:
        await never.wait()

    @tool
    async def outer() -> None:
        await Turn(inner, timeout=0.05).returning()

    turn = Turn(outer, timeout=30)
    log = record(turn, [], TurnHook.ON_TIMEOUT, TurnHook.ON_ERROR, TurnHook.ON_COMPLETE)
    with pytest.raises(TurnTimeoutError) as info:
        await turn.returning()
    assert "inner" in str(info.value)
    assert turn.stop_reason is StopReason.ERROR
    assert kinds(log) == [TurnHook.ON_ERROR, TurnHook.ON_COMPLETE]
    assert log[0] == (TurnHook.ON_ERROR, turn, info.value)


async def test_tool_raising_builtin_timeout_error_is_an_error() -> None:
    @tool
    async def socket_timeout() -> None:
        raise TimeoutError("read timed out")

    turn = Turn(socket_timeout)
    log = record(turn, [], TurnHook.ON_TIMEOUT, TurnHook.ON_ERROR, TurnHook.ON_COMPLETE)
    with pytest.raises(TimeoutError, match="read timed out"):
        await turn.returning()
    assert turn.stop_reason is StopReason.ERROR
    assert kinds(log) == [TurnHook.ON_ERROR, TurnHook.ON_COMPLETE]
