"""``pygents-tui run`` on a program written as a script: one that starts its own event
loop while it is imported (``asyncio.run(main())`` on its last line, unguarded, as
the README's quick start does). Its own ``asyncio.run`` is taken over, its coroutine
run under the dashboard once; any other loop started on import is refused in one
line with the fix; nothing of it runs unseen before the dashboard."""

from __future__ import annotations

import asyncio
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from terminal import SCRIPT, run_in_pty, said, terminal

from pygents_tui.cli._target import Target, TargetError, load_target

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
from doc_blocks import ROOT, blocks  # the README's blocks, as tests/docs read them


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def finish(target: Target) -> Any:
    """Run ``target``'s workload to its end, in a loop of its own, as the dashboard
    would in its own; what it returned."""

    async def workload() -> Any:
        return await target()

    return asyncio.run(workload())


def line_of(path: Path, text: str) -> int:
    """The number of the first line of ``path`` that holds ``text``."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def ran(folder: Path) -> list[str]:
    """What the test's programs wrote to ``ran.txt``, one line a step."""
    log = folder / "ran.txt"
    return log.read_text().splitlines() if log.exists() else []


STEP = """
import pathlib

def step(what):
    with (pathlib.Path(__file__).parent / "ran.txt").open("a") as log:
        log.write(what + "\\n")
"""


# -- the script's own asyncio.run is taken over -------------------------------------------------


def test_a_scripts_asyncio_run_on_import_is_the_workload_and_runs_once_when_awaited(
    tmp_path: Path,
) -> None:
    script = write(
        tmp_path / "script_app.py",
        STEP
        + textwrap.dedent("""
        import asyncio

        async def main(greeting):
            step(f"main {greeting}")
            return greeting.upper()

        result = asyncio.run(main("hello"))
        step(f"after {result}")
        """),
    )
    target = load_target(str(script))
    assert ran(tmp_path) == []  # nothing of the program ran on import
    assert target.note == (
        f'{script} calls result = asyncio.run(main("hello")) on import '
        f"(line {line_of(script, 'result =')}): the "
        f"dashboard runs main() in its own loop instead, and the lines after it in {script} "
        "do not run"
    )
    assert finish(target) == "HELLO"  # the coroutine the script built, its argument
    assert ran(tmp_path) == ["main hello"]  # once; the line after the call never
    with pytest.raises(TargetError, match="has run already"):
        target()


def test_a_scripts_last_line_call_says_nothing_of_lines_after_it(tmp_path: Path) -> None:
    script = write(
        tmp_path / "last_line_app.py",
        """
        import asyncio

        async def main():
            return 7

        asyncio.run(
            main()
        )
        """,
    )
    target = load_target(str(script))
    assert target.note is not None
    assert "lines after it" not in target.note
    assert finish(target) == 7


def test_a_named_callable_runs_as_named_and_the_scripts_coroutine_never_starts(
    tmp_path: Path,
) -> None:
    """The coroutine is closed unstarted: a "never awaited" warning (an error in this
    suite) would fail the test."""
    script = write(
        tmp_path / "named_app.py",
        STEP
        + textwrap.dedent("""
        import asyncio

        async def main():
            step("main")

        async def serve():
            step("serve")
            return "served"

        asyncio.run(main())
        """),
    )
    target = load_target(f"{script}:serve")
    assert target.note is not None
    assert "its import stopped there, main() unrun; the dashboard runs serve() as named" in (
        target.note
    )
    assert finish(target) == "served"
    assert ran(tmp_path) == ["serve"]


def test_the_programs_own_except_exception_does_not_keep_its_import_going(
    tmp_path: Path,
) -> None:
    script = write(
        tmp_path / "careful_app.py",
        STEP
        + textwrap.dedent("""
        import asyncio

        async def main():
            step("main")

        try:
            asyncio.run(main())
        except Exception:
            step("caught")
        """),
    )
    target = load_target(str(script))
    assert ran(tmp_path) == []
    finish(target)
    assert ran(tmp_path) == ["main"]


# -- any other loop started on import is refused, before it runs anything -------------------


def test_a_loop_driven_by_hand_on_import_is_refused_in_one_line_with_the_fix(
    tmp_path: Path,
) -> None:
    script = write(
        tmp_path / "by_hand_app.py",
        STEP
        + textwrap.dedent("""
        import asyncio

        async def main():
            step("main")

        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(main())
        finally:
            loop.close()  # (the refusal passes through here: the loop is left closed)
        """),
    )
    with pytest.raises(TargetError) as refused:
        load_target(str(script))
    assert str(refused.value) == (
        f"{script} starts an event loop while it is imported "
        f"(line {line_of(script, 'loop.run_until_complete')}: "
        "loop.run_until_complete(main())), which pygents-tui run cannot watch: put the call "
        "that starts it under 'if __name__ == \"__main__\":' and pygents-tui run calls "
        "main() itself"
    )
    assert ran(tmp_path) == []


