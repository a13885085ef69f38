"""Live mode: OpenTelemetry log records with an event name, sent while things run
(turn and tool starts with their timeout, queue depths, pauses, context sizes, value
counts, snapshots), in the trace context of their span; off, nothing at all."""

from __future__ import annotations

import asyncio
import math
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import pytest
from child import report_of, run_python
from opentelemetry._logs import SeverityNumber
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import (
    LogRecordExporter,
    LogRecordExportResult,
    SimpleLogRecordProcessor,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from pygents import (
    Agent,
    ContextItem,
    ContextQueue,
    DecoratedTool,
    Turn,
    TurnTimeoutError,
    tool,
)
from pygents.testing import drain
from pygents_otel import PygentsInstrumentor

Instrument = Callable[..., PygentsInstrumentor]
SECRET = "hunter2-top-secret"
PERIODIC = ("pygents.agent.snapshot", "pygents.process.heartbeat")


class Records(LogRecordExporter):
    """Keeps every record it is given (from any thread) and wakes ``until`` waiters."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.records: list[ReadableLogRecord] = []
        self._wake: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def export(self, batch: Sequence[Any]) -> LogRecordExportResult:
        with self._lock:
            self.records.extend(batch)
            waiters = list(self._wake)
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)
        return LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def named(self, name: str) -> list[dict[str, Any]]:
        """The attributes of every record called ``name``, in order."""
        with self._lock:
            return [
                dict(r.log_record.attributes or {})
                for r in self.records
                if r.log_record.event_name == name
            ]

    def names(self) -> list[str]:
        """The names of the records the runtime's events sent, in order (leaving out
        the snapshot thread's, which come whenever it runs)."""
        with self._lock:
            found = [str(r.log_record.event_name) for r in self.records]
        return [name for name in found if name not in PERIODIC]

    def every_name(self) -> list[str]:
        """The names of all the records, periodic ones too, in order."""
        with self._lock:
            return [str(r.log_record.event_name) for r in self.records]

    def first(self, name: str) -> ReadableLogRecord:
        with self._lock:
            return next(r for r in self.records if r.log_record.event_name == name)

    async def until(self, predicate: Callable[[], bool], seconds: float = 10.0) -> None:
        """Return once ``predicate()`` holds, re-checked after every export; a bounded
        wait, for records the snapshot thread sends."""
        event = asyncio.Event()
        entry = (asyncio.get_running_loop(), event)
        with self._lock:
            self._wake.append(entry)
        try:
            async with asyncio.timeout(seconds):
                while not predicate():
                    event.clear()
                    await event.wait()
        finally:
            with self._lock:
                self._wake.remove(entry)


@pytest.fixture
def records() -> Records:
    return Records()


@pytest.fixture
def logger_provider(records: Records) -> Iterator[LoggerProvider]:
    provider = LoggerProvider(shutdown_on_exit=False)
    provider.add_log_record_processor(SimpleLogRecordProcessor(records))
    yield provider
    provider.shutdown()


@pytest.fixture
def live(instrument_with: Instrument, logger_provider: LoggerProvider) -> Instrument:
    """Instrument in live mode into ``records`` (a long snapshot interval: the tests
    that want snapshots ask for a short one)."""

    def instrument(**options: Any) -> PygentsInstrumentor:
        options.setdefault("snapshot_interval", 3600)
        return instrument_with(live=True, logger_provider=logger_provider, **options)

    return instrument


def live_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "pygents-otel-live"]


Tool = DecoratedTool[..., Any]


@pytest.fixture
def greet() -> Tool:
    """Defined per test: the registries are isolated per test, not per module."""

    @tool
    async def greet(name: str) -> str:
        return f"hello {name}"

    return greet


@pytest.fixture
def count() -> Tool:
    @tool
    async def count(n: int) -> AsyncIterator[int]:
        for i in range(n):
            yield i

    return count


# -- off -------------------------------------------------------------------------------------


