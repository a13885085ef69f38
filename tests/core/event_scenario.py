"""One scenario that fires every hook event, shared by the tests of the events.

``test_every_event.py`` runs it once per way of listening and compares what each
listener saw with a table; ``test_event_args.py`` records it once and reads each
event's arguments by name. It is a helper, not a test module: pytest does not collect
it (import it as ``from event_scenario import ...``). ``label`` turns what a hook
received into comparable values (the objects differ per run).

The scenario: a returning turn (positional arguments) and a streaming one, a failing
turn, a turn that times out, every context queue and pool operation (evicting on
append and on add), and a turn that waits for a paused agent (keyword arguments).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from pygents import (
    Agent,
    AgentHook,
    ContextItem,
    ContextPool,
    ContextPoolHook,
    ContextQueue,
    ContextQueueHook,
    HookType,
    ToolHook,
    Turn,
    TurnHook,
    TurnTimeoutError,
    tool,
)
from pygents.testing import drain
from stuck_tools import blocking_tool

ENUMS = (TurnHook, AgentHook, ToolHook, ContextQueueHook, ContextPoolHook)
ALL_EVENTS: list[HookType] = [member for enum in ENUMS for member in enum]
Attach = Callable[[object, type], None]
Record = tuple[HookType, Any, Any]  # (event, labelled args, labelled kwargs)


def nothing(obj: object, enum: type) -> None:
    """An ``attach`` that attaches nothing (the listeners are global)."""
    return


async def scenario(attach: Attach = nothing) -> list[Any]:
    """Fire every event at least once; ``attach(obj, enum)`` runs on every object.

    Returns the values of the two runs that complete (``[[10, 1], [20]]``).
    """
    results: list[Any] = []

    @tool()
    async def ret(x: int) -> int:
        return x * 10

    @tool()
    async def stream() -> AsyncIterator[int]:
        yield 1

    @tool()
    async def fail() -> None:
        raise RuntimeError("boom")

    slow = blocking_tool()

    for t in (ret, stream, fail, slow):
        attach(t, ToolHook)
    queue: ContextQueue[str] = ContextQueue(limit=1)
    pool: ContextPool[str] = ContextPool(limit=1)
    attach(queue, ContextQueueHook)
    attach(pool, ContextPoolHook)
    agent = Agent("every", "", [ret, stream, fail, slow], queue, pool)
    attach(agent, AgentHook)

    def made(turn: Turn) -> Turn:
        attach(turn, TurnHook)
        return turn

    await agent.put(made(Turn(ret, [1])))
    await agent.put(made(Turn(stream)))
    results.append(await drain(agent))
    await agent.put(made(Turn(fail)))
    with pytest.raises(RuntimeError, match="boom"):
        await drain(agent)
    await agent.put(made(Turn(slow, timeout=0.01)))
    with pytest.raises(TurnTimeoutError):
        await drain(agent)

    await queue.append(ContextItem("a"))
    await queue.append(ContextItem("b"), ContextItem("c"))  # evicts "a", then "b"
    await queue.clear()
    await pool.add(ContextItem("x", id="x", description="x"))
    await pool.add(ContextItem("y", id="y", description="y"))  # evicts "x" (before BEFORE_ADD)
    await pool.remove("y")
    await pool.add(ContextItem("z", id="z", description="z"))
    await pool.clear()

    agent.pause()
    await agent.put(made(Turn(ret, kwargs={"x": 2})))
    run = asyncio.create_task(drain(agent))
    for _ in range(1000):  # until the run waits at the pause gate
        if agent._gate is not None:
            break
        await asyncio.sleep(0)
    assert agent._gate is not None
    agent.resume()
    results.append(await run)
    return results


def label(value: Any) -> Any:
    """A comparable stand-in for what a hook received: the scenario's objects differ
    per run, so a turn is ``"turn:<tool name>"``, an item ``"item:<content>"``, ..."""
    if isinstance(value, Turn):
        return f"turn:{value.tool.name}"
    if isinstance(value, Agent):
        return "agent"
    if isinstance(value, ContextQueue):
        return "queue"
    if isinstance(value, ContextPool):
        return "pool"
    if isinstance(value, ContextItem):
        return f"item:{value.content}"
    if isinstance(value, BaseException):
        return type(value).__name__
    if isinstance(value, list | tuple):
        return [label(v) for v in value]
    if isinstance(value, dict):
        return {k: label(v) for k, v in value.items()}
    return value


def record(log: list[Record], event: HookType, args: Any, kwargs: Any) -> None:
    """Append what one event passed, labelled, to ``log``."""
    log.append((event, label(list(args)), label(dict(kwargs))))
