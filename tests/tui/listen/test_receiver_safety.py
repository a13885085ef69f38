"""The receiver under hostile traffic, in one place: control characters in what it
shows, and its resource bounds — memory kept, work per request, stalled calls,
bodies in flight and open connections.

Every test sends real traffic (aiohttp, grpcio, the OTel exporters) to a real
receiver on 127.0.0.1, in loops bounded in count and time, and asserts the bound
holds and that the receiver still serves afterwards.
"""

from __future__ import annotations

import asyncio
import gc
import gzip
import os
import resource
import select
import socket
import subprocess
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest
from hostile_traffic import (
    EMPTY_ATTRIBUTE,
    PROTOBUF,
    array_of_text,
    empty_span,
    export_one_span,
    post,
    request_of_spans,
    traces_request,
)
from on_screen import control_characters, screen_lines
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.sdk.trace.export import SpanExportResult
from otlp_sender import MakeSender
from terminal import SCRIPT, free_port
from textual.widgets import DataTable

from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetLimits, FleetModel
from pygents_tui.listen import Limits, Receiver
from pygents_tui.ui.screens import InspectorScreen
from pygents_tui.ui.screens.main import status_line

HERE = Path(__file__).parent


# -- fixtures -------------------------------------------------------------------------------------


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
        yield session


# -- 10: memory kept -------------------------------------------------------------------------


async def test_hostile_resources_and_array_values_stay_within_the_stores_byte_budget(
    http: aiohttp.ClientSession,
) -> None:
    """Array-valued resource and span attributes on otherwise empty spans: each span
    kept holds its resource and its arrays, and both are paid for in bytes."""
    limits = FleetLimits(trace_bytes=1024 * 1024, pending_bytes=1024 * 1024)
    budget = limits.trace_bytes + limits.pending_bytes
    fleet = FleetModel(stale_after=3600.0, limits=limits)
    heavy_resource = [KeyValue(key=f"r{n}", value=array_of_text(32, 1000, "r")) for n in range(8)]
    heavy_attributes = [KeyValue(key=f"a{n}", value=array_of_text(32, 1000, "a")) for n in range(8)]

    async with Receiver(fleet, grpc_port=None, http_port=0) as receiver:
        tracemalloc.start()
        try:
            for number in range(40):
                spans = [empty_span(number * 4 + 1), empty_span(number * 4 + 2, heavy_attributes)]
                body = traces_request(spans, heavy_resource, service=f"svc-{number % 4}")
                assert await post(http, receiver, body) == 200
                fleet.store.drain()
                if number == 3:
                    gc.collect()
                    start, _ = tracemalloc.get_traced_memory()
            gc.collect()
            end, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()

    assert fleet.store.counters()["spans"] == 80
    assert fleet.traces.size <= limits.trace_bytes
    assert fleet.traces.evicted > 0
    growth = end - start
    assert growth < budget, f"kept memory grew by {growth:,} bytes, over the {budget:,} budget"


# -- 11: work per request ---------------------------------------------------------------------


async def test_two_million_copies_of_one_key_cost_only_the_attributes_a_span_may_keep(
    http: aiohttp.ClientSession, fleet: FleetModel, receiver: Receiver
) -> None:
    copies = 2_000_000
    one_span = empty_span(7).SerializeToString() + EMPTY_ATTRIBUTE * copies
    body = request_of_spans([one_span])
    assert len(gzip.compress(body)) < 8 * 1024  # what the sender sends is tiny

    status = await post(http, receiver, body, gzipped=True)

    assert status == 200
    fleet.store.drain()
    [kept] = fleet.traces.spans((7).to_bytes(16, "big").hex())
    assert len(kept.attributes) == 1
    assert kept.dropped_attributes == copies - 1
    # The work done: the span's first 64 entries, none of the other two million.
    assert receiver.values_read == Limits().max_attributes