class CountingProvider(LoggerProvider):
    def __init__(self) -> None:
        super().__init__(shutdown_on_exit=False)
        self.asked = 0

    def get_logger(self, *args: Any, **kwargs: Any) -> Any:
        self.asked += 1
        return super().get_logger(*args, **kwargs)


async def test_live_mode_is_off_by_default_no_logger_no_thread_no_records(
    instrument_with: Instrument,
    greet: Tool,
) -> None:
    provider = CountingProvider()
    instrumentor = instrument_with(logger_provider=provider)
    agent = Agent("quiet", "sends no records", [greet])
    await agent.put(Turn(greet, args=["ada"]))
    await drain(agent)

    assert instrumentor.live is None
    assert provider.asked == 0, "off, no logger is even created"
    assert live_threads() == []


# -- scopes ------------------------------------------------------------------------------------


async def test_a_turn_starts_with_its_timeout_and_ends_with_its_reason_in_its_spans_context(
    live: Instrument,
    records: Records,
    exporter: InMemorySpanExporter,
    greet: Tool,
) -> None:
    live()
    agent = Agent("planner", "plans", [greet])
    turn = Turn(greet, args=["ada"], timeout=7, tags=["live"])
    await agent.put(turn)
    await drain(agent)

    # No before_turn record (the turn's start carries the depth) and no tool records
    # for the turn's own tool (the turn's records name it): five records a turn cost
    # twice what three do (W4l).
    assert records.names() == [
        "pygents.agent.after_put",
        "pygents.agent_run.start",
        "pygents.turn.start",
        "pygents.turn.end",
        "pygents.agent_run.end",
    ]
    agent_attributes = {"gen_ai.agent.name": "planner", "gen_ai.agent.id": agent.uuid}
    (start,) = records.named("pygents.turn.start")
    assert start == {
        **agent_attributes,
        "event.name": "pygents.turn.start",
        "pygents.turn.uuid": turn.uuid,
        "gen_ai.tool.name": "greet",
        "pygents.turn.timeout": 7.0,
        "pygents.turn.streaming": False,
        "pygents.tags": ("live",),
        "pygents.agent.queue.depth": 0,  # the turn has left the queue
    }
    (end,) = records.named("pygents.turn.end")
    assert end == {
        **agent_attributes,
        "event.name": "pygents.turn.end",
        "pygents.turn.uuid": turn.uuid,
        "gen_ai.tool.name": "greet",
        "pygents.turn.stop_reason": "completed",
        "pygents.turn.values": 0,
    }
    (run_end,) = records.named("pygents.agent_run.end")
    assert run_end["pygents.stop_reason"] == "completed"

    spans = {span.name: span.get_span_context() for span in exporter.get_finished_spans()}
    for name, span in (
        ("pygents.turn.start", "turn greet"),
        ("pygents.turn.end", "turn greet"),
        ("pygents.agent_run.start", "invoke_agent planner"),
    ):
        record = records.first(name).log_record
        assert (record.trace_id, record.span_id) == (spans[span].trace_id, spans[span].span_id)
        assert record.severity_number is SeverityNumber.INFO
    assert records.first("pygents.turn.start").instrumentation_scope.name == "pygents_otel.live"


async def test_a_failed_and_a_timed_out_turn_end_with_their_reason_and_error_type(
    live: Instrument, records: Records
) -> None:
    live()
    release = asyncio.Event()

    @tool
    async def fail() -> None:
        raise ValueError(SECRET)

    @tool
    async def hang() -> None:
        await release.wait()

    agent = Agent("unlucky", "fails", [fail, hang])
    await agent.put(Turn(fail))
    with pytest.raises(ValueError, match=SECRET):
        await drain(agent)
    await agent.put(Turn(hang, timeout=0.01))
    with pytest.raises(TurnTimeoutError):
        await drain(agent)

    failed, timed_out = records.named("pygents.turn.end")
    assert failed["pygents.turn.stop_reason"] == "error"
    assert failed["error.type"] == "ValueError"
    assert timed_out["pygents.turn.stop_reason"] == "timeout"
    assert timed_out["error.type"] == "TurnTimeoutError"
    assert records.first("pygents.turn.end").log_record.severity_number is SeverityNumber.WARN
    (error,) = records.named("pygents.agent.on_turn_error")
    assert error["error.type"] == "ValueError"
    (timeout,) = records.named("pygents.agent.on_turn_timeout")
    assert timeout["error.type"] == "TurnTimeoutError"
    assert all(SECRET not in str(r) for r in records.named("pygents.turn.end")), "no messages"


