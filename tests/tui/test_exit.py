"""A program that exits (``sys.exit()``) or is interrupted (Ctrl-C, ``KeyboardInterrupt``,
SIGINT) ends the dashboard in order: the terminal restored, one line said, and the exit
status the program asked for (130 for an interrupt)."""

from __future__ import annotations

import asyncio
import shlex
import signal
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from terminal import POLL, SCRIPT, WAIT, PtyProcess, run_in_pty, said, terminal

from pygents_tui import Dashboard


def dashboard(workload: Any) -> Dashboard:
    app = Dashboard(workload)
    app.animation_level = "none"
    return app


# -- in process ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "status", "reason"),
    [
        (3, 3, "the workload exited with status 3"),
        (0, 0, "the workload exited with status 0"),
        (None, 0, "the workload exited with status 0"),
        ("bye [bold", 1, "the workload exited: bye [bold"),
    ],
)
async def test_a_workload_calling_sys_exit_ends_the_dashboard_with_its_status(
    code: Any, status: int, reason: str
) -> None:
    async def workload() -> None:
        raise SystemExit(code)

    app = dashboard(workload)
    async with app.run_test() as pilot:
        await app.workload_done.wait()
        await pilot.pause()
    assert app.return_code == status
    assert app.exit_reason == reason
    assert app.workload_error is None


async def test_keyboard_interrupt_in_the_workload_exits_130() -> None:
    async def workload() -> None:
        raise KeyboardInterrupt

    app = dashboard(workload)
    async with app.run_test() as pilot:
        await app.workload_done.wait()
        await pilot.pause()
    assert app.return_code == 130
    assert app.exit_reason == "interrupted"


async def test_ctrl_c_ends_the_dashboard_and_the_workload_with_130() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def workload() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    app = dashboard(workload)
    async with app.run_test() as pilot:
        await started.wait()
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 130
    assert app.exit_reason == "interrupted"
    assert cancelled.is_set()


async def test_what_runs_as_the_dashboard_ends_runs_before_the_workload_is_stopped() -> None:
    """``on_end`` (``--record`` ends its recording there) runs while the workload still
    runs, in order, each once; one that fails neither stops the others nor keeps the
    app up."""
    started = asyncio.Event()
    cancelled = asyncio.Event()
    seen: list[str] = []

    async def workload() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    def broken() -> None:
        seen.append("broken")
        raise RuntimeError("a bug")

    app = dashboard(workload)
    app.on_end += [broken, lambda: seen.append(f"cancelled: {cancelled.is_set()}")]
    async with app.run_test() as pilot:
        await started.wait()
        await pilot.press("q")
        await pilot.pause()
    assert seen == ["broken", "cancelled: False"]
    assert cancelled.is_set()
    assert app.return_code == 0
    assert isinstance(app.view_error, RuntimeError)


async def test_a_base_exception_from_the_workload_is_reported_not_raised() -> None:
    class Abort(BaseException):
        pass

    async def workload() -> None:
        raise Abort("stop here")

    app = dashboard(workload)
    async with app.run_test() as pilot:
        await app.workload_done.wait()
        await pilot.pause()
        assert isinstance(app.workload_error, Abort)
        assert app.return_code is None  # still open, like any failure
        await pilot.press("q")
    assert app.return_code == 1


# -- the console script, in a subprocess on a pseudo-terminal ---------------------------------