async def test_a_request_that_reads_more_values_than_its_budget_is_refused_as_too_large(
    http: aiohttp.ClientSession, fleet: FleetModel, receiver: Receiver
) -> None:
    """Duplicates spread over many spans, each under the per-span bound: the
    request's reading budget refuses it, counted, after a bounded amount of work
    (at most one span's entries past the budget: 60 here)."""
    spans = [empty_span(n).SerializeToString() + EMPTY_ATTRIBUTE * 60 for n in range(1, 15_001)]
    body = request_of_spans(spans)

    status = await post(http, receiver, body, gzipped=True)

    assert status == 413
    assert fleet.store.counts["too_large"] == 1
    assert "attribute values" in (fleet.last_rejection or "")
    budget = Limits().max_reads_per_request
    assert budget < receiver.values_read <= budget + 60, receiver.values_read
    good = traces_request([empty_span(99)])
    assert await post(http, receiver, good) == 200


# -- 12: calls and bodies that never arrive ---------------------------------------------------

TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


async def test_grpc_calls_that_never_send_their_message_are_ended_and_real_exporters_get_through(
    fleet: FleetModel,
) -> None:
    """The connection holds its share of calls open until the receive timeout ends
    them, the rest are refused at once; the real exporter gets through meanwhile
    (within its single export: its own timeout bounds it)."""
    limits = Limits(receive_timeout=1.0)
    async with Receiver(fleet, grpc_port=0, http_port=None, limits=limits) as receiver:
        channel = grpc.aio.insecure_channel(receiver.grpc_endpoint)
        try:
            opener = channel.stream_unary(TRACE_EXPORT)
            stalled = [opener() for _ in range(20)]  # each opened, none sends its message
            await asyncio.wait_for(asyncio.gather(*(c.wait_for_connection() for c in stalled)), 10)

            result, trace_id = await asyncio.wait_for(
                asyncio.to_thread(export_one_span, str(receiver.grpc_endpoint)), 30
            )
            codes = await asyncio.wait_for(asyncio.gather(*(c.code() for c in stalled)), 10)
        finally:
            await channel.close()

    assert result is SpanExportResult.SUCCESS
    held = limits.max_calls_per_connection
    assert codes.count(grpc.StatusCode.DEADLINE_EXCEEDED) == held
    assert codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED) == 20 - held
    assert fleet.store.counts["refused"] >= 20
    fleet.store.drain()
    assert [span.name for span in fleet.traces.spans(trace_id)] == ["after the stall"]


async def test_an_http_body_that_stops_arriving_is_answered_408_within_the_receive_timeout(
    http: aiohttp.ClientSession, fleet: FleetModel
) -> None:
    never = asyncio.Event()

    async def stalls() -> AsyncIterator[bytes]:
        yield traces_request([empty_span(5)])[:10]
        await never.wait()

    limits = Limits(receive_timeout=1.0)
    async with Receiver(fleet, grpc_port=None, http_port=0, limits=limits) as receiver:
        url = f"{receiver.http_endpoint}/v1/traces"
        headers = {"Content-Type": PROTOBUF}
        # The sender never goes on: only the receiver's timeout can answer it.
        async with asyncio.timeout(10):
            async with http.post(url, data=stalls(), headers=headers) as reply:
                status = reply.status
        assert await post(http, receiver, traces_request([empty_span(6)])) == 200

    assert status == 408
    assert fleet.store.counts["refused"] == 1
    assert "did not arrive within 1 s" in (fleet.last_rejection or "")


# -- 13: bodies in flight ---------------------------------------------------------------------


