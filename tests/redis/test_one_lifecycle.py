"""A turn lives the same life whether ``agent.run()`` or a Redis worker drives it.

Each scenario runs twice, on two agents built alike: once through a local
``agent.run()``, once through a `Worker` on a real ``redis-server``. Every agent hook
and agent-level turn hook records its name (and what it saw) in order; the two logs,
the values the caller received and the error it got must be the same. The worker
differs only where the guide says it does ("What runs, and where"), and nothing
compared here is among those differences.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any

import pytest
from redis_helpers import Serving, eventually

from pygents import Agent, ContextItem, StopReason, ToolType, Turn, tool
from pygents.redis import Mailboxes, Worker


@dataclass(frozen=True)
class Seen:
    """What one run of a scenario showed: the hooks' log, the values the caller
    received from the first turn, and the class name of the error it got."""

    events: list[str]
    values: list[Any]
    error: str | None


class Refused(Exception):
    """What the failing hooks raise."""


def _shown(value: Any) -> str:
    if isinstance(value, Turn):
        return f"Turn({value.tool.name})"
    if isinstance(value, ContextItem):
        return f"ContextItem({value.content!r})"
    return repr(value)


def _recorded(agent: Agent, log: list[str]) -> Agent:
    """Every agent hook and agent-level turn hook of a turn's life, logging in order."""

    @agent.before_turn
    async def before_turn(a: Agent) -> None:
        log.append("before_turn")

    @agent.after_turn
    async def after_turn(a: Agent, turn: Turn) -> None:
        log.append(f"after_turn {turn.tool.name}")

    @agent.on_turn_value
    async def on_turn_value(a: Agent, turn: Turn, value: Any) -> None:
        log.append(f"on_turn_value {turn.tool.name} {_shown(value)}")

    @agent.on_turn_error
    async def on_turn_error(a: Agent, turn: Turn, exception: BaseException) -> None:
        log.append(f"on_turn_error {turn.tool.name} {type(exception).__name__}")

    @agent.on_turn_timeout
    async def on_turn_timeout(a: Agent, turn: Turn) -> None:
        log.append(f"on_turn_timeout {turn.tool.name}")

    @agent.on_error
    async def on_error(turn: Turn, exception: BaseException) -> None:
        log.append(f"on_error {turn.tool.name} {type(exception).__name__}")

    @agent.on_timeout
    async def on_timeout(turn: Turn) -> None:
        log.append(f"on_timeout {turn.tool.name}")

    @agent.on_complete
    async def on_complete(turn: Turn, stop_reason: StopReason) -> None:
        log.append(f"on_complete {turn.tool.name} {stop_reason.name}")

    return agent


@dataclass(frozen=True)
class Scenario:
    """Tools (registered once: tool names are global), the turn to put, and hooks to
    add after the recording ones. Non-streaming tools here never return None: a
    worker reports "no output" as None, so a None would not tell a returned value
    from a routed one."""

    tools: list[Any]
    turn: Callable[[], Turn]
    extra: Callable[[Agent, list[str]], None] = lambda agent, log: None

    def agent(self, name: str, log: list[str]) -> Agent:
        agent = _recorded(Agent(name, "A scenario", self.tools), log)
        self.extra(agent, log)
        return agent


def streamed_values() -> Scenario:
    @tool()
    async def count() -> AsyncIterator[int]:
        """Counts to three."""
        for number in (1, 2, 3):
            yield number

    return Scenario([count], lambda: Turn(count))


def routing() -> Scenario:
    @tool()
    async def plan(topic: str) -> AsyncIterator[Any]:
        """A note for the context, a follow-up turn, and a line for the caller."""
        yield ContextItem(content=f"notes on {topic}")
        yield Turn("file", args=[topic])
        yield f"planned {topic}"

    @tool()
    async def file(topic: str) -> ContextItem[str]:
        """Files the topic as a pool item."""
        return ContextItem(content=f"filed {topic}", description="filed", id="filed")

    return Scenario([plan, file], lambda: Turn(plan, args=["bees"]))


