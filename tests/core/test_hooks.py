"""Tests for global hooks (``@hook``), ``HookRegistry`` and hook dispatch: tag filtering,
order, sequencing, errors, locking, fixed kwargs and argument dropping (SPEC §1.6)."""

import asyncio
import functools
import gc
import sys
import weakref
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import pytest
from core_helpers import spin

import pygents
from pygents import (
    Agent,
    AgentHook,
    AgentRegistry,
    ContextItem,
    ContextPool,
    ContextPoolHook,
    ContextQueue,
    ContextQueueHook,
    DecoratedTool,
    Hook,
    HookRegistry,
    PygentsError,
    StopReason,
    ToolHook,
    ToolType,
    Turn,
    TurnHook,
    UnregisteredHookError,
    hook,
    tool,
)

# --------------------------------------------------------------------------- helpers


def make_tool(name: str = "job", tags: Iterable[str] = ()) -> DecoratedTool[..., Any]:
    """A coroutine tool ``name(x=0) -> x`` with the given tags."""

    async def fn(x: int = 0) -> int:
        return x

    fn.__name__ = fn.__qualname__ = name
    return tool(tags=list(tags))(fn)


def make_stream(name: str = "stream") -> DecoratedTool[..., Any]:
    async def fn(n: int = 2) -> AsyncIterator[int]:
        for i in range(n):
            yield i

    fn.__name__ = fn.__qualname__ = name
    return tool(fn)


def recorder(log: list[str], label: str) -> Callable[..., Any]:
    """An async hook function (named ``label``) that appends ``label`` to ``log``."""

    async def fn(*args: Any, **kwargs: Any) -> None:
        log.append(label)

    fn.__name__ = fn.__qualname__ = label
    return fn


