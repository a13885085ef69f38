"""The program's own output: captured while the dashboard owns the terminal, shown in
the Output panel (``7``), and given back in order once the terminal is back."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from pygents_tui import Dashboard
from pygents_tui.ui import _output as output_module
from pygents_tui.ui._output import LINE_WIDTH, LINES, ProgramOutput
from pygents_tui.ui.widgets import OutputLog


class Terminal:
    """Two streams writing into one ordered list, as stdout and stderr share a terminal."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, str]] = []

    def stream(self, name: str) -> Any:
        terminal = self

        class Stream:
            def write(self, text: str) -> int:
                terminal.writes.append((name, text))
                return len(text)

            def flush(self) -> None:
                pass

        return Stream()


def test_lines_are_split_across_writes_and_streams() -> None:
    output = ProgramOutput()
    output.write("one ", stderr=False)
    output.write("warn\n", stderr=True)
    output.write("two\nthree\n", stderr=False)
    output.write("unfinished", stderr=False)
    assert list(output.lines) == ["warn", "one two", "three"]
    assert output.total_lines == 3


def test_the_panels_lines_are_bounded_in_number_and_width() -> None:
    output = ProgramOutput()
    output.write("x" * (LINE_WIDTH * 5))  # no newline: shown anyway, cut
    output.write("".join(f"line {n}\n" for n in range(LINES + 10)))
    assert len(output.lines) == LINES
    assert output.total_lines == LINES + 11
    assert output.lines[-1] == f"line {LINES + 9}"
    assert all(len(line) <= LINE_WIDTH for line in output.lines)


def test_replay_writes_everything_in_order_once() -> None:
    output = ProgramOutput()
    output.write("out 1\n")
    output.write("err 1\n", stderr=True)
    output.write("out 2 [bold]\n")
    output.write("é ✔\n")
    terminal = Terminal()
    out, err = terminal.stream("out"), terminal.stream("err")
    output.replay(out, err)
    assert terminal.writes == [
        ("out", "out 1\n"),
        ("err", "err 1\n"),
        ("out", "out 2 [bold]\n"),
        ("out", "é ✔\n"),
    ]
    output.replay(out, err)  # once
    assert len(terminal.writes) == 4


def test_output_past_the_kept_size_is_counted_and_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output_module, "KEPT", 10)
    output = ProgramOutput()
    output.write("12345\n")
    output.write("this does not fit\n")
    terminal = Terminal()
    output.replay(terminal.stream("out"), terminal.stream("err"))
    assert terminal.writes == [
        ("out", "12345\n"),
        ("err", "pygents-tui: 18 more byte(s) of output not kept\n"),
    ]


async def test_prints_show_in_the_output_panel_and_are_kept_for_the_exit(until: Any) -> None:
    go_on = asyncio.Event()

    async def workload() -> None:
        for n in range(3):
            print(f"printed {n}")
        print("to stderr [red]", file=sys.stderr)
        await go_on.wait()
        print("after")

    app = Dashboard(workload)
    app.animation_level = "none"
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("7")
        panel = app._main.query_one(OutputLog)
        await until(pilot, lambda: panel.line_count == 4)
        assert list(panel.lines) == ["printed 0", "printed 1", "printed 2", "to stderr [red]"]
        go_on.set()
        await until(pilot, lambda: panel.line_count == 5)
        await pilot.press("q")
    terminal = Terminal()
    app.output.replay(terminal.stream("out"), terminal.stream("err"))
    assert "".join(text for _, text in terminal.writes).splitlines() == [
        "printed 0",
        "printed 1",
        "printed 2",
        "to stderr [red]",
        "after",
    ]
    assert [name for name, text in terminal.writes if "stderr" in text] == ["err"]