async def test_a_turn_whose_output_its_run_routes_says_what_it_returned_on_span_and_end(
    live: Instrument, records: Records, exporter: InMemorySpanExporter
) -> None:
    """A turn that returned a turn or a context item handed its run's caller no value:
    its end record and its span say what it returned instead; one that returned a value
    says nothing more (a receiver counts that as its one value)."""
    live()

    @tool
    async def plan() -> Turn[Any]:
        return Turn(remember)

    @tool
    async def remember() -> ContextItem[str]:
        return ContextItem("a note")

    @tool
    async def answer() -> int:
        return 42

    agent = Agent("router", "routes", [plan, remember, answer])
    await agent.put(Turn(plan))
    await agent.put(Turn(answer))
    await drain(agent)

    ends = {r["gen_ai.tool.name"]: r for r in records.named("pygents.turn.end")}
    spans = {s.name: s.attributes or {} for s in exporter.get_finished_spans()}
    kinds = {"plan": "turn", "remember": "context_item", "answer": None}
    for name, kind in kinds.items():
        assert ends[name].get("pygents.turn.output_kind") == kind
        assert spans[f"turn {name}"].get("pygents.turn.output_kind") == kind


async def test_a_bare_turn_sends_its_records_without_agent_attributes(
    live: Instrument,
    records: Records,
    greet: Tool,
) -> None:
    live()
    assert await Turn(greet, args=["ada"]).returning() == "hello ada"

    assert records.names() == ["pygents.turn.start", "pygents.turn.end"]
    assert all("gen_ai.agent.name" not in r for r in records.named("pygents.turn.start"))


async def test_a_tool_called_by_a_tool_sends_its_start_and_end_in_its_own_spans_context(
    live: Instrument,
    records: Records,
    exporter: InMemorySpanExporter,
    greet: Tool,
) -> None:
    """Only a turn's own tool is left to the turn's records: a tool another tool
    calls is news, and its records say which tool ran and how it ended."""
    live()

    @tool
    async def welcome(name: str) -> str:
        return (await greet(name)).upper()

    agent = Agent("host", "welcomes", [welcome, greet])
    await agent.put(Turn(welcome, args=["ada"]))
    await drain(agent)

    assert records.names()[2:] == [
        "pygents.turn.start",
        "pygents.tool.start",
        "pygents.tool.end",
        "pygents.turn.end",
        "pygents.agent_run.end",
    ]
    (start,) = records.named("pygents.tool.start")
    (end,) = records.named("pygents.tool.end")
    assert start["gen_ai.tool.name"] == end["gen_ai.tool.name"] == "greet"
    assert end["pygents.tool.stop_reason"] == "completed"
    spans = {span.name: span.get_span_context() for span in exporter.get_finished_spans()}
    record = records.first("pygents.tool.start").log_record
    inner = spans["execute_tool greet"]
    assert (record.trace_id, record.span_id) == (inner.trace_id, inner.span_id)


# -- values ------------------------------------------------------------------------------------


