"""The installed ``pygents-tui`` console script, in a subprocess: what it needs of the
terminal, where it finds the program, and what it gives back when it ends.

Every run has a bounded wait; the dashboard's own runs are on a pseudo-terminal (see
``terminal.PtyProcess``), the refused ones on files and pipes.
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest
from terminal import SCRIPT, WAIT, run_in_pty, said


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


# -- without a terminal: refused, before anything of the program runs ------------------------


def refused(result: subprocess.CompletedProcess[str], stream: str) -> str:
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    line = lines[0]
    assert line.startswith(f"pygents-tui: error: {stream} is not a terminal"), line
    assert "run pygents-tui in a terminal without redirecting it" in line  # the fix
    assert "\x1b" not in result.stderr  # the screen was never taken over
    return line


@pytest.mark.parametrize("command", [["demo"], ["run", "target.py"]])
def test_with_stdout_in_a_file_it_refuses_in_one_line_and_exits_2(
    tmp_path: Path, command: list[str]
) -> None:
    marker = tmp_path / "loaded"
    write(
        tmp_path / "target.py",
        f"""
        import pathlib
        pathlib.Path({str(marker)!r}).write_text("loaded")

        async def main():
            pass
        """,
    )
    out = tmp_path / "out.txt"
    with out.open("w") as stdout:
        result = subprocess.run(
            [str(SCRIPT), *command],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=WAIT,
            check=False,
        )
    assert "> file" in refused(result, "standard output")
    assert out.read_text() == ""
    assert not marker.exists()  # the program was not even imported


def test_with_stdout_piped_it_refuses_in_one_line_and_exits_2() -> None:
    result = subprocess.run(
        [str(SCRIPT), "demo"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    refused(result, "standard output")
    assert result.stdout == ""


def test_help_and_version_still_print_into_a_pipe() -> None:
    result = subprocess.run(
        [str(SCRIPT), "--version"], capture_output=True, text=True, timeout=WAIT, check=False
    )
    assert result.returncode == 0
    assert result.stdout.startswith("pygents-tui ")


# -- where the program is found ---------------------------------------------------------------


def test_run_imports_a_package_module_from_the_current_directory(tmp_path: Path) -> None:
    write(tmp_path / "tuiapp" / "__init__.py", "")
    write(tmp_path / "tuiapp" / "helpers.py", "STATUS = 7\n")
    write(
        tmp_path / "tuiapp" / "jobs.py",
        """
        import sys

        from tuiapp.helpers import STATUS  # the package's own modules import too

        async def main():
            sys.exit(STATUS)
        """,
    )
    status, output = run_in_pty([str(SCRIPT), "run", "tuiapp.jobs:main"], cwd=tmp_path)
    assert status == 7, output[-2000:]
    assert said(output) == ["pygents-tui: the workload exited with status 7"]


def test_run_imports_a_scripts_sibling_modules_from_another_directory(tmp_path: Path) -> None:
    write(tmp_path / "app" / "settings.py", "STATUS = 5\n")
    write(
        tmp_path / "app" / "serve.py",
        """
        import sys

        import settings  # next to the script, as `python app/serve.py` finds it

        async def main():
            sys.exit(settings.STATUS)
        """,
    )
    status, output = run_in_pty([str(SCRIPT), "run", "app/serve.py"], cwd=tmp_path)
    assert status == 5, output[-2000:]
    assert said(output) == ["pygents-tui: the workload exited with status 5"]


# -- what the program printed -----------------------------------------------------------------


def test_the_programs_prints_are_given_back_in_order_on_exit(tmp_path: Path) -> None:
    write(
        tmp_path / "chatty.py",
        """
        import sys

        async def main():
            print("first line")
            print("a warning", file=sys.stderr)
            print("last [bold]line", flush=True)
            sys.exit(0)
        """,
    )
    status, output = run_in_pty([str(SCRIPT), "run", "chatty.py"], cwd=tmp_path)
    assert status == 0, output[-2000:]
    assert said(output) == [
        "first line",
        "a warning",
        "last [bold]line",
        "pygents-tui: the workload exited with status 0",
    ]


@pytest.mark.parametrize("speed", ["0", "-3", "nan", "inf", "1000", "fast"])
def test_a_demo_speed_that_is_not_more_than_0_and_at_most_100_is_refused_in_one_line(
    speed: str,
) -> None:
    """``--speed 0`` divided by zero, and ``--speed -3`` ran the demo flat out with its
    queues growing: both are refused by the argument parser, before any workload (or
    the terminal check) runs."""
    result = subprocess.run(
        [str(SCRIPT), "demo", "--speed", speed],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("pygents-tui demo: error: argument --speed: "), lines[0]
    assert "Traceback" not in result.stderr