class Ticker:
    """A no-argument callable counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> int:
        self.calls += 1
        return self.calls


# --------------------------------------------------------------------------- declaring


async def test_hook_decorator_registers_a_global_hook() -> None:
    fired: list[Any] = []

    @hook(ToolHook.AFTER_INVOKE)
    async def log_all(result: Any) -> None:
        """Log every tool result."""
        fired.append(result)

    assert isinstance(log_all, Hook)
    assert HookRegistry.get("log_all") is log_all
    assert log_all.metadata.name == "log_all"
    assert log_all.metadata.description == "Log every tool result."
    assert log_all.types == frozenset({ToolHook.AFTER_INVOKE})
    assert not log_all.lock

    await make_tool("a")(x=1)
    await make_tool("b")(x=2)
    assert fired == [1, 2]


def test_hook_without_docstring_has_no_description() -> None:
    @hook(TurnHook.BEFORE_RUN)
    async def quiet(turn: Turn) -> None:
        return None

    assert quiet.metadata.name == "quiet"
    assert quiet.metadata.description is None


def _plain(turn: Any) -> None:
    return None


async def _agen(turn: Any) -> AsyncIterator[None]:
    yield None


@pytest.mark.parametrize(
    "fn", [_plain, _agen, lambda turn: None], ids=["plain-def", "async-generator", "lambda"]
)
def test_only_async_functions_can_be_hooks(fn: Callable[..., Any]) -> None:
    with pytest.raises(TypeError):
        hook(TurnHook.BEFORE_RUN)(fn)
    with pytest.raises(UnregisteredHookError):
        HookRegistry.get(fn.__name__)


@pytest.mark.parametrize("types", [[], (), set()], ids=["list", "tuple", "set"])
def test_empty_type_list_is_a_value_error(types: Iterable[Any]) -> None:
    with pytest.raises(ValueError):
        hook(types)


@pytest.mark.parametrize(
    "types",
    [
        "before_run",
        ["TurnHook.BEFORE_RUN"],
        [TurnHook.BEFORE_RUN, "after_run"],
        StopReason.COMPLETED,
        [ToolType.ACTION],
        None,
        42,
    ],
    ids=["string", "string-in-list", "mixed", "stop-reason", "tool-type", "none", "int"],
)
def test_non_hook_enum_types_are_a_type_error(types: Any) -> None:
    with pytest.raises(TypeError):
        hook(types)


def test_hook_tags_given_as_a_string_are_rejected() -> None:
    with pytest.raises(TypeError):
        hook(TurnHook.BEFORE_RUN, tags="io")  # type: ignore[arg-type]


def test_fixed_kwargs_must_be_accepted_by_the_hook() -> None:
    async def strict(turn: Turn) -> None:
        return None

    with pytest.raises(TypeError, match="env"):
        hook(TurnHook.BEFORE_RUN, env="prod")(strict)
    with pytest.raises(UnregisteredHookError):
        HookRegistry.get("strict")

    async def loose(turn: Turn, **extra: Any) -> None:
        return None

    assert hook(TurnHook.BEFORE_RUN, env="prod")(loose).fixed_kwargs == {"env": "prod"}


# --------------------------------------------------------------------------- registry


async def test_a_different_function_under_a_taken_name_is_a_value_error() -> None:
    log: list[str] = []

    @hook(ToolHook.AFTER_INVOKE)
    async def audit(result: Any) -> None:
        log.append("first")

    first = audit

    async def audit(result: Any) -> None:
        log.append("second")

    with pytest.raises(ValueError, match="audit"):
        hook(ToolHook.AFTER_INVOKE)(audit)
    assert HookRegistry.get("audit") is first

    await make_tool()()
    assert log == ["first"]


async def test_registering_the_same_function_again_is_fine_and_fires_once() -> None:
    log: list[str] = []

    async def audit(result: Any) -> None:
        log.append("audit")

    hook(ToolHook.AFTER_INVOKE)(audit)
    again = hook(ToolHook.AFTER_INVOKE)(audit)
    assert HookRegistry.get("audit").fn is audit
    assert again.fn is audit

    await make_tool()()
    assert log == ["audit"]


def test_unknown_hook_name_raises_unregistered_hook_error() -> None:
    with pytest.raises(UnregisteredHookError, match="nobody"):
        HookRegistry.get("nobody")
    assert issubclass(UnregisteredHookError, LookupError)
    assert issubclass(UnregisteredHookError, PygentsError)


async def test_clear_stops_global_hooks_firing() -> None:
    log: list[str] = []
    hook(ToolHook.AFTER_INVOKE)(recorder(log, "tool_done"))
    hook(TurnHook.BEFORE_RUN)(recorder(log, "turn_start"))
    job = make_tool()

    await Turn(job).returning()
    assert log == ["turn_start", "tool_done"]

    HookRegistry.clear()
    with pytest.raises(UnregisteredHookError):
        HookRegistry.get("tool_done")
    await Turn(job).returning()
    await job()
    assert log == ["turn_start", "tool_done"]


# --------------------------------------------------------------------------- tags


async def test_hook_with_tags_fires_only_for_tools_sharing_a_tag() -> None:
    fired: list[int] = []

    @hook(ToolHook.AFTER_INVOKE, tags=["io", "net"])
    async def io_only(result: int) -> None:
        fired.append(result)

    tools = {
        1: make_tool("both", ["io", "net"]),
        2: make_tool("io_tool", ["io", "db"]),
        3: make_tool("net_tool", ["net"]),
        4: make_tool("db_tool", ["db"]),
        5: make_tool("untagged"),
    }
    for x, t in tools.items():
        assert await t(x=x) == x
    assert fired == [1, 2, 3]
    assert io_only.tags == frozenset({"io", "net"})


async def test_hook_without_tags_fires_for_every_tool() -> None:
    fired: list[int] = []

    @hook(ToolHook.AFTER_INVOKE)
    async def everyone(result: int) -> None:
        fired.append(result)

    await make_tool("tagged", ["io"])(x=1)
    await make_tool("untagged")(x=2)
    assert fired == [1, 2]


async def test_hook_tags_filter_turns() -> None:
    fired: list[str] = []

    @hook(TurnHook.BEFORE_RUN, tags={"urgent", "vip"})
    async def urgent_only(turn: Turn) -> None:
        fired.append(turn.metadata["label"])

    @hook(TurnHook.BEFORE_RUN)
    async def all_turns(turn: Turn) -> None:
        fired.append("all:" + turn.metadata["label"])

    job = make_tool()
    cases = [
        ("urgent", ["urgent", "x"]),
        ("vip", ["vip"]),
        ("other", ["x"]),
        ("none", None),
    ]
    for label, tags in cases:
        await Turn(job, tags=tags, metadata={"label": label}).returning()
    assert fired == ["urgent", "all:urgent", "vip", "all:vip", "all:other", "all:none"]


async def test_instance_hooks_ignore_tags() -> None:
    fired: list[str] = []

    @hook(TurnHook.BEFORE_RUN, tags=["never-used"])
    async def tagged_global(turn: Turn) -> None:
        fired.append("tagged_global:" + turn.metadata["label"])

    job = make_tool(tags=["io"])
    plain = Turn(job, metadata={"label": "plain"})
    tagged = Turn(job, tags=["other"], metadata={"label": "tagged"})
    for turn in (plain, tagged):
        turn.before_run(recorder(fired, "own_" + turn.metadata["label"]))
    tagged.hooks.append(tagged_global)  # a tagged global hook used as an instance hook

    await plain.returning()
    await tagged.returning()
    assert fired == ["own_plain", "own_tagged", "tagged_global:tagged"]

    # the same for a tool: its own hooks fire although a tagged global one does not
    @hook(ToolHook.AFTER_INVOKE, tags=["elsewhere"])
    async def elsewhere(result: Any) -> None:
        fired.append("elsewhere")

    job.after_invoke(recorder(fired, "tool_own"))
    await job()
    assert fired[-1] == "tool_own"
    assert "elsewhere" not in fired


async def test_instance_hooks_fire_only_for_their_own_object() -> None:
    fired: list[str] = []
    first = make_tool("first")
    second = make_tool("second")
    first.after_invoke(recorder(fired, "first_after"))

    await second()
    assert fired == []
    await first()
    assert fired == ["first_after"]

    t1, t2 = Turn(first), Turn(second)
    t1.before_run(recorder(fired, "t1_before"))
    await t2.returning()
    assert fired == ["first_after"]


# --------------------------------------------------------------------------- dispatch order


async def test_instance_hooks_fire_first_in_list_order_then_global_ones() -> None:
    log: list[str] = []
    # globals are registered first, yet they run after the instance hooks
    hook(ToolHook.AFTER_INVOKE)(recorder(log, "g1"))
    hook(ToolHook.AFTER_INVOKE)(recorder(log, "g2"))
    job = make_tool()
    job.after_invoke(recorder(log, "i1"))
    job.after_invoke(recorder(log, "i2"))

    await job()
    assert log == ["i1", "i2", "g1", "g2"]


async def test_global_hook_in_an_instance_list_fires_once_in_instance_position() -> None:
    log: list[str] = []
    g1 = hook(ToolHook.AFTER_INVOKE)(recorder(log, "g1"))
    g2 = hook(ToolHook.AFTER_INVOKE)(recorder(log, "g2"))
    job = make_tool()
    job.after_invoke(recorder(log, "i1"))
    job.hooks.append(g2)

    await job()
    assert log == ["i1", "g2", "g1"]
    assert log.count("g2") == 1
    assert g1 not in job.hooks


async def test_turn_dispatch_order_with_appended_global_hook() -> None:
    log: list[str] = []
    g1 = hook(TurnHook.AFTER_RUN)(recorder(log, "g1"))
    hook(TurnHook.AFTER_RUN)(recorder(log, "g2"))
    turn = Turn(make_tool())
    turn.after_run(recorder(log, "i1"))
    turn.hooks.append(g1)
    turn.after_run(recorder(log, "i2"))

    await turn.returning()
    assert log == ["i1", "g1", "i2", "g2"]


async def test_hooks_run_sequentially() -> None:
    log: list[str] = []
    gate = asyncio.Event()

    @hook(ToolHook.BEFORE_INVOKE)
    async def slow_first(x: int) -> None:
        log.append("first:start")
        await gate.wait()
        log.append("first:end")

    hook(ToolHook.BEFORE_INVOKE)(recorder(log, "second"))
    job = make_tool()

    task = asyncio.create_task(job(x=1))
    await spin()
    assert log == ["first:start"]  # the second hook waits for the first to finish
    assert not task.done()
    gate.set()
    assert await task == 1
    assert log == ["first:start", "first:end", "second"]


async def test_exception_in_a_hook_propagates_and_stops_later_hooks() -> None:
    log: list[str] = []
    body_ran: list[bool] = []

    @tool
    async def guarded_job() -> str:
        body_ran.append(True)
        return "done"

    problem = PermissionError("denied")

    @guarded_job.before_invoke
    async def check() -> None:
        log.append("check")
        raise problem

    guarded_job.before_invoke(recorder(log, "later_instance"))
    hook(ToolHook.BEFORE_INVOKE)(recorder(log, "later_global"))

    with pytest.raises(PermissionError) as info:
        await guarded_job()
    assert info.value is problem
    assert log == ["check"]
    assert body_ran == []


async def test_exception_in_a_global_hook_propagates_from_a_turn() -> None:
    log: list[str] = []

    @hook(TurnHook.AFTER_RUN)
    async def explode(turn: Turn, output: Any) -> None:
        log.append("explode")
        raise RuntimeError("hook failed")

    @hook(TurnHook.AFTER_RUN)
    async def after_explode(turn: Turn, output: Any) -> None:
        log.append("after_explode")

    turn = Turn(make_tool())
    with pytest.raises(RuntimeError, match="hook failed"):
        await turn.returning()
    assert log == ["explode"]


# --------------------------------------------------------------------------- lock


@pytest.mark.parametrize(("lock", "expected"), [(True, 1), (False, 3)])
async def test_hook_lock_serializes_concurrent_runs(lock: bool, expected: int) -> None:
    gate = asyncio.Event()
    state = {"active": 0, "max": 0, "runs": 0}

    @hook(ToolHook.BEFORE_INVOKE, lock=lock)
    async def guarded(x: int) -> None:
        state["active"] += 1
        state["runs"] += 1
        state["max"] = max(state["max"], state["active"])
        await gate.wait()
        state["active"] -= 1

    assert guarded.lock is lock
    job = make_tool()
    tasks = [asyncio.create_task(job(x=i)) for i in range(3)]
    await spin()
    assert state["active"] == expected
    gate.set()
    assert await asyncio.gather(*tasks) == [0, 1, 2]
    assert state["runs"] == 3
    assert state["max"] == expected


# --------------------------------------------------------------------------- arguments


async def test_fixed_kwargs_are_passed_to_hooks() -> None:
    seen: list[tuple[Any, str]] = []

    @hook(ToolHook.AFTER_INVOKE, env="prod")
    async def tagged_result(result: Any, env: str) -> None:
        seen.append((result, env))

    await make_tool()(x=7)
    assert seen == [(7, "prod")]
    assert tagged_result.fixed_kwargs == {"env": "prod"}


async def test_callable_fixed_kwargs_are_evaluated_per_call() -> None:
    ticker = Ticker()
    seen: list[int] = []

    @hook(TurnHook.BEFORE_RUN, stamp=ticker)
    async def stamped(turn: Turn, stamp: int) -> None:
        seen.append(stamp)

    assert ticker.calls == 0
    job = make_tool()
    await Turn(job).returning()
    await Turn(job).returning()
    assert seen == [1, 2]
    assert ticker.calls == 2


async def test_hooks_accepting_fewer_parameters_still_work() -> None:
    seen: list[Any] = []

    @hook(TurnHook.AFTER_RUN)
    async def turn_only(turn: Turn) -> None:
        seen.append(("turn_only", turn))

    @hook(TurnHook.AFTER_RUN)
    async def nothing() -> None:
        seen.append(("nothing",))

    @hook(ToolHook.BEFORE_INVOKE)
    async def just_y(y: int) -> None:
        seen.append(("just_y", y))

    @tool
    async def pair(x: int, y: int) -> int:
        return x + y

    turn = Turn(pair, kwargs={"x": 1, "y": 2})
    assert await turn.returning() == 3
    assert seen == [("just_y", 2), ("turn_only", turn), ("nothing",)]


async def test_on_yield_hook_without_parameters_still_works() -> None:
    seen: list[str] = []

    @hook(ToolHook.ON_YIELD)
    async def ignore_value() -> None:
        seen.append("value")

    stream = make_stream()
    assert [v async for v in stream(n=2)] == [0, 1]
    assert seen == ["value", "value"]


async def test_hook_for_a_list_of_types_fires_for_each() -> None:
    seen: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    types = [
        TurnHook.BEFORE_RUN,
        ToolHook.BEFORE_INVOKE,
        ToolHook.AFTER_INVOKE,
        TurnHook.ON_COMPLETE,
    ]

    @hook(types)
    async def everything(*args: Any, **kwargs: Any) -> None:
        seen.append((args, kwargs))

    assert everything.types == frozenset(types)
    job = make_tool()
    turn = Turn(job, kwargs={"x": 5})
    assert await turn.returning() == 5

    assert len(seen) == 4
    assert seen[0] == ((turn,), {})  # BEFORE_RUN (turn)
    before_args, before_kwargs = seen[1]  # BEFORE_INVOKE: the tool's own arguments
    assert before_kwargs == {"x": 5} or before_args == (5,)
    assert seen[2] == ((5,), {})  # AFTER_INVOKE (result)
    assert seen[3] == ((turn, StopReason.COMPLETED), {})  # ON_COMPLETE (turn, reason)


async def test_hook_for_tool_error_gets_exc_keyword() -> None:
    seen: list[BaseException] = []

    @hook(ToolHook.ON_ERROR)
    async def on_any_error(exc: BaseException) -> None:
        seen.append(exc)

    @tool
    async def broken() -> None:
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        await broken()
    assert len(seen) == 1
    assert isinstance(seen[0], ValueError)


async def test_global_turn_hooks_receive_documented_arguments() -> None:
    seen: list[tuple[Any, ...]] = []

    @hook([TurnHook.BEFORE_RUN, TurnHook.AFTER_RUN, TurnHook.ON_COMPLETE])
    async def watch(*args: Any) -> None:
        seen.append(args)

    ok = Turn(make_tool(), kwargs={"x": 3})
    await ok.returning()
    assert seen == [(ok,), (ok, 3), (ok, StopReason.COMPLETED)]


async def test_turn_on_error_hook_fires_only_for_turn_errors() -> None:
    """``TurnHook.ON_ERROR`` and ``ToolHook.ON_ERROR`` are different events with different
    arguments; a hook for one must not be dispatched for the other."""
    turn_errors: list[tuple[Turn, BaseException]] = []
    tool_errors: list[BaseException] = []

    @hook(TurnHook.ON_ERROR)
    async def on_turn_error(turn: Turn, exception: BaseException) -> None:
        turn_errors.append((turn, exception))

    @hook(ToolHook.ON_ERROR)
    async def on_tool_error(exc: BaseException) -> None:
        tool_errors.append(exc)

    problem = ValueError("bad input")

    @tool
    async def broken() -> None:
        raise problem

    with pytest.raises(ValueError, match="bad input"):
        await broken()  # a bare tool call: a tool error, no turn
    assert turn_errors == []
    assert tool_errors == [problem]

    turn = Turn(broken)
    with pytest.raises(ValueError, match="bad input"):
        await turn.returning()
    assert turn_errors == [(turn, problem)]
    assert tool_errors == [problem, problem]


# --------------------------------------------------------------------------- pygents.hooks


def test_the_hook_types_decorator_and_registry_import_from_pygents_hooks() -> None:
    from pygents import hooks as hooks_module
    from pygents.hooks import (
        AgentHook,
        ContextPoolHook,
        ContextQueueHook,
        Hook,
        HookMetadata,
        HookRegistry,
        HookType,
        ToolHook,
        TurnHook,
        hook,
    )

    exported = {
        "AgentHook": AgentHook,
        "ContextPoolHook": ContextPoolHook,
        "ContextQueueHook": ContextQueueHook,
        "Hook": Hook,
        "HookMetadata": HookMetadata,
        "HookRegistry": HookRegistry,
        "HookType": HookType,
        "ToolHook": ToolHook,
        "TurnHook": TurnHook,
        "hook": hook,
    }
    for name, value in exported.items():
        assert value is getattr(pygents, name), name
    assert sorted(hooks_module.__all__) == sorted(exported)


# --------------------------------------------------------------------------- clear errors


@pytest.mark.parametrize(
    ("types", "advice"),
    [
        (None, "TurnHook.AFTER_RUN"),
        ("TurnHook.ON_ERROR", "enum member TurnHook.ON_ERROR"),
        (["TurnHook.ON_ERROR"], "enum member TurnHook.ON_ERROR"),
        ("on_error", "TurnHook.ON_ERROR or ToolHook.ON_ERROR"),
        ([TurnHook.BEFORE_RUN, "after_run"], "TurnHook.AFTER_RUN"),
        (42, "TurnHook.AFTER_RUN"),
    ],
    ids=["none", "qualified-string", "string-in-list", "event-value", "mixed", "int"],
)
def test_a_wrong_hook_type_names_the_problem_and_the_enum_member_to_write(
    types: Any, advice: str
) -> None:
    with pytest.raises(TypeError) as info:
        hook(types)
    message = str(info.value)
    assert "TurnHook, AgentHook, ToolHook" in message
    assert advice in message
    assert len(message) < 300


def test_a_bare_hook_decorator_says_to_name_the_events() -> None:
    async def forgot_the_event(turn: Turn) -> None:
        return None

    with pytest.raises(TypeError, match=r"write the event\(s\) first: @hook\(TurnHook"):
        hook(forgot_the_event)  # type: ignore[arg-type]


async def test_a_partial_is_refused_with_the_fixed_keyword_alternative() -> None:
    async def report(turn: Turn, channel: str) -> None:
        return None

    bound = functools.partial(report, channel="ops")
    with pytest.raises(TypeError) as info:
        hook(TurnHook.ON_ERROR)(bound)
    assert "functools.partial" in str(info.value)
    assert "@hook(event, key=value)" in str(info.value)
    with pytest.raises(TypeError, match=r"functools\.partial"):
        Turn(make_tool()).on_error(bound)
    assert "report" not in HookRegistry


@pytest.mark.parametrize("value", [None, "not a function", 42], ids=["none", "str", "int"])
def test_something_that_is_not_a_function_is_refused_as_a_hook(value: Any) -> None:
    with pytest.raises(TypeError, match="named 'async def' function"):
        hook(TurnHook.AFTER_RUN)(value)


def test_a_huge_function_name_is_cut_short_in_messages() -> None:
    def huge() -> None:
        return None

    huge.__name__ = "h" * 100_000
    with pytest.raises(TypeError) as info:
        hook(TurnHook.AFTER_RUN)(huge)
    assert "not async" in str(info.value)
    assert len(str(info.value)) < 300


# --------------------------------------------------------------------------- existing hooks


async def test_an_instance_hook_can_be_stacked_on_two_tools() -> None:
    calls: list[int] = []
    first, second = make_tool("first"), make_tool("second")

    @first.before_invoke
    @second.before_invoke
    async def count(x: int = 0) -> None:
        calls.append(x)

    assert isinstance(count, Hook)
    assert first.hooks == [count]
    assert second.hooks == [count]
    assert not count.is_global
    await first(x=1)
    await second(x=2)
    assert calls == [1, 2]


async def test_a_global_hook_attached_to_a_turn_and_a_queue_stays_global() -> None:
    log: list[str] = []

    @hook(TurnHook.BEFORE_RUN, tags=["never-used"])
    async def watch(turn: Turn) -> None:
        log.append(turn.metadata["label"])

    mine = Turn(make_tool(), metadata={"label": "mine"})
    assert mine.before_run(watch) is watch
    assert mine.hooks == [watch]
    assert watch.is_global
    assert HookRegistry.get("watch") is watch
    await mine.returning()
    await Turn(make_tool("other"), tags=["never-used"], metadata={"label": "tagged"}).returning()
    await Turn(make_tool("third"), metadata={"label": "untagged"}).returning()
    assert log == ["mine", "tagged"]  # once for its own turn; globally by tag, as before

    @hook(ContextQueueHook.BEFORE_APPEND)
    async def inspect_append(queue: Any, incoming: Any, current: Any) -> None:
        log.append(f"append:{len(incoming)}")

    queue: ContextQueue[str] = ContextQueue(limit=3)
    queue.before_append(inspect_append)
    assert queue.hooks == [inspect_append]
    await queue.append(ContextItem("a"))
    await ContextQueue(limit=3).append(ContextItem("b"), ContextItem("c"))
    assert log[-2:] == ["append:1", "append:2"]


async def test_an_instance_hook_of_a_turn_can_serve_an_agent_too() -> None:
    seen: list[Any] = []
    job = make_tool()
    agent = Agent("worker", "runs jobs", [job])
    alone = Turn(job, kwargs={"x": 1})

    @agent.on_complete
    @alone.on_complete
    async def finished(turn: Turn, reason: StopReason) -> None:
        seen.append(turn.kwargs["x"])

    assert alone.hooks == [finished]
    assert agent.turn_hooks == [finished]
    await alone.returning()
    await agent.put(Turn(job, kwargs={"x": 2}))
    async for _ in agent.run():
        pass
    assert seen == [1, 2]


async def test_attaching_a_hook_twice_to_one_object_keeps_one_entry() -> None:
    @hook(TurnHook.AFTER_RUN)
    async def once(turn: Turn) -> None:
        return None

    turn = Turn(make_tool())
    turn.after_run(once)
    turn.after_run(once)
    assert turn.hooks == [once]


def test_an_existing_hook_attached_for_an_event_it_does_not_handle_is_a_type_error() -> None:
    @hook([TurnHook.ON_ERROR, TurnHook.ON_TIMEOUT])
    async def alert(turn: Turn) -> None:
        return None

    turn = Turn(make_tool())
    with pytest.raises(TypeError) as info:
        turn.on_complete(alert)
    message = str(info.value)
    assert "'alert'" in message
    assert "TurnHook.ON_ERROR, TurnHook.ON_TIMEOUT" in message
    assert "does not handle TurnHook.ON_COMPLETE" in message
    assert turn.hooks == []


async def test_an_existing_hook_attached_for_one_of_its_events_fires_for_all_of_them() -> None:
    """It joins the object's list as it is, like ``obj.hooks.append(h)``."""
    log: list[str] = []

    @hook([TurnHook.ON_ERROR, TurnHook.ON_COMPLETE], tags=["never-used"])
    async def note(turn: Turn, detail: Any = None) -> None:
        log.append(type(detail).__name__)

    turn = Turn(make_tool())
    turn.on_error(note)
    await turn.returning()
    assert log == ["StopReason"]  # ON_COMPLETE, through the turn's own list