async def test_bodies_past_the_in_flight_budget_are_refused_503_and_counted(
    http: aiohttp.ClientSession, fleet: FleetModel
) -> None:
    """Ten uploads each stopped just short of the end of their body, with room for
    four: six are refused at once, the four finish when their senders go on."""
    go_on = asyncio.Event()
    attribute = KeyValue(key="big", value=AnyValue(string_value="x" * 600_000))

    def upload(number: int) -> Callable[[], AsyncIterator[bytes]]:
        body = traces_request([empty_span(number * 2 + 1, [attribute])])

        async def chunks() -> AsyncIterator[bytes]:
            yield body[:-10]
            await go_on.wait()
            yield body[-10:]

        return chunks

    limits = Limits(
        max_message_bytes=1024 * 1024, max_in_flight_bytes=4 * 1024 * 1024, receive_timeout=30
    )
    async with Receiver(fleet, grpc_port=None, http_port=0, limits=limits) as receiver:
        url = f"{receiver.http_endpoint}/v1/traces"

        async def send(number: int) -> int:
            headers = {"Content-Type": PROTOBUF}
            async with http.post(url, data=upload(number)(), headers=headers) as reply:
                await reply.read()
                return reply.status

        tasks = [asyncio.create_task(send(n)) for n in range(10)]
        try:
            async with asyncio.timeout(10):
                for refused, finished in enumerate(asyncio.as_completed(tasks), start=1):
                    assert await finished == 503
                    if refused == 6:
                        break
            go_on.set()
            statuses = await asyncio.wait_for(asyncio.gather(*tasks), 10)
        finally:
            go_on.set()
            for task in tasks:
                task.cancel()

    assert sorted(statuses) == [200] * 4 + [503] * 6
    assert fleet.store.counts["refused"] == 6
    assert "bytes of requests are being received" in (fleet.last_rejection or "")
    fleet.store.drain()
    assert fleet.store.counters()["spans"] == 4


async def test_connections_past_the_limit_are_closed_counted_and_shown(
    http: aiohttp.ClientSession, fleet: FleetModel
) -> None:
    """Four connections allowed: six more are closed at once and counted; the four
    idle ones are closed after the idle timeout, and a sender gets in again."""
    limits = Limits(max_connections=4, idle_timeout=2.0)
    async with Receiver(fleet, grpc_port=None, http_port=0, limits=limits) as receiver:
        assert receiver.http_port is not None
        idle = [await asyncio.open_connection("127.0.0.1", receiver.http_port) for _ in range(10)]
        try:
            async with asyncio.timeout(10):
                refused_ends = [await reader.read(1) for reader, _ in idle[4:]]
                # The refused ones are closed at once, the idle ones only at their timeout.
                open_then = [not reader.at_eof() for reader, _ in idle[:4]]
                idle_ends = [await reader.read(1) for reader, _ in idle[:4]]
        finally:
            for _, writer in idle:
                writer.close()
        assert await post(http, receiver, traces_request([empty_span(3)])) == 200

    assert refused_ends == [b""] * 6  # closed by the receiver without a byte
    assert idle_ends == [b""] * 4
    assert open_then == [True] * 4
    assert fleet.store.counts["refused"] == 6
    counts = fleet.store.counters()
    line = status_line(fleet.store, [], counts, False)
    assert "6 refused (receiver busy or sender too slow)" in line


# -- 14: file descriptors -----------------------------------------------------------------------

FILES_LIMIT = 256