async def test_values_are_counted_exactly_and_sent_first_then_at_most_four_a_second(
    live: Instrument,
    records: Records,
    count: Tool,
) -> None:
    live(max_value_events=5)
    began = time.monotonic()
    values = [v async for v in Turn(count, args=[500]).yielding()]
    elapsed = time.monotonic() - began

    assert len(values) == 500
    sent = [r["pygents.turn.values"] for r in records.named("pygents.turn.on_value")]
    assert sent[:5] == [1, 2, 3, 4, 5], "the first ones, each"
    assert sent == sorted(set(sent)), "a running count"
    assert len(sent) <= 5 + math.ceil(elapsed / 0.25) + 1, "then one every 250 ms at most"
    (end,) = records.named("pygents.turn.end")
    assert end["pygents.turn.values"] == 500, "the end has the exact count"
    (start,) = records.named("pygents.turn.start")
    assert start["pygents.turn.streaming"] is True
    assert all("pygents.value.preview" not in r for r in records.named("pygents.turn.on_value"))


async def test_content_capture_adds_bounded_previews_of_arguments_values_and_output(
    live: Instrument,
    records: Records,
    greet: Tool,
    count: Tool,
) -> None:
    live(capture_content=True, content_max_length=32)
    assert await Turn(greet, args=["x" * 1000]).returning() == "hello " + "x" * 1000
    assert [v async for v in Turn(count, args=[2]).yielding()] == [0, 1]

    first, second = records.named("pygents.turn.start")
    assert first["pygents.turn.args_preview"] == '{"args": ["' + "x" * 20 + "…"
    assert second["pygents.turn.args_preview"] == '{"args": [2]}'
    greeted, counted = records.named("pygents.turn.end")
    assert greeted["pygents.turn.output_preview"] == '"hello ' + "x" * 24 + "…"
    assert [r["pygents.value.preview"] for r in records.named("pygents.turn.on_value")] == [
        "0",
        "1",
    ]
    assert counted["pygents.turn.values"] == 2


# -- agents and their stores ---------------------------------------------------------------------


async def test_agent_events_carry_the_queue_depth_and_the_pause_state(
    live: Instrument,
    records: Records,
    greet: Tool,
) -> None:
    live()
    agent = Agent("pausable", "pauses", [greet])
    await agent.put(Turn(greet, args=["a"]))
    await agent.put(Turn(greet, args=["b"]))
    agent.pause()
    run = asyncio.create_task(drain(agent))
    await records.until(lambda: bool(records.named("pygents.agent.on_pause")))
    agent.resume()
    assert await run == ["hello a", "hello b"]

    puts = records.named("pygents.agent.after_put")
    assert [p["pygents.agent.queue.depth"] for p in puts] == [1, 2]
    assert [p["gen_ai.tool.name"] for p in puts] == ["greet", "greet"]
    (paused,) = records.named("pygents.agent.on_pause")
    assert paused["pygents.agent.paused"] is True
    assert paused["pygents.agent.queue.depth"] == 2
    (resumed,) = records.named("pygents.agent.on_resume")
    assert resumed["pygents.agent.paused"] is False


async def test_context_records_follow_the_agents_own_stores_only(
    live: Instrument, records: Records
) -> None:
    live()
    private = ContextQueue(limit=3)

    @tool
    async def remember(note: str) -> ContextItem[str]:
        await private.append(ContextItem(note, description="kept by the tool"))
        return ContextItem(note, description="a note")

    agent = Agent("rememberer", "remembers", [remember], context_queue=ContextQueue(limit=4))
    await agent.put(Turn(remember, args=[SECRET]))
    await drain(agent)

    (appended,) = records.named("pygents.context_queue.after_append")
    assert appended["gen_ai.agent.name"] == "rememberer"
    assert appended["pygents.context.size"] == 1
    assert appended["pygents.context.limit"] == 4
    assert "pygents.context.content" not in appended, "content only with capture on"
    assert len(private) == 1, "the tool's own queue changed, and sent nothing"


# -- snapshots ----------------------------------------------------------------------------------