def test_options_for_an_existing_hook_are_a_type_error() -> None:
    @hook(TurnHook.AFTER_RUN)
    async def made(turn: Turn, **extra: Any) -> None:
        return None

    turn = Turn(make_tool())
    with pytest.raises(TypeError, match="without options"):
        turn.after_run(lock=True)(made)
    with pytest.raises(TypeError, match="without options"):
        turn.after_run(made, env="prod")
    assert turn.hooks == []
    assert not made.lock


def test_hook_on_an_existing_hook_is_a_type_error_in_either_order() -> None:
    job = make_tool()

    with pytest.raises(TypeError, match="already an instance hook"):

        @hook(ToolHook.AFTER_INVOKE)
        @job.after_invoke
        async def instance_first(result: Any) -> None:
            return None

    assert not HookRegistry.get("instance_first").is_global

    @hook(ToolHook.AFTER_INVOKE)
    async def global_first(result: Any) -> None:
        return None

    with pytest.raises(TypeError, match="already a global hook"):
        hook(ToolHook.AFTER_INVOKE)(global_first)
    assert HookRegistry.get("global_first") is global_first


# --------------------------------------------------------------------------- per-call hooks


def _attach_done(turn: Turn, log: list[str]) -> Hook[Any]:
    """A helper that attaches "its" hook to each turn it is given, as request code does."""

    @turn.on_complete
    async def done(turn: Turn, reason: StopReason) -> None:
        log.append(f"{turn.kwargs['x']}:{reason}")

    return done


