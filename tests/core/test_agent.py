"""Agents (SPEC §1.4, §1.6 AgentHook rows, §1.7; seeds 001 and 004).

Tools, hooks and agents are defined inside each test: the autouse fixture of
``pygents.pytest_plugin`` restores the registries after every test.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from core_helpers import make_echo

from pygents import (
    Agent,
    AgentRegistry,
    CompletionCheckReturnError,
    ContextItem,
    ContextPool,
    ContextQueue,
    SafeExecutionError,
    StopReason,
    ToolRegistry,
    ToolType,
    Turn,
    TurnHook,
    TurnTimeoutError,
    UnregisteredAgentError,
    hook,
    tool,
)
from pygents.testing import collect, drain
from stuck_tools import blocking_tool

# -- helpers ------------------------------------------------------------------------------


async def reached(event: asyncio.Event, task: asyncio.Task[Any]) -> None:
    """Wait until ``event`` is set; fail instead of hanging if ``task`` ends first."""
    waiter = asyncio.create_task(event.wait())
    await asyncio.wait({waiter, task}, return_when=asyncio.FIRST_COMPLETED)
    if not waiter.done():
        waiter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiter
        task.result()  # surfaces the run's own error, if it had one
        pytest.fail("run() finished without reaching the expected point")


async def second_run(agent: Agent) -> None:
    """Start another run() of ``agent``; if it is wrongly accepted, fail fast, not hang."""
    second = agent.run()
    try:
        await asyncio.wait_for(anext(second), 1)
    finally:
        await second.aclose()


# -- construction -------------------------------------------------------------------------


async def test_constructor_registers_the_agent_and_keeps_its_configuration() -> None:
    echo = make_echo()
    agent = Agent("worker", "does work", [echo], tags=["a", "b"])

    assert AgentRegistry.get("worker") is agent
    assert agent.name == "worker"
    assert agent.description == "does work"
    assert list(agent.tools) == [echo]
    assert agent.tags == frozenset({"a", "b"})
    assert agent.turns == []
    assert not agent.is_running
    assert not agent.is_paused


async def test_a_tool_whose_registry_entry_was_replaced_is_a_value_error() -> None:
    stale = make_echo()
    ToolRegistry.unregister("echo")
    fresh = make_echo()

    with pytest.raises(ValueError, match="echo"):
        Agent("a", "", [stale])
    assert "a" not in AgentRegistry
    assert Agent("a", "", [fresh]).tools[0] is fresh


async def test_a_tool_that_is_no_longer_registered_is_a_value_error() -> None:
    stale = make_echo()
    ToolRegistry.unregister("echo")

    with pytest.raises(ValueError, match="echo"):
        Agent("a", "", [stale])
    assert "a" not in AgentRegistry


async def _plain_async(x: str) -> str:
    return x


@pytest.mark.parametrize(
    "not_a_tool",
    [_plain_async, "echo", 42, None],
    ids=["undecorated-async-function", "tool-name-string", "int", "none"],
)
async def test_something_that_is_not_a_tool_is_a_type_error(not_a_tool: object) -> None:
    echo = make_echo()
    with pytest.raises(TypeError):
        Agent("a", "", [echo, not_a_tool])  # type: ignore[list-item]
    assert "a" not in AgentRegistry


async def test_a_duplicate_agent_name_is_a_value_error_and_keeps_the_first() -> None:
    echo = make_echo()
    first = Agent("twin", "first", [echo])

    with pytest.raises(ValueError, match="twin"):
        Agent("twin", "second", [echo])
    assert AgentRegistry.get("twin") is first
    assert AgentRegistry.get("twin").description == "first"


async def test_default_context_is_a_queue_of_ten_and_an_unbounded_pool() -> None:
    echo = make_echo()
    a = Agent("a", "", [echo])
    b = Agent("b", "", [echo])

    assert isinstance(a.context_queue, ContextQueue)
    assert a.context_queue.limit == 10
    assert len(a.context_queue) == 0
    assert isinstance(a.context_pool, ContextPool)
    assert a.context_pool.limit is None
    assert len(a.context_pool) == 0
    assert a.context_queue is not b.context_queue
    assert a.context_pool is not b.context_pool


async def test_given_context_is_used_as_is_even_when_empty() -> None:
    echo = make_echo()
    queue: ContextQueue[Any] = ContextQueue(limit=3)
    pool: ContextPool[Any] = ContextPool(limit=2)

    agent = Agent("a", "", [echo], context_queue=queue, context_pool=pool)

    assert agent.context_queue is queue
    assert agent.context_pool is pool


# -- the registry -------------------------------------------------------------------------


async def test_agent_registry_get_and_unregister() -> None:
    echo = make_echo()
    agent = Agent("a", "", [echo])

    assert AgentRegistry.get("a") is agent
    assert AgentRegistry.unregister("a") is agent
    assert "a" not in AgentRegistry
    with pytest.raises(UnregisteredAgentError, match="'a'"):
        AgentRegistry.get("a")
    with pytest.raises(UnregisteredAgentError):
        AgentRegistry.unregister("a")
    assert Agent("a", "", [echo]) is AgentRegistry.get("a")  # the name is free again


async def test_async_with_unregisters_the_agent_on_exit() -> None:
    echo = make_echo()
    async with Agent("scoped", "", [echo]) as agent:
        assert AgentRegistry.get("scoped") is agent
        await agent.put(Turn(echo, kwargs={"x": "in"}))
        assert await drain(agent) == ["echo:in"]
    assert "scoped" not in AgentRegistry


async def test_async_with_unregisters_the_agent_when_the_block_raises() -> None:
    echo = make_echo()
    with pytest.raises(RuntimeError, match="inside"):
        async with Agent("scoped", "", [echo]):
            raise RuntimeError("inside")
    assert "scoped" not in AgentRegistry


# -- the queue ----------------------------------------------------------------------------


async def test_put_rejects_a_turn_for_a_tool_the_agent_does_not_have() -> None:
    echo = make_echo()

    @tool()
    async def foreign() -> None:
        return None

    agent = Agent("a", "", [echo])
    with pytest.raises(ValueError, match="foreign"):
        await agent.put(Turn(foreign))
    assert agent.turns == []


async def test_put_rejects_something_that_is_not_a_turn() -> None:
    echo = make_echo()
    agent = Agent("a", "", [echo])
    with pytest.raises(TypeError):
        await agent.put("echo")  # type: ignore[arg-type]
    assert agent.turns == []


async def test_put_accepts_turns_for_subtools_of_a_root_tool() -> None:
    @tool()
    async def manage() -> str:
        return "root"

    @manage.subtool()
    async def create(name: str) -> str:
        return f"created {name}"

    @create.subtool()
    async def audit() -> str:
        return "audited"

    agent = Agent("a", "", [manage])
    await agent.put(Turn("manage.create", kwargs={"name": "alice"}))
    await agent.put(Turn(audit))
    await agent.put(Turn(manage))

    assert await drain(agent) == ["created alice", "audited", "root"]


async def test_setting_tools_changes_which_turns_put_accepts_and_survives_to_dict() -> None:
    echo = make_echo()

    @tool()
    async def manage() -> str:
        return "root"

    @manage.subtool()
    async def create() -> str:
        return "created"

    agent = Agent("a", "", [echo])
    agent.tools = [manage]

    with pytest.raises(ValueError, match="no tool 'echo'"):
        await agent.put(Turn(echo, kwargs={"x": "old"}))
    await agent.put(Turn(manage))
    await agent.put(Turn(create))  # subtools of the new tools too

    data = agent.to_dict()
    AgentRegistry.unregister("a")
    restored = Agent.from_dict(data)
    assert [t.name for t in restored.tools] == ["manage"]
    assert await drain(restored) == ["root", "created"]


async def test_tools_that_would_strand_queued_turns_are_refused() -> None:
    echo = make_echo()

    @tool()
    async def other() -> str:
        return "other"

    agent = Agent("a", "", [echo, other])
    await agent.put(Turn(echo, kwargs={"x": "queued"}))

    with pytest.raises(ValueError, match=r"queued turns for 'echo'.*run the queued turns"):
        agent.tools = [other]
    assert list(agent.tools) == [echo, other]  # unchanged

    assert await drain(agent) == ["echo:queued"]
    agent.tools = [other]  # nothing queued any more
    assert list(agent.tools) == [other]


async def test_turns_is_a_snapshot_and_iterating_the_agent_iterates_it() -> None:
    echo = make_echo()
    agent = Agent("a", "", [echo])
    first, second = Turn(echo, kwargs={"x": "1"}), Turn(echo, kwargs={"x": "2"})
    await agent.put(first)
    await agent.put(second)

    snapshot = agent.turns
    assert snapshot == [first, second]
    snapshot.clear()
    snapshot.append(Turn(echo, kwargs={"x": "intruder"}))
    assert agent.turns == [first, second]
    assert agent.turns is not agent.turns

    assert list(agent) == [first, second]
    for _ in agent:  # putting while iterating is safe: iteration walks a snapshot
        await agent.put(Turn(echo, kwargs={"x": "more"}))
    assert len(agent.turns) == 4
    assert agent.turns[:2] == [first, second]


async def test_run_takes_turns_in_fifo_order() -> None:
    ran: list[int] = []

    @tool()
    async def step(i: int) -> int:
        ran.append(i)
        return i

    agent = Agent("a", "", [step])
    turns = [Turn(step, kwargs={"i": i}) for i in range(6)]
    for turn in turns:
        await agent.put(turn)

    pairs = await collect(agent.run())

    assert ran == list(range(6))
    assert pairs == [(turn, i) for i, turn in enumerate(turns)]
    assert agent.turns == []


# -- routing of returned values -----------------------------------------------------------


async def test_a_returned_turn_is_queued_and_runs_later_in_the_same_run() -> None:
    echo = make_echo()
    spawned: list[Turn] = []

    @tool()
    async def spawn() -> Turn:
        turn = Turn(echo, kwargs={"x": "child"})
        spawned.append(turn)
        return turn

    agent = Agent("a", "", [echo, spawn])
    await agent.put(Turn(spawn))
    await agent.put(Turn(echo, kwargs={"x": "queued-before"}))

    pairs = await collect(agent.run())

    assert [value for _, value in pairs] == ["echo:queued-before", "echo:child"]
    assert pairs[1][0] is spawned[0]
    assert not any(isinstance(value, Turn) for _, value in pairs)
    assert spawned[0].stop_reason is StopReason.COMPLETED
    assert agent.turns == []


async def test_a_returned_context_item_without_id_goes_to_the_context_queue() -> None:
    @tool()
    async def remember(text: str) -> ContextItem[str]:
        return ContextItem(content=text)

    agent = Agent("a", "", [remember])
    await agent.put(Turn(remember, kwargs={"text": "hello"}))

    assert await collect(agent.run()) == []
    assert agent.context_queue.items == [ContextItem(content="hello")]
    assert len(agent.context_pool) == 0


async def test_a_returned_context_item_with_id_goes_to_the_context_pool() -> None:
    @tool()
    async def store(doc_id: str) -> ContextItem[str]:
        return ContextItem(content=f"body of {doc_id}", description="a document", id=doc_id)

    agent = Agent("a", "", [store])
    await agent.put(Turn(store, kwargs={"doc_id": "d1"}))

    assert await collect(agent.run()) == []
    assert agent.context_pool.get("d1") == ContextItem(
        content="body of d1", description="a document", id="d1"
    )
    assert len(agent.context_queue) == 0


async def test_a_completion_check_returning_true_ends_run_and_leaves_turns_queued() -> None:
    echo = make_echo()

    @tool(type=ToolType.COMPLETION_CHECK)
    async def done() -> bool:
        return True

    agent = Agent("a", "", [echo, done])
    await agent.put(Turn(echo, kwargs={"x": "before"}))
    await agent.put(Turn(done))
    rest = [Turn(echo, kwargs={"x": "after"}), Turn(done)]
    for turn in rest:
        await agent.put(turn)

    assert await drain(agent) == ["echo:before"]
    assert agent.turns == rest
    assert not agent.is_running
    assert await drain(agent) == ["echo:after"]  # the next run carries on
    assert agent.turns == []


async def test_a_completion_check_returning_false_lets_run_continue() -> None:
    echo = make_echo()
    checks: list[bool] = []

    @tool(type=ToolType.COMPLETION_CHECK)
    async def not_yet() -> bool:
        checks.append(False)
        return False

    agent = Agent("a", "", [echo, not_yet])
    await agent.put(Turn(not_yet))
    await agent.put(Turn(echo, kwargs={"x": "after"}))
    await agent.put(Turn(not_yet))

    assert await drain(agent) == ["echo:after"]  # False is not yielded either
    assert checks == [False, False]
    assert agent.turns == []


@pytest.mark.parametrize("returned", ["yes", 1, None], ids=["str", "int", "none"])
async def test_a_completion_check_returning_a_non_bool_is_an_error(returned: object) -> None:
    @tool(type=ToolType.COMPLETION_CHECK)
    async def sloppy() -> bool:
        return returned  # type: ignore[return-value]

    agent = Agent("a", "", [sloppy])
    turn = Turn(sloppy)
    await agent.put(turn)

    with pytest.raises(CompletionCheckReturnError, match="sloppy"):
        await collect(agent.run())
    assert turn.stop_reason is StopReason.ERROR
    assert not agent.is_running


@pytest.mark.parametrize(
    "plain",
    [42, "text", None, 0, "", False, [1, 2], {"k": "v"}, (1, "a")],
    ids=["int", "str", "none", "zero", "empty-str", "false", "list", "dict", "tuple"],
)
async def test_any_other_value_is_yielded_with_its_turn(plain: object) -> None:
    @tool()
    async def give() -> Any:
        return plain

    agent = Agent("a", "", [give])
    turn = Turn(give)
    await agent.put(turn)

    pairs = await collect(agent.run())

    assert len(pairs) == 1
    assert pairs[0][0] is turn
    assert pairs[0][1] == plain
    assert type(pairs[0][1]) is type(plain)


# -- streaming tools ----------------------------------------------------------------------


async def test_each_streamed_value_is_routed_as_it_is_produced() -> None:
    echo = make_echo()
    seen_by_tool: list[tuple[str, Any]] = []
    spawned: list[Turn] = []

    @tool()
    async def mixed(memory: ContextQueue[str], pool: ContextPool[str]) -> Any:
        yield "first"
        yield ContextItem(content="note")
        seen_by_tool.append(("queue", [i.content for i in memory.items]))
        yield ContextItem(content="doc", description="a doc", id="d1")
        seen_by_tool.append(("pool", [i.id for i in pool.items]))
        turn = Turn(echo, kwargs={"x": "later"})
        spawned.append(turn)
        yield turn
        seen_by_tool.append(("queued", agent.turns == spawned))
        yield "second"

    agent = Agent("a", "", [echo, mixed])
    stream_turn = Turn(mixed)
    await agent.put(stream_turn)

    pairs = await collect(agent.run())

    assert pairs == [
        (stream_turn, "first"),
        (stream_turn, "second"),
        (spawned[0], "echo:later"),
    ]
    assert seen_by_tool == [("queue", ["note"]), ("pool", ["d1"]), ("queued", True)]
    assert [i.content for i in agent.context_queue.items] == ["note"]
    assert agent.context_pool.get("d1").content == "doc"


async def test_plain_values_reach_the_consumer_before_the_next_is_produced() -> None:
    consumer_saw_first = asyncio.Event()
    received: list[int] = []
    tool_observed: list[list[int]] = []

    @tool()
    async def stream() -> Any:
        yield 1
        await consumer_saw_first.wait()  # a prefetching agent would deadlock here
        tool_observed.append(list(received))
        yield 2

    agent = Agent("a", "", [stream])
    await agent.put(Turn(stream, timeout=5))  # a deadlock fails as a timeout, not a hang

    async for _, value in agent.run():
        received.append(value)
        consumer_saw_first.set()

    assert received == [1, 2]
    assert tool_observed == [[1]]


# -- context injection --------------------------------------------------------------------


async def test_a_context_queue_parameter_receives_the_agents_queue() -> None:
    got: list[object] = []

    @tool()
    async def think(question: str, memory: ContextQueue[Any]) -> str:
        got.append(memory)
        return question

    agent = Agent("a", "", [think])
    await agent.put(Turn(think, kwargs={"question": "q"}))

    assert await drain(agent) == ["q"]
    assert got == [agent.context_queue]
    assert got[0] is agent.context_queue


async def test_an_optional_pool_parameter_is_the_pool_inside_and_none_outside() -> None:
    got: list[object] = []

    @tool()
    async def answer(pool: ContextPool[Any] | None = None) -> str:
        got.append(pool)
        return "ok"

    assert await Turn(answer).returning() == "ok"
    agent = Agent("a", "", [answer])
    await agent.put(Turn(answer))
    assert await drain(agent) == ["ok"]

    assert got[0] is None
    assert got[1] is agent.context_pool


async def test_a_required_context_parameter_outside_an_agent_is_a_clear_type_error() -> None:
    @tool()
    async def needs(memory: ContextQueue[Any]) -> None:
        return None

    with pytest.raises(TypeError, match=r"(?s)ContextQueue.*'memory'.*agent") as info:
        await Turn(needs).returning()
    assert "needs" in str(info.value)
    with pytest.raises(TypeError, match="memory"):
        await needs()  # type: ignore[call-arg]


async def test_an_explicit_argument_wins_over_injection() -> None:
    mine: ContextQueue[Any] = ContextQueue(limit=2)
    got: list[object] = []

    @tool()
    async def think(memory: ContextQueue[Any], pool: ContextPool[Any]) -> None:
        got.extend([memory, pool])

    agent = Agent("a", "", [think])
    await agent.put(Turn(think, kwargs={"memory": mine}))
    await collect(agent.run())

    assert got[0] is mine
    assert got[1] is agent.context_pool


async def test_hooks_with_context_parameters_receive_the_agents_instances() -> None:
    seen: list[tuple[str, object, object]] = []
    echo = make_echo()

    @echo.before_invoke
    async def audit(x: str, memory: ContextQueue[Any], pool: ContextPool[Any]) -> None:
        seen.append(("tool hook", memory, pool))

    @hook(TurnHook.BEFORE_RUN)
    async def global_before(turn: Turn, memory: ContextQueue[Any]) -> None:
        seen.append(("global turn hook", memory, None))

    agent = Agent("a", "", [echo])

    @agent.on_complete
    async def finished(turn: Turn, reason: StopReason, pool: ContextPool[Any]) -> None:
        seen.append(("agent turn hook", None, pool))

    await agent.put(Turn(echo, kwargs={"x": "1"}))
    assert await drain(agent) == ["echo:1"]

    queue, pool = agent.context_queue, agent.context_pool
    assert len(seen) == 3
    assert {label for label, _, _ in seen} == {"tool hook", "global turn hook", "agent turn hook"}
    for label, got_queue, got_pool in seen:
        if label != "agent turn hook":
            assert got_queue is queue, label
        if label != "global turn hook":
            assert got_pool is pool, label


# -- errors and timeouts ------------------------------------------------------------------


async def test_a_turn_error_propagates_after_its_hooks_fired() -> None:
    log: list[tuple[Any, ...]] = []

    @tool()
    async def boom() -> None:
        raise ValueError("boom")

    agent = Agent("a", "", [boom])

    @agent.on_turn_error
    async def agent_saw_error(a: Agent, turn: Turn, exc: BaseException) -> None:
        log.append(("agent ON_TURN_ERROR", a, turn, exc))

    turn = Turn(boom)

    @turn.on_error
    async def turn_saw_error(t: Turn, exc: BaseException) -> None:
        log.append(("turn ON_ERROR", t, exc))

    await agent.put(turn)
    with pytest.raises(ValueError, match="boom") as info:
        await collect(agent.run())

    assert log == [
        ("turn ON_ERROR", turn, info.value),
        ("agent ON_TURN_ERROR", agent, turn, info.value),
    ]
    assert turn.stop_reason is StopReason.ERROR
    assert not agent.is_running
    assert agent.current_turn is None


async def test_a_turn_timeout_propagates_after_its_hooks_fired() -> None:
    log: list[tuple[Any, ...]] = []
    never = asyncio.Event()

    @tool()
    async def stuck() -> None:
        await never.wait()

    agent = Agent("a", "", [stuck])

    @agent.on_turn_timeout
    async def agent_saw_timeout(a: Agent, turn: Turn) -> None:
        log.append(("agent ON_TURN_TIMEOUT", a, turn))

    @agent.on_turn_error
    async def agent_saw_error(a: Agent, turn: Turn, exc: BaseException) -> None:
        log.append(("agent ON_TURN_ERROR", a, turn, exc))

    turn = Turn(stuck, timeout=0.05)

    @turn.on_timeout
    async def turn_saw_timeout(t: Turn) -> None:
        log.append(("turn ON_TIMEOUT", t))

    await agent.put(turn)
    with pytest.raises(TurnTimeoutError):
        await collect(agent.run())

    assert log == [("turn ON_TIMEOUT", turn), ("agent ON_TURN_TIMEOUT", agent, turn)]
    assert turn.stop_reason is StopReason.TIMEOUT
    assert not agent.is_running


# -- agent hooks --------------------------------------------------------------------------


async def test_agent_hook_events_fire_with_their_exact_arguments() -> None:
    log: list[tuple[Any, ...]] = []
    echo = make_echo()
    spawned: list[Turn] = []

    @tool()
    async def spawn() -> Turn:
        turn = Turn(echo, kwargs={"x": "b"})
        spawned.append(turn)
        return turn

    @tool()
    async def stream() -> Any:
        yield "s1"
        yield "s2"

    agent = Agent("a", "", [echo, spawn, stream])

    @agent.before_turn
    async def before_turn(a: Agent) -> None:
        log.append(("BEFORE_TURN", a))

    @agent.after_turn
    async def after_turn(a: Agent, turn: Turn) -> None:
        log.append(("AFTER_TURN", a, turn))

    @agent.on_turn_value
    async def on_turn_value(a: Agent, turn: Turn, value: Any) -> None:
        log.append(("ON_TURN_VALUE", a, turn, value))

    @agent.before_put
    async def before_put(a: Agent, turn: Turn) -> None:
        log.append(("BEFORE_PUT", a, turn, turn in a.turns))

    @agent.after_put
    async def after_put(a: Agent, turn: Turn) -> None:
        log.append(("AFTER_PUT", a, turn, turn in a.turns))

    t1, t2, t4 = Turn(echo, kwargs={"x": "a"}), Turn(spawn), Turn(stream)
    for turn in (t1, t2, t4):
        await agent.put(turn)

    async for turn, value in agent.run():
        assert log[-1] == ("ON_TURN_VALUE", agent, turn, value)  # fired before the yield

    t3 = spawned[0]
    expected = [
        ("BEFORE_PUT", agent, t1, False),
        ("AFTER_PUT", agent, t1, True),
        ("BEFORE_PUT", agent, t2, False),
        ("AFTER_PUT", agent, t2, True),
        ("BEFORE_PUT", agent, t4, False),
        ("AFTER_PUT", agent, t4, True),
        ("BEFORE_TURN", agent),
        ("ON_TURN_VALUE", agent, t1, "echo:a"),
        ("AFTER_TURN", agent, t1),
        ("BEFORE_TURN", agent),
        ("BEFORE_PUT", agent, t3, False),
        ("AFTER_PUT", agent, t3, True),
        ("ON_TURN_VALUE", agent, t2, t3),  # a routed value too, once it is queued
        ("AFTER_TURN", agent, t2),
        ("BEFORE_TURN", agent),
        ("ON_TURN_VALUE", agent, t4, "s1"),
        ("ON_TURN_VALUE", agent, t4, "s2"),
        ("AFTER_TURN", agent, t4),
        ("BEFORE_TURN", agent),
        ("ON_TURN_VALUE", agent, t3, "echo:b"),
        ("AFTER_TURN", agent, t3),
    ]
    assert log == expected  # no BEFORE_TURN once the queue is empty


@pytest.mark.parametrize("queued", [0, 1, 3])
async def test_before_turn_fires_once_per_turn_taken(queued: int) -> None:
    echo = make_echo()
    agent = Agent("a", "", [echo])
    depths: list[int] = []

    @agent.before_turn
    async def before(a: Agent) -> None:
        depths.append(a.queue_depth)

    for i in range(queued):
        await agent.put(Turn(echo, kwargs={"x": str(i)}))

    assert len(await collect(agent.run())) == queued
    assert depths == list(range(queued, 0, -1))  # each time with the next turn still queued


async def test_on_turn_value_fires_for_every_value_after_routing_it() -> None:
    echo = make_echo()
    child = Turn(echo, kwargs={"x": "child"})
    note = ContextItem(content="note")
    doc = ContextItem(content="doc", description="a doc", id="d1")
    kept = ContextItem(content="kept")

    @tool()
    async def mixed() -> Any:
        yield note
        yield doc
        yield child
        yield "plain"

    @tool()
    async def remember() -> ContextItem[str]:
        return kept

    @tool(type=ToolType.COMPLETION_CHECK)
    async def finished() -> bool:
        return False

    agent = Agent("a", "", [echo, mixed, remember, finished])
    seen: list[tuple[str, Any, bool]] = []

    @agent.on_turn_value
    async def value(a: Agent, turn: Turn, value: Any) -> None:
        if isinstance(value, Turn):
            routed = value in a.turns
        elif isinstance(value, ContextItem):
            routed = value in (a.context_pool.items if value.id else a.context_queue.items)
        else:
            routed = False
        seen.append((turn.tool.name, value, routed))

    for turn in (Turn(mixed), Turn(remember), Turn(finished)):
        await agent.put(turn)

    assert await drain(agent) == ["plain", "echo:child"]
    assert seen == [
        ("mixed", note, True),  # each routed value is already where it was routed to
        ("mixed", doc, True),
        ("mixed", child, True),
        ("mixed", "plain", False),
        ("remember", kept, True),
        ("echo", "echo:child", False),
    ]  # and a completion check's verdict is not a value: no event for it


async def test_agent_scoped_turn_hooks_fire_for_every_turn_the_agent_runs() -> None:
    log: list[tuple[Any, ...]] = []

    @tool()
    async def ok() -> str:
        return "ok"

    @tool()
    async def spawn() -> Turn:
        return Turn(ok)

    @tool()
    async def bad() -> None:
        raise RuntimeError("bad")

    slow = blocking_tool()

    agent = Agent("a", "", [ok, spawn, bad, slow])

    @agent.on_complete
    async def completed(turn: Turn, reason: StopReason) -> None:
        log.append(("complete", turn.tool.name, reason))

    @agent.on_error
    async def errored(turn: Turn, exc: BaseException) -> None:
        log.append(("error", turn.tool.name, type(exc)))

    @agent.on_timeout
    async def timed_out(turn: Turn) -> None:
        log.append(("timeout", turn.tool.name))

    assert agent.turn_hooks == [completed, errored, timed_out]
    assert not set(agent.hooks) & {completed, errored, timed_out}

    await agent.put(Turn(ok))
    await agent.put(Turn(spawn))
    assert await drain(agent) == ["ok", "ok"]
    await agent.put(Turn(bad))
    with pytest.raises(RuntimeError, match="bad"):
        await collect(agent.run())
    slow_turn = Turn(slow, timeout=0.05)
    await agent.put(slow_turn)
    with pytest.raises(TurnTimeoutError):
        await collect(agent.run())

    assert log == [
        ("complete", "ok", StopReason.COMPLETED),
        ("complete", "spawn", StopReason.COMPLETED),
        ("complete", "ok", StopReason.COMPLETED),
        ("error", "bad", RuntimeError),
        ("complete", "bad", StopReason.ERROR),
        ("timeout", "blocks"),
        ("complete", "blocks", StopReason.TIMEOUT),
    ]
    assert slow_turn.hooks == []  # the agent's turn hooks are not copied into turns


async def test_a_hook_in_both_the_turn_and_the_agent_turn_hooks_fires_once_per_turn() -> None:
    log: list[tuple[str, Any]] = []

    @tool()
    async def ok() -> str:
        return "ok"

    @tool()
    async def stream() -> AsyncIterator[int]:
        yield 1
        yield 2

    agent = Agent("twice", "", [ok, stream])

    @agent.on_complete
    async def completed(turn: Turn, reason: StopReason) -> None:
        log.append(("complete", turn.tool.name))

    alone = Turn(ok)  # only the agent's hook: still fires
    for made in (Turn(ok), Turn(stream)):
        made.on_complete(completed)  # the same hook, attached to the turn as well
        await agent.put(made)
    await agent.put(alone)
    assert await drain(agent) == ["ok", 1, 2, "ok"]
    assert log == [("complete", "ok"), ("complete", "stream"), ("complete", "ok")]


# -- read-only while running --------------------------------------------------------------


def _replacement(agent: Agent, attribute: str) -> Any:
    return {
        "description": "changed",
        "tools": list(agent.tools),
        "tags": ["changed"],
        "context_queue": ContextQueue(limit=2),
        "context_pool": ContextPool(),
        "hooks": [],
        "turn_hooks": [],
    }[attribute]


_ATTRIBUTES = [
    "description",
    "tools",
    "tags",
    "context_queue",
    "context_pool",
    "hooks",
    "turn_hooks",
]


@pytest.mark.parametrize("attribute", _ATTRIBUTES)
async def test_attributes_are_read_only_while_running(attribute: str) -> None:
    echo = make_echo()
    agent = Agent("a", "", [echo])
    await agent.put(Turn(echo, kwargs={"x": "1"}))
    before = getattr(agent, attribute)

    async for _ in agent.run():
        assert agent.is_running
        with pytest.raises(SafeExecutionError, match=attribute):
            setattr(agent, attribute, _replacement(agent, attribute))
        assert getattr(agent, attribute) == before

    assert not agent.is_running
    setattr(agent, attribute, _replacement(agent, attribute))  # allowed once the run is over


async def test_attributes_are_read_only_inside_a_running_tool() -> None:
    errors: list[BaseException] = []

    @tool()
    async def meddle() -> None:
        try:
            agent.description = "changed from inside"
        except SafeExecutionError as exc:
            errors.append(exc)

    agent = Agent("a", "original", [meddle])
    await agent.put(Turn(meddle))
    await collect(agent.run())

    assert len(errors) == 1
    assert agent.description == "original"


async def test_a_second_concurrent_run_is_a_safe_execution_error() -> None:
    echo = make_echo()
    agent = Agent("a", "", [echo])
    await agent.put(Turn(echo, kwargs={"x": "1"}))
    await agent.put(Turn(echo, kwargs={"x": "2"}))

    received = []
    async for _, value in agent.run():
        received.append(value)
        with pytest.raises(SafeExecutionError):
            await second_run(agent)

    assert received == ["echo:1", "echo:2"]  # the first run was not disturbed
    assert not agent.is_running


# -- pause / resume -----------------------------------------------------------------------


async def test_pause_lets_the_current_turn_finish_and_holds_the_next_turn() -> None:
    log: list[tuple[Any, ...]] = []
    started, release, at_gate = asyncio.Event(), asyncio.Event(), asyncio.Event()

    @tool()
    async def step(i: int) -> int:
        log.append(("start", i))
        if i == 1:
            started.set()
            await release.wait()
        log.append(("end", i))
        return i

    agent = Agent("a", "", [step])

    @agent.on_pause
    async def paused(a: Agent) -> None:
        log.append(("ON_PAUSE", a))
        at_gate.set()

    @agent.on_resume
    async def resumed(a: Agent) -> None:
        log.append(("ON_RESUME", a))

    await agent.put(Turn(step, kwargs={"i": 1}))
    await agent.put(Turn(step, kwargs={"i": 2}))
    outputs: list[int] = []

    async def consume() -> None:
        async for _, value in agent.run():
            outputs.append(value)

    task = asyncio.create_task(consume())
    await started.wait()
    agent.pause()
    assert agent.is_paused
    release.set()

    await reached(at_gate, task)
    assert outputs == [1]  # the current turn finished and its value was delivered
    assert log == [("start", 1), ("end", 1), ("ON_PAUSE", agent)]
    assert agent.is_running
    assert agent.is_paused
    assert [t.kwargs["i"] for t in agent.turns] == [2]
    with pytest.raises(SafeExecutionError):
        agent.description = "changed while paused"
    with pytest.raises(SafeExecutionError):
        await second_run(agent)

    agent.resume()
    await task

    assert outputs == [1, 2]
    assert log[3:] == [("ON_RESUME", agent), ("start", 2), ("end", 2)]
    assert not agent.is_paused
    assert not agent.is_running


async def test_pause_and_resume_are_idempotent() -> None:
    ran: list[int] = []
    at_gate = asyncio.Event()
    counts = {"pause": 0, "resume": 0}

    @tool()
    async def step(i: int) -> int:
        ran.append(i)
        return i

    agent = Agent("a", "", [step])

    @agent.on_pause
    async def paused(a: Agent) -> None:
        counts["pause"] += 1
        at_gate.set()

    @agent.on_resume
    async def resumed(a: Agent) -> None:
        counts["resume"] += 1

    agent.resume()  # resuming an agent that is not paused changes nothing
    assert not agent.is_paused
    agent.pause()
    agent.pause()
    assert agent.is_paused

    await agent.put(Turn(step, kwargs={"i": 1}))
    task = asyncio.create_task(collect(agent.run()))
    await reached(at_gate, task)
    assert ran == []  # paused before the first turn

    agent.resume()
    agent.resume()
    pairs = await task

    assert [value for _, value in pairs] == [1]
    assert counts == {"pause": 1, "resume": 1}
    assert not agent.is_paused


def gate_watch(agent: Agent) -> asyncio.Event:
    """Set when ``agent``'s run reaches its pause gate; the hook then resumes, so that a
    run wrongly waiting at the gate fails its test instead of hanging it."""
    at_gate = asyncio.Event()

    @agent.on_pause
    async def reached_gate(a: Agent) -> None:
        at_gate.set()
        a.resume()

    return at_gate


async def test_a_paused_agent_with_nothing_queued_ends_its_run() -> None:
    agent = Agent("a", "", [make_echo()])
    at_gate = gate_watch(agent)
    agent.pause()

    assert await collect(agent.run()) == []

    assert not at_gate.is_set()  # no next turn, so nothing to hold at the gate
    assert agent.is_paused  # the pause still holds the next run's first turn
    assert not agent.is_running


async def test_pausing_during_the_last_turn_ends_the_run_after_it() -> None:
    @tool()
    async def last() -> str:
        AgentRegistry.get("a").pause()
        return "done"

    agent = Agent("a", "", [last])
    at_gate = gate_watch(agent)
    await agent.put(Turn(last))

    assert await drain(agent) == ["done"]
    assert not at_gate.is_set()
    assert agent.is_paused


async def test_pausing_from_the_consumer_after_the_last_value_ends_the_run() -> None:
    echo = make_echo()
    agent = Agent("a", "", [echo])
    at_gate = gate_watch(agent)
    await agent.put(Turn(echo, kwargs={"x": "only"}))

    seen = []
    async for _, value in agent.run():
        seen.append(value)
        agent.pause()

    assert seen == ["echo:only"]
    assert not at_gate.is_set()
    assert agent.is_paused
    assert not agent.is_running


async def test_a_paused_agent_still_holds_a_queued_turn_at_the_gate() -> None:
    echo = make_echo()
    agent = Agent("a", "", [echo])
    at_gate = gate_watch(agent)
    agent.pause()
    await agent.put(Turn(echo, kwargs={"x": "held"}))

    assert await drain(agent) == ["echo:held"]
    assert at_gate.is_set()  # the queued turn waited at the gate until the hook resumed


async def test_a_paused_idle_agent_is_read_only_until_resumed() -> None:
    echo = make_echo()
    agent = Agent("a", "original", [echo])

    agent.pause()
    with pytest.raises(SafeExecutionError, match="paused"):
        agent.description = "changed"
    with pytest.raises(SafeExecutionError):
        agent.tags = ["x"]
    assert agent.description == "original"

    agent.resume()
    agent.description = "changed"
    assert agent.description == "changed"


# -- send ---------------------------------------------------------------------------------


async def test_send_puts_a_turn_on_another_agent() -> None:
    echo = make_echo()
    sender = Agent("sender", "", [echo])
    receiver = Agent("receiver", "", [echo])
    turn = Turn(echo, kwargs={"x": "mail"})

    await sender.send("receiver", turn)

    assert receiver.turns == [turn]
    assert sender.turns == []
    assert await drain(receiver) == ["echo:mail"]


async def test_send_from_inside_a_running_tool_reaches_the_other_agent() -> None:
    echo = make_echo()

    @tool()
    async def forward(x: str) -> str:
        await AgentRegistry.get("sender").send("receiver", Turn(echo, kwargs={"x": x}))
        return "forwarded"

    sender = Agent("sender", "", [forward])
    receiver = Agent("receiver", "", [echo])
    await sender.put(Turn(forward, kwargs={"x": "hi"}))

    assert await drain(sender) == ["forwarded"]
    assert await drain(receiver) == ["echo:hi"]


async def test_send_to_an_unknown_agent_is_an_unregistered_agent_error() -> None:
    echo = make_echo()
    sender = Agent("sender", "", [echo])

    with pytest.raises(UnregisteredAgentError, match="nobody"):
        await sender.send("nobody", Turn(echo, kwargs={"x": "lost"}))
    assert sender.turns == []


# -- branch -------------------------------------------------------------------------------


async def test_branch_copies_configuration_queue_context_and_tags() -> None:
    echo = make_echo()
    parent = Agent(
        "parent",
        "the parent",
        [echo],
        context_queue=ContextQueue(limit=4, tags=["q"]),
        context_pool=ContextPool(limit=3),
        tags=["team"],
    )
    await parent.context_queue.append(ContextItem(content="q1"))
    await parent.context_pool.add(ContextItem(content="p1", description="d", id="p1"))

    @parent.after_turn
    async def seen(a: Agent, turn: Turn) -> None:
        return None

    @parent.on_complete
    async def completed(turn: Turn, reason: StopReason) -> None:
        return None

    original = Turn(echo, args=["a"], timeout=7, tags=["tt"], metadata={"m": 1})
    await parent.put(original)

    child = parent.branch("child")

    assert AgentRegistry.get("child") is child
    assert AgentRegistry.get("parent") is parent
    assert child.description == "the parent"
    assert list(child.tools) == [echo]
    assert child.tags == frozenset({"team"})
    assert child.hooks == [seen]
    assert child.hooks is not parent.hooks
    assert child.turn_hooks == [completed]

    [copy] = child.turns
    assert copy is not original
    assert copy.tool is echo
    assert copy.args == original.args
    assert copy.kwargs == original.kwargs
    assert copy.timeout == 7
    assert copy.tags == frozenset({"tt"})
    assert copy.metadata == {"m": 1}

    assert child.context_queue is not parent.context_queue
    assert child.context_queue.limit == 4
    assert child.context_queue.tags == frozenset({"q"})
    assert [i.content for i in child.context_queue.items] == ["q1"]
    assert child.context_pool is not parent.context_pool
    assert child.context_pool.limit == 3
    assert [i.id for i in child.context_pool.items] == ["p1"]


async def test_a_branch_is_independent_afterwards() -> None:
    echo = make_echo()
    parent = Agent("parent", "", [echo])
    await parent.context_queue.append(ContextItem(content="shared"))
    await parent.context_pool.add(ContextItem(content=0, description="d", id="shared"))
    original = Turn(echo, kwargs={"x": "a"})
    await parent.put(original)

    child = parent.branch("child")
    await child.context_queue.append(ContextItem(content="child only"))
    await child.context_pool.add(ContextItem(content=1, description="d", id="child"))
    await parent.context_queue.append(ContextItem(content="parent only"))
    await parent.context_pool.add(ContextItem(content=2, description="d", id="parent"))
    child.turns[0].kwargs["x"] = "mutated"

    assert [i.content for i in parent.context_queue] == ["shared", "parent only"]
    assert [i.content for i in child.context_queue] == ["shared", "child only"]
    assert [i.id for i in parent.context_pool] == ["shared", "parent"]
    assert [i.id for i in child.context_pool] == ["shared", "child"]

    assert await drain(child) == ["echo:mutated"]
    assert parent.turns == [original]  # running the branch consumed only its own queue
    assert original.kwargs == {"x": "a"}
    assert original.stop_reason is None
    assert await drain(parent) == ["echo:a"]


async def test_branch_keeps_the_limits_of_empty_context_stores() -> None:
    echo = make_echo()
    parent = Agent(
        "parent",
        "",
        [echo],
        context_queue=ContextQueue(limit=4),
        context_pool=ContextPool(limit=2),
    )

    child = parent.branch("child")

    assert child.context_queue.limit == 4
    assert child.context_pool.limit == 2


async def test_branch_overrides_description_tools_and_hooks() -> None:
    echo = make_echo()

    @tool()
    async def extra() -> str:
        return "extra"

    parent = Agent("parent", "the parent", [echo])

    @parent.after_turn
    async def parents_hook(a: Agent, turn: Turn) -> None:
        return None

    @hook(TurnHook.AFTER_RUN)
    async def replacement(turn: Turn, output: Any) -> None:
        return None

    child = parent.branch("child", description="the child", tools=[echo, extra], hooks=[])
    other = parent.branch("other", hooks=[replacement])

    assert child.description == "the child"
    assert list(child.tools) == [echo, extra]
    assert child.hooks == []
    assert other.hooks == [replacement]
    assert parent.description == "the parent"
    assert list(parent.tools) == [echo]
    assert parent.hooks == [parents_hook]
    await child.put(Turn(extra))
    assert await drain(child) == ["extra"]
    with pytest.raises(ValueError, match="extra"):
        await parent.put(Turn(extra))


async def test_branch_under_a_taken_name_is_a_value_error() -> None:
    echo = make_echo()
    parent = Agent("parent", "", [echo])
    other = Agent("other", "", [echo])

    with pytest.raises(ValueError, match="other"):
        parent.branch("other")
    assert AgentRegistry.get("other") is other
