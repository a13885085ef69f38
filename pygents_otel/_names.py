"""Every telemetry name pygents sends or reads, declared once.

The span builder, the live records, the metrics and ``configure()``'s resource write
these names; ``pygents-tui listen`` reads them back from what arrives over OTLP. Both
sides import this one module, so a name cannot drift between sender and reader.

It needs nothing beyond the standard library and the core's enums: the ``listen``
extra does not install the OpenTelemetry SDK, and importing this module (and so the
package ``pygents_otel``, whose public API loads lazily) must not import it either.

Names follow the OpenTelemetry semantic conventions (resource, GenAI agent and tool
spans, ``error.type``); what they do not cover is namespaced ``pygents.*``. Event and
record names are built by one rule, ``pygents.<object>.<event>``, from the core's hook
enums, so a new hook event is named without touching this file.
"""

from __future__ import annotations

from typing import Final

from pygents import (
    AgentHook,
    ContextPoolHook,
    ContextQueueHook,
    HookType,
    ScopeKind,
    ToolHook,
    TurnHook,
)

SCHEMA_URL: Final = "https://opentelemetry.io/schemas/1.37.0"
LOGGER_NAME: Final = "pygents_otel.live"
"""The instrumentation scope of the live records (a collector can route on it)."""

# -- resource ------------------------------------------------------------------------------
SERVICE_NAME: Final = "service.name"
SERVICE_INSTANCE: Final = "service.instance.id"
HOST_NAME: Final = "host.name"
PROCESS_PID: Final = "process.pid"
PROCESS_CREATION_TIME: Final = "process.creation.time"  # ISO 8601: tells restarts apart
UNKNOWN_SERVICE: Final = "unknown_service"
"""The SDK's service name for a sender that sets none (the listener groups those)."""

# -- GenAI semantic conventions --------------------------------------------------------------
OPERATION: Final = "gen_ai.operation.name"
PROVIDER: Final = "gen_ai.provider.name"
AGENT_NAME: Final = "gen_ai.agent.name"
AGENT_DESCRIPTION: Final = "gen_ai.agent.description"
AGENT_ID: Final = "gen_ai.agent.id"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
TOOL_TYPE: Final = "gen_ai.tool.type"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
CONVERSATION_ID: Final = "gen_ai.conversation.id"
TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
ERROR_TYPE: Final = "error.type"
EVENT_NAME: Final = "event.name"
"""The attribute older back ends read an event's name from (set besides ``event_name``)."""

# -- span names and operations ---------------------------------------------------------------
INVOKE_AGENT: Final = "invoke_agent"
EXECUTE_TOOL: Final = "execute_tool"
TURN_SPAN_PREFIX: Final = "turn "  # a turn span is "turn <tool>" (no GenAI operation)

# -- OpenInference, for the viewers that read it (Phoenix, and others) -----------------------
# A span without its kind shows as UNKNOWN there; input and output show only from these.
OI_SPAN_KIND: Final = "openinference.span.kind"
OI_AGENT: Final = "AGENT"
OI_CHAIN: Final = "CHAIN"  # a turn: one step of an agent's work, neither a tool nor a model
OI_TOOL: Final = "TOOL"
OI_INPUT: Final = "input.value"
OI_INPUT_MIME: Final = "input.mime_type"
OI_OUTPUT: Final = "output.value"
OI_OUTPUT_MIME: Final = "output.mime_type"

