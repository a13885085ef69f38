"""The scope tree: which agent run, turn and tool invocation is running where.

Every execution the runtime drives is a [`Scope`][pygents.Scope] nested in the one that
started it. The innermost running scope is what context injection asks for (a
tool's ``ContextQueue`` parameter is [`Scope.provide`][pygents.Scope.provide]'d by the agent run
around it) and what subscribers receive. This module knows nothing of
subscribers: argument binding depends on it, and the subscriber bus builds on it.
"""

from __future__ import annotations

from contextvars import ContextVar
from enum import StrEnum
from typing import Any, Final

from pygents._enums import CANCELLED, COMPLETED, FAILED, StopReason
from pygents._errors import brief

__all__ = ["CURRENT", "Frame", "Scope", "ScopeKind", "current_scope", "stop_reason_for"]


def stop_reason_for(error: BaseException | None) -> StopReason:
    """How a scope that ended with ``error`` (``None``: success) stopped.

    ``TIMEOUT`` is never inferred: only a turn knows that its own deadline expired.
    """
    if error is None:
        return COMPLETED
    if isinstance(error, Exception):
        return FAILED
    return CANCELLED  # CancelledError, GeneratorExit, KeyboardInterrupt, ...


class ScopeKind(StrEnum):
    """What a [`Scope`][pygents.Scope] is the execution of."""

    AGENT_RUN = "agent_run"
    TURN = "turn"
    TOOL = "tool"


# Read per turn: module constants, not class attributes (see the note in _enums.py).
AGENT_RUN_SCOPE: Final = ScopeKind.AGENT_RUN
TURN_SCOPE: Final = ScopeKind.TURN
TOOL_SCOPE: Final = ScopeKind.TOOL


class Scope:
    """One execution: an agent run, a turn, or a tool invocation.

    Scopes nest (``parent``): a tool invocation inside a turn inside an agent run.
    ``state`` is a dictionary where each subscriber may keep what it needs for this
    scope (a tracer keeps its span there), keyed by the subscriber itself.

    The public surface is ``kind``, ``target``, ``parent``, ``agent``, ``turn``,
    ``state``, ``stop_reason``, ``error`` and `provide`; everything with a
    leading underscore (here and in the runtime's subclasses) is how the runtime
    drives the execution, and subscribers must not rely on it.
    """

    __slots__ = (
        "_observers",
        "_resources",
        "_state",
        "agent",
        "error",
        "kind",
        "parent",
        "stop_reason",
        "target",
        "turn",
    )

    def __init__(
        self,
        kind: ScopeKind,
        target: Any,
        parent: Scope | None,
        *,
        agent: Any = None,
        turn: Any = None,
    ) -> None:
        self.kind = kind
        self.target: Any = target
        self.parent = parent
        if parent is not None:
            agent = agent if agent is not None else parent.agent
            turn = turn if turn is not None else parent.turn
        self.agent: Any = agent
        self.turn: Any = turn
        self._resources: dict[type, object] | None = None
        self._state: dict[object, Any] | None = None
        self.stop_reason: StopReason | None = None
        self.error: BaseException | None = None
        # the subscribers that saw this scope start (set by the bus, which ends it for them)
        self._observers: tuple[Any, ...] = ()

    def __repr__(self) -> str:
        name = getattr(self.target, "name", None) or type(self.target).__name__
        return f"<Scope {self.kind.value} {brief(name, 60)}>"

    @property
    def state(self) -> dict[object, Any]:
        """Per-subscriber data for this scope (created on first use)."""
        if self._state is None:
            self._state = {}
        return self._state

    def provide(self, cls: type) -> Any:
        """The nearest enclosing resource that is an instance of ``cls``, or ``None``.

        Agents publish their context queue and pool here; tools and hooks receive
        them by parameter annotation.
        """
        scope: Scope | None = self
        while scope is not None:
            resources = scope._resources
            if resources is not None:
                for value in resources.values():
                    if isinstance(value, cls):
                        return value
            scope = scope.parent
        return None


class Frame:
    """What `CURRENT` holds while a stream is open.

    Setting a context variable for every streamed value is costly, so a stream sets
    it once, to a frame, and each step only flips ``frame.scope``: the tool's scope
    while a step runs, ``None`` between steps — when the ``outer`` value (what the
    variable held before) applies again. Tasks started inside a step inherit the
    frame like any context variable.
    """

    __slots__ = ("outer", "scope")

    def __init__(self, outer: Scope | Frame | None) -> None:
        self.scope: Scope | None = None
        self.outer = outer


CURRENT: Final[ContextVar[Scope | Frame | None]] = ContextVar("pygents_current_scope", default=None)


def current_scope() -> Scope | None:
    """The innermost scope whose code is running in this task, if any."""
    value = CURRENT.get()
    while isinstance(value, Frame):
        if value.scope is not None:
            return value.scope
        value = value.outer
    return value