async def test_a_helper_can_attach_its_hook_on_every_call() -> None:
    log: list[str] = []
    job = make_tool()
    first, second = Turn(job, kwargs={"x": 1}), Turn(job, kwargs={"x": 2})
    first_done = _attach_done(first, log)
    before = len(HookRegistry)
    second_done = _attach_done(second, log)

    assert second_done is not first_done
    assert len(HookRegistry) == before  # the new closure replaced the entry
    assert HookRegistry.get("done") is second_done
    await first.returning()
    await second.returning()
    assert log == ["1:completed", "2:completed"]  # each turn keeps its own hook


async def test_an_instance_hook_does_not_keep_its_object_alive() -> None:
    def short_lived() -> weakref.ref[Agent]:
        agent = Agent("short-lived", "", [make_tool()])

        @agent.after_turn
        async def noted(a: Agent, turn: Turn) -> None:
            assert a is agent  # closes over the agent: a reference cycle

        assert HookRegistry.get("noted") is noted
        AgentRegistry.unregister("short-lived")
        return weakref.ref(agent)

    gone = short_lived()
    gc.collect()

    assert gone() is None
    assert "noted" not in HookRegistry


async def test_a_dead_instance_hook_in_a_cycle_does_not_hold_its_name() -> None:
    def attach(turn: Turn) -> None:
        @turn.after_run
        async def shared_name(t: Turn) -> None:
            assert t is turn  # a cycle: turn -> hooks -> hook -> closure -> turn

    gc.disable()  # only register() itself may collect the cycle
    try:
        attach(Turn(make_tool()))  # garbage at once, but only the collector frees it
        assert "shared_name" in HookRegistry
        other = Turn(make_tool("other"))

        @other.after_run
        async def shared_name(t: Turn) -> None:  # a different function, same name
            return None

    finally:
        gc.enable()
    assert HookRegistry.get("shared_name") is other.hooks[0]


