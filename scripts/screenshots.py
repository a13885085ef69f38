"""Write the other-frameworks guide's screenshots: ``uv run python scripts/screenshots.py``.

Each recording of another framework's telemetry (tests/frameworks/recordings/*.jsonl,
written by tests/frameworks/record.py from real runs) is replayed into the real
``pygents-tui listen`` app: its lines decoded as the receiver decodes an OTLP/JSON
request and ingested into a `FleetModel`, the app built as the command builds it
(`listen_app`, default ports) and run headless under Textual's Pilot, and its screen
saved as SVG to ``docs/images/other-frameworks-<name>.svg``.

Why a script, not a test: the pictures show what the console makes of these senders
today, and change whenever the feeder learns more; re-run it then and commit them.
The model's wall clock is set just after the recording's last span, so the times on
screen are those of the recorded runs, and the pictures do not change from run to run.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.listen.decode import Limits, decode
from pygents_tui.recording import Recording

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "tests" / "frameworks" / "recordings"
IMAGES = ROOT / "docs" / "images"
# The picture's name for each recording (the guide links these names).
SHOTS = {
    "pydantic_ai.jsonl": "pydantic-ai",
    "openai_agents_otel.jsonl": "openai-agents-otel",
    "openai_agents_openinference.jsonl": "openai-agents-openinference",
}
SIZE = (130, 34)


def replayed(recording: Path) -> FleetModel:
    """A fleet model that has received every request of ``recording``, drained."""
    lines: list[tuple[str, bytes]] = []
    last = 0
    with Recording(recording) as reader:
        while (line := reader.read()) is not None:
            lines.append((line.signal, line.data))
            last = max(last, line.time_ns)
    end = last + 1_000_000_000
    fleet = FleetModel(clock=lambda: 0.0, wall=lambda: end, stale_after=1e9)
    limits = Limits()
    for signal, data in lines:
        fleet.ingest(decode(signal, data, json_body=True, limits=limits))  # type: ignore[arg-type]
    fleet.store.drain()
    return fleet


async def shoot(recording: Path) -> str:
    """The listen app's screen with ``recording`` replayed into it, as SVG."""
    fleet = replayed(recording)
    app = listen_app(fleet, "127.0.0.1", 4317, 4318)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.refresh_view()
        await pilot.pause()
        svg = app.export_screenshot(title=f"pygents-tui listen: {SHOTS[recording.name]}")
        await pilot.press("q")
    return svg


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="scripts/screenshots.py", description=__doc__)
    parser.add_argument("--out", type=Path, default=IMAGES, help="where the SVGs go")
    args = parser.parse_args(argv)
    for name, shot in SHOTS.items():
        target = args.out / f"other-frameworks-{shot}.svg"
        target.write_text(asyncio.run(shoot(RECORDINGS / name)))
        print(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