async def test_snapshots_show_a_running_agent_with_its_turn_then_stop_with_live_mode(
    live: Instrument, records: Records, exporter: InMemorySpanExporter
) -> None:
    instrumentor = live(snapshot_interval=0.05)
    release = asyncio.Event()

    @tool
    async def wait() -> str:
        await release.wait()
        return "done"

    agent = Agent("snapshotted", "waits", [wait], context_queue=ContextQueue(limit=5))
    turn = Turn(wait)
    await agent.put(turn)
    await agent.put(Turn(wait))
    run = asyncio.create_task(drain(agent))

    def running() -> bool:
        return any(
            s.get("pygents.agent.state") == "running" and s.get("gen_ai.agent.id") == agent.uuid
            for s in records.named("pygents.agent.snapshot")
        )

    await records.until(running)
    snapshot = next(
        s for s in records.named("pygents.agent.snapshot") if s["pygents.agent.state"] == "running"
    )
    assert snapshot["pygents.agent.current_turn.uuid"] == turn.uuid
    assert snapshot["pygents.agent.queue.depth"] == 1
    assert snapshot["pygents.context_queue.size"] == 0
    assert snapshot["pygents.context_queue.limit"] == 5
    assert snapshot["pygents.agent.paused"] is False
    assert records.named("pygents.process.heartbeat"), "the process says it is alive"
    release.set()
    await run

    instrumentor.uninstrument()
    assert live_threads() == [], "the snapshot thread stopped with live mode"
    assert instrumentor.live is None


async def test_a_process_without_agents_still_sends_heartbeats(
    live: Instrument, records: Records
) -> None:
    live(snapshot_interval=0.05)
    await records.until(lambda: len(records.named("pygents.process.heartbeat")) >= 2)
    assert records.named("pygents.process.heartbeat")[0]["pygents.process.agents"] == 0
    assert records.named("pygents.agent.snapshot") == []


async def test_closing_live_mode_sends_a_goodbye_after_everything_else(
    live: Instrument, records: Records
) -> None:
    instrumentor = live(snapshot_interval=0.05)
    await records.until(lambda: bool(records.named("pygents.process.heartbeat")))
    assert records.named("pygents.process.goodbye") == [], "not while live mode is on"
    instrumentor.uninstrument()
    names = records.every_name()
    assert names[-1] == "pygents.process.goodbye", "the last record of the process"
    assert names.count("pygents.process.goodbye") == 1


# -- settings -----------------------------------------------------------------------------------


def test_the_variable_turns_live_mode_on(
    monkeypatch: pytest.MonkeyPatch, instrument_with: Instrument, logger_provider: LoggerProvider
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_PYGENTS_LIVE", "true")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_PYGENTS_SNAPSHOT_INTERVAL", "3600")
    instrumentor = instrument_with(logger_provider=logger_provider)
    assert instrumentor.live is not None
    assert len(live_threads()) == 1


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("OTEL_INSTRUMENTATION_PYGENTS_LIVE", "maybe", "is neither true nor false; set it to"),
        ("OTEL_INSTRUMENTATION_PYGENTS_SNAPSHOT_INTERVAL", "soon", "is not a number; give"),
        ("OTEL_INSTRUMENTATION_PYGENTS_SNAPSHOT_INTERVAL", "0", "is out of range; give"),
        ("OTEL_INSTRUMENTATION_PYGENTS_SNAPSHOT_INTERVAL", "nan", "is out of range; give"),
    ],
)
def test_a_bad_live_setting_is_refused_naming_the_variable_and_the_fix(
    monkeypatch: pytest.MonkeyPatch,
    instrument_with: Instrument,
    logger_provider: LoggerProvider,
    variable: str,
    value: str,
    message: str,
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_PYGENTS_LIVE", "true")
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match=f"{variable}='{value}' {message}"):
        instrument_with(logger_provider=logger_provider)
    assert not PygentsInstrumentor().is_instrumented_by_opentelemetry, "nothing half-done"
    assert live_threads() == []


def test_a_snapshot_interval_of_the_wrong_type_is_refused(instrument_with: Instrument) -> None:
    with pytest.raises(TypeError, match="snapshot_interval must be a number of seconds, got str"):
        instrument_with(live=True, snapshot_interval="1")
    assert live_threads() == []


