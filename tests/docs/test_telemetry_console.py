"""The telemetry page's first run: ``OTEL_TRACES_EXPORTER=console python hello.py``.

A newcomer who types it must see the spans and get the prompt back at once: no OTLP
metric exports failing against a collector nobody started, and no shutdown waiting
out its budget for them.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from doc_blocks import ROOT, named_files, reader_environment, shell_commands

PAGE = ROOT / "docs" / "telemetry.md"
COMMAND = "OTEL_TRACES_EXPORTER=console python hello.py"


def _timed(
    command: str, cwd: Path, env: dict[str, str]
) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.monotonic()
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return time.monotonic() - started, done


def test_the_documented_console_command_prints_the_spans_and_exits_at_once(
    tmp_path: Path,
) -> None:
    assert COMMAND in shell_commands(PAGE), f"{PAGE.name} no longer shows {COMMAND!r}"
    (tmp_path / "hello.py").write_text(named_files(PAGE)["hello.py"])
    env = reader_environment()

    elapsed, done = _timed(COMMAND, tmp_path, env)

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("a\nspan\nfor\nevery\nturn\n"), done.stdout[:500]
    for span in ("invoke_agent splitter", "turn words", "execute_tool words"):
        assert f'"name": "{span}"' in done.stdout
    # Nothing at all: no export errors or retries, no shutdown warning, not even the
    # SDK's "Exporter already shutdown" notice.
    assert done.stderr == "", done.stderr
    # What the interpreter needs anyway to start and import what hello.py imports,
    # measured here, on this machine, now: the command may take at most 1 s more.
    baseline, started = _timed(
        'python -c "import asyncio, pygents_otel, pygents; '
        'from opentelemetry.sdk.trace.export import ConsoleSpanExporter"',
        tmp_path,
        env,
    )
    assert started.returncode == 0, started.stderr
    assert elapsed < baseline + 1.0, f"took {elapsed:.2f} s; starting takes {baseline:.2f} s"
