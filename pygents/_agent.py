"""Agents: a queue of turns, a set of tools, and memory, run as one async stream.

``run()`` takes turns in FIFO order and routes every value a turn produces before
the next one: a ``Turn`` is queued, a ``ContextItem`` goes to the context queue
(no id) or pool (id), a completion check's ``True`` ends the run, and anything
else is yielded to the caller as ``(turn, value)``.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Coroutine, Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Final

from pygents._context import ContextItem, ContextPool, ContextQueue
from pygents._enums import AgentHook, StopReason, ToolType, TurnHook
from pygents._errors import CompletionCheckReturnError, SafeExecutionError, UnregisteredAgentError
from pygents._guard import guarded
from pygents._hooks import Hook, HookSlot, check_hook_list, check_tags, fire
from pygents._observe import BUS, CURRENT, Frame, Scope, ScopeKind, current_scope, stop_reason_for
from pygents._registry import Registry
from pygents._routing import ROUTES
from pygents._serial import Reader, hooks_to_data
from pygents._tool import DecoratedTool, ToolRegistry
from pygents._turn import Turn, new_uuid
from pygents._turn_run import Runner

__all__ = ["Agent", "AgentRegistry", "AgentRun"]

_ROUTED: Final = (Turn, ContextItem)


def _check_tools(agent: Agent, tools: object) -> tuple[DecoratedTool[..., Any], ...]:
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
        raise TypeError(f"Agent(tools=...) takes a list of tools, got {type(tools).__name__}")
    checked = tuple(tools)
    for t in checked:
        if not isinstance(t, DecoratedTool):
            raise TypeError(f"Agent(tools=...) takes @tool-decorated functions, got {t!r}")
        if ToolRegistry.find(t.name) is not t:
            raise ValueError(
                f"tool {t.name!r} given to agent {agent._name!r} is not the tool registered "
                "under that name (was the registry cleared or the tool redefined?); pass "
                f"ToolRegistry.get({t.name!r})"
            )
    return checked


def _check_queue(agent: Agent, value: object) -> ContextQueue[Any]:
    if not isinstance(value, ContextQueue):
        raise TypeError(f"Agent.context_queue takes a ContextQueue, got {type(value).__name__}")
    return value


def _check_pool(agent: Agent, value: object) -> ContextPool[Any]:
    if not isinstance(value, ContextPool):
        raise TypeError(f"Agent.context_pool takes a ContextPool, got {type(value).__name__}")
    return value


def _check_text(agent: Agent, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"Agent description must be a string, got {type(value).__name__}")
    return value


AgentRegistry: Final = Registry["Agent"]("agent", UnregisteredAgentError)
"""Every live agent by name; ``send()`` and ``from_dict`` look agents up here."""


class AgentRun(Scope):
    """The scope of one ``run()``; publishes the agent's context for injection."""

    __slots__ = ()

    def __init__(self, agent: Agent, parent: Scope | None) -> None:
        super().__init__(ScopeKind.AGENT_RUN, agent, parent, agent=agent)
        self.resources = {ContextQueue: agent._context_queue, ContextPool: agent._context_pool}