async def test_a_different_function_under_a_live_instance_hooks_name_is_a_value_error() -> None:
    kept = Turn(make_tool())

    @kept.after_run
    async def taken(turn: Turn) -> None:
        return None

    other = Turn(make_tool("other"))

    async def taken(turn: Turn) -> None:  # noqa: F811  (a second, different function)
        return None

    with pytest.raises(ValueError, match="'taken' is already registered"):
        other.after_run(taken)
    assert other.hooks == []
    assert HookRegistry.get("taken") is kept.hooks[0]


@pytest.mark.parametrize("instance_first", [True, False], ids=["instance-first", "global-first"])
async def test_a_function_is_never_both_a_global_and_an_instance_hook(instance_first: bool) -> None:
    log: list[str] = []

    async def audit(turn: Turn) -> None:
        log.append(turn.metadata.get("label", "?"))

    mine = Turn(make_tool(), metadata={"label": "mine"})
    if instance_first:
        first = mine.before_run(audit)
        with pytest.raises(ValueError, match="'audit' is already registered"):
            hook(TurnHook.BEFORE_RUN)(audit)
    else:
        first = hook(TurnHook.BEFORE_RUN)(audit)
        with pytest.raises(ValueError, match="'audit' is already registered"):
            mine.before_run(audit)
    assert HookRegistry.get("audit") is first
    assert first.is_global is not instance_first

    await mine.returning()
    await Turn(make_tool("other"), metadata={"label": "other"}).returning()
    assert log == (["mine"] if instance_first else ["mine", "other"])


