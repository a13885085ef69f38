"""The span builder: every span, its attributes and its events, in one place.

The names themselves (span, event and attribute names, following the OpenTelemetry
GenAI semantic conventions where they apply) are declared in ``_names``, which the
listener reads too. Every piece of user text (agent and tool names, descriptions, tags,
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
    ContextItem,
    ContextPool,
    ContextPoolHook,
    ContextQueue,
    ContextQueueHook,
    DecoratedTool,
    Event,
    HookType,
    Injectable,
    StopReason,
    ToolHook,
    ToolType,
    Turn,
    TurnHook,
)
from pygents_otel import _names as n
from pygents_otel._dump import dump
from pygents_otel._text import TEXT_LIMIT, bounded

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
    return {n.TAGS: [bounded(tag) for tag in sorted(found)[:MAX_TAGS]]} if found else {}


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
    return {n.AGENT_NAME: bounded(agent.name), n.AGENT_ID: agent.uuid}


def agent_span(agent: Agent) -> tuple[str, dict[str, AttributeValue]]:
    # No ``gen_ai.provider.name``: it names the model's provider, and a GenAI viewer
    # shows it as the model system (pygents is none). A tool that calls a model says
    # which provider it called.
    attributes: dict[str, AttributeValue] = {
        n.OPERATION: n.INVOKE_AGENT,
        n.OI_SPAN_KIND: n.OI_AGENT,
        **of_agent(agent),
        **tags(agent),
    }
    if agent.description:
        attributes[n.AGENT_DESCRIPTION] = bounded(agent.description, TEXT_LIMIT)
    return f"{n.INVOKE_AGENT} {bounded(agent.name)}", attributes


def turn_span(turn: Turn, agent: Agent | None = None) -> tuple[str, dict[str, AttributeValue]]:
    name = bounded(turn.tool.name)
    attributes: dict[str, AttributeValue] = {
        n.TURN_UUID: turn.uuid,
        n.TURN_TIMEOUT: float(turn.timeout),
        # A step of the agent's work: neither a tool nor a model call (the tool span
        # below it is the tool), so a GenAI viewer shows it as a chain, not UNKNOWN.
        n.OI_SPAN_KIND: n.OI_CHAIN,
        n.PYGENTS_TOOL: name,
        **of_agent(agent),
        **of_conversation(turn),
        **tags(turn),
    }
    return f"{n.TURN_SPAN_PREFIX}{name}", attributes


CONVERSATION: Final = "conversation_id"
"""The key of `Turn.metadata` naming the conversation (a user's session) the turn
belongs to: ``gen_ai.conversation.id`` on its turn and tool spans and on the run that
takes it, so a viewer can follow one session across runs."""


def of_conversation(turn: Turn | None) -> dict[str, AttributeValue]:
    found = turn.metadata.get(CONVERSATION) if turn is not None else None
    return {n.CONVERSATION_ID: bounded(found)} if isinstance(found, str) and found else {}


CALL_ID: Final = "tool_call_id"
"""The key of `Turn.metadata` under which a caller keeps the model's id for the call
the turn answers: it becomes ``gen_ai.tool.call.id`` (the turn's own uuid is on its
turn span, the tool span's parent)."""


def tool_span(
    tool: DecoratedTool[..., Any], turn: Turn | None, agent: Agent | None = None
) -> tuple[str, dict[str, AttributeValue]]:
    name = bounded(tool.name)
    attributes: dict[str, AttributeValue] = {
        n.OPERATION: n.EXECUTE_TOOL,
        n.OI_SPAN_KIND: n.OI_TOOL,
        n.TOOL_NAME: name,
        n.TOOL_TYPE: "function",
        **of_agent(agent),
        **of_conversation(turn),
        **tags(tool),
    }
    if tool.metadata.description:
        attributes[n.TOOL_DESCRIPTION] = bounded(tool.metadata.description, TEXT_LIMIT)
    call_id = turn.metadata.get(CALL_ID) if turn is not None else None
    if isinstance(call_id, str) and call_id:
        attributes[n.TOOL_CALL_ID] = bounded(call_id)
    return f"{n.EXECUTE_TOOL} {name}", attributes


def end_attributes(
    kind: str, stop_reason: StopReason | None, error: BaseException | None
) -> dict[str, AttributeValue]:
    """``kind`` is the scope kind's value: ``agent_run``, ``turn`` or ``tool``."""
    attributes: dict[str, AttributeValue] = {}
    if stop_reason is not None:
        attributes[n.STOP_REASONS[kind]] = stop_reason.value
    if stop_reason is StopReason.TIMEOUT:
        attributes[n.ERROR_TYPE] = "TurnTimeoutError"
    elif isinstance(error, Exception):
        attributes[n.ERROR_TYPE] = error_type(error)
    return attributes


def output_kind(turn: Turn, agent: Agent | None, reason: StopReason | None) -> str | None:
    """What a completed turn that does not stream returned, when it is no value its
    run hands to the caller (`n.OUTPUT_KIND`): a ``Turn`` or a ``ContextItem`` that its
    agent's run routes, or a completion check's verdict. ``None`` for a value, and for
    any other turn (a stream's values are counted one by one)."""
    if reason is not StopReason.COMPLETED or turn.tool.streaming:
        return None
    if turn.tool.type is ToolType.COMPLETION_CHECK:
        return "verdict"
    if agent is None:  # a bare turn's output is its caller's, whatever it is
        return None
    output = turn.output
    if isinstance(output, Turn):
        return "turn"
    return "context_item" if isinstance(output, ContextItem) else None


# -- events ------------------------------------------------------------------------------


def _none(event: Event) -> dict[str, AttributeValue]:
    return {}


def _stop(event: Event) -> dict[str, AttributeValue]:
    return {n.TURN_STOP_REASON: event["stop_reason"].value}


def _turn_error(event: Event) -> dict[str, AttributeValue]:
    return {n.ERROR_TYPE: error_type(event["exception"])}


def _tool_error(event: Event) -> dict[str, AttributeValue]:
    return {n.ERROR_TYPE: error_type(event["exc"])}


def _queued(event: Event) -> dict[str, AttributeValue]:
    agent: Agent = event["agent"]
    attributes: dict[str, AttributeValue] = {
        n.AGENT_NAME: bounded(agent.name),
        n.QUEUE_DEPTH: agent.queue_depth,
    }
    turn: Turn | None = event.get("turn")  # BEFORE_TURN has none yet
    if turn is not None:
        attributes[n.TURN_UUID] = turn.uuid
        attributes[n.PYGENTS_TOOL] = bounded(turn.tool.name)
    return attributes


def _turn_of_agent(event: Event) -> dict[str, AttributeValue]:
    turn: Turn = event["turn"]
    return {n.TURN_UUID: turn.uuid, n.PYGENTS_TOOL: bounded(turn.tool.name)}


def _agent_error(event: Event) -> dict[str, AttributeValue]:
    attributes = _turn_of_agent(event)
    attributes[n.ERROR_TYPE] = error_type(event["exception"])
    return attributes


def _store(event: Event) -> dict[str, AttributeValue]:
    store = event.source
    assert isinstance(store, (ContextQueue, ContextPool))
    attributes: dict[str, AttributeValue] = {n.CONTEXT_SIZE: len(store)}
    item_id = getattr(event.get("item"), "id", None)
    if isinstance(item_id, str):
        attributes[n.ITEM_ID] = bounded(item_id)
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


def event_attributes(
    event: Event, index: int | None, content: Content
) -> dict[str, AttributeValue]:
    """Small, non-sensitive attributes (content only when capture is on)."""
    attributes: dict[str, AttributeValue] = _BUILDERS.get(event.type, _none)(event)
    if index is not None:
        attributes[n.VALUE_INDEX] = index
        if content.capture:
            attributes[n.VALUE] = content.dump(event["value"])
    elif content.capture and event.type in _ABOUT:
        # The dump stops at the content limit, however many items there are.
        attributes[n.CONTEXT_CONTENT] = content.dump(event[_ABOUT[event.type]])
    return attributes


JSON: Final = "application/json"


TEXT: Final = "text/plain"


def io_attributes(
    key: str, mime_key: str, text: str, mime: str = JSON
) -> dict[str, AttributeValue]:
    """OpenInference's ``input.value``/``output.value`` with its mime type: what
    Phoenix shows as a span's input and output (content capture only)."""
    return {key: text, mime_key: mime}


RUN_INPUT: Final = "run_input"
"""The key of `Turn.metadata` under which a caller names what started the work the
turn is part of (a user's message, say): the input of the agent run that takes the
turn first, as a viewer shows it, instead of the turn's own call."""


def run_input(turn: Turn, content: Content) -> dict[str, AttributeValue]:
    """An agent run's input, as a viewer shows it: the ``run_input`` its first turn
    carries, as plain text, or else that turn's call (its tool and arguments)."""
    given = turn.metadata.get(RUN_INPUT)
    if isinstance(given, str):
        text = bounded(given, content.max_length)
        return io_attributes(n.OI_INPUT, n.OI_INPUT_MIME, text, TEXT)
    call = content.dump({"tool": turn.tool.name, "arguments": dict(turn.kwargs)})
    return io_attributes(n.OI_INPUT, n.OI_INPUT_MIME, call)


def call_arguments(args: tuple[Any, ...], kwargs: Mapping[str, Any], content: Content) -> str:
    """The arguments the caller gave, as JSON: the ones pygents injected (a context
    queue or pool, a subclass of one such as a conversation) are the agent's, not the
    call's, and stay out."""
    given = [value for value in args if not isinstance(value, Injectable)]
    named = {key: value for key, value in kwargs.items() if not isinstance(value, Injectable)}
    return content.dump({"args": given, **named} if given else named)
