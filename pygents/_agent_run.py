"""The agent run loop: what ``Agent.run()`` returns.

One async generator takes the queued turns in FIFO order, runs each through its
`TurnRun`, and routes every value before the next: a
``Turn`` is queued, a ``ContextItem`` goes to the context queue (no id) or pool
(id), a completion check's ``True`` ends the run, and anything else is yielded
as ``(turn, value)``. The loop looks at the queue before anything else: only a
queued turn waits at the pause gate or fires ``BEFORE_TURN``, and an empty queue
ends the run, paused or not.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, Awaitable
from contextvars import Token
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from pygents._context import ContextItem, ContextPool, ContextQueue
from pygents._enums import (
    AGENT_AFTER_TURN,
    AGENT_BEFORE_TURN,
    AGENT_ON_TURN_VALUE,
    COMPLETION_CHECK,
    AgentHook,
    StopReason,
)
from pygents._errors import CompletionCheckReturnError, SafeExecutionError, brief
from pygents._hooks import dispatch, fire
from pygents._observe import BUS
from pygents._scope import (
    AGENT_RUN_SCOPE,
    CURRENT,
    Frame,
    Scope,
    current_scope,
    stop_reason_for,
)
from pygents._turn import Turn
from pygents._turn_run import Runner

if TYPE_CHECKING:
    from pygents._agent import Agent
    from pygents._tool import DecoratedTool

__all__ = ["AgentRun", "run_agent", "verdict"]

Stream: TypeAlias = AsyncGenerator[tuple[Turn, Any], None]

_ROUTED: Final = (Turn, ContextItem)


class AgentRun(Scope):
    """The scope of one ``run()``; publishes the agent's context for injection.

    ``stream`` refers weakly to the generator ``run()`` returned: once it is dead,
    nobody can iterate this run any more (its consumer left without closing it),
    and ``ended`` lets the next ``run()`` wait for the event loop to finalise it.
    A run that no ``run()`` generator drives (a `pygents.redis` worker runs each
    delivered turn in a run of its own, many at once) has no ``stream``, and never
    takes the agent with `begin`.
    """

    __slots__ = ("_ended", "_frame_token", "_stream")

    def __init__(
        self, agent: Agent, parent: Scope | None, stream: weakref.ref[Stream] | None = None
    ) -> None:
        super().__init__(AGENT_RUN_SCOPE, agent, parent, agent=agent)
        self._resources = {ContextQueue: agent._context_queue, ContextPool: agent._context_pool}
        self._stream = stream
        self._ended: asyncio.Event | None = None
        self._frame_token: Token[Scope | Frame | None] | None = None

    def begin(self) -> Runner:
        """Take the agent, tell subscribers, and make the run's frame current; the
        returned `Runner` is lent to every turn of the run."""
        self.target._run = self
        if observers := BUS.scopers_by_kind[AGENT_RUN_SCOPE]:
            BUS.start(self, observers)
        frame = Frame(CURRENT.get())
        self._frame_token = CURRENT.set(frame)
        return Runner(frame)

    def close(self, runner: Runner, error: BaseException | None) -> None:
        """Undo `begin` and record how the run ended (``error``; None: success)."""
        runner.watchdog.close()
        if self._frame_token is not None:
            try:
                CURRENT.reset(self._frame_token)
            except ValueError:
                pass  # finalised in another context (an abandoned run)
        agent: Agent = self.target
        agent._current = None
        agent._run = None
        self.error = error
        self.stop_reason = stop_reason_for(error)
        if self._ended is not None:
            self._ended.set()
        if self._observers:
            BUS.end(self)


def run_agent(agent: Agent) -> Stream:
    """A new run of ``agent``; it starts (or is refused) at its first iteration."""
    ticket: list[weakref.ref[Stream]] = []
    stream = _run(agent, ticket)
    ticket.append(weakref.ref(stream))
    return stream


async def _claim(agent: Agent) -> None:
    """Wait out a run whose consumer abandoned it; refuse if it is still held.

    An ``async for`` left by ``break`` without ``aclosing()`` drops its generator,
    and the event loop closes it a few iterations later. Until then the agent is
    still running: rather than fail, the next run waits for that close.
    """
    while (previous := agent._run) is not None:
        if previous._stream is None or previous._stream() is not None:
            raise SafeExecutionError(
                f"{agent!r} is already running; consume its current run() instead of "
                "starting another, or end it first: leave it with 'break' inside "
                "'async with contextlib.aclosing(agent.run()) as stream:', or call "
                "'await stream.aclose()'"
            )
        if previous._ended is None:
            previous._ended = asyncio.Event()
        await previous._ended.wait()


def _value_event(agent: Agent, run: AgentRun, turn: Turn, value: Any) -> Awaitable[Any] | None:
    """``ON_TURN_VALUE``'s dispatch: its hooks' run to await, if any (see `dispatch`).

    It fires for every value a turn produces, once the value is routed (a routed
    value is already queued or stored when hooks see it), but not for a completion
    check's verdict, which decides the loop rather than being a result.
    """
    return dispatch(AGENT_ON_TURN_VALUE, agent, agent._hooks, (agent, turn, value), None, run)


async def _agent_event(agent: Agent, event: AgentHook, *args: Any) -> None:
    """A cold agent event (pause, resume, turn failure)."""
    if agent._hooks or BUS.any:
        await fire(event, agent, agent._hooks, args, None, agent._run)


async def _wait_if_paused(agent: Agent) -> None:
    await _agent_event(agent, AgentHook.ON_PAUSE, agent)
    while agent._paused:
        agent._gate = asyncio.Event()
        await agent._gate.wait()
    agent._gate = None
    await _agent_event(agent, AgentHook.ON_RESUME, agent)


async def _route(agent: Agent, run: AgentRun, value: Any) -> None:
    entered = BUS.enter(run)
    try:
        if isinstance(value, Turn):
            await agent.put(value)
        elif value.id is None:
            await agent._context_queue.append(value)
        else:
            await agent._context_pool.add(value)
    finally:
        BUS.exit(run, entered)


def verdict(tool: DecoratedTool[..., Any], value: Any) -> bool:
    """A completion check's result, refused (failing the turn) unless it is a bool."""
    if type(value) is not bool:
        raise CompletionCheckReturnError(
            f"completion check {brief(tool.name, 60)} returned "
            f"{type(value).__name__} {brief(value)}; it must return True or False"
        )
    return value


