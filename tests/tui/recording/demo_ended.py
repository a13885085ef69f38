"""Run the demo under the dashboard and record it as ``pygents-tui demo --record FILE``
does (the CLI's own helpers), headless under Textual's Pilot; quit with ``q`` once
turns have ended and others run; then print, as one JSON line, what the dashboard's
store ended on: each agent's counts and the turns still running.

A child process of its own (``python demo_ended.py FILE``): recording configures the
process's global OpenTelemetry providers, which a test process must not keep.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pygents_otel
from pygents_tui import Dashboard
from pygents_tui.cli._commands import _start_recording
from pygents_tui.cli.demo import build_demo
from pygents_tui.recording._capture import end_in_process

WAIT = 30.0  # seconds for the demo to reach the scene below


async def main(path: str) -> dict[str, Any]:
    recorder, telemetry = _start_recording(path, "demo")
    demo = build_demo(seed=1, speed=20)
    app = Dashboard(demo.run, title="demo", trace_id=pygents_otel.trace_id_of)
    app.on_end.append(lambda: end_in_process(recorder))  # as the CLI does
    app.animation_level = "none"
    async with app.run_test(size=(120, 40)) as pilot:
        store = app.view
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT
        while True:  # turns ended (values among them) and some still running
            planner = store.agent_row("planner")
            if planner is not None and planner.completed >= 6 and len(store.running_turns()) >= 2:
                break
            assert loop.time() < deadline, "the demo never got going"
            await pilot.pause(0.02)
        await pilot.press("q")
    telemetry.shutdown()
    recorder.close()
    return {
        "agents": {
            row.name: [row.completed, row.failed, row.timed_out, row.cancelled, row.values]
            for row in store.agent_rows()
        },
        "running": sorted(turn.uuid for turn in store.running_turns()),
        "summary": recorder.summary(),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1]))))
