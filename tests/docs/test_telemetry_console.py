"""The telemetry page's first run: ``OTEL_TRACES_EXPORTER=console python hello.py``.

A newcomer who types it must see the spans and get the prompt back at once: no OTLP
metric exports failing against a collector nobody started, and no shutdown waiting
out its budget for them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import ROOT, named_files, reader_environment, shell_commands

from pygents_otel._setup import SHUTDOWN_TIMEOUT_ENV

PAGE = ROOT / "docs" / "telemetry.md"
COMMAND = "OTEL_TRACES_EXPORTER=console python hello.py"
# The same, for a reader without an activated environment: the checkout's, through uv.
CHECKOUT = "path/to/pygents"
UV_COMMAND = f"OTEL_TRACES_EXPORTER=console uv run --project {CHECKOUT} python hello.py"
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


def test_the_documented_uv_command_runs_hello_py_from_a_folder_outside_the_checkout(
    tmp_path: Path,
) -> None:
    """Without an activated environment, a bare ``python hello.py`` is a
    ``ModuleNotFoundError``: the page gives the form that names the checkout. It is
    run here as written, the checkout's path put in place of the placeholder, from a
    folder that is not in the checkout."""
    assert UV_COMMAND in shell_commands(PAGE), f"{PAGE.name} no longer shows {UV_COMMAND!r}"
    uv = os.environ.get("UV") or shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH (pip install uv)")
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip("the suite is not running in the checkout's own .venv, which uv would build")
    (tmp_path / "hello.py").write_text(named_files(PAGE)["hello.py"])
    env = reader_environment() | {SHUTDOWN_TIMEOUT_ENV: str(10 * LIMIT)}
    # The reader's PATH, without the activated environment: only uv knows the checkout.
    env["PATH"] = os.pathsep.join(
        [
            str(Path(uv).parent),
            *(p for p in env["PATH"].split(os.pathsep) if p != str(Path(sys.executable).parent)),
        ]
    )
    env.pop("VIRTUAL_ENV", None)

    done = _run(UV_COMMAND.replace(CHECKOUT, str(ROOT)), tmp_path, env)

    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("a\nspan\nfor\nevery\nturn\n"), done.stdout[:500]
    assert '"name": "turn words"' in done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
