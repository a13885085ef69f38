"""The record builder: which events live mode sends, and every record's attributes.

Live mode sends OpenTelemetry log records with an event name while things run (see
``_live``). Their names are the span-event names (``pygents.<object>.<event>``), plus
the start and end of each scope and the periodic snapshots; their attributes reuse the
span builder's keys wherever the meaning is the same, so a back end that understands
the spans understands the records. All of these names are declared in ``_names``.
Everything the user wrote goes through ``bounded`` (names, tags, ids) or the content
budget (previews, and only with content capture on), exactly as on spans.

``pygents-tui listen`` reads the same ``_names`` module, so sender and reader cannot
disagree on a name.
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
    StopReason,
    Turn,
    TurnHook,
)
from pygents_otel import _names as n
from pygents_otel import _spans as s
from pygents_otel._contents import Contents
from pygents_otel._text import bounded

# -- which events live mode sends ------------------------------------------------------------

# Not BEFORE_TURN: the turn's start record, sent next, carries the same queue depth,
# and each record costs the SDK about 17 µs (the performance page, W4l).
AGENT_EVENTS: Final[frozenset[HookType]] = frozenset(
    (
        AgentHook.AFTER_PUT,
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
"""Every hook event live mode sends a record for (``n.EVENT_NAMES`` names them)."""

NAMES: Final[frozenset[str]] = frozenset(
    (
        *n.START.values(),
        *n.END.values(),
        n.SNAPSHOT,
        n.HEARTBEAT,
        n.GOODBYE,
        *(n.EVENT_NAMES[e] for e in EVENTS),
    )
)
"""Every record name live mode sends."""

Attributes = dict[str, AttributeValue]


def _ended(attributes: Attributes, key: str, reason: StopReason | None, error: object) -> None:
    if reason is not None:
        attributes[key] = reason.value
    if reason is StopReason.TIMEOUT:
        attributes[n.ERROR_TYPE] = "TurnTimeoutError"
    elif isinstance(error, Exception):
        attributes[n.ERROR_TYPE] = s.error_type(error)


# -- scopes ----------------------------------------------------------------------------------


def run_start(agent: Agent) -> Attributes:
    attributes = s.of_agent(agent)
    attributes[n.QUEUE_DEPTH] = agent.queue_depth
    return attributes


def run_end(agent: Agent, reason: StopReason | None, error: object) -> Attributes:
    attributes = s.of_agent(agent)
    _ended(attributes, n.RUN_STOP_REASON, reason, error)
    return attributes


def turn_start(turn: Turn, agent: Agent | None, content: s.Content) -> Attributes:
    """The turn, its timeout, and the agent's queue depth now that the turn has left
    the queue (``before_turn`` is sent while it is still in it)."""
    attributes = s.of_agent(agent)
    if agent is not None:
        attributes[n.QUEUE_DEPTH] = agent.queue_depth
    attributes[n.TURN_UUID] = turn.uuid
    attributes[n.TOOL_NAME] = bounded(turn.tool.name)
    attributes[n.TURN_TIMEOUT] = float(turn.timeout)
    attributes[n.TURN_STREAMING] = turn.tool.streaming
    attributes.update(s.tags(turn))
    if content.capture:
        attributes[n.ARGS_PREVIEW] = s.call_arguments(turn.args, turn.kwargs, content)
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
    attributes[n.TURN_UUID] = turn.uuid
    attributes[n.TOOL_NAME] = bounded(turn.tool.name)
    attributes[n.TURN_VALUES] = values
    _ended(attributes, n.TURN_STOP_REASON, reason, error)
    kind = s.output_kind(turn, agent, reason)
    if kind is not None:
        attributes[n.OUTPUT_KIND] = kind
    if content.capture and reason is StopReason.COMPLETED:
        attributes[n.OUTPUT_PREVIEW] = content.dump(turn.output)
    return attributes


def tool_start(tool: DecoratedTool[..., Any], turn: Turn | None, agent: Agent | None) -> Attributes:
    attributes = s.of_agent(agent)
    attributes[n.TOOL_NAME] = bounded(tool.name)
    if turn is not None:
        attributes[n.TURN_UUID] = turn.uuid
    return attributes


def tool_end(
    tool: DecoratedTool[..., Any],
    turn: Turn | None,
    agent: Agent | None,
    reason: StopReason | None,
    error: object,
) -> Attributes:
    attributes = tool_start(tool, turn, agent)
    _ended(attributes, n.TOOL_STOP_REASON, reason, error)
    return attributes


# -- events ----------------------------------------------------------------------------------


def value(turn: Turn, agent: Agent | None, count: int, content: s.Content, item: Any) -> Attributes:
    """A streamed value: the running count, and a preview only with capture on."""
    attributes = s.of_agent(agent)
    attributes[n.TURN_UUID] = turn.uuid
    attributes[n.TOOL_NAME] = bounded(turn.tool.name)
    attributes[n.TURN_VALUES] = count
    if content.capture:
        attributes[n.VALUE_PREVIEW] = content.dump(item)
    return attributes


def agent_event(event: Event) -> Attributes:
    """A hook event of an agent (puts, pauses, turn errors): depth and pause state."""
    agent: Agent = event["agent"]
    attributes = s.of_agent(agent)
    attributes[n.QUEUE_DEPTH] = agent.queue_depth
    attributes[n.PAUSED] = agent.is_paused
    turn: Turn | None = event.get("turn")  # BEFORE_TURN, pauses: none
    if turn is not None:
        attributes[n.TURN_UUID] = turn.uuid
        attributes[n.TOOL_NAME] = bounded(turn.tool.name)
    if event.type is AgentHook.ON_TURN_ERROR:
        attributes[n.ERROR_TYPE] = s.error_type(event["exception"])
    elif event.type is AgentHook.ON_TURN_TIMEOUT:
        attributes[n.ERROR_TYPE] = "TurnTimeoutError"
    return attributes


def _limit(store: ContextQueue[Any] | ContextPool[Any]) -> Attributes:
    return {} if store.limit is None else {n.CONTEXT_LIMIT: store.limit}


def context_event(event: Event, agent: Agent, content: s.Content) -> Attributes:
    """A change to one of ``agent``'s context stores: its size against its limit, the
    item's id and description, and its content only with capture on."""
    store = event.source
    assert isinstance(store, (ContextQueue, ContextPool))
    attributes = s.of_agent(agent)
    attributes[n.CONTEXT_SIZE] = len(store)
    attributes.update(_limit(store))
    item = event.get("item")
    item_id = getattr(item, "id", None)
    if isinstance(item_id, str):
        attributes[n.ITEM_ID] = bounded(item_id)
    description = getattr(item, "description", None)
    if isinstance(description, str):
        attributes[n.ITEM_DESCRIPTION] = bounded(description)
    about = _CONTENT_OF.get(event.type)
    if content.capture and about is not None:
        attributes[n.CONTEXT_CONTENT] = content.dump(event[about])
    return attributes


