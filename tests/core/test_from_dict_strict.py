"""``from_dict`` accepts exactly what ``to_dict`` produces: every key is required, and
every value is checked by the rules ``to_dict`` applies (hostile input included)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from pygents import (
    Agent,
    AgentRegistry,
    ContextItem,
    ContextPool,
    ContextQueue,
    Turn,
    UnregisteredHookError,
    UnregisteredToolError,
    tool,
)
from pygents._serial import MAX_DEPTH


async def _agent_data() -> dict[str, Any]:
    @tool()
    async def work(x: int) -> int:
        return x

    agent = Agent("strict", "checks keys", [work])
    await agent.put(Turn(work, kwargs={"x": 1}))
    await agent.context_queue.append(ContextItem(content="note"))
    data = agent.to_dict()
    AgentRegistry.unregister("strict")
    return data


async def _turn_data() -> dict[str, Any]:
    @tool()
    async def work(x: int) -> int:
        return x

    return Turn(work, kwargs={"x": 1}).to_dict()


async def _queue_data() -> dict[str, Any]:
    return ContextQueue(limit=3).to_dict()


async def _pool_data() -> dict[str, Any]:
    return ContextPool(limit=3).to_dict()


CASES: list[tuple[str, Callable[[], Any], Callable[[dict[str, Any]], object]]] = [
    ("Agent", _agent_data, Agent.from_dict),
    ("Turn", _turn_data, Turn.from_dict),
    ("ContextQueue", _queue_data, ContextQueue.from_dict),
    ("ContextPool", _pool_data, ContextPool.from_dict),
]


@pytest.mark.parametrize(("owner", "make", "restore"), CASES, ids=[c[0] for c in CASES])
async def test_every_key_is_required(
    owner: str, make: Callable[[], Any], restore: Callable[[dict[str, Any]], object]
) -> None:
    data = await make()
    restore(dict(data))  # the complete data restores
    if "strict" in AgentRegistry:
        AgentRegistry.unregister("strict")
    for key in data:
        partial = {k: v for k, v in data.items() if k != key}
        with pytest.raises(ValueError, match=rf"{owner}\.from_dict\(\).*'{key}' is missing"):
            restore(partial)
        assert "strict" not in AgentRegistry


# -- hostile values: named by their key path, quoted briefly, refused at the door ------------


def _nested(levels: int) -> Any:
    """``levels`` lists, one inside the other."""
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


async def test_a_bad_value_deep_in_an_agent_is_named_by_its_key_path() -> None:
    data = await _agent_data()
    data["queue"][0]["kwargs"]["x"] = {"inner": [1, float("nan")]}
    with pytest.raises(ValueError) as info:
        Agent.from_dict(data)
    assert str(info.value).startswith(
        "Agent.from_dict(): queue[0].kwargs['x']['inner'][1] is nan, which JSON cannot represent"
    )
    assert "strict" not in AgentRegistry


async def test_an_empty_in_flight_turn_is_refused_not_dropped() -> None:
    data = await _agent_data()
    data["current_turn"] = {}
    with pytest.raises(ValueError, match=r"current_turn: the key 'uuid' is missing|current_turn"):
        Agent.from_dict(data)
    assert "strict" not in AgentRegistry


NOT_JSON: list[Any] = [
    pytest.param("args", [{1, 2}], "args[0] is a set", id="set-in-args"),
    pytest.param("kwargs", {"x": b"raw"}, "kwargs['x'] is a bytes", id="bytes-in-kwargs"),
    pytest.param("kwargs", {"d": {1: "one"}}, "kwargs['d'] has the key 1", id="int-key"),
    pytest.param("metadata", {"m": float("inf")}, "metadata['m'] is inf", id="inf-in-metadata"),
    pytest.param("output", [float("nan")], "output[0] is nan", id="nan-output"),
    pytest.param("output", 10**5000, "output is an int of about", id="int-too-long"),
]


@pytest.mark.parametrize(("key", "value", "says"), NOT_JSON)
async def test_a_value_to_dict_could_not_write_is_refused_by_from_dict(
    key: str, value: Any, says: str
) -> None:
    data = await _turn_data()
    data[key] = value
    with pytest.raises(ValueError, match=r"^Turn\.from_dict\(\): ") as info:
        Turn.from_dict(data)
    assert says in str(info.value)


@pytest.mark.parametrize("key", ["args", "kwargs", "metadata", "output"])
async def test_turn_values_nest_up_to_the_limit_and_no_deeper(key: str) -> None:
    data = await _turn_data()

    def wrap(value: Any) -> Any:  # the field itself is the first level
        return {"k": value} if key in ("kwargs", "metadata") else [value]

    data[key] = wrap(_nested(MAX_DEPTH - 1))
    restored = Turn.from_dict(data)
    assert json.loads(json.dumps(restored.to_dict()))[key] == data[key]

    data[key] = wrap(_nested(MAX_DEPTH))
    with pytest.raises(ValueError, match=rf"^Turn\.from_dict\(\): {key}.*deeper than 100 levels"):
        Turn.from_dict(data)


async def test_context_content_nested_too_deep_is_refused_in_every_store() -> None:
    item = {"content": _nested(MAX_DEPTH + 1), "description": "d", "id": "i"}
    with pytest.raises(ValueError, match=r"^ContextItem\.from_dict\(\): content\[0\]"):
        ContextItem.from_dict(item)
    pool = {"limit": None, "items": [item], "hooks": [], "tags": []}
    with pytest.raises(ValueError, match=r"^ContextPool\.from_dict\(\): items\[0\]\.content"):
        ContextPool.from_dict(pool)
    data = await _agent_data()
    data["context_queue"]["items"][0]["content"] = _nested(MAX_DEPTH + 1)
    with pytest.raises(ValueError, match=r"context_queue\.items\[0\]\.content.*100 levels"):
        Agent.from_dict(data)


async def test_to_dict_refuses_the_same_depth_clearly_instead_of_overflowing_the_stack() -> None:
    @tool()
    async def deep(x: Any = None) -> Any:
        return x

    for levels in (MAX_DEPTH + 1, 5_000):
        with pytest.raises(ValueError, match=r"kwargs\['x'\].*deeper than 100 levels") as info:
            Turn(deep, kwargs={"x": _nested(levels)}).to_dict()
        assert len(str(info.value)) < 300
    with pytest.raises(ValueError, match="deeper than 100 levels"):
        ContextItem(content=_nested(5_000)).to_dict()
    assert Turn(deep, kwargs={"x": _nested(MAX_DEPTH - 1)}).to_dict()["kwargs"]["x"]


HUGE = "h" * 1_000_000

HUGE_VALUES: list[Any] = [
    pytest.param("tool_name", HUGE, UnregisteredToolError, id="tool-name"),
    pytest.param("timeout", HUGE, ValueError, id="timeout"),
    pytest.param("tags", [HUGE, 5], ValueError, id="tags"),
    pytest.param("stop_reason", HUGE, ValueError, id="stop-reason"),
    pytest.param("start_time", HUGE, ValueError, id="start-time"),
    pytest.param(
        "hooks",
        [{"type": "TurnHook.ON_COMPLETE", "name": HUGE}],
        UnregisteredHookError,
        id="hook-name",
    ),
    pytest.param("hooks", [{"type": HUGE, "name": "h"}], ValueError, id="hook-type"),
    pytest.param("args", [[HUGE, {1: HUGE}]], ValueError, id="args"),
    pytest.param("kwargs", {HUGE: float("nan")}, ValueError, id="kwargs-key"),
    pytest.param("uuid", [HUGE], ValueError, id="uuid"),
]


@pytest.mark.parametrize(("key", "value", "error"), HUGE_VALUES)
async def test_a_huge_bad_value_is_quoted_briefly(key: str, value: Any, error: type) -> None:
    data = await _turn_data()
    data[key] = value
    with pytest.raises(error) as info:
        Turn.from_dict(data)
    message = str(info.value)
    assert len(message) < 300
    assert message.startswith("Turn.from_dict(): ")


async def test_an_agent_refused_for_a_taken_name_quotes_it_briefly() -> None:
    @tool()
    async def first() -> None:
        return None

    Agent(HUGE, "the first", [first])
    data = {**(await _agent_data()), "name": HUGE}
    with pytest.raises(ValueError, match="already registered") as info:
        Agent.from_dict(data)
    assert len(str(info.value)) < 300


async def test_an_unknown_tool_or_hook_name_is_located_by_its_key_path() -> None:
    valid = await _agent_data()
    data = copy.deepcopy(valid)
    data["tool_names"].append("vanished")
    with pytest.raises(UnregisteredToolError, match=r"^Agent\.from_dict\(\): tool_names\[1\]: "):
        Agent.from_dict(data)

    data = copy.deepcopy(valid)
    data["queue"][0]["tool_name"] = "vanished"
    with pytest.raises(
        UnregisteredToolError, match=r"^Agent\.from_dict\(\): queue\[0\]\.tool_name"
    ):
        Agent.from_dict(data)

    data = copy.deepcopy(valid)
    data["context_queue"]["hooks"].append({"type": "ContextQueueHook.ON_EVICT", "name": "gone"})
    with pytest.raises(
        UnregisteredHookError, match=r"^Agent\.from_dict\(\): context_queue\.hooks\[0\]\.name: "
    ):
        Agent.from_dict(data)
    assert "strict" not in AgentRegistry
