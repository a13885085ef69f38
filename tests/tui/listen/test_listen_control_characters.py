"""Control characters received over OTLP never reach the terminal: a sender's service,
agent and tool names, previews, error types, span names and attributes are shown with
their control characters made visible (``␛`` for ESC, ``\\x9b`` for a C1 code), in the
agents table, the panels, the event log, the inspector and its trace.

Sent through the real OpenTelemetry SDK and OTLP exporter to the real receiver on
127.0.0.1, and read off the screen of the app ``pygents-tui listen`` runs, under Pilot.
"""

from __future__ import annotations

import time
import unicodedata
from typing import Any

import pytest
from on_screen import screen_lines
from otlp_sender import MakeSender
from textual.widgets import DataTable

from pygents_tui.listen import FleetModel, Receiver
from pygents_tui.listen.serve import listen_app
from pygents_tui.screens import InspectorScreen

SIZE = (160, 50)

# OSC 0 (window title), OSC 52 (clipboard), CSI 2J (clear), ESC, BEL, C1, DEL, NUL, CR.
SERVICE = "s\x1b]0;T\x07"
AGENT = "a\x1b[2J"
TOOL = "t\x9b\x7f\x00\r"
ARGS = "args\x1b]52;c;cHduZWQ=\x07"
VALUE = "v\x1b\x07!"
ERROR = "Err\x1b[2J"
SPAN = "GET \x1b]0;S\x07"
URL = "http://h/\x00\x1b[2J"
LABEL = "s␛]0;T␇@i-1/a␛[2J"


@pytest.fixture
def fleet() -> FleetModel:
    """Overrides the listener fixtures' model: the real clocks, never stale here."""
    return FleetModel(wall=time.time_ns, stale_after=3600.0)


def controls(lines: list[str]) -> list[tuple[int, str]]:
    """Every control character on the screen, with the row it is on."""
    return [
        (row, repr(char))
        for row, line in enumerate(lines)
        for char in line
        if unicodedata.category(char) == "Cc"
    ]


def shown(lines: list[str]) -> str:
    return "\n".join(lines)


async def test_control_characters_received_over_otlp_are_shown_visible_everywhere(
    fleet: FleetModel, receiver: Receiver, senders: MakeSender, until: Any
) -> None:
    app = listen_app(fleet, receiver.host, receiver.grpc_port, receiver.http_port)
    app.animation_level = "none"
    seen: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        sender = senders("grpc", service=SERVICE, instance="i-1")
        agent = sender.agent(AGENT)
        run = sender.run_start(agent)
        streamed = sender.turn_start(agent, run, TOOL, streaming=True, args_preview=ARGS)
        sender.value(streamed, preview=VALUE)
        failed = sender.turn_start(agent, run, TOOL)
        await sender.sent()  # the starts first: a start arriving after its end is dropped
        tool = sender.tool_span(streamed)
        call = sender.foreign_span(SPAN, tool)
        call.set_attribute("url.full", URL)
        call.end()
        tool.end()
        sender.turn_end(streamed)
        sender.turn_end(failed, "error", error_type=ERROR)
        sender.turn_start(agent, run, TOOL, timeout=600.0)  # still running
        await sender.sent()

        table = app.screen.query_one("#agents", DataTable)
        await until(pilot, lambda: table.row_count == 1 and len(fleet.running_turns()) == 1)
        await until(pilot, lambda: app.selected_agent is not None)
        for key in "123456":  # queue, running, values, context, events, timeline
            await pilot.press(key)
            app.refresh_view()
            await pilot.pause()
            seen += screen_lines(app)

        for turn in (streamed, failed):
            found = fleet.find_turn(turn.uuid)
            assert found is not None
            app.action_inspect(found.key)
            await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
            if turn is streamed:
                await until(pilot, lambda: "4 span(s) over" in shown(screen_lines(app)))
            seen += screen_lines(app)
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, InspectorScreen))

    assert controls(seen) == []
    text = shown(seen)
    for expected in (
        LABEL,  # the agents table, the running panel, the timeline, the inspector
        "t\\x9b␡␀⏎",  # the tool
        "args␛]52;c;cHduZWQ=␇",  # the arguments' preview, in the inspector
        "v␛␇!",  # the value's preview, in the Values panel
        "Err␛[2J",  # the error type, in the events and the inspector
        "GET ␛]0;S␇",  # the trace: a span's name ...
        "url.full=http://h/␀␛[2J",  # ... and its telling attribute
    ):
        assert expected in text, expected
