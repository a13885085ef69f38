"""``listen --record`` then ``pygents-tui replay``: a session sent by the real
OpenTelemetry SDK over OTLP (gRPC and HTTP) to the real receiver on 127.0.0.1 is
recorded as it is received, then replayed into the same dashboard, which must show
the same agents, the same turns, and their traces in the inspector.

The replay runs on a fake clock (it moves only when told), seeking to the end of
the recording, so nothing here waits on the replay's pace.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from fake_clock import FakeClock
from otlp_sender import Sender
from textual.widgets import DataTable

from pygents_tui.cli.listen import listen_app
from pygents_tui.cli.replay import ReplayDashboard, open_replay
from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver
from pygents_tui.recording import RecordWriter
from pygents_tui.ui.app import Dashboard
from pygents_tui.ui.screens import InspectorScreen

SIZE = (130, 40)
TextOf = Callable[[Dashboard], str]


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    return tmp_path / "session.jsonl"


@pytest.fixture
async def receiver(fleet: FleetModel, recording: Path) -> AsyncIterator[Receiver]:
    """Overrides the listener fixtures' receiver: this one records what it accepts."""
    writer = RecordWriter(recording)
    async with Receiver(fleet, grpc_port=0, http_port=0, recorder=writer) as running:
        yield running
    writer.close()


def agent_cells(app: Dashboard) -> dict[str, list[str]]:
    table = app.screen.query_one("#agents", DataTable)
    rows = (table.get_row_at(index) for index in range(table.row_count))
    return {str(row[0]): [str(cell) for cell in row] for row in rows}


def shown(cells: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    """What must match between live and replay: each agent's label, state, tool and
    counts (not the columns drawn from the clock: how long ago, and the per-second
    throughput bars, whose buckets are the listener's seconds)."""
    return {label: (row[1], row[3], *row[5:-1]) for label, row in cells.items()}


def recorded_requests(path: Path) -> tuple[list[dict[str, Any]], str]:
    text = path.read_text()
    return [json.loads(line) for line in text.splitlines()], text


async def test_a_recorded_listen_session_replays_to_the_same_rows_and_traces(
    fleet: FleetModel,
    receiver: Receiver,
    recording: Path,
    until: Any,
    text_of: TextOf,
) -> None:
    live = listen_app(fleet, receiver.host, receiver.grpc_port, receiver.http_port)
    async with live.run_test(size=SIZE) as pilot:
        checkout = Sender("grpc", receiver.grpc_endpoint, service="checkout", instance="pod-a")
        billing = Sender("http", receiver.http_endpoint, service="billing", instance="pod-b")
        planner = checkout.agent("planner")
        run = checkout.run_start(planner)
        finished = checkout.turn_start(planner, run, "forecast", timeout=5.0)
        tool = checkout.tool_span(finished)
        call = checkout.foreign_span("GET /v1/forecast", tool)
        call.end()
        tool.end()
        checkout.turn_end(finished)
        checkout.turn_start(planner, run, "fetch", timeout=9.0)  # still running
        payer = billing.agent("payer")
        billing.turn_start(payer, billing.run_start(payer), "charge", timeout=4.0)
        for sender in (checkout, billing):
            await sender.sent()
        await until(pilot, lambda: len(agent_cells(live)) == 2)
        await until(pilot, lambda: fleet.store.find_turn(finished.uuid) is not None)
        live_rows = shown(agent_cells(live))
        for sender in (checkout, billing):
            await sender.close()
    receiver.recorder.close()  # type: ignore[union-attr]  # flushes the writer thread

    requests, text = recorded_requests(recording)
    assert requests
    assert all(request.keys() <= {"resourceSpans", "resourceLogs"} for request in requests)
    assert '"traceId":"' + finished.trace_id + '"' in text  # ids in hex, as OTLP/JSON has them

    view = open_replay(str(recording), clock=FakeClock(0.0))
    replay = ReplayDashboard(view, recording.name)
    async with replay.run_test(size=SIZE) as pilot:
        view.replay.seek(view.replay.end_ns)
        await until(pilot, lambda: len(agent_cells(replay)) == 2)
        assert shown(agent_cells(replay)) == live_rows
        screen = text_of(replay)
        assert "replay · session.jsonl · replay 0:00:0" in screen
        assert "end of recording" in screen

        # The inspector and the trace view work on a replayed turn.
        found = view.store.find_turn(finished.uuid)
        assert found is not None
        assert found.ended is not None
        replay.action_inspect(found.key)
        await until(pilot, lambda: isinstance(replay.screen, InspectorScreen))
        screen = text_of(replay)
        assert "forecast (coroutine) on checkout@pod-a/planner" in screen
        assert finished.trace_id in screen
        assert "GET /v1/forecast" in screen  # a span pygents did not make, in the tree
        assert "turn forecast" in screen