def target(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "target.py"
    path.write_text(textwrap.dedent(source))
    return path


@pytest.mark.parametrize(
    ("body", "status", "line"),
    [
        (
            "import sys\nasync def main():\n    sys.exit(3)\n",
            3,
            "the workload exited with status 3",
        ),
        ("async def main():\n    raise KeyboardInterrupt\n", 130, "interrupted"),
        ("async def main():\n    raise SystemExit('bye')\n", 1, "the workload exited: bye"),
        ("import sys\nsys.exit(4)\n", 4, "{target} exited with status 4 while loading"),
        ("raise KeyboardInterrupt\n", 130, "{target} interrupted while loading"),
    ],
)
def test_the_console_script_passes_the_programs_exit_on(
    tmp_path: Path, body: str, status: int, line: str
) -> None:
    path = target(tmp_path, body)
    returncode, output = run_in_pty([str(SCRIPT), "run", str(path)])
    assert returncode == status, output[-2000:]
    assert said(output) == [f"pygents-tui: {line.format(target=path)}"]


def wait_for(path: Path, running: PtyProcess) -> None:
    deadline = time.monotonic() + WAIT
    while not path.exists():
        assert running.process.poll() is None, running.finish()
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(POLL)


@pytest.mark.parametrize("when", ["loading", "running"])
def test_sigint_exits_130_with_one_line(tmp_path: Path, when: str) -> None:
    marker = tmp_path / "marker"
    if when == "loading":
        body = f"""
            import pathlib, time
            pathlib.Path({str(marker)!r}).write_text("importing")
            time.sleep(60)
            async def main():
                pass
            """
    else:
        body = f"""
            import asyncio, pathlib
            async def main():
                pathlib.Path({str(marker)!r}).write_text("running")
                await asyncio.Event().wait()
            """
    path = target(tmp_path, body)
    running = PtyProcess([str(SCRIPT), "run", str(path)])
    try:
        wait_for(marker, running)
        running.process.send_signal(signal.SIGINT)
    finally:
        returncode, output = running.finish()
    assert returncode == 130
    expected = f"{path} interrupted while loading" if when == "loading" else "interrupted"
    assert said(output) == [f"pygents-tui: {expected}"]


# -- in a real terminal ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "keys", "status", "line"),
    [
        (  # Ctrl-C while the target is imported: the terminal sends SIGINT
            "import pathlib, time\npathlib.Path({marker!r}).write_text('1')\n"
            "time.sleep(60)\nasync def main():\n    pass\n",
            "C-c",
            130,
            "pygents-tui: {target} interrupted while loading",
        ),
        (  # Ctrl-C in the dashboard: a key, in the terminal's raw mode
            "import asyncio, pathlib\nasync def main():\n"
            "    pathlib.Path({marker!r}).write_text('1')\n    await asyncio.Event().wait()\n",
            "C-c",
            130,
            "pygents-tui: interrupted",
        ),
        (  # the program exits by itself
            "import asyncio, pathlib, sys\nasync def main():\n"
            "    pathlib.Path({marker!r}).write_text('1')\n    sys.exit(3)\n",
            None,
            3,
            "pygents-tui: the workload exited with status 3",
        ),
    ],
)
def test_exits_in_a_real_terminal_restore_it_and_say_one_line(
    tmp_path: Path, body: str, keys: str | None, status: int, line: str
) -> None:
    marker = tmp_path / "marker"
    target(tmp_path, body.format(marker=str(marker)))
    exit_file = tmp_path / "exit.txt"
    # After the dashboard: the status, then whether the terminal is back in its
    # ordinary (canonical, echoing) mode.
    command = (
        f"cd {shlex.quote(str(tmp_path))} && {shlex.quote(str(SCRIPT))} run target.py; "
        f"echo EXIT:$? $(stty -a | grep -o -- '-\\?icanon') > {shlex.quote(str(exit_file))}; "
        "sleep 60"
    )
    with terminal("exit") as term:
        term.start(command)
        deadline = time.monotonic() + WAIT
        while not marker.exists():
            assert time.monotonic() < deadline, f"the target never ran:\n{term.screen()}"
            time.sleep(POLL)
        if keys is not None:
            if "main()" in body and "sleep" not in body:
                term.wait_for("the dashboard", lambda s: "Filter" in s)
            term.keys(keys)
        assert term.wait_for_file(exit_file) == f"EXIT:{status} icanon"
        screen = term.screen()
        assert line.format(target="target.py") in screen
        assert "Traceback" not in screen
