"""The record builder: the name and attributes of every live record, in one place.

Live mode sends OpenTelemetry log records with an event name while things run (see
``_live``). Their names are the span-event names of ``_spans`` (``pygents.<object>.
<event>``), plus the start and end of each scope and the periodic snapshots; their
attributes reuse the span builder's keys wherever the meaning is the same, so a
back end that understands the spans understands the records. Everything the user
wrote goes through ``bounded`` (names, tags, ids) or the content budget (previews,
and only with content capture on), exactly as on spans.

``pygents-tui listen`` reads these names (its ``pygents_tui.listen.schema``); a test
keeps the two in step.
"""

from __future__ import annotations

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
    ScopeKind,
    StopReason,
    Turn,
    TurnHook,
)
from pygents_otel import _spans as s
from pygents_otel._text import bounded

LOGGER_NAME: Final = "pygents_otel.live"
"""The instrumentation scope of the records (a collector can route on it)."""

EVENT_NAME: Final = "event.name"
"""The attribute older back ends read an event's name from (set besides ``event_name``)."""

# -- names ---------------------------------------------------------------------------------

START: Final[dict[ScopeKind, str]] = {kind: f"pygents.{kind.value}.start" for kind in ScopeKind}
END: Final[dict[ScopeKind, str]] = {kind: f"pygents.{kind.value}.end" for kind in ScopeKind}
SNAPSHOT: Final = "pygents.agent.snapshot"
HEARTBEAT: Final = "pygents.process.heartbeat"

AGENT_EVENTS: Final[frozenset[HookType]] = frozenset(
    (
        AgentHook.AFTER_PUT,
        AgentHook.BEFORE_TURN,
        AgentHook.ON_PAUSE,
        AgentHook.ON_RESUME,
        AgentHook.ON_TURN_ERROR,
        AgentHook.ON_TURN_TIMEOUT,
    )
)
# What changed a store: its "before" events would only repeat the size it had.
CONTEXT_EVENTS: Final[frozenset[HookType]] = frozenset(
    (
        ContextQueueHook.AFTER_APPEND,
        ContextQueueHook.AFTER_CLEAR,
        ContextQueueHook.ON_EVICT,
        ContextPoolHook.AFTER_ADD,
        ContextPoolHook.AFTER_REMOVE,
        ContextPoolHook.AFTER_CLEAR,
        ContextPoolHook.ON_EVICT,
    )
)
# The argument holding what a context event added or removed (a clear has none).
_CONTENT_OF: Final[dict[HookType, str]] = {
    ContextQueueHook.AFTER_APPEND: "appended_items",
    ContextQueueHook.ON_EVICT: "item",
    ContextPoolHook.AFTER_ADD: "item",
    ContextPoolHook.AFTER_REMOVE: "item",
    ContextPoolHook.ON_EVICT: "item",
}
VALUE_EVENT: Final = TurnHook.ON_VALUE
EVENTS: Final[frozenset[HookType]] = AGENT_EVENTS | CONTEXT_EVENTS | {VALUE_EVENT}
"""Every hook event live mode sends a record for (``s.EVENT_NAMES`` names them)."""

NAMES: Final[frozenset[str]] = frozenset(
    (*START.values(), *END.values(), SNAPSHOT, HEARTBEAT, *(s.EVENT_NAMES[e] for e in EVENTS))
)
"""Every record name live mode sends."""

# -- attributes beyond the span builder's ----------------------------------------------------

TURN_STREAMING: Final = "pygents.turn.streaming"
TURN_VALUES: Final = "pygents.turn.values"  # values streamed so far (at the end: all)
ARGS_PREVIEW: Final = "pygents.turn.args_preview"
OUTPUT_PREVIEW: Final = "pygents.turn.output_preview"
VALUE_PREVIEW: Final = "pygents.value.preview"
RUN_STOP_REASON: Final = "pygents.stop_reason"
TOOL_STOP_REASON: Final = s.STOP_REASONS["tool"]
AGENT_STATE: Final = "pygents.agent.state"
PAUSED: Final = "pygents.agent.paused"
CURRENT_TURN: Final = "pygents.agent.current_turn.uuid"
TURN_STARTED: Final = "pygents.turn.start_time_unix_nano"  # snapshots: the current turn's
CONTEXT_LIMIT: Final = "pygents.context.limit"
ITEM_DESCRIPTION: Final = "pygents.context.item.description"
QUEUE_SIZE: Final = "pygents.context_queue.size"
QUEUE_LIMIT: Final = "pygents.context_queue.limit"
POOL_SIZE: Final = "pygents.context_pool.size"
POOL_LIMIT: Final = "pygents.context_pool.limit"
PROCESS_AGENTS: Final = "pygents.process.agents"

Attributes = dict[str, AttributeValue]


def _ended(attributes: Attributes, key: str, reason: StopReason | None, error: object) -> None:
    if reason is not None:
        attributes[key] = reason.value
    if reason is StopReason.TIMEOUT:
        attributes[s.ERROR_TYPE] = "TurnTimeoutError"
    elif isinstance(error, Exception):
        attributes[s.ERROR_TYPE] = s.error_type(error)


# -- scopes ----------------------------------------------------------------------------------


def run_start(agent: Agent) -> Attributes:
    attributes = s.of_agent(agent)
    attributes[s.QUEUE_DEPTH] = agent.queue_depth
    return attributes


def run_end(agent: Agent, reason: StopReason | None, error: object) -> Attributes:
    attributes = s.of_agent(agent)
    _ended(attributes, RUN_STOP_REASON, reason, error)
    return attributes


