"""Control characters in the program's text never reach the terminal: agent and tool
names, a tool's output and prints, an exception's message, span names and attributes,
the title. Each is shown with its control characters made visible (``␛`` for ESC,
``\\x9b`` for a C1 code; see ``pygents_tui.text._visible``), on every panel, in the
inspector and its trace, in the toasts and the header."""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import Callable
from typing import Any

from on_screen import control_characters, screen_lines
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind

from pygents import Agent, Turn, tool
from pygents_tui import Dashboard
from pygents_tui.text._preview import preview
from pygents_tui.text._visible import _ONE_LINE, visible
from pygents_tui.ui.screens import InspectorScreen
from pygents_tui.ui.widgets import AgentsTable

SIZE = (160, 50)

# Each name carries one kind of hostile sequence: OSC 0 (window title), OSC 52
# (clipboard write), CSI 2J (clear screen), a bare ESC, BEL, C1 CSI, DEL, NUL, lone CR.
AGENT = "a\x1b]0;T\x07"
EMITS = "e\x1b[2J"
FAILS = "f\x9b\x7f\x00"
WAITS = "w\r\x07"
OUTPUT = "out\x1b]52;c;cHduZWQ=\x07"
PRINTED = "said\x1b[2J\x1b"
ERROR = "bad\x1b]0;E\x07\x00"
SPAN = "GET \x1b[2J/x"
URL = "http://h/\x1b]0;U\x07"
TITLE = "run \x1b]0;pwned\x07"
BOOM = "boom\x1b[2J\r"


def named(fn: Callable[..., Any], name: str) -> Any:
    """A tool named ``name`` (tools take their function's name)."""
    fn.__name__ = fn.__qualname__ = name
    return tool(fn)


def test_every_control_character_is_made_visible_and_layout_kept_only_on_request() -> None:
    hostile = "\x1b]0;T\x07\x1b]52;c;eA==\x07\x1b[2J\x1b\x07\x9b\x7f\x00a\rb\r\nc\td\n"
    one_line = visible(hostile)
    assert one_line == "␛]0;T␇␛]52;c;eA==␇␛[2J␛␇\\x9b␡␀a⏎b⏎c d⏎"
    assert one_line.isprintable()
    lines = visible(hostile, lines=True)
    assert lines == "␛]0;T␇␛]52;c;eA==␇␛[2J␛␇\\x9b␡␀a␍b\nc   d\n"
    assert all(line.isprintable() for line in lines.split("\n"))
    every = "".join(map(chr, [*range(0x20), *range(0x7F, 0xA0)]))
    assert visible(every).isprintable()
    assert all(line.isprintable() for line in visible(every, lines=True).split("\n"))
    assert visible("plain [b]text[/b] ünïcödé") == "plain [b]text[/b] ünïcödé"
    # A preview shows them the same way, within its width.
    assert preview("x\x1b[2Jy", 20) == "x␛[2Jy"
    assert preview("\x9b" * 50, 20) == "\\x9b" * 4 + "\\x9…"


async def test_control_characters_in_the_programs_text_are_shown_visible_everywhere(
    provider: TracerProvider, until: Any
) -> None:
    gate = asyncio.Event()
    tracer = provider.get_tracer("hostile-client")

    async def _emits() -> str:
        print(PRINTED)
        with tracer.start_as_current_span(SPAN, kind=SpanKind.CLIENT, attributes={"url.full": URL}):
            pass
        return OUTPUT

    async def _fails() -> None:
        raise ValueError(ERROR)

    async def _waits() -> None:
        await gate.wait()

    emits, fails, waits = named(_emits, EMITS), named(_fails, FAILS), named(_waits, WAITS)
    agent = Agent(AGENT, "hostile names", [emits, fails, waits])
    queued = asyncio.Event()

    async def drain() -> None:
        try:
            async for _ in agent.run():
                pass
        except Exception:
            pass  # the failing turn ends its run

    async def workload() -> None:
        await agent.put(Turn(emits))
        await agent.put(Turn(fails))
        await drain()
        for _ in range(3):
            await agent.put(Turn(waits))
        queued.set()
        await drain()
        raise RuntimeError(BOOM)

    app = Dashboard(workload, title=TITLE, tracer_provider=provider)
    app.animation_level = "none"
    seen: list[str] = []
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        assert app.model is not None
        model = app.model
        await until(pilot, lambda: queued.is_set() and len(model.store.running) == 1)
        table = app._main.query_one(AgentsTable)
        table.move_cursor(row=table.get_row_index(AGENT))
        await until(pilot, lambda: app.selected_agent == AGENT)
        for key in "1234567":  # every panel: queue, running, values, context, events, ...
            await pilot.press(key)
            app.refresh_view()
            await pilot.pause()
            seen += screen_lines(app)

        # The inspector of each ended turn: the output and its trace, the exception.
        for record in list(model.store.recent):
            app.action_inspect(record.uuid)
            await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
            if record.tool == EMITS:
                await until(pilot, lambda: "of its trace so far" in "\n".join(screen_lines(app)))
            seen += screen_lines(app)
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is app._main)

        # A toast that names the agent, and the workload's failure.
        await pilot.press("p")
        await until(pilot, lambda: "will pause before" in "\n".join(screen_lines(app)))
        seen += screen_lines(app)
        await pilot.press("p")
        gate.set()
        await until(pilot, lambda: app.workload_error is not None)
        await until(pilot, lambda: "RuntimeError: boom" in "\n".join(screen_lines(app)))
        seen += screen_lines(app)
        await pilot.press("q")
        await pilot.pause()

    assert control_characters(seen) == []
    shown = "\n".join(seen)
    for text in (
        "a␛]0;T␇",  # the agent, in the table, the panels, the inspector, the toast
        "e␛[2J",  # the tools
        "f\\x9b␡␀",
        "w⏎␇",
        "out␛]52;c;cHduZWQ=␇",  # the output, in the values and the inspector
        "said␛[2J␛",  # the print, in the Output panel
        "bad␛]0;E␇␀",  # the exception, in the events and the inspector
        "GET ␛[2J/x",  # the trace: a span's name ...
        "url.full=http://h/␛]0;U␇",  # ... and its telling attribute
        "run ␛]0;pwned␇",  # the header's title
        "a␛]0;T␇ will pause before its next turn",  # a toast
        "RuntimeError: boom␛[2J⏎",  # the failure's toast
    ):
        assert text in shown, text
    status = [line for line in seen if "agent(s)" in line and "event(s)" in line]
    assert status  # the status line was read, and had no control character either


def test_format_characters_are_shown_as_escapes_and_the_table_stays_bounded() -> None:
    assert visible("billing\u200b") == "billing\\u200b"
    assert visible("a\u202eb\u2066c\ufeff\u00ad\U000e0041") == (
        "a\\u202eb\\u2066c\\ufeff\\u00ad\\U000e0041"
    )
    every_format = "".join(chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf")
    assert visible(every_format).isprintable()
    assert visible(every_format, lines=True).isprintable()
    assert visible("漢字 ünï\x1b") == "漢字 ünï␛"  # other characters as they are
    # A sender cycling through code points never grows the translation table past
    # its bound (it forgets what it learnt, and starts again).
    visible("".join(map(chr, range(0x4E00, 0x4E00 + 20_000))) + "\x1b")
    assert len(_ONE_LINE) <= len(_ONE_LINE.fixed) + 4096
