"""The telemetry page's first run: ``OTEL_TRACES_EXPORTER=console python hello.py``.

A newcomer who types it must see the spans and get the prompt back at once: no OTLP
metric exports failing against a collector nobody started, and no shutdown waiting
out its budget for them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from doc_blocks import ROOT, named_files, shell_commands

PAGE = ROOT / "docs" / "telemetry.md"
COMMAND = "OTEL_TRACES_EXPORTER=console python hello.py"
# Nothing on stderr may look like a failure, a retry or a wait.
ERROR_WORDS = ("error", "exception", "traceback", "retrying", "warning", "not exported")


def _environment() -> dict[str, str]:
    """The environment's ``python`` first on ``PATH`` (as in an activated virtual
    environment), and none of the caller's ``OTEL_*`` settings: a reader has none."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PYGENTS_OTEL"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


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
    env = _environment()

    elapsed, done = _timed(COMMAND, tmp_path, env)

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("a\nspan\nfor\nevery\nturn\n"), done.stdout[:500]
    for span in ("invoke_agent splitter", "turn words", "execute_tool words"):
        assert f'"name": "{span}"' in done.stdout
    noisy = [
        line for line in done.stderr.splitlines() if any(w in line.lower() for w in ERROR_WORDS)
    ]
    assert not noisy, done.stderr
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
