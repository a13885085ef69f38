"""The telemetry page's first run: ``OTEL_TRACES_EXPORTER=console python hello.py``.

A newcomer who types it must see the spans and get the prompt back at once: no OTLP
metric exports failing against a collector nobody started, and no shutdown waiting
out its budget for them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from doc_blocks import ROOT, named_files, reader_environment, shell_commands

from pygents_otel._setup import SHUTDOWN_TIMEOUT_ENV

PAGE = ROOT / "docs" / "telemetry.md"
COMMAND = "OTEL_TRACES_EXPORTER=console python hello.py"
LIMIT = 60  # seconds the command may run


def _run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )


def test_the_documented_console_command_prints_the_spans_and_exits_at_once(
    tmp_path: Path,
) -> None:
    """ "At once" is asserted by what the command waits for, not by a stopwatch: its
    shutdown budget is set to ten times the run's limit, so a shutdown that waited for
    anything (a metric export to a collector nobody started, a retry) would run past
    ``LIMIT`` and fail the run, on a busy machine or an idle one."""
    assert COMMAND in shell_commands(PAGE), f"{PAGE.name} no longer shows {COMMAND!r}"
    (tmp_path / "hello.py").write_text(named_files(PAGE)["hello.py"])
    env = reader_environment() | {
        SHUTDOWN_TIMEOUT_ENV: str(10 * LIMIT),
        "OTEL_EXPORTER_OTLP_TIMEOUT": str(10 * LIMIT),
    }

    done = _run(COMMAND, tmp_path, env)

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("a\nspan\nfor\nevery\nturn\n"), done.stdout[:500]
    for span in ("invoke_agent splitter", "turn words", "execute_tool words"):
        assert f'"name": "{span}"' in done.stdout
    # Nothing at all: no export errors or retries, no shutdown warning, not even the
    # SDK's "Exporter already shutdown" notice.
    assert done.stderr == "", done.stderr
