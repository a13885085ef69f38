"""The names the listener understands: resource attributes, span attributes and the
live log records (OTel events) that ``pygents_otel`` sends while things run.

Declared once here so the fleet model and its tests agree on them; they mirror the
span builder of ``pygents_otel`` and the records of its live mode. A sender that
sends something else is simply not understood, never an error.
"""

from __future__ import annotations

from typing import Final

# Resource.
SERVICE_NAME: Final = "service.name"
SERVICE_INSTANCE: Final = "service.instance.id"
HOST_NAME: Final = "host.name"
PROCESS_PID: Final = "process.pid"
PROCESS_CREATION_TIME: Final = "process.creation.time"  # ISO 8601: tells restarts apart
UNKNOWN_SERVICE: Final = "unknown_service"

# Attributes (common to records, and on pygents' spans).
EVENT_NAME: Final = "event.name"  # the attribute older senders use for an event's name
AGENT_NAME: Final = "gen_ai.agent.name"
AGENT_ID: Final = "gen_ai.agent.id"
OPERATION: Final = "gen_ai.operation.name"
TOOL_NAME: Final = "gen_ai.tool.name"
PYGENTS_TOOL: Final = "pygents.tool.name"
ERROR_TYPE: Final = "error.type"
TAGS: Final = "pygents.tags"
TURN_UUID: Final = "pygents.turn.uuid"
TURN_TIMEOUT: Final = "pygents.turn.timeout"
TURN_STREAMING: Final = "pygents.turn.streaming"
TURN_STOP_REASON: Final = "pygents.turn.stop_reason"
TURN_VALUES: Final = "pygents.turn.values"
SPAN_VALUES: Final = "pygents.values"  # the turn span's exact count of streamed values
ARGS_PREVIEW: Final = "pygents.turn.args_preview"
OUTPUT_PREVIEW: Final = "pygents.turn.output_preview"
VALUE_PREVIEW: Final = "pygents.value.preview"
RUN_STOP_REASON: Final = "pygents.stop_reason"  # on the agent_run.end record
AGENT_STOP_REASON: Final = "pygents.agent.stop_reason"  # on the agent-run span
AGENT_STATE: Final = "pygents.agent.state"
QUEUE_DEPTH: Final = "pygents.agent.queue.depth"
PAUSED: Final = "pygents.agent.paused"
CURRENT_TURN: Final = "pygents.agent.current_turn.uuid"
TURN_STARTED: Final = "pygents.turn.start_time_unix_nano"  # a snapshot's current turn
CONTEXT_SIZE: Final = "pygents.context.size"
CONTEXT_LIMIT: Final = "pygents.context.limit"
ITEM_ID: Final = "pygents.context.item.id"
ITEM_DESCRIPTION: Final = "pygents.context.item.description"
# The snapshot's context sizes and limits, one pair per store.
QUEUE_SIZE: Final = "pygents.context_queue.size"
QUEUE_LIMIT: Final = "pygents.context_queue.limit"
POOL_SIZE: Final = "pygents.context_pool.size"
POOL_LIMIT: Final = "pygents.context_pool.limit"

# Span names and operations.
INVOKE_AGENT: Final = "invoke_agent"
TURN_SPAN_PREFIX: Final = "turn "

# Live record (event) names.
RUN_START: Final = "pygents.agent_run.start"
RUN_END: Final = "pygents.agent_run.end"
TURN_START: Final = "pygents.turn.start"
TURN_END: Final = "pygents.turn.end"
TOOL_START: Final = "pygents.tool.start"
TOOL_END: Final = "pygents.tool.end"
TURN_VALUE: Final = "pygents.turn.on_value"
AFTER_PUT: Final = "pygents.agent.after_put"
BEFORE_TURN: Final = "pygents.agent.before_turn"
ON_PAUSE: Final = "pygents.agent.on_pause"
ON_RESUME: Final = "pygents.agent.on_resume"
ON_TURN_ERROR: Final = "pygents.agent.on_turn_error"
ON_TURN_TIMEOUT: Final = "pygents.agent.on_turn_timeout"
SNAPSHOT: Final = "pygents.agent.snapshot"
HEARTBEAT: Final = "pygents.process.heartbeat"
CONTEXT_QUEUE_PREFIX: Final = "pygents.context_queue."
CONTEXT_POOL_PREFIX: Final = "pygents.context_pool."