def test_a_loop_an_imported_module_starts_is_refused_naming_both_lines(tmp_path: Path) -> None:
    sets_up = write(
        tmp_path / "sets_up.py",
        STEP
        + textwrap.dedent("""
        import asyncio

        async def prepare():
            step("prepare")

        asyncio.run(prepare())
        """),
    )
    script = write(
        tmp_path / "importing_app.py",
        """
        import sets_up

        async def main():
            return None
        """,
    )
    with pytest.raises(TargetError) as refused:
        load_target(f"{script}:main")
    message = str(refused.value)
    assert message.startswith(
        f"{script} starts an event loop while it is imported (line 1: import sets_up; the "
        f"loop starts at {sets_up} line {line_of(sets_up, 'asyncio.run')})"
    ), message
    assert ran(tmp_path) == []  # prepare() never ran (nor warned: it was closed)


def test_a_module_targets_asyncio_run_on_import_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module target names a callable in a module: importing it must not run the
    program, so it is not taken over (``python -m`` scripts: guard them)."""
    write(tmp_path / "scriptpkg" / "__init__.py", "")
    jobs = write(
        tmp_path / "scriptpkg" / "jobs.py",
        STEP
        + textwrap.dedent("""
        import asyncio

        async def main():
            step("main")

        asyncio.run(main())
        """),
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TargetError) as refused:
        load_target("scriptpkg.jobs:main")
    assert str(refused.value).startswith(
        f"{jobs} starts an event loop while it is imported "
        f"(line {line_of(jobs, 'asyncio.run')}: asyncio.run(main()))"
    )
    assert ran(tmp_path / "scriptpkg") == []


def test_another_threads_loop_during_the_import_runs_as_it_would(tmp_path: Path) -> None:
    script = write(
        tmp_path / "threaded_app.py",
        STEP
        + textwrap.dedent("""
        import asyncio
        import threading

        async def warm_up():
            step("warmed up")

        worker = threading.Thread(target=asyncio.run, args=(warm_up(),))
        worker.start()
        worker.join()

        async def main():
            step("main")
        """),
    )
    target = load_target(str(script))
    assert target.note is None
    assert ran(tmp_path) == ["warmed up"]  # as `python threaded_app.py` would
    finish(target)
    assert ran(tmp_path) == ["warmed up", "main"]


# -- the real console script ----------------------------------------------------------------------


def test_the_readme_quick_start_saved_as_app_py_runs_under_pygents_tui_run(
    tmp_path: Path,
) -> None:
    """The README suggests ``pygents-tui run app.py`` just before its quick start, a
    script that ends with ``asyncio.run(main())``: saved as app.py, it runs once,
    under the dashboard, and exits 0 with its prints given back."""
    (block,) = [
        b
        for b in blocks(ROOT / "README.md")
        if b.marker == "complete" and "asyncio.run(main())" in b.code
    ]
    (tmp_path / "app.py").write_text(block.code)
    exit_file = tmp_path / "exit.txt"
    command = (
        f"cd {shlex.quote(str(tmp_path))} && {shlex.quote(str(SCRIPT))} run app.py; "
        f"echo EXIT:$? > {shlex.quote(str(exit_file))}; sleep 60"
    )
    with terminal("quick-start") as term:
        term.start(command, width=120, height=30)
        screen = term.wait_for("the workload's end", lambda s: "the workload finished" in s)
        (row,) = [
            cells for cells in map(str.split, screen.splitlines()) if cells[:1] == ["greeter"]
        ]
        assert row[:5] == ["greeter", "done", "0", "2/0/0", "4"]  # its two turns, four values
        toasts = " ".join(screen.replace("▌", " ").split())  # (a toast's lines, joined)
        assert "the dashboard runs main() in its own loop instead" in toasts
        assert "already registered" not in screen
        term.keys("q")
        assert term.wait_for_file(exit_file) == "EXIT:0"
        screen = term.wait_for("the prints given back", lambda s: "count 3" in s)
    lines = [line.strip() for line in screen.splitlines() if line.strip()]
    note = "pygents-tui: app.py calls asyncio.run(main()) on import (line 27): the dashboard"
    assert lines[0].startswith(note), lines
    assert lines[-4:] == ["greet Hello, world!", "count 1", "count 2", "count 3"]


def test_a_loop_started_on_import_is_refused_before_the_screen_is_taken(tmp_path: Path) -> None:
    script = write(
        tmp_path / "by_hand.py",
        STEP
        + textwrap.dedent("""
        import asyncio

        async def main():
            step("main")

        asyncio.get_event_loop_policy().new_event_loop().run_forever()
        """),
    )
    status, output = run_in_pty([str(SCRIPT), "run", "by_hand.py"], cwd=tmp_path)
    assert status == 2, output[-2000:]
    (line,) = said(output)
    assert line.startswith(
        "pygents-tui: error: by_hand.py starts an event loop while it is imported "
        f"(line {line_of(script, 'run_forever')}: asyncio.get_event_loop_policy()"
    ), line
    assert "under 'if __name__ == \"__main__\":'" in line
    assert "\x1b[?1049h" not in output  # the dashboard never took the screen
    assert ran(tmp_path) == []
