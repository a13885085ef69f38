"""The public API as a user writes it, checked twice.

``mypy --strict`` checks this module (it is listed in pyproject's ``[tool.mypy] files``),
so every ``assert_type`` is a static assertion: decorators keep the signatures they
wrap, generics carry their type parameter, hooks and subscribers type-check as the
docs write them. A ``# type: ignore[code]`` here marks a call the types must refuse:
``warn_unused_ignores`` (part of ``--strict``) fails the check if one is accepted.
pytest runs the same module, so what runs must also be right at run time.

The dashboard and ``pygents_otel.configure`` take over the terminal or the global
OpenTelemetry providers, so their functions here are only type-checked, not called.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any, assert_type

import pygents_otel
from pygents import (
    Agent,
    ContextItem,
    ContextPool,
    ContextQueue,
    Event,
    Hook,
    HookType,
    Scope,
    StopReason,
    Subscriber,
    Subscription,
    ToolHook,
    ToolRegistry,
    ToolType,
    Turn,
    TurnHook,
    hook,
    subscribe,
    tool,
)
from pygents_tui import run_dashboard


async def test_a_decorated_tool_keeps_the_signature_and_result_it_wraps() -> None:
    @tool
    async def add(a: int, b: int = 1) -> int:
        return a + b

    @tool(lock=True, tags=["math"])
    async def scale(x: float, factor: float) -> float:
        return x * factor

    assert_type(await add(2, b=3), int)
    assert_type(await scale(2.0, factor=1.5), float)
    wrapped: Callable[[int, int], Coroutine[Any, Any, int]] = add.fn  # the function itself
    if TYPE_CHECKING:  # calls the signature refuses, checked by mypy only
        await add("two")  # type: ignore[arg-type]
        await add(1, c=2)  # type: ignore[call-arg]
    assert wrapped is add.fn
    assert await add(2, b=3) == 5
    assert await scale(2.0, factor=1.5) == 3.0


async def test_a_completion_check_subtool_keeps_its_signature_and_is_registered() -> None:
    @tool
    async def jobs() -> None:
        return None

    @jobs.subtool(type=ToolType.COMPLETION_CHECK)
    async def finished(count: int) -> bool:
        return count > 3

    assert_type(await finished(4), bool)
    if TYPE_CHECKING:
        await finished("four")  # type: ignore[arg-type]
    assert await finished(4) is True
    assert await finished(count=4) is True
    assert finished.type is ToolType.COMPLETION_CHECK
    assert ToolRegistry.get("jobs.finished") is finished
    assert jobs.subtools == [finished]


async def test_a_turn_carries_its_tools_result_type() -> None:
    @tool
    async def add(a: int, b: int) -> int:
        return a + b

    @tool
    async def words(text: str) -> AsyncIterator[str]:
        for word in text.split():
            yield word

    @tool
    async def chunks(n: int) -> AsyncGenerator[bytes, None]:
        for i in range(n):
            yield bytes([i])

    @tool
    async def echo(x: str) -> str:
        return x

    def plan(x: str) -> Turn[str]:  # typed code returning the turn it builds
        return Turn(echo, kwargs={"x": x})

    adding = Turn(add, kwargs={"a": 1, "b": 2})
    assert_type(adding, Turn[int])  # inferred from the tool
    total = await adding.returning()
    assert_type(total, int)
    assert_type(adding.copy(), Turn[int])

    streaming = Turn(words, kwargs={"text": "to be"})
    assert_type(streaming, Turn[str])  # a stream's type is the type of each value
    spoken = [word async for word in streaming.yielding()]
    assert_type(spoken, list[str])
    raw = [chunk async for chunk in Turn(chunks, kwargs={"n": 2}).yielding()]
    assert_type(raw, list[bytes])

    assert_type(Turn("add"), Turn[Any])  # a name says nothing about the result
    by_name: Turn[int] = Turn("add", kwargs={"a": 2, "b": 2})
    assert_type(await by_name.returning(), int)
    subscripted = Turn[int]("add", kwargs={"a": 3, "b": 3})
    assert_type(subscripted, Turn[int])
    assert_type(await subscripted.returning(), int)

    echoed = await plan("hi").returning()
    assert_type(echoed, str)

    untyped: Turn = subscripted  # a bare Turn is Turn[Any], as before Turn was generic
    assert_type(untyped, Turn[Any])

    assert (total, spoken, raw, echoed) == (3, ["to", "be"], [b"\x00", b"\x01"], "hi")
    assert await Turn("add", kwargs={"a": 3, "b": 4}).returning() == 7
    assert isinstance(subscripted, Turn)  # Turn[int](...) builds a plain Turn
    assert subscripted.output == 6
    # Subscriptable at run time, like ContextItem[T]; mypy calls the types disjoint.
    assert Turn[int] != Turn[str]  # type: ignore[comparison-overlap]


async def test_an_agent_run_yields_turns_and_values() -> None:
    @tool
    async def count(n: int) -> AsyncIterator[int]:
        for i in range(n):
            yield i

    agent = Agent("counter", "Counts.", [count])
    await agent.put(Turn(count, kwargs={"n": 3}))
    seen: list[int] = []
    async for turn, value in agent.run():
        assert_type(turn, Turn[Any])
        assert_type(value, Any)
        seen.append(value)
    assert seen == [0, 1, 2]


async def test_hook_decorators_keep_the_hook_signature() -> None:
    stops: list[StopReason] = []

    @tool
    async def fetch(url: str) -> str:
        return url

    @hook(TurnHook.ON_COMPLETE)
    async def finished(turn: Turn[Any], stop_reason: StopReason) -> None:
        stops.append(stop_reason)

    @fetch.before_invoke
    async def check_quota(url: str) -> None:
        return None

    @fetch.after_invoke(lock=True)
    async def log(result: str) -> None:
        return None

    # A hook is generic in the parameters of its function (names included, so they
    # are checked by calls rather than spelled in an assert_type).
    assert isinstance(finished, Hook)
    if TYPE_CHECKING:
        await finished(Turn(fetch), StopReason.COMPLETED)
        await check_quota(url="u")
        await log("result")
        await finished(Turn(fetch), "completed")  # type: ignore[arg-type]
        await check_quota(address="u")  # type: ignore[call-arg]
        await log(1)  # type: ignore[arg-type]
    events: HookType = ToolHook.AFTER_INVOKE
    assert events in log.types
    assert await Turn(fetch, kwargs={"url": "u"}).returning() == "u"
    assert stops == [StopReason.COMPLETED]


async def test_context_items_queues_and_pools_carry_their_content_type() -> None:
    note = ContextItem("remember the milk", description="Shopping", id="milk")
    assert_type(note, ContextItem[str])
    assert_type(note.content, str)
    queue: ContextQueue[str] = ContextQueue(limit=5)
    await queue.append(ContextItem("first"), note)
    assert_type(queue.items, list[ContextItem[str]])
    pool: ContextPool[str] = ContextPool()
    await pool.add(note)
    assert_type(pool.get("milk"), ContextItem[str])
    assert [item.content for item in queue.items] == ["first", "remember the milk"]
    assert pool.get("milk") is note


async def test_a_subscriber_is_a_class_with_the_methods_it_needs() -> None:
    class Counter(Subscriber):
        event_types = frozenset({TurnHook.BEFORE_RUN, TurnHook.ON_COMPLETE})

        def __init__(self) -> None:
            self.events: list[HookType] = []
            self.ended: list[Scope] = []

        def on_event(self, event: Event) -> None:
            self.events.append(event.type)

        def on_end(self, scope: Scope) -> None:
            self.ended.append(scope)

    @tool
    async def ping() -> str:
        return "pong"

    counter = Counter()
    with subscribe(counter) as subscription:
        assert_type(subscription, Subscription)
        await Turn(ping).returning()
    assert counter.events == [TurnHook.BEFORE_RUN, TurnHook.ON_COMPLETE]
    assert [scope.kind.value for scope in counter.ended] == ["tool", "turn"]


def telemetry_and_dashboard_as_an_application_writes_them() -> int:
    """Type-checked only (see the module docstring)."""
    telemetry = pygents_otel.configure(service_name="my-app", capture_content=False)
    assert_type(telemetry, pygents_otel.Telemetry)
    assert_type(telemetry.shutdown(), bool)
    pygents_otel.PygentsInstrumentor().instrument(capture_content=True)

    async def main() -> None:
        return None

    code = run_dashboard(main, trace_id=pygents_otel.trace_id_of, title="my app")
    assert_type(code, int)
    return code
