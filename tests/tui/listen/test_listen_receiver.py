"""The listener end to end: the real OpenTelemetry SDK and OTLP exporters (gRPC and
HTTP) send spans and live records to the receiver on 127.0.0.1, and the fleet model
shows services, agents and turns while they run and after.

``await sender.sent()`` returns once the exporters got their answers, and the
receiver answers only after handing the batch to the model: one ``drain()`` then
folds everything, no polling and no sleeping.
"""

from __future__ import annotations

import asyncio
import socket

import pytest
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
    OTLPMetricExporter as GrpcMetricExporter,
)
from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
    OTLPMetricExporter as HttpMetricExporter,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from otlp_sender import MakeSender, Sender
from terminal import free_port

from pygents import StopReason
from pygents_tui.feeders import FleetModel, flatten
from pygents_tui.listen import PortInUseError, Receiver
from pygents_tui.state import DashboardView

PROTOCOLS = ["grpc", "http"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_running_turn_shows_with_its_timeout_then_completes_with_its_values(
    fleet: FleetModel, senders: MakeSender, protocol: str
) -> None:
    sender = senders(protocol, service="checkout", instance="instance-a")
    agent = sender.agent("planner")
    run = sender.run_start(agent)
    sender.snapshot(agent, "running", **{"pygents.agent.queue.depth": 2})
    turn = sender.turn_start(agent, run, "fetch", timeout=7.5, streaming=True)
    sender.value(turn, preview="first [bold]value[/bold]")
    sender.value(turn)
    await sender.sent()
    fleet.store.drain()

    view: DashboardView = fleet.store
    (row,) = view.agent_rows()
    assert (row.name, row.label, row.state) == ("planner", "checkout@instance-a/planner", "running")
    assert row.queue_depth == 2
    (running,) = view.running_turns(row.key)
    assert (running.tool, running.timeout, running.streaming) == ("fetch", 7.5, True)
    assert running.ended is None
    assert running.trace_id == turn.trace_id
    assert row.current_turn == running.key
    assert row.current_tool == "fetch"
    assert row.values == 2
    total, tail = view.value_tail(row.key)
    assert total == 1
    assert [v.text for v in tail] == ["first [bold]value[/bold]"]

    sender.value(turn)
    sender.turn_end(turn)
    sender.run_end(agent, run)
    await sender.sent()
    fleet.store.drain()

    assert view.running_turns() == []
    (ended,) = view.recent_turns(row.key)
    assert ended.stop_reason is StopReason.COMPLETED
    assert ended.values == 3
    assert ended.ended is not None
    assert ended.ended >= ended.started
    assert (row.completed, row.failed, row.timed_out, row.values) == (1, 0, 0, 3)
    assert row.state == "finished"
    assert row.current_turn is None
    assert view.find_turn(ended.key) is ended
    assert view.find_turn(turn.uuid) is ended
    _, log = view.event_log()
    texts = [entry.text for entry in log]
    assert "▶ fetch" in texts
    assert any(text.startswith("✔ fetch") for text in texts)


async def test_failures_and_timeouts_are_counted_once_whichever_of_record_and_span_comes_first(
    fleet: FleetModel, senders: MakeSender
) -> None:
    sender = senders("http")
    agent = sender.agent("worker")
    run = sender.run_start(agent)
    failing = sender.turn_start(agent, run, "parse")
    slow = sender.turn_start(agent, run, "crawl", timeout=0.5)
    sender.turn_end(failing, "error", error_type="ValueError", record=False)  # span only
    sender.turn_end(slow, "timeout", error_type="TurnTimeoutError", end_span=False)  # record only
    await sender.sent()
    fleet.store.drain()
    sender.turn_end(failing, "error", error_type="ValueError", end_span=False)  # then the record
    slow.span.end()  # then the span
    await sender.sent()
    fleet.store.drain()

    (row,) = fleet.store.agent_rows()
    assert (row.completed, row.failed, row.timed_out) == (0, 1, 1)
    assert row.last_error == "ValueError"
    reasons = {t.tool: t.stop_reason for t in fleet.store.recent_turns()}
    assert reasons == {"parse": StopReason.ERROR, "crawl": StopReason.TIMEOUT}
    assert fleet.store.running_turns() == []


async def test_two_processes_with_agents_of_the_same_name_stay_distinct(
    fleet: FleetModel, senders: MakeSender
) -> None:
    first = senders("grpc", service="checkout", instance="aaaaaaaa-1")
    second = senders("http", service="checkout", instance="bbbbbbbb-2")
    for sender in (first, second):
        agent = sender.agent("planner")
        sender.turn_start(agent, sender.run_start(agent), "plan")
    await first.sent()
    await second.sent()
    fleet.store.drain()

    rows = fleet.store.agent_rows()
    assert [row.name for row in rows] == ["planner", "planner"]
    assert len({row.key for row in rows}) == 2
    assert [row.label for row in rows] == [
        "checkout@aaaaaaaa-1/planner",
        "checkout@bbbbbbbb-2/planner",
    ]
    assert len(fleet.store.running_turns()) == 2
    assert {s.instance for s in fleet.store.service_rows()} == {"aaaaaaaa-1", "bbbbbbbb-2"}


async def test_without_an_instance_id_host_and_pid_tell_processes_apart(
    fleet: FleetModel, senders: MakeSender
) -> None:
    first = senders("http", service="batch")
    second = senders("http", service="batch", extra={"process.pid": 5151})
    for sender in (first, second):
        sender.heartbeat()
        await sender.sent()
    fleet.store.drain()

    assert sorted(s.label for s in fleet.store.service_rows()) == [
        "batch@test-host:4242",
        "batch@test-host:5151",
    ]


async def test_a_turn_trace_keeps_spans_that_are_not_pygents_own(
    fleet: FleetModel, senders: MakeSender
) -> None:
    sender = senders("grpc")
    agent = sender.agent("assistant")
    run = sender.run_start(agent)
    turn = sender.turn_start(agent, run, "answer")
    tool = sender.tool_span(turn)
    chat = sender.foreign_span("chat gpt-4o", tool)
    http = sender.foreign_span("POST", chat)
    http.set_attribute("http.request.method", "POST")
    for span in (http, chat, tool):
        span.end()
    sender.turn_end(turn)
    sender.run_end(agent, run)
    await sender.sent()
    fleet.store.drain()

    (ended,) = fleet.store.recent_turns()
    tree = fleet.store.turn_trace(ended.key)
    assert tree is not None
    assert tree.spans == 5
    assert tree.dropped == 0
    rows = [(depth, node.name) for depth, node in flatten(tree)]
    assert rows == [
        (0, "invoke_agent assistant"),
        (1, "turn answer"),
        (2, "execute_tool answer"),
        (3, "chat gpt-4o"),
        (4, "POST"),
    ]
    post = flatten(tree)[-1][1]
    assert post.kind == "client"
    assert ("http.request.method", "POST") in post.attributes
    assert 0.0 <= post.start <= post.end <= tree.duration
    assert not any(node.orphan for _, node in flatten(tree))


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_gzip_compressed_exports_are_accepted(
    fleet: FleetModel, senders: MakeSender, protocol: str
) -> None:
    sender = senders(protocol, gzip=True)
    agent = sender.agent("zipped")
    sender.turn_start(agent, sender.run_start(agent), "squeeze")
    await sender.sent()
    fleet.store.drain()

    assert [t.tool for t in fleet.store.running_turns()] == ["squeeze"]
    assert fleet.store.counters().get("malformed", 0) == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_metrics_are_accepted_and_counted_for_their_service(
    fleet: FleetModel, receiver: Receiver, protocol: str
) -> None:
    exporter: GrpcMetricExporter | HttpMetricExporter
    if protocol == "grpc":
        exporter = GrpcMetricExporter(endpoint=receiver.grpc_endpoint, insecure=True)
    else:
        exporter = HttpMetricExporter(endpoint=f"{receiver.http_endpoint}/v1/metrics")
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)
    provider = MeterProvider([reader], resource=Resource({"service.name": "metered"}))
    counter = provider.get_meter("test").create_counter("pygents.turns")
    counter.add(1, {"gen_ai.tool.name": "a"})
    counter.add(1, {"gen_ai.tool.name": "b"})
    try:
        assert await asyncio.to_thread(provider.force_flush, 10_000)
        fleet.store.drain()
    finally:
        await asyncio.to_thread(provider.shutdown)

    (service,) = fleet.store.service_rows()
    assert (service.name, service.points) == ("metered", 2)
    assert fleet.store.counters()["points"] == 2
    assert fleet.store.agent_rows() == []


