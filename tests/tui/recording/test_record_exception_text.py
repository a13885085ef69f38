"""``--record`` and exception text: what a recording of ``run`` or ``demo`` holds of a
failure's message, and the one switch that leaves it out.

An exception's message often quotes the value that caused it (a password in a
connection error appeared 9 times in a demo's recording). The recording is exported
by ``pygents_otel``, so its own switch,
``OTEL_INSTRUMENTATION_PYGENTS_CAPTURE_EXCEPTION_MESSAGE=false``, applies: the type
is recorded, never the message. Each recording is made in a process of its own (the
OpenTelemetry providers are global), the way ``pygents-tui`` makes it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pygents_otel._instrumentor import EXCEPTION_MESSAGE_ENV

SECRET = "hunter2-secret"
DOCS = Path(__file__).resolve().parents[3] / "docs" / "dashboard.md"

PROGRAM = textwrap.dedent(
    """
    import asyncio
    import sys

    from pygents import Agent, Turn, tool
    from pygents_tui.recording import RecordWriter
    from pygents_tui.recording._capture import record_in_process


    @tool()
    async def connect(host: str) -> str:
        password = sys.argv[2]  # not in the source: a traceback's code lines show the source
        raise ConnectionError(f"login to {host} refused for password {password}")


    async def main() -> None:
        agent = Agent("db", "connects", [connect])
        await agent.put(Turn(connect, kwargs={"host": "db.local"}))
        try:
            async for _ in agent.run():
                pass
        except ConnectionError:
            pass  # the run ends with the turn's error; the recording is what is checked


    writer = RecordWriter(sys.argv[1])
    telemetry = record_in_process(writer, "test")
    try:
        asyncio.run(main())
    finally:
        telemetry.shutdown()
        writer.close()
        print(writer.summary())
    """
)


def _record(tmp_path: Path, **settings: str) -> str:
    """A recording of one failing turn, made with ``settings`` in the environment."""
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    recording = tmp_path / "recording.jsonl"
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
        **settings,
    }
    done = subprocess.run(
        [sys.executable, str(script), str(recording), SECRET],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    return recording.read_text()


def test_a_recording_keeps_an_exceptions_message_by_default(tmp_path: Path) -> None:
    """What the docs warn about, and what shows the check below can see a message."""
    recorded = _record(tmp_path)
    assert SECRET in recorded
    assert "ConnectionError" in recorded


@pytest.mark.parametrize("off", ["false", "0", "no"])
def test_with_exception_messages_off_a_recording_holds_the_type_but_not_the_message(
    tmp_path: Path, off: str
) -> None:
    recorded = _record(tmp_path, **{EXCEPTION_MESSAGE_ENV: off})
    assert SECRET not in recorded
    assert "db.local" not in recorded
    assert "ConnectionError" in recorded  # the failure itself is still recorded


def test_the_recording_section_says_how_to_leave_exception_messages_out() -> None:
    text = DOCS.read_text()
    section = text[text.index("## Recording and replaying") :]
    section = section[: section.index("\n## ", 1)]
    assert f"{EXCEPTION_MESSAGE_ENV}=false" in section
    assert "keeps exception messages" in section