def low_files_limit() -> None:
    """Run in the child before it executes: a low open-files limit."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILES_LIMIT, FILES_LIMIT))


def open_idle(port: int, count: int) -> list[socket.socket]:
    """``count`` connections to ``port`` that send nothing (those the listener closes
    at once included: a refusal shows only when the connection is read)."""
    idle = []
    for _ in range(count):
        connection = socket.create_connection(("127.0.0.1", port), timeout=5)
        idle.append(connection)
    return idle


def wait_listening(port: int, child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"pygents-tui listen did not listen on {port} within 30 s")


def test_more_idle_connections_than_open_files_leave_listen_alive_and_serving(
    tmp_path: Path,
) -> None:
    grpc_port, http_port = free_port(), free_port()
    child = subprocess.Popen(
        [str(SCRIPT), "listen", "--grpc-port", str(grpc_port), "--http-port", str(http_port)],
        cwd=tmp_path,
        env={**os.environ, "TEXTUAL_DRIVER": "textual.drivers.headless_driver:HeadlessDriver"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=low_files_limit,
    )
    idle: list[socket.socket] = []
    try:
        wait_listening(http_port, child)
        wait_listening(grpc_port, child)
        idle = open_idle(http_port, FILES_LIMIT) + open_idle(grpc_port, FILES_LIMIT)
        # Past its limit the listener closes what it accepts: those turn readable (a
        # reset or the end of the stream), where a kept idle one stays silent.
        closed, _, _ = select.select(idle[:FILES_LIMIT], [], [], 5.0)
        assert child.poll() is None, "listen died with more connections than open files"
        assert closed, "every HTTP connection was kept, beyond the open-files limit"
        assert len(closed) < FILES_LIMIT, "no HTTP connection was kept"

        for connection in idle:
            connection.close()
        idle = []
        sent = subprocess.run(
            [sys.executable, str(HERE / "send_once.py"), f"127.0.0.1:{grpc_port}"],
            env={**os.environ, "PYTHONPATH": str(HERE)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert sent.returncode == 0, sent.stderr
        assert child.poll() is None, "listen died after the connections were released"
    finally:
        for connection in idle:
            connection.close()
        if child.poll() is None:
            child.terminate()
        try:
            _, errors = child.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            child.kill()
            _, errors = child.communicate()
    assert b"Too many open files" not in errors, errors.decode(errors="replace")[-2000:]


# -- 9: control characters ---------------------------------------------------------------------

# Sent through the real OpenTelemetry SDK and OTLP exporter, read off the screen of the
# app `pygents-tui listen` runs, under Pilot.

SIZE = (160, 50)

# OSC 0 (window title), OSC 52 (clipboard), CSI 2J (clear), ESC, BEL, C1, DEL, NUL, CR.
SERVICE = "s\x1b]0;T\x07"
AGENT = "a\x1b[2J"
TOOL = "t\x9b\x7f\x00\r"
ARGS = "args\x1b]52;c;cHduZWQ=\x07"
VALUE = "v\x1b\x07!"
ERROR = "Err\x1b[2J"
SPAN = "GET \x1b]0;S\x07"
URL = "http://h/\x00\x1b[2J"
LABEL = "s␛]0;T␇@i-1/a␛[2J"


def shown(lines: list[str]) -> str:
    return "\n".join(lines)


async def test_control_characters_received_over_otlp_are_shown_visible_everywhere(
    fleet: FleetModel, receiver: Receiver, senders: MakeSender, until: Any
) -> None:
    app = listen_app(fleet, receiver.host, receiver.grpc_port, receiver.http_port)
    app.animation_level = "none"
    seen: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        sender = senders("grpc", service=SERVICE, instance="i-1")
        agent = sender.agent(AGENT)
        run = sender.run_start(agent)
        streamed = sender.turn_start(agent, run, TOOL, streaming=True, args_preview=ARGS)
        sender.value(streamed, preview=VALUE)
        failed = sender.turn_start(agent, run, TOOL)
        await sender.sent()  # the starts first: a start arriving after its end is dropped
        tool = sender.tool_span(streamed)
        call = sender.foreign_span(SPAN, tool)
        call.set_attribute("url.full", URL)
        call.end()
        tool.end()
        sender.turn_end(streamed)
        sender.turn_end(failed, "error", error_type=ERROR)
        sender.turn_start(agent, run, TOOL, timeout=600.0)  # still running
        await sender.sent()

        table = app.screen.query_one("#agents", DataTable)
        await until(pilot, lambda: table.row_count == 1 and len(fleet.store.running_turns()) == 1)
        await until(pilot, lambda: app.selected_agent is not None)
        for key in "123456":  # queue, running, values, context, events, timeline
            await pilot.press(key)
            app.refresh_view()
            await pilot.pause()
            seen += screen_lines(app)

        for turn in (streamed, failed):
            found = fleet.store.find_turn(turn.uuid)
            assert found is not None
            app.action_inspect(found.key)
            await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
            if turn is streamed:
                await until(
                    pilot, lambda: "4 spans of its trace so far" in shown(screen_lines(app))
                )
            seen += screen_lines(app)
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, InspectorScreen))

    assert control_characters(seen) == []
    text = shown(seen)
    for expected in (
        LABEL,  # the agents table, the running panel, the timeline, the inspector
        "t\\x9b␡␀⏎",  # the tool
        "args␛]52;c;cHduZWQ=␇",  # the arguments' preview, in the inspector
        "v␛␇!",  # the value's preview, in the Values panel
        "Err␛[2J",  # the error type, in the events and the inspector
        "GET ␛]0;S␇",  # the trace: a span's name ...
        "url.full=http://h/␀␛[2J",  # ... and its telling attribute
    ):
        assert expected in text, expected
