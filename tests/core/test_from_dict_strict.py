"""``from_dict`` accepts exactly what ``to_dict`` produces: every key is required."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pygents import Agent, AgentRegistry, ContextItem, ContextPool, ContextQueue, Turn, tool


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