# -- configure() --------------------------------------------------------------------------------

CONFIGURE_LIVE = """
from opentelemetry import _logs
import pygents_otel

telemetry = pygents_otel.configure(
    service_name="live-child", traces_exporter="none", metrics_exporter="none",
    logs_exporter="console", snapshot_interval=3600,
)
work()
provider = telemetry.logger_provider
report(
    ours=provider is not None and _logs.get_logger_provider() is provider,
    resource=dict(provider.resource.attributes) if provider else None,
    same=provider is not None and provider.resource is telemetry.tracer_provider.resource,
    traced=dict(telemetry.tracer_provider.resource.attributes),
)
telemetry.shutdown()
"""


def test_configure_live_exports_records_with_the_resource_that_tells_processes_apart() -> None:
    done = run_python(CONFIGURE_LIVE, OTEL_INSTRUMENTATION_PYGENTS_LIVE="true")
    seen = report_of(done)

    assert seen["ours"], "configure installed its logger provider globally"
    assert seen["same"], "records and spans share one resource"
    resource = seen["resource"]
    assert resource["service.name"] == "live-child"
    assert len(resource["service.instance.id"]) == 36, "a random uuid per process"
    assert resource["host.name"] == socket.gethostname()
    assert isinstance(resource["process.pid"], int)
    assert '"event_name": "pygents.turn.start"' in done.stdout, "exported by the exporter"


def test_configure_keeps_an_instance_id_the_variables_set_and_without_live_makes_no_logs() -> None:
    code = CONFIGURE_LIVE.replace('logs_exporter="console", ', "")
    done = run_python(code, OTEL_RESOURCE_ATTRIBUTES="service.instance.id=blue-7")
    seen = report_of(done)

    assert seen["ours"] is False, "live off: no logger provider"
    assert seen["resource"] is None
    assert seen["traced"]["service.instance.id"] == "blue-7"
    assert "pygents.turn.start" not in done.stdout


CONFIGURE_TWICE = """
import pygents_otel

created = []
for _ in range(2):
    telemetry = pygents_otel.configure(
        service_name="twice", traces_exporter="none", metrics_exporter="none"
    )
    created.append(telemetry.tracer_provider.resource.attributes["process.creation.time"])
    telemetry.shutdown()
report(created=created)
"""


def test_the_resource_says_when_its_process_started_the_same_for_every_configure() -> None:
    first = report_of(run_python(CONFIGURE_TWICE))["created"]
    second = report_of(run_python(CONFIGURE_TWICE))["created"]

    assert first[0] == first[1], "one process: one creation time, however often configured"
    assert datetime.fromisoformat(first[0]).utcoffset() == timedelta(0), "ISO 8601, in UTC"
    assert second[0] != first[0], "a new process (the same instance id) is told apart"


DORMANT_LIVE = """
from opentelemetry import _logs, trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from pygents_otel import PygentsInstrumentor

instrumentor = PygentsInstrumentor()
instrumentor.instrument(live=True, snapshot_interval=3600)
dormant = instrumentor.live is None
records = InMemoryLogRecordExporter()
provider = LoggerProvider()
provider.add_log_record_processor(SimpleLogRecordProcessor(records))
_logs.set_logger_provider(provider)
trace.set_tracer_provider(TracerProvider())
work()
names = [r.log_record.event_name for r in records.get_finished_logs()]
report(dormant=dormant, live=instrumentor.live is not None, names=names)
instrumentor.uninstrument()
"""


def test_live_mode_waits_with_dormant_tracing_and_starts_with_it() -> None:
    seen = report_of(run_python(DORMANT_LIVE))

    assert seen["dormant"], "no SDK yet: nothing subscribed, no thread"
    assert seen["live"], "woken by the first turn after the SDK was installed"
    assert "pygents.turn.start" in seen["names"]
    assert "pygents.turn.end" in seen["names"]
