"""The enumerations shared by every layer: hook events, stop reasons, tool types."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum, StrEnum
from types import MappingProxyType
from typing import Final, Self, TypeAlias

from pygents._errors import brief

__all__ = [
    "COLD_EVENTS",
    "HOT_EVENTS",
    "AgentHook",
    "ContextPoolHook",
    "ContextQueueHook",
    "HookType",
    "StopReason",
    "ToolHook",
    "ToolType",
    "TurnHook",
]


class _Event(Enum):
    """A hook event. Its value is the lower-case event name used in telemetry.

    A plain ``Enum`` on purpose: members of different enums that share a value
    (``TurnHook.ON_ERROR`` and ``ToolHook.ON_ERROR``) must never compare equal.

    Each member is declared as ``NAME = "value", (argument names...)``, optionally
    followed by the names of those arguments passed by keyword. The names are the
    one place that says what hooks and subscribers receive for the event, so
    observers read ``event["turn"]`` instead of counting positions.
    """

    _value_: str
    value: str
    arg_names: tuple[str, ...] | None
    """The names of the arguments hooks receive, in order (keyword ones last);
    ``None`` for [`ToolHook.BEFORE_INVOKE`][pygents.ToolHook.BEFORE_INVOKE], which passes the
    tool's own."""
    keyword_names: tuple[str, ...]
    """Those of `arg_names` passed by keyword (only ``ToolHook.ON_ERROR``'s ``exc``)."""
    _positions: Mapping[str, int]
    """Positional argument name → its index in ``Event.args``: built once per member,
    so reading an argument by name costs one dictionary lookup."""

    def __new__(
        cls, value: str, arg_names: tuple[str, ...] | None, keyword_names: tuple[str, ...] = ()
    ) -> Self:
        member = object.__new__(cls)
        member._value_ = value
        member.arg_names = arg_names
        member.keyword_names = keyword_names
        positional = () if arg_names is None else arg_names[: len(arg_names) - len(keyword_names)]
        member._positions = MappingProxyType({name: i for i, name in enumerate(positional)})
        return member

    # Members compare by identity, so identity hashing is exact — and C-level, which
    # matters: events are dictionary and set keys on every dispatch.
    __hash__ = object.__hash__

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    @property
    def qualified(self) -> str:
        """``"TurnHook.ON_ERROR"``: unambiguous across the five enums."""
        return f"{type(self).__name__}.{self.name}"


class TurnHook(_Event):
    """Events of a turn's life. Each member's ``arg_names`` say what hooks receive."""

    BEFORE_RUN = "before_run", ("turn",)
    AFTER_RUN = "after_run", ("turn", "output")
    ON_VALUE = "on_value", ("turn", "value")
    ON_TIMEOUT = "on_timeout", ("turn",)
    ON_ERROR = "on_error", ("turn", "exception")
    ON_COMPLETE = "on_complete", ("turn", "stop_reason")


class AgentHook(_Event):
    """Events of an agent's run loop and queue."""

    BEFORE_TURN = "before_turn", ("agent",)
    AFTER_TURN = "after_turn", ("agent", "turn")
    ON_TURN_VALUE = "on_turn_value", ("agent", "turn", "value")
    ON_TURN_ERROR = "on_turn_error", ("agent", "turn", "exception")
    ON_TURN_TIMEOUT = "on_turn_timeout", ("agent", "turn")
    BEFORE_PUT = "before_put", ("agent", "turn")
    AFTER_PUT = "after_put", ("agent", "turn")
    ON_PAUSE = "on_pause", ("agent",)
    ON_RESUME = "on_resume", ("agent",)


class ToolHook(_Event):
    """Events of one tool invocation."""

    BEFORE_INVOKE = "before_invoke", None  # the tool's own (*args, **kwargs), bound
    ON_YIELD = "on_yield", ("value",)
    AFTER_INVOKE = "after_invoke", ("result",)
    ON_ERROR = "on_error", ("exc",), ("exc",)  # passed by keyword: exc=exception


class ContextQueueHook(_Event):
    """Events of a [`ContextQueue`][pygents.ContextQueue]."""

    BEFORE_APPEND = "before_append", ("queue", "incoming", "current")
    AFTER_APPEND = "after_append", ("appended_items", "current")
    BEFORE_CLEAR = "before_clear", ("queue", "items")
    AFTER_CLEAR = "after_clear", ("queue",)
    ON_EVICT = "on_evict", ("queue", "item")