async def _turn_failed(agent: Agent, turn: Turn, exc: BaseException) -> None:
    if turn.stop_reason is StopReason.TIMEOUT:
        await _agent_event(agent, AgentHook.ON_TURN_TIMEOUT, agent, turn)
    elif isinstance(exc, Exception):
        await _agent_event(agent, AgentHook.ON_TURN_ERROR, agent, turn, exc)


async def _run(agent: Agent, ticket: list[weakref.ref[Stream]]) -> Stream:
    if agent._run is not None:
        await _claim(agent)
    run = AgentRun(agent, current_scope(), ticket[0])
    runner = run.begin()
    error: BaseException | None = None
    queue = agent._queue
    try:
        while queue:  # only a queued turn waits at the gate or fires BEFORE_TURN
            if agent._paused:
                await _wait_if_paused(agent)
            if (agent._hooks or BUS.hot) and (
                pending := dispatch(AGENT_BEFORE_TURN, agent, agent._hooks, (agent,), None, run)
            ):
                await pending
            turn = queue.popleft()
            agent._current = turn
            tool = turn._tool
            turn_run = turn._open(run, tool.streaming, agent._turn_hooks, runner)
            done = False
            try:
                if tool.streaming:
                    await turn_run.start_stream()
                    turn_run.resume()
                    try:
                        async for value in turn_run.agen:
                            if turn_run.step_done(value):
                                await turn_run.value_hooks(value)
                            if isinstance(value, _ROUTED):
                                await _route(agent, run, value)
                                if (agent._hooks or BUS.hot) and (
                                    pending := _value_event(agent, run, turn, value)
                                ):
                                    await pending
                            else:
                                if (agent._hooks or BUS.hot) and (
                                    pending := _value_event(agent, run, turn, value)
                                ):
                                    await pending
                                yield turn, value
                            turn_run.resume()
                        turn_run.step_failed(None)
                    except BaseException as exc:
                        turn_run.step_failed(exc)
                        raise
                    await turn_run.finish(None)
                else:
                    value = await turn_run.call()
                    check = tool.type is COMPLETION_CHECK
                    if check:
                        done = verdict(tool, value)
                    if not turn_run.finish_quietly(value):
                        await turn_run.finish(None, value)
                    if check:
                        pass  # a verdict decides the loop; it is not a value
                    elif isinstance(value, _ROUTED):
                        await _route(agent, run, value)
                        if (agent._hooks or BUS.hot) and (
                            pending := _value_event(agent, run, turn, value)
                        ):
                            await pending
                    else:
                        if (agent._hooks or BUS.hot) and (
                            pending := _value_event(agent, run, turn, value)
                        ):
                            await pending
                        agent._current = None
                        yield turn, value
            except BaseException as exc:
                if turn._run is turn_run:
                    await turn_run.finish(exc)
                await _turn_failed(agent, turn, exc)
                raise
            agent._current = None
            if (agent._hooks or BUS.hot) and (
                pending := dispatch(AGENT_AFTER_TURN, agent, agent._hooks, (agent, turn), None, run)
            ):
                await pending
            if done:
                break
    except BaseException as exc:
        error = exc
        raise
    finally:
        run.close(runner, error)