# -- pygents' own attributes, on spans and records -------------------------------------------
TAGS: Final = "pygents.tags"
TURN_UUID: Final = "pygents.turn.uuid"
TURN_TIMEOUT: Final = "pygents.turn.timeout"
TURN_STOP_REASON: Final = "pygents.turn.stop_reason"
AGENT_STOP_REASON: Final = "pygents.agent.stop_reason"  # on the agent-run span
TOOL_STOP_REASON: Final = "pygents.tool.stop_reason"
STOP_REASONS: Final[dict[str, str]] = {
    ScopeKind.AGENT_RUN.value: AGENT_STOP_REASON,
    ScopeKind.TURN.value: TURN_STOP_REASON,
    ScopeKind.TOOL.value: TOOL_STOP_REASON,
}
"""The stop-reason attribute of each kind of scope, by the kind's value."""
DROPPED_EVENTS: Final = "pygents.events.dropped"
SPAN_VALUES: Final = "pygents.values"  # the turn span's exact count of streamed values
# What a completed turn that does not stream returned, when it was no value for its
# run's caller: "turn" (queued) or "context_item" (stored), which its agent's run
# routes, or "verdict" (a completion check's). On its span and its end record; absent
# when it returned a value.
OUTPUT_KIND: Final = "pygents.turn.output_kind"
VALUE_INDEX: Final = "pygents.value.index"
VALUE: Final = "pygents.value"
QUEUE_DEPTH: Final = "pygents.agent.queue.depth"  # also the name of its gauge
ITEM_ID: Final = "pygents.context.item.id"
CONTEXT_CONTENT: Final = "pygents.context.content"
CONTEXT_SIZE: Final = "pygents.context.size"
CONTEXT_LIMIT: Final = "pygents.context.limit"  # records, and the context gauges
PYGENTS_TOOL: Final = "pygents.tool.name"
LINK_TYPE: Final = "pygents.link.type"
QUEUED_FROM: Final = "queued_from"  # LINK_TYPE of a turn's link to where it was queued

# Live records only.
TURN_STREAMING: Final = "pygents.turn.streaming"
TURN_VALUES: Final = "pygents.turn.values"  # values streamed so far (at the end: all)
ARGS_PREVIEW: Final = "pygents.turn.args_preview"
OUTPUT_PREVIEW: Final = "pygents.turn.output_preview"
VALUE_PREVIEW: Final = "pygents.value.preview"
RUN_STOP_REASON: Final = "pygents.stop_reason"  # on the agent_run.end record
AGENT_STATE: Final = "pygents.agent.state"
PAUSED: Final = "pygents.agent.paused"
CURRENT_TURN: Final = "pygents.agent.current_turn.uuid"
TURN_STARTED: Final = "pygents.turn.start_time_unix_nano"  # a snapshot's current turn
ITEM_DESCRIPTION: Final = "pygents.context.item.description"
# The snapshot's context sizes and limits, one pair per store.
QUEUE_SIZE: Final = "pygents.context_queue.size"
QUEUE_LIMIT: Final = "pygents.context_queue.limit"
POOL_SIZE: Final = "pygents.context_pool.size"
POOL_LIMIT: Final = "pygents.context_pool.limit"
PROCESS_AGENTS: Final = "pygents.process.agents"
# A snapshot's waiting turns and context items, as parallel arrays (index i of each
# array describes the same turn or item): OTLP attributes hold arrays of one primitive
# type only, so a list of records is sent as one array per field. Each list holds at
# most SNAPSHOT_ITEMS entries and its ``.more`` count says how many were left out.
SNAPSHOT_ITEMS: Final = 50
"""Entries of each list a snapshot carries (waiting turns, queue items, pool items)."""
QUEUED_TOOLS: Final = "pygents.agent.queue.tools"
QUEUED_UUIDS: Final = "pygents.agent.queue.uuids"
QUEUED_TIMEOUTS: Final = "pygents.agent.queue.timeouts"  # seconds, floats
QUEUED_ARGUMENTS: Final = "pygents.agent.queue.arguments"  # content capture only
QUEUED_MORE: Final = "pygents.agent.queue.more"  # waiting turns after the ones listed
QUEUE_ITEM_IDS: Final = "pygents.context_queue.item.ids"  # "" for an item without an id
QUEUE_ITEM_DESCRIPTIONS: Final = "pygents.context_queue.item.descriptions"  # "" for none
QUEUE_ITEM_CONTENTS: Final = "pygents.context_queue.item.contents"  # content capture only
QUEUE_ITEMS_MORE: Final = "pygents.context_queue.item.more"  # older items not listed
POOL_ITEM_IDS: Final = "pygents.context_pool.item.ids"
POOL_ITEM_DESCRIPTIONS: Final = "pygents.context_pool.item.descriptions"
POOL_ITEM_CONTENTS: Final = "pygents.context_pool.item.contents"  # content capture only
POOL_ITEMS_MORE: Final = "pygents.context_pool.item.more"  # older items not listed

