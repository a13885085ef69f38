"""The span builder: every span and event name, and every attribute, in one place.

Names and attributes follow the OpenTelemetry GenAI semantic conventions (agent and
tool spans, status "Development"); what the conventions do not cover is namespaced
``pygents.*``. Every piece of user text (agent and tool names, descriptions, tags,
item ids, exception class names) goes through ``bounded`` on its way in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from opentelemetry.util.types import AttributeValue

from pygents import (
    Agent,
    AgentHook,
    ContextPool,
    ContextPoolHook,
    ContextQueue,
    ContextQueueHook,
    DecoratedTool,
    Event,
    HookType,
    StopReason,
    ToolHook,
    Turn,
    TurnHook,
)
from pygents_otel._dump import dump
from pygents_otel._text import TEXT_LIMIT, bounded

SCHEMA_URL: Final = "https://opentelemetry.io/schemas/1.37.0"

# GenAI semantic conventions.
OPERATION: Final = "gen_ai.operation.name"
PROVIDER: Final = "gen_ai.provider.name"
AGENT_NAME: Final = "gen_ai.agent.name"
AGENT_DESCRIPTION: Final = "gen_ai.agent.description"
AGENT_ID: Final = "gen_ai.agent.id"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
TOOL_TYPE: Final = "gen_ai.tool.type"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
ERROR_TYPE: Final = "error.type"

# pygents' own.
TAGS: Final = "pygents.tags"
TURN_UUID: Final = "pygents.turn.uuid"
TURN_TIMEOUT: Final = "pygents.turn.timeout"
STOP_REASON: Final = "pygents.turn.stop_reason"
STOP_REASONS: Final = {
    "agent_run": "pygents.agent.stop_reason",
    "turn": STOP_REASON,
    "tool": "pygents.tool.stop_reason",
}
DROPPED_EVENTS: Final = "pygents.events.dropped"
VALUES: Final = "pygents.values"
VALUE_INDEX: Final = "pygents.value.index"
VALUE: Final = "pygents.value"
QUEUE_DEPTH: Final = "pygents.agent.queue.depth"
ITEM_ID: Final = "pygents.context.item.id"
CONTEXT_CONTENT: Final = "pygents.context.content"
STORE_SIZE: Final = "pygents.context.size"
PYGENTS_TOOL: Final = "pygents.tool.name"

INVOKE_AGENT: Final = "invoke_agent"
EXECUTE_TOOL: Final = "execute_tool"

# Events fired once per streamed value: capped per span, always counted.
VALUE_EVENTS: Final[frozenset[HookType]] = frozenset(
    (ToolHook.ON_YIELD, TurnHook.ON_VALUE, AgentHook.ON_TURN_VALUE)
)
# Events that repeat with the work a span does (per value, per turn, per routed item):
# the first few of each kind are recorded, the rest counted. One-off lifecycle events
# (errors, timeouts, completion, pauses) are always recorded.
BULK_EVENTS: Final[frozenset[HookType]] = VALUE_EVENTS | frozenset(
    (
        AgentHook.BEFORE_TURN,
        AgentHook.AFTER_TURN,
        AgentHook.BEFORE_PUT,
        AgentHook.AFTER_PUT,
        *ContextQueueHook,
        *ContextPoolHook,
    )
)

_OBJECT: Final[dict[type, str]] = {
    TurnHook: "turn",
    ToolHook: "tool",
    AgentHook: "agent",
    ContextQueueHook: "context_queue",
    ContextPoolHook: "context_pool",
}


@dataclass(frozen=True, slots=True)
class Content:
    """Whether tool arguments, results, values and context item contents are
    recorded, and how many characters of each (at least 1, checked by the
    instrumentor)."""

    capture: bool = False
    max_length: int = 2048

    def dump(self, value: Any) -> str:
        """``value`` as JSON-ish text, cut to ``max_length`` characters; never raises.

        Serialization stops at the limit, so a huge value costs no more than a short
        one (see ``_dump``).
        """
        return dump(value, self.max_length)


MAX_TAGS: Final = 64
"""Tags recorded per span (the first ones in sorted order)."""


def tags(obj: Any) -> dict[str, AttributeValue]:
    found = getattr(obj, "tags", None)
    return {TAGS: [bounded(tag) for tag in sorted(found)[:MAX_TAGS]]} if found else {}


def error_type(error: object) -> str:
    """``error.type``: the exception's class name, bounded."""
    return bounded(type(error).__qualname__)