async def test_a_silent_service_turns_stale_and_comes_back_when_it_sends_again() -> None:
    now = [100.0]
    fleet = FleetModel(clock=lambda: now[0], stale_after=5.0)
    async with Receiver(fleet, grpc_port=None, http_port=0) as receiver:
        sender = Sender("http", receiver.http_endpoint)
        try:
            agent = sender.agent("sleeper")
            turn = sender.turn_start(agent, sender.run_start(agent), "nap")
            await sender.sent()
            fleet.store.drain()
            (row,) = fleet.store.agent_rows()
            assert row.state == "running"
            assert not fleet.store.running_turns()[0].stale

            now[0] += 5.5
            assert fleet.store.drain()

            assert row.state == "stale"
            assert fleet.store.agent_rows() == [row], "a stale service is kept, not removed"
            assert fleet.store.running_turns()[0].stale
            assert fleet.store.counters()["stale"] == 1
            assert fleet.store.event_log()[1][-1].kind == "stale"

            sender.turn_end(turn)
            await sender.sent()
            fleet.store.drain()
            assert row.state == "running"
            assert row.completed == 1
            assert "stale" not in fleet.store.counters()
        finally:
            await sender.close()

    now[0] += 10
    fleet.store.drain()
    assert fleet.store.forget_stale() == 1
    assert fleet.store.agent_rows() == []
    assert fleet.store.find_turn(turn.uuid) is None


async def test_the_receiver_binds_loopback_by_default_and_a_port_of_none_turns_a_transport_off(
    fleet: FleetModel,
) -> None:
    async with Receiver(fleet, grpc_port=None, http_port=0) as receiver:
        assert receiver.host == "127.0.0.1"
        assert receiver.grpc_port is None
        assert receiver.grpc_endpoint is None
        assert receiver.http_endpoint == f"http://127.0.0.1:{receiver.http_port}"
    assert receiver.http_port is None


@pytest.mark.parametrize("taken", ["grpc", "http"])
async def test_a_port_in_use_fails_with_one_line_and_leaves_nothing_listening(
    fleet: FleetModel, taken: str
) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        free = free_port()
        ports = (
            {"grpc_port": free, "http_port": port}
            if taken == "http"
            else {
                "grpc_port": port,
                "http_port": free,
            }
        )
        receiver = Receiver(fleet, **ports)
        with pytest.raises(PortInUseError) as caught:
            await receiver.start()

    message = str(caught.value)
    assert "\n" not in message
    assert f"127.0.0.1:{port}" in message
    assert "in use" in message
    assert caught.value.port == port
    assert receiver.grpc_port is None
    assert receiver.http_port is None
    with socket.socket() as probe:  # the other transport was closed again
        probe.bind(("127.0.0.1", free))
