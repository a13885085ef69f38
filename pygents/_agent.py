"""Agents: a queue of turns, a set of tools, and memory, run as one async stream.

``run()`` takes turns in FIFO order and routes every value a turn produces before
the next one: a ``Turn`` is queued, a ``ContextItem`` goes to the context queue
(no id) or pool (id), a completion check's ``True`` ends the run, and anything
else is yielded to the caller as ``(turn, value)``. The loop itself lives in
`pygents._agent_run`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from pygents._agent_run import AgentRun, run_agent
from pygents._context import ContextPool, ContextQueue
from pygents._enums import AgentHook, TurnHook
from pygents._errors import UnregisteredAgentError, brief
from pygents._guard import guarded
from pygents._hooklist import INHERIT, HookList, branch_hooks
from pygents._hooks import Hook, HookSlot, check_tags, fire
from pygents._ids import new_uuid
from pygents._observe import BUS
from pygents._registry import Registry
from pygents._routing import ROUTES
from pygents._serial import Reader, hooks_to_data
from pygents._tool import DecoratedTool, ToolRegistry
from pygents._turn import Turn

__all__ = ["Agent", "AgentRegistry"]


def _names(tools: Iterable[DecoratedTool[..., Any]]) -> frozenset[str]:
    """The tool names an agent with ``tools`` accepts: each tool and its subtools."""
    return frozenset(t.name for root in tools for t in root.walk())


def _listed(names: Iterable[str], limit: int = 10) -> str:
    """The first ``limit`` of ``names`` (sorted, each bounded) for an error message."""
    shown = sorted(names)
    text = ", ".join(brief(n, 40) for n in shown[:limit]) or "none"
    return text + (f", ... ({len(shown) - limit} more)" if len(shown) > limit else "")


def _check_tools(agent: Agent, tools: object) -> tuple[DecoratedTool[..., Any], ...]:
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
        raise TypeError(f"Agent(tools=...) takes a list of tools, got {type(tools).__name__}")
    checked = tuple(tools)
    for t in checked:
        if not isinstance(t, DecoratedTool):
            raise TypeError(f"Agent(tools=...) takes @tool-decorated functions, got {brief(t)}")
        if ToolRegistry.find(t.name) is not t:
            raise ValueError(
                f"tool {brief(t.name, 60)} given to agent {brief(agent._name, 60)} is not "
                "the tool registered under that name (was the registry cleared or the tool "
                "redefined?); pass "
                f"ToolRegistry.get({brief(t.name, 60)})"
            )
    if agent._queue:  # new tools for an agent with queued turns must still run them
        lost = sorted({turn._tool.name for turn in agent._queue} - _names(checked))
        if lost:
            shown = ", ".join(brief(n, 60) for n in lost[:3]) + (", ..." if len(lost) > 3 else "")
            raise ValueError(
                f"agent {brief(agent._name, 60)} has queued turns for {shown}, which the new tools "
                "lack; keep those tools, or run the queued turns before changing tools"
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


class Agent:
    """A named worker with tools, a queue of turns, a context queue and a pool."""

    description = guarded(_check_text)
    tools = guarded(_check_tools)
    context_queue = guarded(_check_queue)
    context_pool = guarded(_check_pool)
    tags = guarded(check_tags)
    hooks = guarded(HookList.validator("hooks"))
    turn_hooks = guarded(HookList.validator("turn_hooks"))

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
            raise TypeError(f"Agent(name=...) must be a non-empty string, got {brief(name)}")
        self._name = name
        self._uuid = new_uuid()
        self._queue: deque[Turn] = deque()
        self._description = _check_text(self, description)
        self._tools = _check_tools(self, tools)
        self._names_of: tuple[DecoratedTool[..., Any], ...] = ()
        self._names: frozenset[str] = frozenset()
        self._context_queue = _check_queue(
            self, ContextQueue(limit=10) if context_queue is None else context_queue
        )
        self._context_pool = _check_pool(
            self, ContextPool() if context_pool is None else context_pool
        )
        self._tags = check_tags(self, tags)
        self._hooks = HookList(Agent, "hooks")
        self._turn_hooks = HookList(Agent, "turn_hooks")
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
        """How many turns are queued (without copying the queue, unlike `turns`)."""
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

    def _tool_names(self) -> frozenset[str]:
        """The names ``put()`` accepts, derived from `tools` (the one source of
        truth) and recomputed only when the tools were replaced."""
        tools = self._tools
        if self._names_of is not tools:
            self._names, self._names_of = _names(tools), tools
        return self._names

    def _busy(self) -> str | None:
        if self._run is not None:
            return "running"
        return "paused" if self._paused else None

    def __repr__(self) -> str:
        state = self._busy() or "idle"
        return f"<Agent {brief(self._name, 60)} {state}, {len(self._queue)} queued>"

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        AgentRegistry.discard(self._name, self)

    # -- queue ------------------------------------------------------------------------

    async def put(self, turn: Turn) -> None:
        """Queue ``turn``; ``ValueError`` if its tool is not one of this agent's."""
        if not isinstance(turn, Turn):
            raise TypeError(f"Agent.put() takes a Turn, got {type(turn).__name__}")
        tool_name = turn._tool.name
        names = self._tool_names()
        if tool_name not in names:
            raise ValueError(
                f"agent {brief(self._name, 60)} has no tool {brief(tool_name, 60)} "
                f"(its tools: {_listed(names)}); give the agent that tool "
                "or send the turn to an agent that has it"
            )
        if self._hooks or BUS.any:
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
        """Hold the run loop before its next turn (the current turn finishes).

        Only a queued turn waits at the gate: with nothing queued, ``run()`` ends as
        it always does, and the pause holds the first turn of a later run.
        """
        self._paused = True

    def resume(self) -> None:
        """Let a paused run loop continue."""
        self._paused = False
        if self._gate is not None:
            self._gate.set()

    # -- running ----------------------------------------------------------------------

    def run(self) -> AsyncGenerator[tuple[Turn, Any], None]:
        """Run queued turns until the queue is empty or a completion check says done.

        Yields ``(turn, value)`` for every value that is not routed. A turn's error
        or timeout propagates after its hooks (and this agent's) have fired. Leave
        early with ``contextlib.aclosing(agent.run())`` to end the run at the break.
        """
        return run_agent(self)

    # -- copies and serialization -----------------------------------------------------

    def branch(
        self,
        name: str,
        description: str | None = None,
        tools: Sequence[DecoratedTool[..., Any]] | None = None,
        hooks: Iterable[Hook[Any]] | None = INHERIT,
    ) -> Agent:
        """A new registered agent with this one's configuration, queue and context.

        ``hooks`` omitted: the copy inherits this agent's hooks; ``None`` or ``[]``:
        it has none; a list: exactly those. ``turn_hooks`` are always inherited.
        """
        own_hooks = branch_hooks(self, "hooks", self._hooks, hooks)  # checked before registering
        child = Agent(
            name,
            self._description if description is None else description,
            self._tools if tools is None else tools,
            context_queue=self._context_queue.branch(),
            context_pool=self._context_pool.branch(),
            tags=self._tags,
        )
        child._hooks = own_hooks
        child._turn_hooks = HookList(Agent, "turn_hooks", self._turn_hooks)
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
            raise r.fail(
                "",
                f"an agent named {brief(name, 50)} is already registered; unregister it "
                "first (AgentRegistry.unregister) or rename the data",
            )
        tool_names = r.strings("tool_names")
        tools = [r.lookup(ToolRegistry, f"tool_names[{i}]", n) for i, n in enumerate(tool_names)]
        parts = [r.maybe_child("current_turn", "Turn"), *r.children("queue", "Turn")]
        turns = [(part, Turn._read(part)) for part in parts if part is not None]
        queue: ContextQueue[Any] = ContextQueue._read(r.child("context_queue", "ContextQueue"))
        pool: ContextPool[Any] = ContextPool._read(r.child("context_pool", "ContextPool"))
        hooks, turn_hooks = r.hooks("hooks"), r.hooks("turn_hooks")
        paused = r.flag("is_paused")
        description = r.text("description")
        tags = r.strings("tags")
        names = {t.name for root in tools for t in root.walk()}
        for part, turn in turns:
            if turn._tool.name not in names:
                raise part.fail(
                    "tool_name",
                    f"{brief(turn._tool.name, 50)} is not one of the agent's tools "
                    f"({brief(sorted(names), 80)}); add it to tool_names",
                )
        agent = r.build(cls, name, description, tools, queue, pool, tags)
        agent._uuid = agent_uuid
        agent._hooks = HookList(Agent, "hooks", hooks)
        agent._turn_hooks = HookList(Agent, "turn_hooks", turn_hooks)
        agent._queue.extend(turn for _, turn in turns)
        agent._paused = paused
        return agent