def timing_out() -> Scenario:
    never = asyncio.Event()

    @tool()
    async def stuck() -> str:
        """Waits for what never comes."""
        await never.wait()
        return "unreachable"

    return Scenario([stuck], lambda: Turn(stuck, timeout=0.05))


def tool_error() -> Scenario:
    @tool()
    async def boom() -> str:
        """Fails."""
        raise ValueError("boom")

    return Scenario([boom], lambda: Turn(boom))


def failing_error_hook() -> Scenario:
    def extra(agent: Agent, log: list[str]) -> None:
        @agent.on_turn_error
        async def refuse(a: Agent, turn: Turn, exception: BaseException) -> None:
            log.append("refuse")
            raise Refused("the error hook refused")

    return replace(tool_error(), extra=extra)


def failing_before_turn_hook() -> Scenario:
    def extra(agent: Agent, log: list[str]) -> None:
        @agent.before_turn
        async def refuse(a: Agent) -> None:
            log.append("refuse")
            raise Refused("not now")

    return replace(streamed_values(), extra=extra)


def failing_after_turn_hook() -> Scenario:
    def extra(agent: Agent, log: list[str]) -> None:
        @agent.after_turn
        async def refuse(a: Agent, turn: Turn) -> None:
            log.append("refuse")
            raise Refused("too late")

    return replace(streamed_values(), extra=extra)


def completion_check() -> Scenario:
    @tool(type=ToolType.COMPLETION_CHECK)
    async def settled() -> bool:
        """Says the work is done."""
        return True

    return Scenario([settled], lambda: Turn(settled))


def bad_completion_check() -> Scenario:
    @tool(type=ToolType.COMPLETION_CHECK)
    async def unsure() -> bool:
        """Answers with something that is not a bool."""
        return "maybe"  # type: ignore[return-value]

    return Scenario([unsure], lambda: Turn(unsure))


SCENARIOS: list[Callable[[], Scenario]] = [
    streamed_values,
    routing,
    timing_out,
    tool_error,
    failing_error_hook,
    failing_before_turn_hook,
    failing_after_turn_hook,
    completion_check,
    bad_completion_check,
]


async def _locally(scenario: Scenario) -> Seen:
    log: list[str] = []
    agent, turn = scenario.agent("local", log), scenario.turn()
    await agent.put(turn)
    values: list[Any] = []
    error: str | None = None
    try:
        async with aclosing(agent.run()) as stream:
            async for ran, value in stream:
                if ran is turn:
                    values.append(value)
    except Exception as exc:
        error = type(exc).__qualname__
    return Seen(log, values, error)


async def _served(scenario: Scenario, mailboxes: Mailboxes, serving: Serving) -> Seen:
    log: list[str] = []
    agent, turn = scenario.agent("served", log), scenario.turn()
    await serving.start(Worker(mailboxes, agent, concurrency=1))
    handle = await mailboxes.put(agent.name, turn)
    values: list[Any] = []
    try:
        async for value in handle:
            values.append(value)
    except Exception:
        pass  # the outcome says why
    outcome = await handle.outcome()
    if outcome.output is not None and turn.tool.type is not ToolType.COMPLETION_CHECK:
        values.append(outcome.output)  # a returned value (run() yields it)

    async def idle() -> bool:  # routed turns ran too
        return (await mailboxes.stats(agent.name)).depth == 0

    await eventually(idle)
    return Seen(log, values, outcome.error_type)


@pytest.mark.parametrize("build", SCENARIOS, ids=lambda build: build.__name__)
async def test_a_turn_fires_the_same_hooks_in_the_same_order_locally_and_in_a_worker(
    build: Callable[[], Scenario], mailboxes: Mailboxes, serving: Serving
) -> None:
    scenario = build()
    local = await _locally(scenario)
    served = await _served(scenario, mailboxes, serving)
    assert served == local
    assert local.events  # every scenario fires hooks, so equal logs are not both empty