# -- spans -------------------------------------------------------------------------------


def of_agent(agent: Agent | None) -> dict[str, AttributeValue]:
    """``gen_ai.agent.name`` and ``gen_ai.agent.id``, when there is an agent.

    On turn and tool spans too: span names stay one per tool (``execute_tool bash``),
    and these say which agent ran it, so many agents sharing tools stay apart in a
    backend without multiplying operation names.
    """
    if agent is None:
        return {}
    return {AGENT_NAME: bounded(agent.name), AGENT_ID: agent.uuid}


def agent_span(agent: Agent) -> tuple[str, dict[str, AttributeValue]]:
    attributes: dict[str, AttributeValue] = {
        OPERATION: INVOKE_AGENT,
        PROVIDER: "pygents",
        **of_agent(agent),
        **tags(agent),
    }
    if agent.description:
        attributes[AGENT_DESCRIPTION] = bounded(agent.description, TEXT_LIMIT)
    return f"{INVOKE_AGENT} {bounded(agent.name)}", attributes


def turn_span(turn: Turn, agent: Agent | None = None) -> tuple[str, dict[str, AttributeValue]]:
    name = bounded(turn.tool.name)
    attributes: dict[str, AttributeValue] = {
        TURN_UUID: turn.uuid,
        TURN_TIMEOUT: float(turn.timeout),
        PYGENTS_TOOL: name,
        **of_agent(agent),
        **tags(turn),
    }
    return f"turn {name}", attributes


def tool_span(
    tool: DecoratedTool[..., Any], turn: Turn | None, agent: Agent | None = None
) -> tuple[str, dict[str, AttributeValue]]:
    name = bounded(tool.name)
    attributes: dict[str, AttributeValue] = {
        OPERATION: EXECUTE_TOOL,
        PROVIDER: "pygents",
        TOOL_NAME: name,
        TOOL_TYPE: "function",
        **of_agent(agent),
        **tags(tool),
    }
    if tool.metadata.description:
        attributes[TOOL_DESCRIPTION] = bounded(tool.metadata.description, TEXT_LIMIT)
    if turn is not None:
        attributes[TOOL_CALL_ID] = turn.uuid
    return f"{EXECUTE_TOOL} {name}", attributes


def end_attributes(
    kind: str, stop_reason: StopReason | None, error: BaseException | None
) -> dict[str, AttributeValue]:
    """``kind`` is the scope kind's value: ``agent_run``, ``turn`` or ``tool``."""
    attributes: dict[str, AttributeValue] = {}
    if stop_reason is not None:
        attributes[STOP_REASONS[kind]] = stop_reason.value
    if stop_reason is StopReason.TIMEOUT:
        attributes[ERROR_TYPE] = "TurnTimeoutError"
    elif isinstance(error, Exception):
        attributes[ERROR_TYPE] = error_type(error)
    return attributes


# -- events ------------------------------------------------------------------------------


def _none(event: Event) -> dict[str, AttributeValue]:
    return {}


def _stop(event: Event) -> dict[str, AttributeValue]:
    return {STOP_REASON: event["stop_reason"].value}


def _turn_error(event: Event) -> dict[str, AttributeValue]:
    return {ERROR_TYPE: error_type(event["exception"])}


def _tool_error(event: Event) -> dict[str, AttributeValue]:
    return {ERROR_TYPE: error_type(event["exc"])}


