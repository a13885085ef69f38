"""Failures as the dashboard shows them: an exception group's leaves named (nested
groups flattened, the first few, with a count), bounded, never read as markup, and a
traceback — in the toast, the turn inspector, the workload's error screen and the
line said on exit."""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path
from typing import Any

from on_screen import screen_lines
from pilot import Notes, dashboard

from pygents import Agent, Turn, tool
from pygents_tui import DashboardModel
from pygents_tui.cli._commands import last_words
from pygents_tui.text._errors import FRAMES, Traceback, describe, leaves, summary
from pygents_tui.text._preview import preview
from pygents_tui.ui.screens import ErrorScreen, InspectorScreen
from pygents_tui.ui.widgets import TimelineTable

HUGE = "x" * 10_000_000


async def fail(n: int) -> None:
    await asyncio.sleep(0)
    raise ValueError(f"boom {n} [bold]")


async def nested() -> None:
    async with asyncio.TaskGroup() as group:
        group.create_task(fail(10))
        group.create_task(fail(11))


async def many_failures() -> None:
    """Four failing tasks and a nested group of two: six leaves, five sub-exceptions."""
    async with asyncio.TaskGroup() as group:
        for n in range(4):
            group.create_task(fail(n))
        group.create_task(nested())


async def group_error() -> BaseExceptionGroup[Any]:
    try:
        await many_failures()
    except BaseExceptionGroup as exc:
        return exc
    raise AssertionError("no group")


# -- the helpers ---------------------------------------------------------------------------


async def test_leaves_flatten_nested_groups_in_order() -> None:
    error = await group_error()
    assert str(error) == "unhandled errors in a TaskGroup (5 sub-exceptions)"
    found = [str(leaf) for leaf in leaves(error)]
    assert sorted(found) == sorted(f"boom {n} [bold]" for n in (0, 1, 2, 3, 10, 11))
    plain = ValueError("alone")
    assert list(leaves(plain)) == [plain]


async def test_a_group_summary_names_the_first_leaves_and_counts_the_rest() -> None:
    line = summary(await group_error())
    head, _, named = line.partition("): ")
    assert head == "ExceptionGroup: unhandled errors in a TaskGroup (5 sub-exceptions"
    parts = named.split("; ")
    assert len(parts) == 4
    assert all(p.startswith("ValueError: boom ") and p.endswith("[bold]") for p in parts[:3])
    assert parts[3] == "+3 more"
    # the form a turn's error takes in the model: each leaf as its repr
    line = summary(await group_error(), 200, preview)
    assert "ValueError('boom " in line
    assert line.endswith("; +3 more")


def test_summaries_are_bounded_and_survive_a_broken_str() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no str")

    huge = ExceptionGroup(HUGE, [ValueError(HUGE) for _ in range(1000)])
    assert len(summary(huge, 300)) <= 300
    assert len(summary(ValueError(HUGE), 300)) <= 300
    assert describe(Unprintable()) == "Unprintable: <str() failed (RuntimeError)>"
    group = ExceptionGroup("g", [Unprintable(), KeyError("k")])
    assert summary(group) == (
        "ExceptionGroup: g (2 sub-exceptions): Unprintable: <str() failed (RuntimeError)>; "
        "KeyError: 'k'"
    )


def test_a_deep_traceback_keeps_its_innermost_frames_only() -> None:
    def down(n: int) -> None:
        if n == 0:
            raise RuntimeError("at the bottom")
        down(n - 1)

    try:
        down(200)
    except RuntimeError as exc:
        trace = Traceback.of(exc)
    lines = trace.lines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1] == f"  … {201 + 1 - FRAMES} earlier frame(s)"  # down() x201, this test
    # Python's own folding of a repeated line: 3 shown, the rest counted
    assert sum(line.lstrip().startswith("File ") for line in lines) == 4
    assert f"  [Previous line repeated {FRAMES - 4} more times]" in lines
    assert 'raise RuntimeError("at the bottom")' in lines[-2]
    assert lines[-1] == "RuntimeError: at the bottom"


