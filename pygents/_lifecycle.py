"""The steps of an agent's turn, which `_agent_run.drive` puts in order.

Two things drive an agent's turns: ``Agent.run()`` (one turn at a time, from the
agent's queue) and a ``pygents.redis`` worker (many at once, one delivered turn per
agent run). A turn must live the same life under both: the same agent hooks in the
same order, values routed the same way, a failure reported by the same hooks, and a
failing hook treated the same. So both iterate one driver, `drive`, which calls
these steps; a driver only decides where a routed ``Turn`` goes (the agent's queue,
or its mailbox) and where a plain value goes (yielded, or sent back to the caller).

Each step checks for itself whether anyone listens, and the per-turn events come
back as an awaitable only when a hook is bound (as `dispatch` does). `drive` still
tests ``agent._hooks or BUS.hot`` inline before calling one: with no hook and no
subscriber (the benchmarks' W1 and W2), a turn then costs no call at all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from pygents._context import ContextItem
from pygents._enums import (
    AGENT_AFTER_TURN,
    AGENT_BEFORE_TURN,
    AGENT_ON_TURN_VALUE,
    TIMED_OUT,
    AgentHook,
)
from pygents._errors import CompletionCheckReturnError, brief
from pygents._hooks import dispatch, fire
from pygents._observe import BUS
from pygents._turn import Turn

if TYPE_CHECKING:
    from pygents._agent import Agent
    from pygents._agent_run import AgentRun
    from pygents._tool import DecoratedTool
    from pygents._turn_run import Runner, TurnRun

__all__ = [
    "ROUTED",
    "PutTurn",
    "after_turn",
    "before_turn",
    "fail_turn",
    "open_turn",
    "route",
    "value_event",
    "verdict",
]

ROUTED: Final = (Turn, ContextItem)
"""The values a driver routes instead of handing them to the caller."""

PutTurn = Callable[[Turn], Awaitable[None]]
"""Where a driver sends a routed ``Turn``: ``agent.put`` locally, the mailbox in a worker."""


def before_turn(run: AgentRun) -> Awaitable[Any] | None:
    """``BEFORE_TURN``, once per turn taken, before the turn is opened: subscribers are
    told now, and the hooks come back to await (``None`` when none is bound, so that
    a turn with only subscribers costs no coroutine; see `dispatch`).

    A hook that raises here fails the run, not the turn (no turn started): the failure
    hooks do not fire for it."""
    agent: Agent = run.target
    if agent._hooks or BUS.hot:
        return dispatch(AGENT_BEFORE_TURN, agent, agent._hooks, (agent,), None, run)
    return None


def after_turn(run: AgentRun, turn: Turn) -> Awaitable[Any] | None:
    """``AFTER_TURN``, once the turn and the routing of its values are done; awaited
    as `before_turn` is.

    The turn has completed by then, so a hook that raises here fails the run and does
    not fire the failure hooks either."""
    agent: Agent = run.target
    if agent._hooks or BUS.hot:
        return dispatch(AGENT_AFTER_TURN, agent, agent._hooks, (agent, turn), None, run)
    return None


def value_event(run: AgentRun, turn: Turn, value: Any) -> Awaitable[Any] | None:
    """``ON_TURN_VALUE`` for a plain value, before the driver hands it to its caller
    (yields it, or sends it back); awaited as `before_turn` is. Not for a completion
    check's verdict, which decides the run rather than being a result."""
    agent: Agent = run.target
    if agent._hooks or BUS.hot:
        return dispatch(AGENT_ON_TURN_VALUE, agent, agent._hooks, (agent, turn, value), None, run)
    return None


def open_turn(run: AgentRun, turn: Turn, runner: Runner) -> TurnRun:
    """Start ``turn``'s run inside ``run``, with the agent's turn hooks added and the
    driver's ``runner`` (its deadline timer) lent."""
    agent: Agent = run.target
    return turn._open(run, turn._tool.streaming, agent._turn_hooks, runner)


async def route(run: AgentRun, turn: Turn, value: Turn | ContextItem[Any], put: PutTurn) -> None:
    """A routed value (`ROUTED`): a ``Turn`` to ``put``, a ``ContextItem`` to the
    agent's context queue (no id) or pool (id); then ``ON_TURN_VALUE``, so that hooks
    see the value already queued or stored."""
    agent: Agent = run.target
    entered = BUS.enter(run)
    try:
        if isinstance(value, Turn):
            await put(value)
        elif value.id is None:
            await agent._context_queue.append(value)
        else:
            await agent._context_pool.add(value)
    finally:
        BUS.exit(run, entered)
    if pending := value_event(run, turn, value):
        await pending


async def fail_turn(run: AgentRun, turn: Turn, turn_run: TurnRun, exc: BaseException) -> None:
    """A turn that raised ``exc``: end its run if it has not ended, then fire
    ``ON_TURN_TIMEOUT`` (a timeout) or ``ON_TURN_ERROR`` (any other exception, not a
    cancellation). The driver re-raises ``exc`` afterwards.

    An exception a failure hook raises propagates from here in place of ``exc`` (with
    ``exc`` as its context), as hook exceptions do everywhere (see the Hooks page):
    ``run()`` raises it, and a worker records it as the turn's error.
    """
    if turn._run is turn_run:
        await turn_run.finish(exc)
    agent: Agent = run.target
    if not (agent._hooks or BUS.any):
        return
    if turn.stop_reason is TIMED_OUT:
        await fire(AgentHook.ON_TURN_TIMEOUT, agent, agent._hooks, (agent, turn), None, run)
    elif isinstance(exc, Exception):
        await fire(AgentHook.ON_TURN_ERROR, agent, agent._hooks, (agent, turn, exc), None, run)


def verdict(tool: DecoratedTool[..., Any], value: Any) -> bool:
    """A completion check's result, refused (failing the turn) unless it is a bool."""
    if type(value) is not bool:
        raise CompletionCheckReturnError(
            f"completion check {brief(tool.name, 60)} returned "
            f"{type(value).__name__} {brief(value)}; it must return True or False"
        )
    return value
