"""The listener and ``pygents_otel``'s live mode speak the same names, and the
fleet model turns what live mode sends into live state, even for a turn whose start
it missed (it started listening later)."""

from __future__ import annotations

import pytest
from otlp_requests import Event, logs_batch

from pygents_otel import _records as r
from pygents_otel import _spans as s
from pygents_tui.listen import FleetModel
from pygents_tui.listen import schema as k

WALL = 1_700_000_000 * 10**9
S = 10**9
AGENT = {"gen_ai.agent.name": "planner", "gen_ai.agent.id": "agent-1"}


def test_every_record_live_mode_sends_is_one_the_listener_reads() -> None:
    names = {value for key, value in vars(k).items() if key.isupper() and isinstance(value, str)}
    prefixes = (k.CONTEXT_QUEUE_PREFIX, k.CONTEXT_POOL_PREFIX)
    unread = {name for name in r.NAMES if name not in names and not name.startswith(prefixes)}
    assert unread == set()
    assert {k.TURN_START, k.TURN_END, k.TURN_VALUE, k.SNAPSHOT, k.HEARTBEAT} <= r.NAMES
    assert {k.AFTER_PUT, k.BEFORE_TURN, k.ON_PAUSE, k.ON_RESUME} <= r.NAMES
    assert {k.ON_TURN_ERROR, k.ON_TURN_TIMEOUT, k.RUN_START, k.RUN_END} <= r.NAMES


@pytest.mark.parametrize(
    ("read", "sent"),
    [
        (k.EVENT_NAME, r.EVENT_NAME),
        (k.AGENT_NAME, s.AGENT_NAME),
        (k.AGENT_ID, s.AGENT_ID),
        (k.TOOL_NAME, s.TOOL_NAME),
        (k.PYGENTS_TOOL, s.PYGENTS_TOOL),
        (k.ERROR_TYPE, s.ERROR_TYPE),
        (k.TAGS, s.TAGS),
        (k.TURN_UUID, s.TURN_UUID),
        (k.TURN_TIMEOUT, s.TURN_TIMEOUT),
        (k.TURN_STREAMING, r.TURN_STREAMING),
        (k.TURN_STOP_REASON, s.STOP_REASON),
        (k.TURN_VALUES, r.TURN_VALUES),
        (k.SPAN_VALUES, s.VALUES),
        (k.ARGS_PREVIEW, r.ARGS_PREVIEW),
        (k.OUTPUT_PREVIEW, r.OUTPUT_PREVIEW),
        (k.VALUE_PREVIEW, r.VALUE_PREVIEW),
        (k.RUN_STOP_REASON, r.RUN_STOP_REASON),
        (k.AGENT_STOP_REASON, s.STOP_REASONS["agent_run"]),
        (k.AGENT_STATE, r.AGENT_STATE),
        (k.QUEUE_DEPTH, s.QUEUE_DEPTH),
        (k.PAUSED, r.PAUSED),
        (k.CURRENT_TURN, r.CURRENT_TURN),
        (k.TURN_STARTED, r.TURN_STARTED),
        (k.CONTEXT_SIZE, s.STORE_SIZE),
        (k.CONTEXT_LIMIT, r.CONTEXT_LIMIT),
        (k.ITEM_ID, s.ITEM_ID),
        (k.ITEM_DESCRIPTION, r.ITEM_DESCRIPTION),
        (k.QUEUE_SIZE, r.QUEUE_SIZE),
        (k.QUEUE_LIMIT, r.QUEUE_LIMIT),
        (k.POOL_SIZE, r.POOL_SIZE),
        (k.POOL_LIMIT, r.POOL_LIMIT),
        (k.INVOKE_AGENT, s.INVOKE_AGENT),
    ],
)
def test_the_listener_reads_each_attribute_under_the_name_it_is_sent(read: str, sent: str) -> None:
    assert read == sent


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def snapshot(**extra: object) -> Event:
    attributes = {**AGENT, "pygents.agent.state": "running", **extra}
    return Event("pygents.agent.snapshot", attributes, WALL)


def test_a_snapshot_shows_a_running_turn_whose_start_the_listener_missed() -> None:
    clock = Clock()
    fleet = FleetModel(clock=clock, wall=lambda: WALL, stale_after=60.0)
    current = {
        "pygents.agent.current_turn.uuid": "t1",
        "pygents.turn.uuid": "t1",
        "gen_ai.tool.name": "think",
        "pygents.turn.timeout": 30.0,
        "pygents.turn.start_time_unix_nano": WALL - 4 * S,
    }
    fleet.ingest(logs_batch([snapshot(**current)]))
    fleet.drain()

    (turn,) = fleet.running_turns()
    (agent,) = fleet.agent_rows()
    assert (turn.uuid, turn.tool, turn.timeout) == ("t1", "think", 30.0)
    assert turn.elapsed_at(fleet.clock()) == pytest.approx(4.0), "from the sender's clock"
    assert (agent.state, agent.current_turn, agent.current_tool) == ("running", turn.key, "think")

    end = {**AGENT, "pygents.turn.uuid": "t1", "pygents.turn.stop_reason": "completed"}
    fleet.ingest(logs_batch([Event("pygents.turn.end", end, WALL + S), snapshot(**current)]))
    fleet.drain()
    assert fleet.running_turns() == [], "a snapshot sent after the end does not reopen it"
    assert agent.current_turn is None
    assert agent.completed == 1
