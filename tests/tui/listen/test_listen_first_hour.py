"""The first hour with ``pygents-tui listen``: what it counts matches what ``run``
counts for the same program, and what it shows before anything arrived says what to do."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.trace import TracerProvider
from otlp_sender import MakeSender
from test_listen_live import exporting, settle

from pygents import Agent, ContextItem, ToolType, Turn, subscribe, tool
from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.feeders.process.model import DashboardModel
from pygents_tui.listen import Receiver
from pygents_tui.ui.app import Dashboard
from pygents_tui.ui.screens import HelpScreen
from pygents_tui.ui.screens.help import key_map
from pygents_tui.ui.widgets import AgentsTable

__all__ = ["exporting"]  # a fixture, shared with the live-mode tests

TextOf = Callable[[Dashboard], str]


async def test_returned_values_are_counted_under_listen_as_under_run(
    fleet: FleetModel, exporting: tuple[TracerProvider, LoggerProvider], until: Any
) -> None:
    @tool()
    async def shout(word: str) -> str:
        return word.upper()

    @tool()
    async def spell(word: str) -> AsyncIterator[str]:
        for letter in word:
            yield letter

    model = DashboardModel()
    with subscribe(model):
        agent = Agent("returns", "three returned values, then two streamed", [shout, spell])
        for word in ("a", "b", "c"):
            await agent.put(Turn(shout, args=[word]))
        await agent.put(Turn(spell, args=["de"]))
        assert [value async for _, value in agent.run()] == ["A", "B", "C", "d", "e"]
    model.store.drain()
    await settle(fleet, exporting)

    (remote,) = fleet.store.agent_rows()
    assert model.store.agents["returns"].values == remote.values == 5

    app = Dashboard(view=fleet.store)
    async with app.run_test(size=(120, 40)) as pilot:
        table = app._main.query_one(AgentsTable)
        await until(pilot, lambda: table.row_count == 1)
        keys = [key for key, _label, _width in AgentsTable.COLUMNS]
        assert str(table.get_row_at(0)[keys.index("values")]) == "5"


async def test_what_a_turn_routes_is_no_value_under_listen_as_under_run(
    fleet: FleetModel, exporting: tuple[TracerProvider, LoggerProvider]
) -> None:
    """A turn that returns a turn (queued), a context item (stored) or a completion
    check's verdict hands its run's caller no value: ``run`` counts none, and neither
    does ``listen`` (the demo's planner read ``Values 0`` live and 13 in its replay)."""

    @tool()
    async def plan(round_no: int) -> Turn:
        return Turn(note, args=[f"round {round_no}"])

    @tool()
    async def note(line: str) -> ContextItem[str]:
        return ContextItem(line, id=line, description="a note")

    @tool()
    async def answer() -> str:
        return "42"

    @tool(type=ToolType.COMPLETION_CHECK)
    async def finished() -> bool:
        return False

    model = DashboardModel()
    with subscribe(model):
        agent = Agent("router", "routes what it returns", [plan, note, answer, finished])
        await agent.put(Turn(plan, args=[1]))
        await agent.put(Turn(answer))
        await agent.put(Turn(finished))
        assert [value async for _, value in agent.run()] == ["42"]
        assert [item.id for item in agent.context_pool.items] == ["round 1"]
    model.store.drain()
    await settle(fleet, exporting)

    (remote,) = fleet.store.agent_rows()
    here = model.store.agents["router"]
    assert (here.completed, here.values) == (remote.completed, remote.values) == (4, 1)


async def test_a_second_service_without_live_records_is_named_in_the_agents_panel_hint(
    fleet: FleetModel, receiver: Receiver, senders: MakeSender, until: Any, text_of: TextOf
) -> None:
    app = listen_app(fleet, receiver.host, receiver.grpc_port, receiver.http_port)
    async with app.run_test(size=(130, 40)) as pilot:
        live = senders("grpc", service="checkout", instance="pod-a")
        planner = live.agent("planner")
        live.turn_start(planner, live.run_start(planner), "fetch", timeout=9.0)
        await live.sent()
        await until(pilot, lambda: "checkout@pod-a/planner" in text_of(app))
        assert "no live records" not in text_of(app)

        legacy = senders("grpc", service="legacy", instance="l-1")
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "sorter"}
        legacy.tracer.start_span("invoke_agent sorter", attributes=attributes).end()
        await legacy.sent()
        line = "no live records yet from legacy@l-1: its turns show when their spans end"
        await until(pilot, lambda: line in text_of(app))
        assert "checkout@pod-a, " not in text_of(app)  # the live one is not named


async def test_the_help_lists_each_key_once_and_not_pause_when_listening(
    fleet: FleetModel, until: Any, text_of: TextOf
) -> None:
    app = Dashboard(view=fleet.store)
    async with app.run_test(size=(120, 80)) as pilot:
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        keys = [line.split()[0] for line in key_map(app.screen.over).plain.splitlines() if line]
        assert keys.count("^c") == 1  # ctrl+c
        assert "p" not in keys  # a listening dashboard never pauses an agent
        assert "space" in keys
        assert "?" in keys


async def test_a_listening_dashboard_with_nothing_yet_says_how_to_send_it_some(
    fleet: FleetModel, receiver: Receiver, until: Any, text_of: TextOf
) -> None:
    """Both endpoints, on the ports bound (the system chose them here), each with its
    protocol; any OTLP exporter will do, and pygents' live turns need live mode."""
    app = listen_app(fleet, receiver.host, receiver.grpc_port, receiver.http_port)
    grpc, http = receiver.grpc_port, receiver.http_port
    async with app.run_test(size=(130, 40)) as pilot:
        endpoints = (
            "• nothing received yet: point any OTLP exporter at "
            f"http://127.0.0.1:{grpc} (gRPC) or http://127.0.0.1:{http} (HTTP)"
        )
        await until(pilot, lambda: endpoints in text_of(app))
        live = "a pygents program sends its running turns with pygents_otel.configure(live=True)"
        assert live in text_of(app)


async def test_with_one_transport_off_the_empty_dashboard_names_only_the_other(
    fleet: FleetModel, until: Any, text_of: TextOf
) -> None:
    app = listen_app(fleet, "127.0.0.1", None, 14318)
    async with app.run_test(size=(130, 40)) as pilot:
        endpoints = "point any OTLP exporter at http://127.0.0.1:14318 (HTTP)"
        await until(pilot, lambda: endpoints in text_of(app))
        assert "(gRPC)" not in text_of(app)


async def test_a_listening_dashboard_neither_offers_pause_in_its_footer_nor_a_workload_error(
    fleet: FleetModel, until: Any, text_of: TextOf
) -> None:
    app = Dashboard(view=fleet.store)
    async with app.run_test(size=(120, 80)) as pilot:
        await pilot.pause()
        footer = [b.binding.key for b in app.screen.active_bindings.values() if b.binding.show]
        assert "q" in footer
        assert "p" not in footer  # read-only: nothing to pause from here

        await pilot.press("p")  # the key still says why
        line = "it cannot pause or resume remote agents"
        await until(pilot, lambda: any(line in toast.message for toast in app._notifications))

        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_text = key_map(app.screen.over).plain
        keys = [line.split()[0] for line in help_text.splitlines() if line]
        assert "e" not in keys  # no workload here: it cannot fail
        (quit_line,) = [line for line in help_text.splitlines() if line.startswith("q ")]
        assert quit_line.endswith("Quit — exit status 0")  # never 1: no workload to fail
        assert "exit status 130" in help_text  # ctrl+c still says its status