def test_a_global_hook_re_created_per_call_is_still_a_value_error() -> None:
    def declare() -> Hook[Any]:
        @hook(TurnHook.AFTER_RUN)
        async def per_call(turn: Turn) -> None:
            return None

        return per_call

    first = declare()
    with pytest.raises(ValueError, match="'per_call' is already registered"):
        declare()
    assert HookRegistry.get("per_call") is first


async def test_an_instance_hook_restores_by_name_only_while_it_is_alive() -> None:
    job = make_tool()
    turn = Turn(job, kwargs={"x": 3})

    @turn.after_run
    async def restorable(turn: Turn, output: Any) -> None:
        return None

    data = turn.to_dict()
    assert Turn.from_dict(data).hooks == [restorable]

    del turn, restorable
    gc.collect()
    with pytest.raises(UnregisteredHookError, match="restorable"):
        Turn.from_dict(data)


async def test_ten_thousand_requests_with_their_own_hooks_leave_nothing_behind() -> None:
    """The per-request pattern: a fresh agent whose hook closes over it, every time.

    Each request yields to the event loop once, as any real request does, so that
    asyncio can drop the timers it cancelled.
    """

    @tool
    async def answer(q: int) -> int:
        return q

    completed = 0
    alive: weakref.WeakSet[Agent] = weakref.WeakSet()

    async def handle(i: int) -> None:
        agent = Agent(f"request-{i}", "serves one request", [answer])
        alive.add(agent)

        @agent.on_complete
        async def done(turn: Turn, reason: StopReason) -> None:
            nonlocal completed
            completed += turn.kwargs["q"] == i and agent.name == f"request-{i}"

        await agent.put(Turn(answer, kwargs={"q": i}))
        async for _ in agent.run():
            pass
        AgentRegistry.unregister(agent.name)
        await asyncio.sleep(0)

    for i in range(500):  # warm-up: caches, free lists and tables reach their size
        await handle(i)
    gc.collect()
    entries = len(HookRegistry)
    objects, blocks = len(gc.get_objects()), sys.getallocatedblocks()

    for i in range(500, 10_500):
        await handle(i)
    gc.collect()

    assert completed == 10_500
    assert len(alive) == 0
    assert len(HookRegistry) == entries
    # One object kept per request would be 10,000 more.
    assert len(gc.get_objects()) - objects < 1_000
    assert sys.getallocatedblocks() - blocks < 2_000