# -- snapshots -------------------------------------------------------------------------------


def snapshot(agent: Agent, contents: Contents) -> Attributes:
    """An agent's whole live state, read without changing anything (and from another
    thread: every read is of one attribute or a length, or one copy of a list, see
    ``_contents``), with its waiting turns and context items listed."""
    attributes = s.of_agent(agent)
    paused = agent.is_paused
    current = agent.current_turn
    state = "paused" if paused else "running" if agent.is_running else "idle"
    attributes[n.AGENT_STATE] = state
    attributes[n.PAUSED] = paused
    attributes[n.QUEUE_DEPTH] = agent.queue_depth
    queue, pool = agent.context_queue, agent.context_pool
    attributes[n.QUEUE_SIZE] = len(queue)
    if queue.limit is not None:
        attributes[n.QUEUE_LIMIT] = queue.limit
    attributes[n.POOL_SIZE] = len(pool)
    if pool.limit is not None:
        attributes[n.POOL_LIMIT] = pool.limit
    if current is not None:
        # What a listener that missed the turn's start needs to show it running.
        attributes[n.CURRENT_TURN] = attributes[n.TURN_UUID] = current.uuid
        attributes[n.TOOL_NAME] = bounded(current.tool.name)
        attributes[n.TURN_TIMEOUT] = float(current.timeout)
        started = current.start_time
        if started is not None:
            attributes[n.TURN_STARTED] = int(started.timestamp() * 1e9)
    attributes.update(contents.of(agent))
    return attributes


def heartbeat(agents: int) -> Attributes:
    return {n.PROCESS_AGENTS: agents}