async def test_a_traceback_keeps_neither_the_exception_nor_its_frames_locals() -> None:
    class Payload:
        pass

    class Held(ValueError):
        pass  # a subclass: built-in exceptions take no weak references

    async def hold_it(payload: Payload) -> None:
        raise Held("held")

    payload = Payload()
    watched = weakref.ref(payload)
    try:
        await hold_it(payload)
    except Held as exc:
        trace = Traceback.of(exc)
        error = weakref.ref(exc)
    del payload
    gc.collect()
    assert watched() is None  # a local of the frame that raised
    assert error() is None
    assert trace.lines()[-1] == "Held: held"


# -- in the dashboard ----------------------------------------------------------------------


async def test_a_workload_failing_with_a_group_names_its_leaves_everywhere(
    until: Any,
) -> None:
    notes = Notes()
    app = dashboard(many_failures)
    async with app.run_test(size=(100, 40), message_hook=notes) as pilot:
        await until(pilot, lambda: app.workload_done.is_set() and bool(notes.messages))
        toast = notes.messages[-1]
        assert "unhandled errors in a TaskGroup (5 sub-exceptions): ValueError: boom " in toast
        assert "[bold]" in toast  # the program's text, as written: never markup
        assert "+3 more" in toast
        assert "(e: the traceback)" in toast

        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ErrorScreen))
        body = app.screen.query_one("#inspector-body").render()
        text = str(body)
        assert "the workload failed" in text
        assert "traceback" in text
        assert "exception 1 of 6 in the group" in text
        assert 'raise ValueError(f"boom {n} [bold]")' in text  # the source line
        assert "and 1 more in the group" in text
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app._main)
        await pilot.press("q")
    assert app.return_code == 1
    words = last_words(app)
    assert words is not None
    assert words.startswith(
        "pygents-tui: the workload failed: ExceptionGroup: unhandled errors in a TaskGroup "
        "(5 sub-exceptions): ValueError: boom "
    )
    assert words.endswith("; +3 more")
    assert "\n" not in words


async def test_e_is_offered_only_once_the_workload_has_failed(until: Any) -> None:
    gate = asyncio.Event()

    async def workload() -> None:
        await gate.wait()
        raise RuntimeError("late")

    app = dashboard(workload)
    async with app.run_test(size=(100, 30)) as pilot:
        footer = screen_lines(app)[-1]
        assert " e " not in f" {footer} "
        await pilot.press("e")  # nothing to show: nothing happens
        assert app.screen is app._main
        gate.set()
        await until(pilot, app.workload_done.is_set)
        await pilot.pause()
        assert "Error" in screen_lines(app)[-1]
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ErrorScreen))


async def test_the_inspector_shows_a_failed_turns_leaves_and_traceback(until: Any) -> None:
    @tool()
    async def gather_pages() -> None:
        await many_failures()

    agent = Agent("gatherer", "gathers", [gather_pages])

    async def workload() -> None:
        await agent.put(Turn(gather_pages))
        try:
            async for _ in agent.run():
                pass
        except BaseExceptionGroup:
            pass

    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=(120, 60)) as pilot:
        await until(pilot, lambda: model.agent("gatherer").failed == 1)
        record = model.agent("gatherer").turns[-1]
        assert record.error is not None
        assert record.error.startswith("ExceptionGroup: unhandled errors in a TaskGroup")
        assert record.error.endswith("; +3 more")
        await pilot.press("6")
        await until(pilot, lambda: app._main.query_one(TimelineTable).row_count == 1)
        app.action_inspect()
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        text = str(app.screen.query_one("#inspector-body").render())
        assert "ValueError('boom 0 [bold]')" in text
        assert "traceback" in text
        assert "in gather_pages" in text  # the tool's own frame
        assert 'raise ValueError(f"boom {n} [bold]")' in text


def test_a_traceback_names_files_under_the_current_directory_by_relative_path(
    monkeypatch: Any, tmp_path: Any
) -> None:
    here = Path(__file__).resolve()
    try:
        raise ValueError("where")
    except ValueError as exc:
        error = exc
    monkeypatch.chdir(here.parents[2])  # the checkout's root
    assert f'File "{here.relative_to(here.parents[2])}"' in "\n".join(Traceback.of(error).lines())
    monkeypatch.chdir(tmp_path)  # elsewhere: the full path
    assert f'File "{here}"' in "\n".join(Traceback.of(error).lines())