# --------------------------------------------------------------------------- hook lists


def _owner(kind: str) -> tuple[Any, str]:
    """A fresh object with a hook list, and the attribute naming that list."""
    if kind == "tool":
        return make_tool("owner"), "hooks"
    if kind == "turn":
        return Turn(make_tool("owner")), "hooks"
    if kind in ("agent", "agent-turn-hooks"):
        agent = Agent("owner", "owns hooks", [make_tool("owner")])
        return agent, "hooks" if kind == "agent" else "turn_hooks"
    if kind == "queue":
        return ContextQueue(limit=3), "hooks"
    return ContextPool(), "hooks"


OWNERS = ["tool", "turn", "agent", "agent-turn-hooks", "queue", "pool"]


def _put(operation: str, hooks: list[Any], value: Any) -> None:
    if operation == "append":
        hooks.append(value)
    elif operation == "extend":
        hooks.extend([hooks[0], value])
    elif operation == "insert":
        hooks.insert(0, value)
    elif operation == "item":
        hooks[0] = value
    elif operation == "slice":
        hooks[:] = [value]
    else:
        hooks += [value]


async def plain(*args: Any) -> None:
    """An async function nobody decorated."""


@pytest.mark.parametrize("operation", ["append", "extend", "insert", "item", "slice", "iadd"])
@pytest.mark.parametrize("kind", OWNERS)
def test_a_plain_function_is_refused_by_every_hook_list_when_added(
    kind: str, operation: str
) -> None:
    owner, attr = _owner(kind)
    kept = hook(TurnHook.BEFORE_RUN)(recorder([], "kept"))
    getattr(owner, attr).append(kept)

    with pytest.raises(TypeError) as info:
        _put(operation, getattr(owner, attr), plain)
    message = str(info.value)
    assert "the plain function 'plain'" in message
    assert "@hook(<event>)" in message
    assert getattr(owner, attr) == [kept]  # nothing was added or replaced