def _queued(event: Event) -> dict[str, AttributeValue]:
    agent: Agent = event["agent"]
    attributes: dict[str, AttributeValue] = {
        AGENT_NAME: bounded(agent.name),
        QUEUE_DEPTH: agent.queue_depth,
    }
    turn: Turn | None = event.get("turn")  # BEFORE_TURN has none yet
    if turn is not None:
        attributes[TURN_UUID] = turn.uuid
        attributes[PYGENTS_TOOL] = bounded(turn.tool.name)
    return attributes


def _turn_of_agent(event: Event) -> dict[str, AttributeValue]:
    turn: Turn = event["turn"]
    return {TURN_UUID: turn.uuid, PYGENTS_TOOL: bounded(turn.tool.name)}


def _agent_error(event: Event) -> dict[str, AttributeValue]:
    attributes = _turn_of_agent(event)
    attributes[ERROR_TYPE] = error_type(event["exception"])
    return attributes


def _store(event: Event) -> dict[str, AttributeValue]:
    store = event.source
    assert isinstance(store, (ContextQueue, ContextPool))
    attributes: dict[str, AttributeValue] = {STORE_SIZE: len(store)}
    item_id = getattr(event.get("item"), "id", None)
    if isinstance(item_id, str):
        attributes[ITEM_ID] = bounded(item_id)
    return attributes


# What a context event is about, by argument name: the item added, removed or evicted,
# the items appended, or the items about to be cleared.
_ABOUT: Final[dict[HookType, str]] = {
    ContextQueueHook.BEFORE_APPEND: "incoming",
    ContextQueueHook.AFTER_APPEND: "appended_items",
    ContextQueueHook.BEFORE_CLEAR: "items",
    ContextQueueHook.ON_EVICT: "item",
    ContextPoolHook.BEFORE_ADD: "item",
    ContextPoolHook.AFTER_ADD: "item",
    ContextPoolHook.BEFORE_REMOVE: "item",
    ContextPoolHook.AFTER_REMOVE: "item",
    ContextPoolHook.ON_EVICT: "item",
    ContextPoolHook.BEFORE_CLEAR: "snapshot",
}

_BUILDERS: Final[dict[HookType, Any]] = {
    TurnHook.ON_COMPLETE: _stop,
    TurnHook.ON_ERROR: _turn_error,
    ToolHook.ON_ERROR: _tool_error,
    AgentHook.BEFORE_PUT: _queued,
    AgentHook.AFTER_PUT: _queued,
    AgentHook.BEFORE_TURN: _queued,
    AgentHook.AFTER_TURN: _queued,
    AgentHook.ON_TURN_VALUE: _turn_of_agent,
    AgentHook.ON_TURN_TIMEOUT: _turn_of_agent,
    AgentHook.ON_TURN_ERROR: _agent_error,
    **dict.fromkeys(ContextQueueHook, _store),
    **dict.fromkeys(ContextPoolHook, _store),
}

EVENT_NAMES: Final[dict[HookType, str]] = {
    member: f"pygents.{_OBJECT[enum]}.{member.value}"
    for enum in _OBJECT
    for member in enum  # type: ignore[attr-defined]
}


def event_attributes(
    event: Event, index: int | None, content: Content
) -> dict[str, AttributeValue]:
    """Small, non-sensitive attributes (content only when capture is on)."""
    attributes: dict[str, AttributeValue] = _BUILDERS.get(event.type, _none)(event)
    if index is not None:
        attributes[VALUE_INDEX] = index
        if content.capture:
            attributes[VALUE] = content.dump(event["value"])
    elif content.capture and event.type in _ABOUT:
        # The dump stops at the content limit, however many items there are.
        attributes[CONTEXT_CONTENT] = content.dump(event[_ABOUT[event.type]])
    return attributes


def call_arguments(args: tuple[Any, ...], kwargs: Mapping[str, Any], content: Content) -> str:
    return content.dump({"args": list(args), **kwargs} if args else dict(kwargs))