class ContextPoolHook(_Event):
    """Events of a [`ContextPool`][pygents.ContextPool]."""

    BEFORE_ADD = "before_add", ("pool", "item")
    AFTER_ADD = "after_add", ("pool", "item")
    BEFORE_REMOVE = "before_remove", ("pool", "item")
    AFTER_REMOVE = "after_remove", ("pool", "item")
    BEFORE_CLEAR = "before_clear", ("pool", "snapshot")
    AFTER_CLEAR = "after_clear", ("pool",)
    ON_EVICT = "on_evict", ("pool", "item")


HookType: TypeAlias = TurnHook | AgentHook | ToolHook | ContextQueueHook | ContextPoolHook
"""Any member of the five hook enums."""

HOT_EVENTS: frozenset[HookType] = frozenset(
    (
        TurnHook.BEFORE_RUN,
        TurnHook.AFTER_RUN,
        TurnHook.ON_VALUE,
        TurnHook.ON_COMPLETE,
        ToolHook.BEFORE_INVOKE,
        ToolHook.ON_YIELD,
        ToolHook.AFTER_INVOKE,
        AgentHook.BEFORE_TURN,
        AgentHook.AFTER_TURN,
        AgentHook.ON_TURN_VALUE,
    )
)
"""Events fired for every turn or every streamed value. The others (puts, pauses,
errors, timeouts, context changes) are *cold*: a subscriber that listens only to
cold events keeps every per-turn path as fast as with nobody subscribed."""

COLD_EVENTS: frozenset[HookType] = frozenset(
    member
    for enum in (TurnHook, AgentHook, ToolHook, ContextQueueHook, ContextPoolHook)
    for member in enum
    if member not in HOT_EVENTS
)

HOOK_ENUMS: tuple[type[_Event], ...] = (
    TurnHook,
    AgentHook,
    ToolHook,
    ContextQueueHook,
    ContextPoolHook,
)


def parse_hook_type(text: str) -> HookType:
    """Turn ``"TurnHook.ON_ERROR"`` back into the member; ``ValueError`` if unknown."""
    enum_name, _, member = text.partition(".")
    for enum in HOOK_ENUMS:
        if enum.__name__ == enum_name and member in enum.__members__:
            return enum.__members__[member]  # type: ignore[return-value]
    choices = ", ".join(e.__name__ for e in HOOK_ENUMS)
    raise ValueError(
        f"unknown hook type {brief(text)}: expected '<Enum>.<MEMBER>' with Enum one of {choices}"
    )


class StopReason(StrEnum):
    """Why a turn stopped."""

    COMPLETED = "completed"
    TIMEOUT = "timeout"
    ERROR = "error"
    CANCELLED = "cancelled"

    def __str__(self) -> str:
        return self.value


class ToolType(StrEnum):
    """What an agent does with a tool's output."""

    ACTION = "action"
    COMPLETION_CHECK = "completion_check"

    def __str__(self) -> str:
        return self.value


# -- the members the per-turn path names -------------------------------------------------
# Python 3.11's ``EnumType`` defines ``__getattr__``, which sends every class attribute
# read (``StopReason.COMPLETED``) through a slow generic path: about 150 ns, a dozen
# times a turn (3.12 removed it). The per-turn path reads these module constants
# instead — the same members, one dictionary lookup each.
TURN_BEFORE_RUN: Final = TurnHook.BEFORE_RUN
TURN_AFTER_RUN: Final = TurnHook.AFTER_RUN
TURN_ON_COMPLETE: Final = TurnHook.ON_COMPLETE
TOOL_BEFORE_INVOKE: Final = ToolHook.BEFORE_INVOKE
TOOL_AFTER_INVOKE: Final = ToolHook.AFTER_INVOKE
AGENT_BEFORE_TURN: Final = AgentHook.BEFORE_TURN
AGENT_AFTER_TURN: Final = AgentHook.AFTER_TURN
AGENT_ON_TURN_VALUE: Final = AgentHook.ON_TURN_VALUE
COMPLETED: Final = StopReason.COMPLETED
TIMED_OUT: Final = StopReason.TIMEOUT
FAILED: Final = StopReason.ERROR
CANCELLED: Final = StopReason.CANCELLED
COMPLETION_CHECK: Final = ToolType.COMPLETION_CHECK