@pytest.mark.parametrize("kind", OWNERS)
def test_assigning_a_plain_list_keeps_the_hook_list_checked(kind: str) -> None:
    owner, attr = _owner(kind)
    kept = hook(TurnHook.BEFORE_RUN)(recorder([], "kept"))

    with pytest.raises(TypeError, match="the plain function 'plain'"):
        setattr(owner, attr, [kept, plain])
    assert getattr(owner, attr) == []

    mine = [kept]
    setattr(owner, attr, mine)
    assert getattr(owner, attr) == [kept]
    with pytest.raises(TypeError, match="the plain function 'plain'"):
        getattr(owner, attr).append(plain)
    assert mine == [kept]  # the object holds its own copy
    with pytest.raises(TypeError, match="takes a list of hooks"):
        setattr(owner, attr, kept)


def test_the_refusal_names_the_list_and_a_decorator_of_its_object() -> None:
    queue: ContextQueue[str] = ContextQueue(limit=2)
    with pytest.raises(TypeError, match=r"^ContextQueue\.hooks holds hooks, .* @queue\.\w+ "):
        queue.hooks.append(plain)
    agent = Agent("named", "", [make_tool()])
    with pytest.raises(TypeError, match=r"^Agent\.turn_hooks holds .* @agent\.on_\w+ "):
        agent.turn_hooks.append(plain)
    with pytest.raises(TypeError, match=r"the plain function '<lambda>'"):
        make_tool("other").hooks.append(lambda: None)


def test_hook_lists_are_lists_not_mappings_by_event() -> None:
    turn = Turn(make_tool())
    with pytest.raises(TypeError, match=r"not a mapping by event.*@turn\.\w+"):
        turn.hooks[TurnHook.BEFORE_RUN] = [plain]  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="takes a list of hooks"):
        turn.hooks = {TurnHook.BEFORE_RUN: [plain]}  # type: ignore[assignment]
    assert turn.hooks == []


async def test_checked_hook_lists_still_dispatch_and_copy_like_lists() -> None:
    log: list[str] = []
    job = make_tool()
    turn = Turn(job)
    turn.hooks += [hook(TurnHook.BEFORE_RUN)(recorder(log, "first"))]
    turn.hooks.insert(0, hook(TurnHook.BEFORE_RUN)(recorder(log, "zeroth")))
    copy = turn.copy()
    await copy.returning()
    assert log == ["zeroth", "first"]
    with pytest.raises(TypeError, match="the plain function 'plain'"):
        copy.hooks.append(plain)


# --------------------------------------------------------------------------- branch(hooks=...)


def _branchable(kind: str) -> Any:
    if kind == "queue":
        return ContextQueue(limit=3)
    if kind == "pool":
        return ContextPool()
    return Agent("parent", "the parent", [make_tool()])


def _branch(parent: Any, **hooks: Any) -> Any:
    return parent.branch("child", **hooks) if isinstance(parent, Agent) else parent.branch(**hooks)


EVENTS = {
    "queue": ContextQueueHook.AFTER_CLEAR,
    "pool": ContextPoolHook.AFTER_CLEAR,
    "agent": AgentHook.ON_PAUSE,
}


@pytest.mark.parametrize("kind", ["queue", "pool", "agent"])
def test_branch_inherits_hooks_when_omitted_and_drops_them_for_none_or_empty(kind: str) -> None:
    parent = _branchable(kind)
    inherited = hook(EVENTS[kind])(recorder([], "inherited"))
    other = hook(EVENTS[kind])(recorder([], "other"))
    parent.hooks.append(inherited)

    omitted = _branch(parent)
    assert omitted.hooks == [inherited]
    assert omitted.hooks is not parent.hooks
    if isinstance(parent, Agent):
        AgentRegistry.unregister("child")
    assert _branch(parent, hooks=None).hooks == []
    if isinstance(parent, Agent):
        AgentRegistry.unregister("child")
    assert _branch(parent, hooks=[]).hooks == []
    if isinstance(parent, Agent):
        AgentRegistry.unregister("child")
    given = _branch(parent, hooks=[other])
    assert given.hooks == [other]
    with pytest.raises(TypeError, match="the plain function 'plain'"):
        given.hooks.append(plain)
    assert parent.hooks == [inherited]


@pytest.mark.parametrize("kind", ["queue", "pool", "agent"])
def test_branch_refuses_plain_functions_as_hooks(kind: str) -> None:
    parent = _branchable(kind)
    with pytest.raises(TypeError, match="the plain function 'plain'"):
        _branch(parent, hooks=[plain])
    assert "child" not in AgentRegistry  # nothing half-made is left registered
