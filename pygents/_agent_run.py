"""The agent run loop: what ``Agent.run()`` returns, and what a worker drives a
delivered turn with.

One async generator (`drive`) takes the queued turns in FIFO order, runs each
through its `TurnRun`, and routes every value before the next: a ``Turn`` goes to
the driver's ``put`` (the agent's queue, or a worker's mailbox), a ``ContextItem``
to the context queue (no id) or pool (id), a completion check's ``True`` ends the
run, and anything else is yielded as ``(turn, value)``. The loop looks at the queue
before anything else: only a queued turn waits at the pause gate or fires
``BEFORE_TURN``, and an empty queue ends the run, paused or not.

It is the only place the order of a turn's steps is written: ``Agent.run()``
returns it, and a ``pygents.redis`` worker iterates it for each delivery (see
`drive` for what differs), so a turn cannot live one life locally and another in
a worker.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import AsyncGenerator
from contextvars import Token
from typing import TYPE_CHECKING, Any, TypeAlias

from pygents._context import ContextPool, ContextQueue
from pygents._enums import COMPLETION_CHECK, AgentHook
from pygents._errors import SafeExecutionError
from pygents._hooks import fire
from pygents._lifecycle import (
    ROUTED,
    PutTurn,
    after_turn,
    before_turn,
    fail_turn,
    open_turn,
    route,
    value_event,
    verdict,
)
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

__all__ = ["AgentRun", "drive", "run_agent"]

Stream: TypeAlias = AsyncGenerator[tuple[Turn, Any], None]


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
        if self._ended is not None:
            self._ended.set()
        self.end(error)

    @classmethod
    def detached(cls, agent: Agent) -> AgentRun:
        """A run of its own for one turn that another driver runs (a worker: many turns
        of one agent at once): subscribers are told it started, and it neither takes
        the agent nor changes the current frame (the driver keeps its own). Finish it
        with `end`."""
        run = cls(agent, None)
        if observers := BUS.scopers_by_kind[AGENT_RUN_SCOPE]:
            BUS.start(run, observers)
        return run

    def end(self, error: BaseException | None) -> None:
        """Record how the run ended (``error``; None: success) and tell subscribers."""
        self.error = error
        self.stop_reason = stop_reason_for(error)
        if self._observers:
            BUS.end(self)


def run_agent(agent: Agent) -> Stream:
    """A new run of ``agent``; it starts (or is refused) at its first iteration."""
    ticket: list[weakref.ref[Stream]] = []
    stream = drive(agent, agent._queue, agent.put, None, ticket)
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


async def drive(
    agent: Agent,
    queue: deque[Turn],
    put: PutTurn,
    lane: Runner | None,
    ticket: list[weakref.ref[Stream]] | None = None,
) -> Stream:
    """Drive ``queue``'s turns, in FIFO order, through their life as ``agent``'s: the
    one place the order of a turn's steps is written, for both drivers of turns.

    ``Agent.run()`` (``lane`` None) takes the agent for the run (refused while another
    run holds it, see `_claim`), stops at the pause gate, and is told each turn's plain
    values as ``(turn, value)``; routed ``Turn`` values go to ``put`` (the agent's own
    queue, so the loop takes them too) and a completion check's ``True`` ends the run.

    A ``pygents.redis`` worker (``lane``: the lane's `Runner`) drives one delivered
    turn in an agent run of its own that never takes the agent, so many deliveries of
    one agent run at once: no pause gate (the worker pauses itself), no current turn
    on the agent, routed turns to ``put`` (the mailbox). It is told the plain values,
    and a completion check's verdict too: the worker's caller asked for that answer
    (it is still no value: ``ON_TURN_VALUE`` does not fire for it). A value the worker
    cannot send back is thrown back in (``athrow``), failing the turn as the tool's
    own exception would.
    """
    local = lane is None
    if lane is None:
        if agent._run is not None:
            await _claim(agent)
        assert ticket is not None
        run = AgentRun(agent, current_scope(), ticket[0])
        runner = run.begin()
    else:
        run = AgentRun.detached(agent)
        runner = lane
    error: BaseException | None = None
    # The steps are `_lifecycle`'s. The events are dispatched only when a hook or a
    # subscriber could see them: with neither, a turn costs no call (the benchmarks'
    # W1 and W2). A stream's values pass with no layer between the tool's generator
    # and this one (see `TurnRun`): streaming is the hot path.
    try:
        while queue:  # only a queued turn waits at the gate or fires BEFORE_TURN
            if agent._paused and local:
                await _wait_if_paused(agent)
            if (agent._hooks or BUS.hot) and (pending := before_turn(run)):
                await pending
            turn = queue.popleft()
            if local:
                agent._current = turn
            tool = turn._tool
            turn_run = open_turn(run, turn, runner)
            done = False
            try:
                if tool.streaming:
                    await turn_run.start_stream()
                    turn_run.resume()
                    try:
                        async for value in turn_run.agen:
                            if turn_run.step_done(value):
                                await turn_run.value_hooks(value)
                            if isinstance(value, ROUTED):
                                await route(run, turn, value, put)
                            else:
                                if (agent._hooks or BUS.hot) and (
                                    pending := value_event(run, turn, value)
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
                        if not local:  # the verdict is the worker's caller's answer
                            yield turn, value
                    elif isinstance(value, ROUTED):
                        await route(run, turn, value, put)
                    else:
                        if (agent._hooks or BUS.hot) and (pending := value_event(run, turn, value)):
                            await pending
                        if local:
                            agent._current = None
                        yield turn, value
            except BaseException as exc:
                await fail_turn(run, turn, turn_run, exc)
                raise
            if local:
                agent._current = None
            if (agent._hooks or BUS.hot) and (pending := after_turn(run, turn)):
                await pending
            if done:
                break
    except BaseException as exc:
        error = exc
        raise
    finally:
        if local:
            run.close(runner, error)
        else:
            run.end(error)
