"""A process that ends normally says goodbye (its live mode's last record): the
listener marks its agents ended, not stale, and `c` (clear finished) removes them. A
process that dies without a word still goes stale, as before.

Real worker processes (``live_worker.py``, ``pygents_otel.configure`` in live mode)
export over OTLP/gRPC to the real receiver; the app is the real Textual app under
Pilot. Nothing sleeps: each wait is on the model's arrival signal, bounded.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator, Callable

import pytest
from otlp_requests import Event, logs_batch
from textual.widgets import DataTable
from worker_processes import Spawn, Worker, drain_until

from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver
from pygents_tui.ui.app import Dashboard

DEADLINE = 90.0  # only a broken pipeline waits this long


@pytest.fixture
def fleet() -> FleetModel:
    """Quick to call a silent process stale: the killed worker must get there."""
    return FleetModel(stale_after=1.5)


@pytest.fixture
async def receiver(fleet: FleetModel) -> AsyncIterator[Receiver]:
    async with Receiver(fleet, grpc_port=0, http_port=0) as running:
        yield running


async def until(fleet: FleetModel, holds: Callable[[], bool], workers: list[Worker]) -> None:
    await drain_until(fleet, holds, time.monotonic() + DEADLINE, workers)


def states(fleet: FleetModel) -> dict[str, str]:
    return {row.service.name: row.state for row in fleet.store.agent_rows()}


def shown_states(app: Dashboard) -> list[str]:
    """The agents table's state column, top to bottom."""
    table: DataTable[object] = app.screen.query_one("#agents", DataTable)
    return [str(table.get_row_at(i)[1]) for i in range(table.row_count)]


async def test_a_process_that_exits_normally_ends_and_c_clears_it_while_a_killed_one_goes_stale(
    fleet: FleetModel, receiver: Receiver, spawn: Spawn
) -> None:
    grpc = f"http://{receiver.grpc_endpoint}"
    workers = [
        spawn("configure", "leaver", "planner", grpc, "grpc"),
        spawn("configure", "victim", "planner", grpc, "grpc"),
    ]
    leaver, victim = workers
    await until(fleet, lambda: len(fleet.store.running_turns()) == 2, workers)

    leaver.go()  # its last turn ends, its run ends, configure()'s shutdown runs
    # Waited for off the event loop: the receiver on it takes the worker's last export.
    assert await asyncio.to_thread(leaver.process.wait, DEADLINE) == 0
    victim.process.send_signal(signal.SIGKILL)
    assert await asyncio.to_thread(victim.process.wait, DEADLINE) == -signal.SIGKILL

    await until(fleet, lambda: states(fleet) == {"leaver": "ended", "victim": "stale"}, workers)
    by_service = {row.service.name: row for row in fleet.store.agent_rows()}
    assert by_service["leaver"].gone
    assert not by_service["leaver"].service.stale
    assert not by_service["victim"].gone, "a killed process is stale, not finished"
    assert [t.service.name for t in fleet.store.running_turns()] == ["victim"], (
        "the killed process's turn is left running, stale; the leaver's turn ended"
    )
    assert fleet.store.finished_count() == 1
    assert fleet.store.counters()["ended"] == 1
    assert fleet.store.counters()["stale"] == 1

    app = listen_app(fleet, receiver.host, receiver.grpc_port, receiver.http_port)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert shown_states(app) == ["ended", "stale"]
        assert app.check_action("clear_finished", ()) is True, "`c` is offered"
        await pilot.press("c")
        await pilot.pause()
        assert shown_states(app) == ["stale"], "`c` removed the ended process only"
    assert states(fleet) == {"victim": "stale"}
    assert fleet.store.finished_count() == 0


# -- the goodbye record, folded on its own -----------------------------------------------------


def test_a_goodbye_ends_the_running_turns_as_lost_and_a_later_heartbeat_revives_the_process() -> (
    None
):
    now = [1000.0]
    wall = 1_700_000_000 * 10**9
    fleet = FleetModel(clock=lambda: now[0], wall=lambda: wall, stale_after=5.0)
    agent = {"gen_ai.agent.name": "planner", "gen_ai.agent.id": "agent-1"}
    start = {**agent, "pygents.turn.uuid": "t1", "gen_ai.tool.name": "think"}
    fleet.ingest(logs_batch([Event("pygents.turn.start", start, wall)]))
    fleet.ingest(logs_batch([Event("pygents.process.goodbye", {}, wall)]))
    fleet.store.drain()

    (row,) = fleet.store.agent_rows()
    assert row.state == "ended"
    assert fleet.store.running_turns() == [], "its process is gone: the turn cannot end now"
    (turn,) = fleet.store.recent_turns()
    assert turn.error == "lost: its process ended"
    now[0] += 60.0
    fleet.store.drain()
    assert row.state == "ended", "an ended process does not go stale"

    fleet.ingest(logs_batch([Event("pygents.process.heartbeat", {}, wall)]))
    fleet.store.drain()
    assert row.state == "running", "live mode on again in that process"
    assert fleet.store.finished_count() == 0
