"""SVG snapshot of ``pygents-tui listen`` watching three other frameworks' agents:
a pydantic-ai agent with a run in flight (known from its steps: inferred), and an
OpenAI Agents SDK workflow under OpenTelemetry's and under OpenInference's
instrumentation, their runs ended, one failed, tokens from their model calls.

What they sent is their recorded telemetry (``tests/frameworks/recordings``), fed
through the listener's decoder on the scene's clock, so every figure is exact.
Regenerate with ``uv run pytest tests/tui/listen/test_foreign_snapshots.py
--snapshot-update``, then look at the SVG before committing.
"""

from __future__ import annotations

from typing import Any

from test_foreign_runs import lines
from test_listen_snapshots import SceneClock
from textual.pilot import Pilot

from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.listen.decode import Limits, decode

SIZE = (120, 30)
IN_FLIGHT = 10  # pydantic-ai's requests sent so far: its third run's steps, not the run


def own_traces(requests: list[bytes], mark: str) -> list[bytes]:
    """The recordings number their traces alike (1, 2, 3): each sender its own."""
    return [line.replace(b'"traceId":"0', f'"traceId":"{mark}'.encode()) for line in requests]


def test_listen_three_frameworks_agents(snap_compare: Any) -> None:
    """A row per agent of each framework, keyed by service and name (the handoff
    target too); runs counted with their failures; pydantic-ai's run in flight in
    Running, marked inferred, its tool in the Current column; tokens per agent."""
    clock = SceneClock()
    fleet = FleetModel(clock=clock, wall=clock.wall, stale_after=60.0)
    app = listen_app(fleet, "127.0.0.1", 4317, 4318)

    async def run_before(pilot: Pilot[Any]) -> None:
        app.refresh_timer.pause()
        await pilot.pause()
        sent = [
            *own_traces(lines("openai_agents_otel.jsonl"), "a"),
            *own_traces(lines("openai_agents_openinference.jsonl"), "b"),
            *own_traces(lines("pydantic_ai.jsonl")[:IN_FLIGHT], "c"),
        ]
        for line in sent:
            fleet.ingest(decode("traces", line, json_body=True, limits=Limits()))
        clock.advance(2.0)
        app.refresh_view()
        await pilot.pause()
        await pilot.press("2")  # Running: the inferred run
        app.refresh_view()
        await pilot.pause()
        assert app.view_error is None
        (running,) = fleet.store.running_turns()
        assert running.inferred

    assert snap_compare(app, run_before=run_before, terminal_size=SIZE)
