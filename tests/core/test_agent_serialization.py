"""Agent.to_dict() / Agent.from_dict() (SPEC §1.4 and §1.7)."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from core_helpers import make_echo

from pygents import (
    Agent,
    AgentRegistry,
    ContextItem,
    ContextPool,
    ContextQueue,
    Hook,
    SafeExecutionError,
    StopReason,
    Turn,
    UnregisteredHookError,
    UnregisteredToolError,
    tool,
)

KEYS = {
    "uuid",
    "name",
    "description",
    "tool_names",
    "tags",
    "queue",
    "current_turn",
    "hooks",
    "turn_hooks",
    "context_queue",
    "context_pool",
    "is_paused",
}


def through_json(data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(json.dumps(data))
    return result


async def outputs(agent: Agent) -> list[tuple[str, Any]]:
    """``(turn uuid, value)`` for everything one ``run()`` yields."""
    return [(turn.uuid, value) async for turn, value in agent.run()]


# -- to_dict ------------------------------------------------------------------------------


async def test_to_dict_has_every_documented_key_and_is_json_ready() -> None:
    echo = make_echo()
    agent = Agent("a", "describes a", [echo], tags=["b", "a"])

    @agent.after_turn
    async def noted(a: Agent, turn: Turn) -> None:
        return None

    @agent.on_complete
    async def finished(turn: Turn, reason: StopReason) -> None:
        return None

    first, second = Turn(echo, kwargs={"x": "1"}), Turn(echo, kwargs={"x": "2"})
    await agent.put(first)
    await agent.put(second)
    await agent.context_queue.append(ContextItem(content="remembered"))

    data = agent.to_dict()

    assert set(data) == KEYS
    assert through_json(data) == data
    assert data["uuid"] == agent.uuid
    assert data["name"] == "a"
    assert data["description"] == "describes a"
    assert data["tool_names"] == ["echo"]
    assert data["tags"] == ["a", "b"]
    assert [t["uuid"] for t in data["queue"]] == [first.uuid, second.uuid]
    assert data["queue"][0] == first.to_dict()
    assert data["current_turn"] is None
    assert data["hooks"] == [{"type": "AgentHook.AFTER_TURN", "name": "noted"}]
    assert data["turn_hooks"] == [{"type": "TurnHook.ON_COMPLETE", "name": "finished"}]
    assert data["context_queue"] == agent.context_queue.to_dict()
    assert data["context_pool"] == agent.context_pool.to_dict()
    assert data["is_paused"] is False
    agent.pause()
    assert agent.to_dict()["is_paused"] is True


# -- round trip ---------------------------------------------------------------------------


async def test_a_restored_paused_agent_behaves_exactly_like_the_original() -> None:
    log: list[tuple[Any, ...]] = []
    at_gate = asyncio.Event()

    @tool()
    async def echo(x: str) -> str:
        return f"echo:{x}"

    @tool()
    async def note(x: str) -> ContextItem[str]:
        return ContextItem(content=x)

    @tool()
    async def file(doc: str) -> ContextItem[str]:
        return ContextItem(content=doc.upper(), description=f"doc {doc}", id=doc)

    @tool()
    async def recall(memory: ContextQueue[str], pool: ContextPool[str]) -> list[str]:
        return [i.content for i in memory.items] + [i.id or "" for i in pool.items]

    agent = Agent(
        "original",
        "a paused worker",
        [echo, note, file, recall],
        context_queue=ContextQueue(limit=3, tags=["memory"]),
        context_pool=ContextPool(limit=2, tags=["docs"]),
        tags=["team"],
    )
    await agent.context_queue.append(ContextItem(content="q0"), ContextItem(content="q1"))
    await agent.context_pool.add(ContextItem(content="P0", description="doc p0", id="p0"))

    @agent.after_turn
    async def record_turn(a: Agent, turn: Turn) -> None:
        log.append(("AFTER_TURN", a.name, turn.uuid))

    @agent.on_pause
    async def record_pause(a: Agent) -> None:
        log.append(("ON_PAUSE", a.name))
        at_gate.set()

    @agent.on_complete
    async def record_complete(turn: Turn, reason: StopReason) -> None:
        log.append(("ON_COMPLETE", turn.uuid, reason))

    @agent.context_queue.on_evict
    async def record_evict(queue: ContextQueue[Any], item: ContextItem[Any]) -> None:
        log.append(("ON_EVICT", item.content))

    @agent.context_pool.on_evict
    async def record_pool_evict(pool: ContextPool[Any], item: ContextItem[Any]) -> None:
        log.append(("POOL_ON_EVICT", item.id))

    for turn in [
        Turn(echo, kwargs={"x": "a"}, tags=["t"], metadata={"corr": "c1"}, timeout=9),
        Turn(note, kwargs={"x": "q2"}),
        Turn(note, args=["q3"]),
        Turn(file, kwargs={"doc": "p1"}),
        Turn(file, kwargs={"doc": "p2"}),
        Turn(recall),
        Turn(echo, kwargs={"x": "b"}),
    ]:
        await agent.put(turn)
    agent.pause()

    data = through_json(agent.to_dict())
    AgentRegistry.unregister("original")
    restored = Agent.from_dict(data)

    # State as it was.
    assert AgentRegistry.get("original") is restored
    assert restored.is_paused
    assert not restored.is_running
    assert restored.description == "a paused worker"
    assert list(restored.tools) == [echo, note, file, recall]
    assert restored.tags == frozenset({"team"})
    assert restored.hooks == agent.hooks
    assert restored.turn_hooks == agent.turn_hooks
    assert [t.uuid for t in restored.turns] == [t.uuid for t in agent.turns]
    for mine, theirs in zip(restored.turns, agent.turns, strict=True):
        assert mine is not theirs
        assert (mine.tool, mine.args, mine.kwargs) == (theirs.tool, theirs.args, theirs.kwargs)
        assert (mine.timeout, mine.tags, mine.metadata) == (
            theirs.timeout,
            theirs.tags,
            theirs.metadata,
        )
    assert restored.context_queue.to_dict() == agent.context_queue.to_dict()
    assert restored.context_pool.to_dict() == agent.context_pool.to_dict()
    with pytest.raises(SafeExecutionError):
        restored.description = "changed while paused"

    async def resume_and_run(subject: Agent) -> tuple[list[tuple[str, Any]], list[Any]]:
        log.clear()
        at_gate.clear()
        task = asyncio.create_task(outputs(subject))
        waiter = asyncio.create_task(at_gate.wait())
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        assert waiter.done(), "the agent ran without stopping at its pause gate"
        assert log == [("ON_PAUSE", "original")]  # held before its first turn
        subject.resume()
        return await task, list(log)

    restored_run = await resume_and_run(restored)
    original_run = await resume_and_run(agent)

    assert restored_run == original_run
    produced, events = restored_run
    assert [value for _, value in produced] == [
        "echo:a",
        ["q1", "q2", "q3", "p1", "p2"],
        "echo:b",
    ]
    assert ("ON_EVICT", "q0") in events
    assert ("POOL_ON_EVICT", "p0") in events
    assert restored.context_queue.to_dict() == agent.context_queue.to_dict()
    assert restored.context_pool.to_dict() == agent.context_pool.to_dict()
    assert restored.turns == []


async def test_an_unpaused_agent_restores_unpaused() -> None:
    echo = make_echo()
    agent = Agent("a", "", [echo])
    await agent.put(Turn(echo, kwargs={"x": "1"}))

    data = through_json(agent.to_dict())
    AgentRegistry.unregister("a")
    restored = Agent.from_dict(data)

    assert not restored.is_paused
    assert [value for _, value in await outputs(restored)] == ["echo:1"]


async def test_empty_context_stores_keep_their_limits_tags_and_hooks() -> None:
    echo = make_echo()
    agent = Agent(
        "a",
        "",
        [echo],
        context_queue=ContextQueue(limit=3, tags=["q"]),
        context_pool=ContextPool(limit=2, tags=["p"]),
    )

    @agent.context_queue.after_append
    async def appended(items: list[Any], current: list[Any]) -> None:
        return None

    data = through_json(agent.to_dict())
    AgentRegistry.unregister("a")
    restored = Agent.from_dict(data)

    assert restored.context_queue.limit == 3
    assert restored.context_queue.tags == frozenset({"q"})
    assert restored.context_queue.hooks == [appended]
    assert restored.context_pool.limit == 2
    assert restored.context_pool.tags == frozenset({"p"})


async def test_an_in_flight_turn_is_requeued_first() -> None:
    snapshots: list[dict[str, Any]] = []

    @tool()
    async def snap(label: str) -> str:
        if not snapshots:
            snapshots.append(agent.to_dict())
        return label

    agent = Agent("live", "", [snap])
    turns = [Turn(snap, kwargs={"label": label}) for label in ("one", "two", "three")]
    for turn in turns:
        await agent.put(turn)

    assert [value for _, value in await outputs(agent)] == ["one", "two", "three"]
    data = through_json(snapshots[0])
    assert data["current_turn"]["uuid"] == turns[0].uuid
    assert [t["uuid"] for t in data["queue"]] == [turns[1].uuid, turns[2].uuid]

    AgentRegistry.unregister("live")
    restored = Agent.from_dict(data)

    assert [t.uuid for t in restored.turns] == [t.uuid for t in turns]
    assert restored.current_turn is None
    assert not restored.is_running
    assert await outputs(restored) == [(t.uuid, t.kwargs["label"]) for t in turns]


# -- bad input ----------------------------------------------------------------------------


async def _valid_payload() -> tuple[dict[str, Any], Hook[Any]]:
    """A valid, JSON-ready payload for an agent named ``"restored"`` (not registered),
    and its instance hook: the caller keeps that alive, because an instance hook can
    be restored by name only while something still holds it."""

    @tool()
    async def echo(x: str) -> str:
        return f"echo:{x}"

    @tool()
    async def outsider() -> None:
        return None

    agent = Agent("restored", "", [echo])

    @agent.after_turn
    async def known_hook(a: Agent, turn: Turn) -> None:
        return None

    await agent.put(Turn(echo, kwargs={"x": "1"}))
    data = through_json(agent.to_dict())
    AgentRegistry.unregister("restored")
    return data, known_hook


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data[key] = value

    return change


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        del data[key]

    return change


def _in_turn(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["queue"][0][key] = value

    return change


def _as_current(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        turn = data["queue"].pop()
        turn[key] = value
        data["current_turn"] = turn

    return change


def _unknown_hook(where: str) -> Callable[[dict[str, Any]], None]:
    entry = {"type": "AgentHook.AFTER_TURN", "name": "no_such_hook"}

    def change(data: dict[str, Any]) -> None:
        if where == "agent":
            data["hooks"].append(entry)
        elif where == "turn_hooks":
            data["turn_hooks"].append({"type": "TurnHook.ON_COMPLETE", "name": "no_such_hook"})
        elif where == "queued turn":
            data["queue"][0]["hooks"].append(
                {"type": "TurnHook.ON_COMPLETE", "name": "no_such_hook"}
            )
        else:
            data["context_queue"]["hooks"].append(
                {"type": "ContextQueueHook.AFTER_APPEND", "name": "no_such_hook"}
            )

    return change


BAD_INPUT: list[Any] = [
    # missing keys
    *(
        pytest.param(_drop(key), ValueError, key, id=f"missing-{key}")
        for key in ("name", "description", "tool_names", "context_queue", "context_pool")
    ),
    # wrong types
    pytest.param(_set("name", 5), ValueError, "name", id="name-int"),
    pytest.param(_set("name", None), ValueError, "name", id="name-none"),
    pytest.param(_set("description", 5), ValueError, "description", id="description-int"),
    pytest.param(_set("tool_names", "echo"), ValueError, "tool_names", id="tool-names-str"),
    pytest.param(_set("tool_names", [1]), ValueError, "tool_names", id="tool-names-ints"),
    pytest.param(_set("tags", "x"), ValueError, "tags", id="tags-str"),
    pytest.param(_set("queue", {"a": 1}), ValueError, "queue", id="queue-dict"),
    pytest.param(_set("queue", [5]), ValueError, "Turn", id="queue-of-ints"),
    pytest.param(_set("current_turn", 5), ValueError, "current_turn", id="current-int"),
    pytest.param(_set("current_turn", "x"), ValueError, "current_turn", id="current-str"),
    pytest.param(_set("hooks", "x"), ValueError, "hooks", id="hooks-str"),
    pytest.param(_set("hooks", [5]), ValueError, "hook", id="hooks-of-ints"),
    pytest.param(_set("turn_hooks", {}), ValueError, "turn_hooks", id="turn-hooks-dict"),
    pytest.param(_set("context_queue", []), ValueError, "context_queue", id="queue-list"),
    pytest.param(_set("context_pool", "x"), ValueError, "context_pool", id="pool-str"),
    pytest.param(_set("is_paused", "yes"), ValueError, "is_paused", id="paused-str"),
    pytest.param(_set("is_paused", 1), ValueError, "is_paused", id="paused-int"),
    pytest.param(
        _set("context_queue", {"limit": 0, "items": [], "hooks": [], "tags": []}),
        ValueError,
        "limit",
        id="queue-limit-zero",
    ),
    pytest.param(_in_turn("timeout", "soon"), ValueError, "timeout", id="turn-timeout-str"),
    pytest.param(_in_turn("stop_reason", "exploded"), ValueError, "stop_reason", id="bad-enum"),
    pytest.param(_in_turn("start_time", "yesterday"), ValueError, "start_time", id="bad-date"),
    pytest.param(
        _set("hooks", [{"type": "AgentHook.NOPE", "name": "known_hook"}]),
        ValueError,
        "AgentHook.NOPE",
        id="unknown-hook-type",
    ),
    pytest.param(
        _set("hooks", [{"type": "AgentHook.ON_PAUSE", "name": "known_hook"}]),
        ValueError,
        "known_hook",
        id="hook-registered-for-another-event",
    ),
    # unknown tools and hooks
    pytest.param(
        _set("tool_names", ["echo", "missing"]),
        UnregisteredToolError,
        "missing",
        id="unknown-tool",
    ),
    pytest.param(_in_turn("tool_name", "missing"), UnregisteredToolError, "missing", id="turn"),
    pytest.param(
        _as_current("tool_name", "missing"), UnregisteredToolError, "missing", id="current"
    ),
    *(
        pytest.param(_unknown_hook(where), UnregisteredHookError, "no_such_hook", id=where)
        for where in ("agent", "turn_hooks", "queued turn", "context queue")
    ),
    # a turn for a tool the agent does not have
    pytest.param(_in_turn("tool_name", "outsider"), ValueError, "outsider", id="foreign-turn"),
    pytest.param(
        _as_current("tool_name", "outsider"), ValueError, "outsider", id="foreign-current"
    ),
]


@pytest.mark.parametrize(("corrupt", "error", "mentions"), BAD_INPUT)
async def test_bad_input_raises_a_clear_error_and_registers_nothing(
    corrupt: Callable[[dict[str, Any]], None], error: type[Exception], mentions: str
) -> None:
    data, _kept_alive = await _valid_payload()
    before = set(AgentRegistry)
    bad = copy.deepcopy(data)
    corrupt(bad)

    with pytest.raises(error) as info:
        Agent.from_dict(bad)

    assert mentions in str(info.value)
    assert "restored" not in AgentRegistry
    assert set(AgentRegistry) == before
    assert Agent.from_dict(data).name == "restored"  # the untouched payload still works


@pytest.mark.parametrize("payload", [None, [], "agent", 5], ids=["none", "list", "str", "int"])
async def test_a_payload_that_is_not_a_mapping_is_a_value_error(payload: Any) -> None:
    before = set(AgentRegistry)
    with pytest.raises(ValueError, match="Agent"):
        Agent.from_dict(payload)
    assert set(AgentRegistry) == before


async def test_restoring_under_a_taken_name_is_a_value_error() -> None:
    echo = make_echo()
    agent = Agent("taken", "the first", [echo])
    await agent.put(Turn(echo, kwargs={"x": "1"}))
    data = through_json(agent.to_dict())

    with pytest.raises(ValueError, match="taken"):
        Agent.from_dict(data)

    assert AgentRegistry.get("taken") is agent
    assert len(agent.turns) == 1


async def test_an_agent_keeps_its_uuid_through_serialization_and_a_branch_gets_its_own() -> None:
    echo = make_echo()
    agent = Agent("original", "d", [echo])
    other = Agent("other", "d", [echo])
    child = agent.branch("child")
    data = agent.to_dict()
    AgentRegistry.unregister("original")

    restored = Agent.from_dict(data)

    assert restored.uuid == agent.uuid
    assert len({agent.uuid, other.uuid, child.uuid}) == 3