def turn_start(turn: Turn, agent: Agent | None, content: s.Content) -> Attributes:
    """The turn, its timeout, and the agent's queue depth now that the turn has left
    the queue (``before_turn`` is sent while it is still in it)."""
    attributes = s.of_agent(agent)
    if agent is not None:
        attributes[s.QUEUE_DEPTH] = agent.queue_depth
    attributes[s.TURN_UUID] = turn.uuid
    attributes[s.TOOL_NAME] = bounded(turn.tool.name)
    attributes[s.TURN_TIMEOUT] = float(turn.timeout)
    attributes[TURN_STREAMING] = turn.tool.streaming
    attributes.update(s.tags(turn))
    if content.capture:
        attributes[ARGS_PREVIEW] = s.call_arguments(turn.args, turn.kwargs, content)
    return attributes


def turn_end(
    turn: Turn,
    agent: Agent | None,
    reason: StopReason | None,
    error: object,
    values: int,
    content: s.Content,
) -> Attributes:
    attributes = s.of_agent(agent)
    attributes[s.TURN_UUID] = turn.uuid
    attributes[s.TOOL_NAME] = bounded(turn.tool.name)
    attributes[TURN_VALUES] = values
    _ended(attributes, s.STOP_REASON, reason, error)
    if content.capture and reason is StopReason.COMPLETED:
        attributes[OUTPUT_PREVIEW] = content.dump(turn.output)
    return attributes


def tool_start(tool: DecoratedTool[..., Any], turn: Turn | None, agent: Agent | None) -> Attributes:
    attributes = s.of_agent(agent)
    attributes[s.TOOL_NAME] = bounded(tool.name)
    if turn is not None:
        attributes[s.TURN_UUID] = turn.uuid
    return attributes


def tool_end(
    tool: DecoratedTool[..., Any],
    turn: Turn | None,
    agent: Agent | None,
    reason: StopReason | None,
    error: object,
) -> Attributes:
    attributes = tool_start(tool, turn, agent)
    _ended(attributes, TOOL_STOP_REASON, reason, error)
    return attributes


# -- events ----------------------------------------------------------------------------------


def value(turn: Turn, agent: Agent | None, count: int, content: s.Content, item: Any) -> Attributes:
    """A streamed value: the running count, and a preview only with capture on."""
    attributes = s.of_agent(agent)
    attributes[s.TURN_UUID] = turn.uuid
    attributes[s.TOOL_NAME] = bounded(turn.tool.name)
    attributes[TURN_VALUES] = count
    if content.capture:
        attributes[VALUE_PREVIEW] = content.dump(item)
    return attributes


def agent_event(event: Event) -> Attributes:
    """A hook event of an agent (puts, pauses, turn errors): depth and pause state."""
    agent: Agent = event["agent"]
    attributes = s.of_agent(agent)
    attributes[s.QUEUE_DEPTH] = agent.queue_depth
    attributes[PAUSED] = agent.is_paused
    turn: Turn | None = event.get("turn")  # BEFORE_TURN, pauses: none
    if turn is not None:
        attributes[s.TURN_UUID] = turn.uuid
        attributes[s.TOOL_NAME] = bounded(turn.tool.name)
    if event.type is AgentHook.ON_TURN_ERROR:
        attributes[s.ERROR_TYPE] = s.error_type(event["exception"])
    elif event.type is AgentHook.ON_TURN_TIMEOUT:
        attributes[s.ERROR_TYPE] = "TurnTimeoutError"
    return attributes


def _limit(store: ContextQueue[Any] | ContextPool[Any]) -> Attributes:
    return {} if store.limit is None else {CONTEXT_LIMIT: store.limit}


def context_event(event: Event, agent: Agent, content: s.Content) -> Attributes:
    """A change to one of ``agent``'s context stores: its size against its limit, the
    item's id and description, and its content only with capture on."""
    store = event.source
    assert isinstance(store, (ContextQueue, ContextPool))
    attributes = s.of_agent(agent)
    attributes[s.STORE_SIZE] = len(store)
    attributes.update(_limit(store))
    item = event.get("item")
    item_id = getattr(item, "id", None)
    if isinstance(item_id, str):
        attributes[s.ITEM_ID] = bounded(item_id)
    description = getattr(item, "description", None)
    if isinstance(description, str):
        attributes[ITEM_DESCRIPTION] = bounded(description)
    about = _CONTENT_OF.get(event.type)
    if content.capture and about is not None:
        attributes[s.CONTEXT_CONTENT] = content.dump(event[about])
    return attributes


# -- snapshots -------------------------------------------------------------------------------


def snapshot(agent: Agent) -> Attributes:
    """An agent's whole live state, read without changing anything (and from another
    thread: every read is of one attribute or a length)."""
    attributes = s.of_agent(agent)
    paused = agent.is_paused
    current = agent.current_turn
    state = "paused" if paused else "running" if agent.is_running else "idle"
    attributes[AGENT_STATE] = state
    attributes[PAUSED] = paused
    attributes[s.QUEUE_DEPTH] = agent.queue_depth
    queue, pool = agent.context_queue, agent.context_pool
    attributes[QUEUE_SIZE] = len(queue)
    if queue.limit is not None:
        attributes[QUEUE_LIMIT] = queue.limit
    attributes[POOL_SIZE] = len(pool)
    if pool.limit is not None:
        attributes[POOL_LIMIT] = pool.limit
    if current is not None:
        # What a listener that missed the turn's start needs to show it running.
        attributes[CURRENT_TURN] = attributes[s.TURN_UUID] = current.uuid
        attributes[s.TOOL_NAME] = bounded(current.tool.name)
        attributes[s.TURN_TIMEOUT] = float(current.timeout)
        started = current.start_time
        if started is not None:
            attributes[TURN_STARTED] = int(started.timestamp() * 1e9)
    return attributes


def heartbeat(agents: int) -> Attributes:
    return {PROCESS_AGENTS: agents}