class Agent:
    """A named worker with tools, a queue of turns, a context queue and a pool."""

    description = guarded(_check_text)
    tools = guarded(_check_tools)
    context_queue = guarded(_check_queue)
    context_pool = guarded(_check_pool)
    tags = guarded(check_tags)
    hooks = guarded(check_hook_list)
    turn_hooks = guarded(check_hook_list)

    # Agent-level events.
    before_turn = HookSlot(AgentHook.BEFORE_TURN)
    after_turn = HookSlot(AgentHook.AFTER_TURN)
    on_turn_value = HookSlot(AgentHook.ON_TURN_VALUE)
    on_turn_error = HookSlot(AgentHook.ON_TURN_ERROR)
    on_turn_timeout = HookSlot(AgentHook.ON_TURN_TIMEOUT)
    before_put = HookSlot(AgentHook.BEFORE_PUT)
    after_put = HookSlot(AgentHook.AFTER_PUT)
    on_pause = HookSlot(AgentHook.ON_PAUSE)
    on_resume = HookSlot(AgentHook.ON_RESUME)
    # Turn events, for every turn this agent runs.
    on_error = HookSlot(TurnHook.ON_ERROR, attr="turn_hooks")
    on_timeout = HookSlot(TurnHook.ON_TIMEOUT, attr="turn_hooks")
    on_complete = HookSlot(TurnHook.ON_COMPLETE, attr="turn_hooks")

    def __init__(
        self,
        name: str,
        description: str,
        tools: Sequence[DecoratedTool[..., Any]],
        context_queue: ContextQueue[Any] | None = None,
        context_pool: ContextPool[Any] | None = None,
        tags: Iterable[str] | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"Agent(name=...) must be a non-empty string, got {name!r}")
        self._name = name
        self._uuid = new_uuid()
        self._description = _check_text(self, description)
        self._tools = _check_tools(self, tools)
        self._tool_names = frozenset(t.name for root in self._tools for t in root.walk())
        self._context_queue = _check_queue(
            self, ContextQueue(limit=10) if context_queue is None else context_queue
        )
        self._context_pool = _check_pool(
            self, ContextPool() if context_pool is None else context_pool
        )
        self._tags = check_tags(self, tags)
        self._hooks: list[Hook[Any]] = []
        self._turn_hooks: list[Hook[Any]] = []
        self._queue: deque[Turn] = deque()
        self._current: Turn | None = None
        self._run: AgentRun | None = None
        self._paused = False
        self._gate: asyncio.Event | None = None
        AgentRegistry.add(name, self)

    # -- state ------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def uuid(self) -> str:
        """A stable identity for this agent: unique, kept by ``to_dict``/``from_dict``
        (a name can be reused once an agent leaves the registry; this id is not)."""
        return self._uuid

    @property
    def turns(self) -> list[Turn]:
        """A snapshot of the queued turns, next first; changing it changes nothing."""
        return list(self._queue)

    def __iter__(self) -> Iterator[Turn]:
        return iter(self.turns)

    @property
    def queue_depth(self) -> int:
        """How many turns are queued (without copying the queue, unlike :attr:`turns`)."""
        return len(self._queue)

    @property
    def current_turn(self) -> Turn | None:
        """The turn being run right now, if any."""
        return self._current

    @property
    def is_running(self) -> bool:
        return self._run is not None

    @property
    def is_paused(self) -> bool:
        return self._paused

    @property
    def scope(self) -> AgentRun | None:
        """The scope of the run in progress, if any."""
        return self._run

    def _busy(self) -> str | None:
        if self._run is not None:
            return "running"
        return "paused" if self._paused else None

    def __repr__(self) -> str:
        state = self._busy() or "idle"
        return f"<Agent {self._name!r} {state}, {len(self._queue)} queued>"

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        AgentRegistry.discard(self._name, self)

    # -- queue ------------------------------------------------------------------------

    async def put(self, turn: Turn) -> None:
        """Queue ``turn``; ``ValueError`` if its tool is not one of this agent's."""
        if not isinstance(turn, Turn):
            raise TypeError(f"Agent.put() takes a Turn, got {type(turn).__name__}")
        tool_name = turn._tool.name
        if tool_name not in self._tool_names:
            raise ValueError(
                f"agent {self._name!r} has no tool {tool_name!r} (its tools: "
                f"{', '.join(sorted(self._tool_names)) or 'none'}); give the agent that tool "
                "or send the turn to an agent that has it"
            )
        if self._hooks or BUS.listening:
            await fire(AgentHook.BEFORE_PUT, self, self._hooks, (self, turn), None, self._run)
            self._queue.append(turn)
            await fire(AgentHook.AFTER_PUT, self, self._hooks, (self, turn), None, self._run)
        else:
            self._queue.append(turn)

    async def send(self, agent_name: str, turn: Turn) -> None:
        """Put ``turn`` on another registered agent's queue — or, for an agent served in
        other processes (``pygents.redis``), on its mailbox."""
        if ROUTES:
            router = ROUTES.router_for(agent_name, agent_name in AgentRegistry)
            if router is not None:
                await router.deliver(agent_name, turn)
                return
        await AgentRegistry.get(agent_name).put(turn)

    def pause(self) -> None:
        """Hold the run loop before its next turn (the current turn finishes)."""
        self._paused = True

    def resume(self) -> None:
        """Let a paused run loop continue."""
        self._paused = False
        if self._gate is not None:
            self._gate.set()

    # -- running ----------------------------------------------------------------------

    def _value_event(self, run: AgentRun, turn: Turn, value: Any) -> Coroutine[Any, Any, None]:
        """``ON_TURN_VALUE``'s dispatch, returned to be awaited (no extra coroutine)."""
        return fire(AgentHook.ON_TURN_VALUE, self, self._hooks, (self, turn, value), None, run)

    async def _agent_event(self, event: AgentHook, *args: Any) -> None:
        """A cold agent event (pause, resume, turn failure)."""
        if self._hooks or BUS.listening:
            await fire(event, self, self._hooks, args, None, self._run)

    async def _wait_if_paused(self) -> None:
        await self._agent_event(AgentHook.ON_PAUSE, self)
        while self._paused:
            self._gate = asyncio.Event()
            await self._gate.wait()
        self._gate = None
        await self._agent_event(AgentHook.ON_RESUME, self)

    async def _route(self, run: AgentRun, value: Any) -> None:
        entered = BUS.enter(run)
        try:
            if isinstance(value, Turn):
                await self.put(value)
            elif value.id is None:
                await self._context_queue.append(value)
            else:
                await self._context_pool.add(value)
        finally:
            BUS.exit(run, entered)

    async def run(self) -> AsyncGenerator[tuple[Turn, Any], None]:
        """Run queued turns until the queue is empty or a completion check says done.

        Yields ``(turn, value)`` for every value that is not routed. A turn's error
        or timeout propagates after its hooks (and this agent's) have fired.
        """
        if self._run is not None:
            raise SafeExecutionError(
                f"{self!r} is already running; consume its current run() instead of "
                "starting another"
            )
        run = AgentRun(self, current_scope())
        self._run = run
        if BUS.scopers:
            BUS.start(run)
        error: BaseException | None = None
        frame = Frame(CURRENT.get())
        frame_token = CURRENT.set(frame)
        runner = Runner(frame)
        try:
            while True:
                if self._paused:
                    await self._wait_if_paused()
                if self._hooks or BUS.active:
                    await fire(AgentHook.BEFORE_TURN, self, self._hooks, (self,), None, run)
                if not self._queue:
                    break
                turn = self._queue.popleft()
                self._current = turn
                tool = turn._tool
                turn_run = turn._open(run, tool.streaming, self._turn_hooks, runner)
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
                                    await self._route(run, value)
                                elif self._hooks or BUS.active:
                                    await self._value_event(run, turn, value)
                                    yield turn, value
                                else:
                                    yield turn, value
                                turn_run.resume()
                            turn_run.step_failed(None)
                        except BaseException as exc:
                            turn_run.step_failed(exc)
                            raise
                        await turn_run.finish(None)
                    else:
                        value = await turn_run.call()
                        if tool.type is ToolType.COMPLETION_CHECK and type(value) is not bool:
                            raise CompletionCheckReturnError(
                                f"completion check {tool.name!r} returned "
                                f"{type(value).__name__} {value!r}; it must return True or False"
                            )
                        if not turn_run.finish_quietly(value):
                            await turn_run.finish(None, value)
                        if tool.type is ToolType.COMPLETION_CHECK:
                            done = value
                        elif isinstance(value, _ROUTED):
                            await self._route(run, value)
                        else:
                            if self._hooks or BUS.active:
                                await self._value_event(run, turn, value)
                            self._current = None
                            yield turn, value
                except BaseException as exc:
                    if turn._run is turn_run:
                        await turn_run.finish(exc)
                    await self._turn_failed(turn, exc)
                    raise
                self._current = None
                if self._hooks or BUS.active:
                    await fire(AgentHook.AFTER_TURN, self, self._hooks, (self, turn), None, run)
                if done:
                    break
        except BaseException as exc:
            error = exc
            raise
        finally:
            runner.watchdog.close()
            try:
                CURRENT.reset(frame_token)
            except ValueError:
                pass  # finalised in another context (an abandoned run)
            self._current = None
            self._run = None
            run.error = error
            run.stop_reason = stop_reason_for(error)
            if run.observers:
                BUS.end(run)

    async def _turn_failed(self, turn: Turn, exc: BaseException) -> None:
        if turn.stop_reason is StopReason.TIMEOUT:
            await self._agent_event(AgentHook.ON_TURN_TIMEOUT, self, turn)
        elif isinstance(exc, Exception):
            await self._agent_event(AgentHook.ON_TURN_ERROR, self, turn, exc)

    # -- copies and serialization -----------------------------------------------------

    def branch(
        self,
        name: str,
        description: str | None = None,
        tools: Sequence[DecoratedTool[..., Any]] | None = None,
        hooks: list[Hook[Any]] | None = None,
    ) -> Agent:
        """A new registered agent with this one's configuration, queue and context."""
        child = Agent(
            name,
            self._description if description is None else description,
            self._tools if tools is None else tools,
            context_queue=self._context_queue.branch(),
            context_pool=self._context_pool.branch(),
            tags=self._tags,
        )
        child._hooks = list(self._hooks if hooks is None else hooks)
        child._turn_hooks = list(self._turn_hooks)
        child._queue.extend(turn.copy() for turn in self._queue)
        return child

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready snapshot: configuration, queue, in-flight turn, context, pause."""
        return {
            "uuid": self._uuid,
            "name": self._name,
            "description": self._description,
            "tool_names": [t.name for t in self._tools],
            "tags": sorted(self._tags),
            "queue": [turn.to_dict() for turn in self._queue],
            "current_turn": None if self._current is None else self._current.to_dict(),
            "hooks": hooks_to_data(self._hooks),
            "turn_hooks": hooks_to_data(self._turn_hooks),
            "context_queue": self._context_queue.to_dict(),
            "context_pool": self._context_pool.to_dict(),
            "is_paused": self._paused,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Agent:
        """Rebuild and register an agent; an in-flight turn is queued first.

        Everything is checked before the agent is registered, so bad data leaves
        nothing behind.
        """
        r = Reader(data, "Agent")
        name = r.text("name")
        agent_uuid = r.text("uuid")
        if name in AgentRegistry:
            raise ValueError(
                f"Agent.from_dict(): an agent named {name!r} is already registered; "
                "unregister it first (AgentRegistry.unregister) or rename the data"
            )
        tools = [ToolRegistry.get(n) for n in r.strings("tool_names")]
        current = r.mapping("current_turn", optional=True)
        turns = [Turn.from_dict(d) for d in ([current] if current else [])]
        turns += [Turn.from_dict(d) for d in r.items("queue")]
        queue: ContextQueue[Any] = ContextQueue.from_dict(r.mapping("context_queue"))
        pool: ContextPool[Any] = ContextPool.from_dict(r.mapping("context_pool"))
        hooks, turn_hooks = r.hooks("hooks"), r.hooks("turn_hooks")
        paused = r.flag("is_paused")
        description = r.text("description")
        tags = r.strings("tags")
        for turn in turns:
            names = {t.name for root in tools for t in root.walk()}
            if turn._tool.name not in names:
                raise ValueError(
                    f"Agent.from_dict(): queued turn for tool {turn._tool.name!r} is not "
                    f"one of the agent's tools {sorted(names)}"
                )
        agent = cls(name, description, tools, queue, pool, tags)
        agent._uuid = agent_uuid
        agent._hooks, agent._turn_hooks = hooks, turn_hooks
        agent._queue.extend(turns)
        agent._paused = paused
        return agent
