"""The listener reads every record ``pygents_otel``'s live mode sends, and the
fleet model turns what live mode sends into live state, even for a turn whose start
it missed (it started listening later)."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from otlp_requests import Event, logs_batch

from pygents import Agent, ContextItem, ContextQueue, Turn, tool
from pygents.testing import drain
from pygents_otel import PygentsInstrumentor
from pygents_otel import _names as k
from pygents_otel import _records as r
from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver
from pygents_tui.state import Capacity

# The receiver and the OTLP feeder: the code that reads what a sender sends.
LISTEN = [
    Path(__file__).resolve().parents[3] / "pygents_tui" / folder
    for folder in ("listen", "feeders", "feeders/otlp")
]
WALL = 1_700_000_000 * 10**9
S = 10**9
AGENT = {"gen_ai.agent.name": "planner", "gen_ai.agent.id": "agent-1"}


def names_the_listener_reads() -> set[str]:
    """The names the listener's own code refers to (``k.NAME`` in its modules)."""
    used: set[str] = set()
    for path in (path for folder in LISTEN for path in folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
                continue
            if node.value.id == "k" and isinstance(value := getattr(k, node.attr), str):
                used.add(value)
    return used


def test_every_record_live_mode_sends_is_one_the_listener_reads() -> None:
    names = names_the_listener_reads()
    prefixes = (k.CONTEXT_QUEUE_PREFIX, k.CONTEXT_POOL_PREFIX)
    unread = {name for name in r.NAMES if name not in names and not name.startswith(prefixes)}
    assert unread == set()
    assert {k.TURN_START, k.TURN_END, k.TURN_VALUE, k.SNAPSHOT, k.HEARTBEAT} <= r.NAMES
    assert {k.AFTER_PUT, k.ON_PAUSE, k.ON_RESUME} <= r.NAMES
    assert k.BEFORE_TURN not in r.NAMES  # the turn's start carries its queue depth
    assert {k.ON_TURN_ERROR, k.ON_TURN_TIMEOUT, k.RUN_START, k.RUN_END} <= r.NAMES
    assert set(prefixes) <= names


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
    fleet.store.drain()

    (turn,) = fleet.store.running_turns()
    (agent,) = fleet.store.agent_rows()
    assert (turn.uuid, turn.tool, turn.timeout) == ("t1", "think", 30.0)
    assert turn.elapsed_at(fleet.store.clock()) == pytest.approx(4.0), "from the sender's clock"
    assert (agent.state, agent.current_turn, agent.current_tool) == ("running", turn.key, "think")

    end = {**AGENT, "pygents.turn.uuid": "t1", "pygents.turn.stop_reason": "completed"}
    fleet.ingest(logs_batch([Event("pygents.turn.end", end, WALL + S), snapshot(**current)]))
    fleet.store.drain()
    assert fleet.store.running_turns() == [], "a snapshot sent after the end does not reopen it"
    assert agent.current_turn is None
    assert agent.completed == 1


# -- end to end, in this process: pygents_otel -> OTLP -> receiver -> fleet model ----------------


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def fleet(clock: Clock) -> FleetModel:
    """The receiver's model (see conftest), on a clock the test moves for staleness."""
    return FleetModel(clock=clock, stale_after=5.0)


@pytest.fixture
def exporting(receiver: Receiver) -> Iterator[tuple[TracerProvider, LoggerProvider]]:
    """This process's SDK, exporting to the receiver with the real OTLP/gRPC exporters."""
    resource = Resource({"service.name": "inproc", "service.instance.id": "one"})
    endpoint = receiver.grpc_endpoint
    tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    tracer_provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint, insecure=True))
    )
    logger_provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
    logger_provider.add_log_record_processor(
        BatchLogRecordProcessor(OTLPLogExporter(endpoint=endpoint, insecure=True))
    )
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument(
        tracer_provider=tracer_provider,
        logger_provider=logger_provider,
        live=True,
        snapshot_interval=3600,  # one at the start: the records below are the test's
    )
    yield tracer_provider, logger_provider
    instrumentor.uninstrument()
    tracer_provider.shutdown()
    logger_provider.shutdown()


async def settle(fleet: FleetModel, providers: tuple[TracerProvider, LoggerProvider]) -> None:
    """Export everything emitted so far (each flush returns once the receiver answered,
    which it does after handing the batch over), then fold it."""
    for provider in providers:
        assert await asyncio.to_thread(provider.force_flush, 10_000)
    fleet.store.drain()


async def test_queue_depth_pauses_context_sizes_and_staleness_reach_the_fleet_model(
    fleet: FleetModel, clock: Clock, exporting: tuple[TracerProvider, LoggerProvider]
) -> None:
    release = asyncio.Event()

    @tool
    async def remember(note: str) -> ContextItem[str]:
        return ContextItem(note)

    @tool
    async def wait() -> str:
        await release.wait()
        return "done"

    keeper = Agent("keeper", "keeps notes", [remember, wait], context_queue=ContextQueue(limit=4))
    await keeper.put(Turn(remember, args=["a note"]))
    await keeper.put(Turn(wait, timeout=30))
    keeper.pause()
    run = asyncio.create_task(drain(keeper))
    async with asyncio.timeout(30):
        await settle(fleet, exporting)
        while not fleet.store.agent_rows() or fleet.store.agent_rows()[0].state != "paused":
            await asyncio.sleep(0)  # the run loop reaches its pause gate
            await settle(fleet, exporting)

    (agent,) = fleet.store.agent_rows()
    assert agent.label.startswith("inproc@one/keeper")
    assert agent.queue_depth == 2

    keeper.resume()
    async with asyncio.timeout(30):
        while not fleet.store.running_turns():
            await asyncio.sleep(0)  # the first turn runs, the second starts
            await settle(fleet, exporting)
    (turn,) = fleet.store.running_turns()
    assert (turn.tool, turn.timeout, turn.ended) == ("wait", 30.0, None)
    assert agent.state == "running"
    assert agent.queue_depth == 0
    assert agent.context_queue == Capacity(1, 4), "the routed note, against the limit"
    assert agent.completed == 1

    release.set()
    assert await run == ["done"]
    await settle(fleet, exporting)
    assert fleet.store.running_turns() == []
    assert agent.completed == 2
    assert agent.state == "finished"

    clock.now += 6.0  # nothing more is sent: the snapshot thread waits an hour
    fleet.store.drain()
    assert agent.state == "stale", "marked, not removed"
    assert fleet.store.service_rows()[0].stale
