"""Write the other-frameworks guide's screenshots: ``uv run python scripts/screenshots.py``.

Each program of the guide (docs/guides/other-frameworks.md: its Python blocks that
name their file) is saved and run as the guide says, ``python weather_….py`` with the
variables the guide sets, against the fake Chat Completions server the guide ships
(examples/frameworks/fake_chat_completions.py): nothing leaves the machine. Its spans
go over OTLP/HTTP to a real ``listen`` receiver (a `Receiver` feeding a `FleetModel`,
as the command wires them). The app is then built as the command builds it
(`listen_app`, titled with the default ports the guide gives), run headless under
Textual's Pilot, and its screen saved as SVG to
``docs/images/other-frameworks-<name>.svg``.

The programs run with this environment's ``python`` (``uv run`` has every framework
of the guide). tests/docs/test_other_frameworks_guide.py runs them the same way and
checks that each picture shows what its program gives now (the status line and the
agents' rows): when the frameworks or the console change what shows, it fails; re-run
this script then, look at the pictures and commit them.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver

ROOT = Path(__file__).resolve().parents[1]
for _folder in ("tests/docs", "examples/frameworks"):  # the pages' parser; the fake server
    if str(ROOT / _folder) not in sys.path:
        sys.path.append(str(ROOT / _folder))

import fake_chat_completions  # noqa: E402 - found through the lines above
from doc_blocks import named_files, reader_environment, shell_commands  # noqa: E402

__all__ = [
    "GUIDE",
    "IMAGES",
    "SHOTS",
    "Ran",
    "guide_settings",
    "run_program",
    "screen_text",
    "shoot",
]

GUIDE = ROOT / "docs" / "guides" / "other-frameworks.md"
IMAGES = ROOT / "docs" / "images"
# The picture of each program of the guide (the guide links these names).
SHOTS = {
    "weather_pydantic_ai.py": "pydantic-ai",
    "weather_agents_otel.py": "openai-agents-otel",
    "weather_agents_openinference.py": "openai-agents-openinference",
}
SIZE = (130, 34)
TAB = "5"  # the Events: each run of each agent
TIMEOUT = 120.0  # seconds: only bounds a program that would hang if broken
# Where the guide tells its reader to send: listen's OTLP/HTTP port, the fake server.
ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"
BASE_URL = "OPENAI_BASE_URL"


def guide_settings() -> dict[str, str]:
    """The variables the guide's ``export`` lines set, in the order they set them."""
    settings: dict[str, str] = {}
    for command in shell_commands(GUIDE):
        if command.startswith("export "):
            for word in command.removeprefix("export ").split():
                name, _, value = word.partition("=")
                settings[name] = value
    return settings


@dataclass(frozen=True)
class Ran:
    """A program of the guide, run into a receiver: what the receiver's model holds
    after it, and how the program ended."""

    fleet: FleetModel
    returncode: int | None
    out: str
    err: str


async def run_program(
    program: str, python: str | Path, base_url: str, *, cwd: Path, env: dict[str, str] | None = None
) -> Ran:
    """Run ``python program`` (the guide's block of that name, saved to ``cwd``) with the
    guide's variables, its endpoint a fresh receiver's and its ``OPENAI_BASE_URL``
    ``base_url``, and wait for it; ``env``: the environment to add them to (this
    process's, as a reader's shell, by default)."""
    (cwd / program).write_text(named_files(GUIDE)[program])
    fleet = FleetModel(stale_after=3600.0)
    async with Receiver(fleet, grpc_port=None, http_port=0) as receiver:
        settings = guide_settings() | {ENDPOINT: str(receiver.http_endpoint), BASE_URL: base_url}
        base = env if env is not None else reader_environment()
        base = {k: v for k, v in base.items() if not k.startswith("OPENAI_")}
        process = await asyncio.create_subprocess_exec(
            str(python),
            program,
            cwd=cwd,
            env=base | settings,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
        )
        async with asyncio.timeout(TIMEOUT):
            out, err = await process.communicate()
        fleet.store.drain()
    return Ran(fleet, process.returncode, out.decode(), err.decode())


async def shoot(fleet: FleetModel, name: str) -> str:
    """The listen app's screen showing ``fleet``, as SVG."""
    app = listen_app(fleet, "127.0.0.1", 4317, 4318)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press(TAB)
        app.refresh_view()
        await pilot.pause()
        svg = app.export_screenshot(title=f"pygents-tui listen: {name}")
        await pilot.press("q")
    return svg


_TEXT = re.compile(
    r'<text[^>]*\bx="(?P<x>[\d.]+)"[^>]*clip-path="url\(#[\w-]+-line-(?P<line>\d+)\)"[^>]*>'
    r"(?P<text>[^<]*)</text>"
)


def screen_text(svg: str) -> list[str]:
    """The lines of text of a Textual SVG screenshot, as the screen shows them (each
    run of text placed by its column; spaces between runs are not kept)."""
    import html

    lines: dict[int, list[tuple[float, str]]] = {}
    for found in _TEXT.finditer(svg):
        text = html.unescape(found["text"]).replace("\xa0", " ")
        lines.setdefault(int(found["line"]), []).append((float(found["x"]), text))
    return ["".join(text for _, text in sorted(runs)).rstrip() for _, runs in sorted(lines.items())]


async def _shoot_all(out: Path) -> list[Path]:
    written: list[Path] = []
    with ExitStack() as stack:
        base_url = stack.enter_context(fake_chat_completions.serving())
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        for program, name in SHOTS.items():
            ran = await run_program(program, sys.executable, base_url, cwd=folder)
            if ran.returncode != 0:
                raise SystemExit(f"{program} exited {ran.returncode}:\n{ran.err}")
            svg = await shoot(ran.fleet, name)
            target = out / f"other-frameworks-{name}.svg"
            await asyncio.to_thread(target.write_text, svg)
            written.append(target)
    return written


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="scripts/screenshots.py", description=__doc__)
    parser.add_argument("--out", type=Path, default=IMAGES, help="where the SVGs go")
    args = parser.parse_args(argv)
    for target in asyncio.run(_shoot_all(args.out)):
        print(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
