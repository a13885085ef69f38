"""A process restarted under the same ``service.instance.id`` (as a deployment that
names its instances does): the old run's running turns can never end, so they end
as lost, and its agents do not stay beside the new run's under the same names.

The first test is the real thing: a worker traced by ``pygents_otel`` killed with
SIGKILL mid-turn and started again, watched by the real receiver and the dashboard
under Pilot. The second covers what a real restart here cannot show: the same pid
(a container's first process is always pid 1), told apart by
``process.creation.time``, and a late batch of the replaced run.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

from otlp_sender import MakeSender
from textual.widgets import DataTable
from worker_processes import Spawn

from pygents import StopReason
from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver
from pygents_tui.ui.app import Dashboard

SIZE = (130, 40)
ROUNDS = 9000  # rounds of `until` (10 ms each at least): a broken pipeline fails, never hangs
LOST = "lost: its process restarted"


def waiting_turns(fleet: FleetModel) -> list[str]:
    return [t.key for t in fleet.store.running_turns() if t.tool == "wait_for_go"]


async def test_a_process_killed_and_restarted_loses_its_turn_and_shows_its_agent_once(
    fleet: FleetModel,
    receiver: Receiver,
    spawn: Spawn,
    until: Any,
    text_of: Callable[[Dashboard], str],
) -> None:
    endpoint = f"http://{receiver.grpc_endpoint}"
    env = {"OTEL_RESOURCE_ATTRIBUTES": "service.instance.id=pod-0"}
    app = listen_app(fleet, receiver.host, receiver.grpc_port, receiver.http_port)
    async with app.run_test(size=SIZE) as pilot:
        first = spawn("configure", "checkout", "planner", endpoint, "grpc", env=env)
        await until(pilot, lambda: len(waiting_turns(fleet)) == 1, ROUNDS)
        (dead,) = waiting_turns(fleet)
        first.process.send_signal(signal.SIGKILL)
        assert first.process.wait(timeout=30) == -signal.SIGKILL

        second = spawn("configure", "checkout", "planner", endpoint, "grpc", env=env)
        await until(pilot, lambda: waiting_turns(fleet) not in ([], [dead]), ROUNDS)

        turn = fleet.store.find_turn(dead)
        assert turn is not None
        assert turn.stop_reason is StopReason.ERROR, "the killed run's turn can never end"
        assert turn.error == LOST
        assert len(fleet.store.running_turns()) == 1, "only the new run's turn runs"
        table = app.screen.query_one("#agents", DataTable)
        assert table.row_count == 1, "the agent of the dead run is not shown beside the new"
        assert str(table.get_row_at(0)[0]) == "checkout@pod-0/planner"
        screen = text_of(app)
        assert "1 service · 1 agent(s) · 1 turn(s) running" in screen
        assert screen.count("s left") == 1, "one bar in the Running panel: the new run's"
        events = [entry.text for entry in fleet.store.event_log()[1]]
        assert any(text.startswith("process restarted as pid ") for text in events)

        second.go()
        await until(pilot, lambda: not fleet.store.running_turns(), ROUNDS)
        assert second.process.wait(timeout=30) == 0, second.log()
        (agent,) = fleet.store.agent_rows()
        assert (agent.completed, agent.failed) == (2, 0), "the new run's own turns only"


async def test_a_restart_with_the_same_pid_is_told_by_its_creation_time(
    fleet: FleetModel, senders: MakeSender
) -> None:
    def run(created: str) -> Any:
        extra = {"process.creation.time": created}  # the pid (4242) stays the same
        return senders("grpc", service="box", instance="pod-1", extra=extra)

    old = run("2026-01-01T00:00:00.000Z")
    planner = old.agent("planner")
    old_run = old.run_start(planner)
    old.turn_start(planner, old_run, "fetch", timeout=30.0)
    await old.sent()
    fleet.store.drain()
    (lost,) = fleet.store.running_turns()

    new = run("2026-01-01T00:05:00.000Z")
    again = new.agent("planner")
    new.turn_start(again, new.run_start(again), "fetch", timeout=30.0)
    await new.sent()
    fleet.store.drain()
    old.heartbeat()  # the old run's last batch, late (as a final flush would be)
    old.snapshot(planner, "running")
    await old.sent()
    fleet.store.drain()

    assert (lost.stop_reason, lost.error) == (StopReason.ERROR, LOST)
    (running,) = fleet.store.running_turns()
    assert running is not lost
    (agent,) = fleet.store.agent_rows()
    assert agent.key == running.agent, "the new run's planner only"
    assert fleet.store.counters()["replaced_dropped"] == 2, "the old run's late records"
    assert fleet.store.counters()["restarts"] == 1