# -- span-event and record names: pygents.<object>.<event> -----------------------------------
_OBJECT: Final[dict[type, str]] = {
    TurnHook: "turn",
    ToolHook: "tool",
    AgentHook: "agent",
    ContextQueueHook: "context_queue",
    ContextPoolHook: "context_pool",
}


def _prefix(about: str) -> str:
    return f"pygents.{about}."


EVENT_NAMES: Final[dict[HookType, str]] = {
    member: _prefix(_OBJECT[enum]) + member.value
    for enum in _OBJECT
    for member in enum  # type: ignore[attr-defined]
}
"""The span event (and, for the ones live mode sends, the record) of each hook event."""
START: Final[dict[ScopeKind, str]] = {kind: _prefix(kind.value) + "start" for kind in ScopeKind}
END: Final[dict[ScopeKind, str]] = {kind: _prefix(kind.value) + "end" for kind in ScopeKind}
SNAPSHOT: Final = _prefix("agent") + "snapshot"
HEARTBEAT: Final = _prefix("process") + "heartbeat"
GOODBYE: Final = _prefix("process") + "goodbye"
"""Live mode's last record, sent when it is closed normally (shutdown, uninstrument):
a listener then knows the process ended, rather than that it went quiet."""
CONTEXT_QUEUE_PREFIX: Final = _prefix(_OBJECT[ContextQueueHook])
CONTEXT_POOL_PREFIX: Final = _prefix(_OBJECT[ContextPoolHook])

# The records the listener tells apart, by the name they arrive under.
RUN_START: Final = START[ScopeKind.AGENT_RUN]
RUN_END: Final = END[ScopeKind.AGENT_RUN]
TURN_START: Final = START[ScopeKind.TURN]
TURN_END: Final = END[ScopeKind.TURN]
TOOL_START: Final = START[ScopeKind.TOOL]
TOOL_END: Final = END[ScopeKind.TOOL]
TURN_VALUE: Final = EVENT_NAMES[TurnHook.ON_VALUE]
AFTER_PUT: Final = EVENT_NAMES[AgentHook.AFTER_PUT]
BEFORE_TURN: Final = EVENT_NAMES[AgentHook.BEFORE_TURN]
ON_PAUSE: Final = EVENT_NAMES[AgentHook.ON_PAUSE]
ON_RESUME: Final = EVENT_NAMES[AgentHook.ON_RESUME]
ON_TURN_ERROR: Final = EVENT_NAMES[AgentHook.ON_TURN_ERROR]
ON_TURN_TIMEOUT: Final = EVENT_NAMES[AgentHook.ON_TURN_TIMEOUT]

# -- metric instruments ----------------------------------------------------------------------
AGENT_DURATION: Final = "gen_ai.invoke_agent.duration"
TOOL_DURATION: Final = "gen_ai.execute_tool.duration"
TURNS: Final = "pygents.turns"
TURN_DURATION: Final = "pygents.turn.duration"
TOOL_VALUES: Final = "pygents.tool.values"
CONTEXT_QUEUE_GAUGE: Final = "pygents.context.queue.size"
CONTEXT_POOL_GAUGE: Final = "pygents.context.pool.size"
MAILBOX_DEPTH: Final = "pygents.mailbox.depth"
MAILBOX_PENDING: Final = "pygents.mailbox.pending"
MAILBOX_WORKERS: Final = "pygents.mailbox.workers"
MAILBOX_DEAD_LETTERS: Final = "pygents.mailbox.dead_letters"

