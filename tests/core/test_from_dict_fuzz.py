"""Hostile input to every ``from_dict``: a seeded property test.

Valid payloads of every entry point are mutated (keys deleted, values replaced by
wrong types, huge strings and numbers, deep nesting, unknown enum values, bad
datetimes, non-string ids, NaN/inf) and restored. Whatever happens, only
``ValueError``/``TypeError``/``PygentsError`` may escape, with a short message that
names the entry point; whatever is accepted must survive ``to_dict()`` and
``json.dumps``; a refused agent leaves nothing registered.

The run is derandomized (the same examples every time) and bounded, so it is as
fast and as repeatable as any other test.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from pygents import (
    Agent,
    AgentHook,
    AgentRegistry,
    ContextItem,
    ContextPool,
    ContextPoolHook,
    ContextQueue,
    ContextQueueHook,
    HookRegistry,
    PygentsError,
    StopReason,
    ToolRegistry,
    Turn,
    TurnHook,
    hook,
    tool,
)


def _nested(levels: int, leaf: Any, as_dict: bool) -> Any:
    value = leaf
    for _ in range(levels):
        value = {"k": value} if as_dict else [value]
    return value


HOSTILE: dict[str, Any] = {
    "none": None,
    "true": True,
    "zero": 0,
    "negative": -7,
    "float": 1.5,
    "nan": float("nan"),
    "inf": float("inf"),
    "-inf": float("-inf"),
    "1e308": 1e308,
    "1e300": 1e300,
    "int 10**400": 10**400,
    "int 10**5000": 10**5000,
    "empty string": "",
    "huge string": "x" * 1_000_000,
    "unknown enum": "exploded",
    "unknown hook type": "TurnHook.NOT_AN_EVENT",
    "year 9999 west of UTC": "9999-12-31T23:59:59-01:00",
    "year 1 east of UTC": "0001-01-01T00:00:00+01:00",
    "naive datetime": "2024-01-01T00:00:00",
    "impossible datetime": "2024-13-45T99:00:00+00:00",
    "empty list": [],
    "empty dict": {},
    "list of ints": [1, 2],
    "int keys": {1: "one"},
    "nested 150 lists": _nested(150, 1, as_dict=False),
    "nested 3000 lists": _nested(3000, 1, as_dict=False),
    "nested 3000 dicts": _nested(3000, 1, as_dict=True),
    "nan deep inside": _nested(50, float("nan"), as_dict=True),
    "set": {1, 2},
    "bytes": b"bytes",
    "tuple": (1, 2),
    "object": object(),
    "function": lambda: 1,
    "unknown hook": {"type": "TurnHook.ON_COMPLETE", "name": "no_such_hook"},
    "hook of wrong type": {"type": "AgentHook.ON_PAUSE", "name": "fuzz_turn_done"},
    "unknown tool turn": {"tool_name": "no_such_tool"},
    "item with int id": {"content": 1, "description": "d", "id": 5},
    "item with huge id": {"content": 1, "description": "d", "id": "i" * 1_000_000},
    "long list": list(range(20_000)),
}
LABELS = sorted(HOSTILE)
_SHARED = {id(v) for v in HOSTILE.values()}  # never mutated: mutations do not descend into them
REFUSALS = (ValueError, TypeError, PygentsError)


def _register() -> None:
    """The tools and hooks the payloads refer to."""

    @tool()
    async def fuzz_echo(x: Any = None) -> Any:
        return x

    @tool()
    async def fuzz_stream(n: int = 1) -> Any:
        yield n

    @hook(TurnHook.ON_COMPLETE)
    async def fuzz_turn_done(turn: Turn, reason: StopReason) -> None:
        return None

    @hook(AgentHook.AFTER_TURN)
    async def fuzz_after_turn(agent: Agent, turn: Turn) -> None:
        return None

    @hook(ContextQueueHook.AFTER_APPEND)
    async def fuzz_appended(items: Any, window: Any) -> None:
        return None

    @hook(ContextPoolHook.AFTER_ADD)
    async def fuzz_added(pool: Any, item: Any) -> None:
        return None


async def _payloads() -> dict[str, tuple[Callable[[Any], Any], dict[str, Any]]]:
    """Valid, JSON-ready payloads for each entry point (tools and hooks registered)."""
    _register()
    echo, stream = ToolRegistry.get("fuzz_echo"), ToolRegistry.get("fuzz_stream")
    turn_done, after_turn = HookRegistry.get("fuzz_turn_done"), HookRegistry.get("fuzz_after_turn")

    finished = Turn(echo, args=[{"a": [1, 2.5, None]}], tags=["t"], metadata={"m": "v"})
    finished.hooks.append(turn_done)
    await finished.returning()

    queue: ContextQueue[Any] = ContextQueue(limit=3, tags=["q"])
    queue.hooks.append(HookRegistry.get("fuzz_appended"))
    await queue.append(ContextItem(content={"text": "note"}), ContextItem(content=[1, 2]))
    pool: ContextPool[Any] = ContextPool(limit=4)
    pool.hooks.append(HookRegistry.get("fuzz_added"))
    await pool.add(ContextItem(content="doc", description="a doc", id="doc-1"))
    await pool.add(ContextItem(content={"n": 1}, description="more", id="doc-2"))

    agent = Agent("fuzzed", "fuzzing target", [echo, stream], queue, pool, tags=["a"])
    agent.hooks.append(after_turn)
    agent.turn_hooks.append(turn_done)
    await agent.put(Turn(echo, kwargs={"x": {"deep": ["list", 1]}}, timeout=5))
    await agent.put(Turn(stream, kwargs={"n": 2}))
    agent.pause()
    agent_data = agent.to_dict()
    AgentRegistry.unregister("fuzzed")
    in_flight = copy.deepcopy(agent_data)
    in_flight["current_turn"] = in_flight["queue"].pop(0)

    def restore_agent(data: Any) -> Agent:
        return Agent.from_dict(data)

    def roundtrip(data: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(json.dumps(data, allow_nan=False))
        return result

    return {
        "Agent": (restore_agent, roundtrip(agent_data)),
        "Agent in flight": (restore_agent, roundtrip(in_flight)),
        "Turn": (Turn.from_dict, roundtrip(finished.to_dict())),
        "ContextItem": (ContextItem.from_dict, roundtrip(pool.get("doc-2").to_dict())),
        "ContextQueue": (ContextQueue.from_dict, roundtrip(queue.to_dict())),
        "ContextPool": (ContextPool.from_dict, roundtrip(pool.to_dict())),
    }


def _spots(root: Any) -> list[tuple[Any, Any]]:
    """Every place in ``root`` as ``(container, key)``; ``(None, None)`` is the root."""
    found: list[tuple[Any, Any]] = [(None, None)]
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in _SHARED or not isinstance(node, (dict, list)):
            continue
        keys = list(node) if isinstance(node, dict) else range(len(node))
        for key in keys:
            found.append((node, key))
            stack.append(node[key])
    return found


def _mutate(data: st.DataObject, root: Any) -> Any:
    """Apply one mutation at a place in ``root`` drawn uniformly (the root included)."""
    spots = _spots(root)
    parent, key = spots[data.draw(st.integers(0, len(spots) - 1), "place")]
    hostile = HOSTILE[data.draw(st.sampled_from(LABELS), "value")]
    action = data.draw(st.sampled_from(["replace", "replace", "delete", "add"]), "action")
    node = root if parent is None else parent[key]
    if action == "add" and isinstance(node, dict) and id(node) not in _SHARED:
        node[data.draw(st.sampled_from(["extra", 7, "x" * 1000]), "new key")] = hostile
    elif action == "add" and isinstance(node, list) and id(node) not in _SHARED:
        node.append(hostile)
    elif parent is None:
        return hostile if action == "replace" else root
    elif action == "delete":
        del parent[key]
    else:
        parent[key] = hostile
    return root


def _registered() -> tuple[list[str], list[str], list[str]]:
    return list(AgentRegistry), list(HookRegistry), list(ToolRegistry)


async def test_hostile_from_dict_input_is_refused_clearly_or_round_trips() -> None:
    payloads = await _payloads()
    names = sorted(payloads)

    @settings(
        derandomize=True,
        database=None,
        max_examples=1500,
        deadline=None,
        phases=[Phase.generate],  # a failure reports its labelled draws; shrinking is slow here
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.data())
    def check(data: st.DataObject) -> None:
        owner = data.draw(st.sampled_from(names), "entry point")
        restore, valid = payloads[owner]
        payload = copy.deepcopy(valid)
        for _ in range(data.draw(st.integers(1, 3), "mutations")):
            payload = _mutate(data, payload)
        before = _registered()
        refused: Exception | None = None
        try:
            restored = restore(payload)
        except REFUSALS as exc:
            refused = exc
        if refused is not None:
            message = str(refused)
            assert len(message) < 300, f"{type(refused).__name__} of {len(message)} chars"
            assert message.startswith(f"{owner.split()[0]}.from_dict()"), message[:300]
            assert _registered() == before
            return
        try:
            out = restored.to_dict()
            text = json.dumps(out, allow_nan=False)
            if isinstance(restored, Agent):
                AgentRegistry.unregister(restored.name)
            again = restore(json.loads(text))
            assert again.to_dict() == out
        finally:
            for name in set(AgentRegistry) - set(before[0]):
                AgentRegistry.unregister(name)

    check()
