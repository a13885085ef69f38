"""Context injection by parameter annotation, into tools and hooks."""

from __future__ import annotations

import pytest

from pygents import (
    Agent,
    ContextItem,
    ContextPool,
    ContextQueue,
    Injectable,
    Scope,
    ScopeKind,
    ToolHook,
    Turn,
    TurnHook,
    current_scope,
    hook,
    tool,
)
from pygents.testing import drain


async def test_tool_receives_the_running_agents_queue_and_pool() -> None:
    @tool()
    async def inspect_memory(memory: ContextQueue, pool: ContextPool) -> tuple[int, int]:
        return id(memory), id(pool)

    agent = Agent("a", "", [inspect_memory])
    await agent.put(Turn(inspect_memory))
    assert await drain(agent) == [(id(agent.context_queue), id(agent.context_pool))]


async def test_optional_context_is_none_outside_an_agent_and_set_inside() -> None:
    @tool()
    async def maybe(memory: ContextQueue | None = None) -> bool:
        return memory is not None

    assert await Turn(maybe).returning() is False
    agent = Agent("a", "", [maybe])
    await agent.put(Turn(maybe))
    assert await drain(agent) == [True]


async def test_required_context_outside_an_agent_is_a_clear_type_error() -> None:
    @tool()
    async def needs(memory: ContextQueue) -> None:
        return None

    with pytest.raises(TypeError, match=r"needs a ContextQueue for parameter 'memory'"):
        await Turn(needs).returning()


async def test_explicit_argument_wins_over_injection() -> None:
    mine: ContextQueue[str] = ContextQueue(limit=3)

    @tool()
    async def which(memory: ContextQueue) -> bool:
        return memory is mine

    agent = Agent("a", "", [which])
    await agent.put(Turn(which, kwargs={"memory": mine}))
    assert await drain(agent) == [True]


async def test_positional_arguments_skip_injected_parameters() -> None:
    @tool()
    async def mixed(memory: ContextQueue, a: int, b: int) -> tuple[int, int, bool]:
        return a, b, isinstance(memory, ContextQueue)

    agent = Agent("a", "", [mixed])
    await agent.put(Turn(mixed, args=[1, 2]))
    assert await drain(agent) == [(1, 2, True)]


async def test_generic_annotation_is_recognised() -> None:
    @tool()
    async def typed(memory: ContextQueue[str]) -> int:
        return memory.limit or 0

    agent = Agent("a", "", [typed], context_queue=ContextQueue(limit=4))
    await agent.put(Turn(typed))
    assert await drain(agent) == [4]


async def test_hooks_receive_context_while_a_turn_runs() -> None:
    seen: list[tuple[str, bool]] = []

    @tool()
    async def work() -> int:
        return 1

    @hook(TurnHook.BEFORE_RUN)
    async def before(turn: Turn, pool: ContextPool | None = None) -> None:
        seen.append(("turn", pool is not None))

    @work.before_invoke
    async def invoked(memory: ContextQueue | None = None) -> None:
        seen.append(("tool", memory is not None))

    await Turn(work).returning()
    agent = Agent("a", "", [work])
    await agent.put(Turn(work))
    await drain(agent)
    assert seen == [("turn", False), ("tool", False), ("turn", True), ("tool", True)]


async def test_context_hooks_fired_by_routing_get_the_agents_context() -> None:
    seen: list[bool] = []

    @tool()
    async def note() -> ContextItem[str]:
        return ContextItem(content="x")

    agent = Agent("a", "", [note])

    @agent.context_queue.after_append
    async def appended(
        items: list[ContextItem[str]], current: list[object], pool: ContextPool
    ) -> None:
        seen.append(pool is agent.context_pool)

    await agent.put(Turn(note))
    assert await drain(agent) == []
    assert seen == [True]


class Clock(Injectable):
    """A resource of the application's own, injected the same way."""

    def __init__(self, now: float) -> None:
        self.now = now


async def test_any_injectable_resource_published_by_a_scope_is_injected() -> None:
    @tool()
    async def what_time(clock: Clock) -> float:
        return clock.now

    outer = Scope(ScopeKind.AGENT_RUN, object(), None)
    outer._resources = {Clock: Clock(12.5)}  # what an agent run publishes
    turn = Turn(what_time)
    run = turn._open(outer, streaming=False)
    value = await run.call()
    await run.finish(None, value)
    assert value == 12.5


async def test_current_scope_is_the_tool_scope_inside_and_none_outside() -> None:
    seen: list[Scope | None] = []

    @tool()
    async def where() -> None:
        seen.append(current_scope())

    @tool()
    async def stream_where():
        seen.append(current_scope())
        yield 1
        seen.append(current_scope())

    await Turn(where).returning()
    assert current_scope() is None
    async for _ in Turn(stream_where).yielding():
        assert current_scope() is None
    assert [s.kind for s in seen if s is not None] == [ScopeKind.TOOL] * 3
    assert [s.turn.tool.name for s in seen if s is not None] == [
        "where",
        "stream_where",
        "stream_where",
    ]


async def test_nested_turn_inside_a_tool_inherits_the_agents_context() -> None:
    @tool()
    async def inner(memory: ContextQueue) -> int:
        return id(memory)

    @tool()
    async def outer() -> int:
        return await Turn(inner).returning()

    agent = Agent("a", "", [outer, inner])
    await agent.put(Turn(outer))
    assert await drain(agent) == [id(agent.context_queue)]


async def test_tool_hook_with_only_injected_params_gets_no_positional_confusion() -> None:
    calls: list[object] = []

    @tool()
    async def run_me(x: int) -> int:
        return x

    @hook(ToolHook.AFTER_INVOKE)
    async def after(result: int, memory: ContextQueue | None = None) -> None:
        calls.append((result, memory))

    assert await run_me(x=3) == 3
    assert calls == [(3, None)]