__all__ = [
    "AFTER_PUT",
    "AGENT_DESCRIPTION",
    "AGENT_DURATION",
    "AGENT_ID",
    "AGENT_NAME",
    "AGENT_STATE",
    "AGENT_STOP_REASON",
    "ARGS_PREVIEW",
    "BEFORE_TURN",
    "CONTEXT_CONTENT",
    "CONTEXT_LIMIT",
    "CONTEXT_POOL_GAUGE",
    "CONTEXT_POOL_PREFIX",
    "CONTEXT_QUEUE_GAUGE",
    "CONTEXT_QUEUE_PREFIX",
    "CONTEXT_SIZE",
    "CONVERSATION_ID",
    "CURRENT_TURN",
    "DROPPED_EVENTS",
    "END",
    "ERROR_TYPE",
    "EVENT_NAME",
    "EVENT_NAMES",
    "EXECUTE_TOOL",
    "GOODBYE",
    "HEARTBEAT",
    "HOST_NAME",
    "INVOKE_AGENT",
    "ITEM_DESCRIPTION",
    "ITEM_ID",
    "LINK_TYPE",
    "LOGGER_NAME",
    "MAILBOX_DEAD_LETTERS",
    "MAILBOX_DEPTH",
    "MAILBOX_PENDING",
    "MAILBOX_WORKERS",
    "OI_AGENT",
    "OI_CHAIN",
    "OI_INPUT",
    "OI_INPUT_MIME",
    "OI_OUTPUT",
    "OI_OUTPUT_MIME",
    "OI_SPAN_KIND",
    "OI_TOOL",
    "ON_PAUSE",
    "ON_RESUME",
    "ON_TURN_ERROR",
    "ON_TURN_TIMEOUT",
    "OPERATION",
    "OUTPUT_KIND",
    "OUTPUT_PREVIEW",
    "PAUSED",
    "POOL_ITEMS_MORE",
    "POOL_ITEM_CONTENTS",
    "POOL_ITEM_DESCRIPTIONS",
    "POOL_ITEM_IDS",
    "POOL_LIMIT",
    "POOL_SIZE",
    "PROCESS_AGENTS",
    "PROCESS_CREATION_TIME",
    "PROCESS_PID",
    "PROVIDER",
    "PYGENTS_TOOL",
    "QUEUED_ARGUMENTS",
    "QUEUED_FROM",
    "QUEUED_MORE",
    "QUEUED_TIMEOUTS",
    "QUEUED_TOOLS",
    "QUEUED_UUIDS",
    "QUEUE_DEPTH",
    "QUEUE_ITEMS_MORE",
    "QUEUE_ITEM_CONTENTS",
    "QUEUE_ITEM_DESCRIPTIONS",
    "QUEUE_ITEM_IDS",
    "QUEUE_LIMIT",
    "QUEUE_SIZE",
    "RUN_END",
    "RUN_START",
    "RUN_STOP_REASON",
    "SCHEMA_URL",
    "SERVICE_INSTANCE",
    "SERVICE_NAME",
    "SNAPSHOT",
    "SNAPSHOT_ITEMS",
    "SPAN_VALUES",
    "START",
    "STOP_REASONS",
    "TAGS",
    "TOOL_CALL_ARGUMENTS",
    "TOOL_CALL_ID",
    "TOOL_CALL_RESULT",
    "TOOL_DESCRIPTION",
    "TOOL_DURATION",
    "TOOL_END",
    "TOOL_NAME",
    "TOOL_START",
    "TOOL_STOP_REASON",
    "TOOL_TYPE",
    "TOOL_VALUES",
    "TURNS",
    "TURN_DURATION",
    "TURN_END",
    "TURN_SPAN_PREFIX",
    "TURN_START",
    "TURN_STARTED",
    "TURN_STOP_REASON",
    "TURN_STREAMING",
    "TURN_TIMEOUT",
    "TURN_UUID",
    "TURN_VALUE",
    "TURN_VALUES",
    "UNKNOWN_SERVICE",
    "VALUE",
    "VALUE_INDEX",
    "VALUE_PREVIEW",
]
