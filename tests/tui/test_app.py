"""The dashboard app under Textual's Pilot: every panel and every control, real agents."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import pytest
from on_screen import screen_text
from pilot import Notes, dashboard, numbered
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Input, Log, Static, TabbedContent

from pygents import Agent, ContextItem, ContextPool, ContextQueue, Turn, TurnTimeoutError, tool
from pygents_tui import Dashboard, DashboardModel
from pygents_tui.ui.screens import HelpScreen, InspectorScreen
from pygents_tui.ui.widgets import (
    AgentsTable,
    EventsPanel,
    QueueTable,
    RunningPanel,
    TimelineTable,
    ValuesLog,
)

SIZE = (80, 24)


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def status(text: str) -> str:
    return text.splitlines()[1]


def agents_table(app: Dashboard) -> AgentsTable:
    return app._main.query_one(AgentsTable)


def row(app: Dashboard, name: str) -> dict[str, str]:
    table = agents_table(app)
    return {
        key: str(value)
        for (key, _label, _width), value in zip(
            AgentsTable.COLUMNS, table.get_row(name), strict=True
        )
    }


def table_rows(table: DataTable[Any]) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def active_tab(app: Dashboard) -> str:
    return app._main.query_one(TabbedContent).active


async def focus_timeline(app: Dashboard, pilot: Any) -> TimelineTable:
    timeline = app._main.query_one(TimelineTable)
    for _ in range(6):
        if app.focused is timeline:
            return timeline
        await pilot.press("tab")
    raise AssertionError(f"tab never reached the timeline (focus: {app.focused})")


# -- the agents table and navigation -----------------------------------------------------


async def test_agents_table_shows_every_agent(until: Any, text_of: Any) -> None:
    gate = asyncio.Event()

    @tool()
    async def work(n: int) -> int:
        await gate.wait()
        return n

    @tool()
    async def fill(pool: ContextPool[str], window: ContextQueue[str]) -> None:
        await window.append(ContextItem("seen"))
        await pool.add(ContextItem("a", description="first", id="p1"))
        await pool.add(ContextItem("b", description="second", id="p2"))

    alpha = Agent("alpha", "works", [work, fill])
    beta = Agent(
        "beta",
        "remembers",
        [fill],
        context_queue=ContextQueue(limit=4),
        context_pool=ContextPool(limit=3),
    )

    async def workload() -> None:
        for n in range(3):
            await alpha.put(Turn(work, args=[n]))
        await beta.put(Turn(fill))
        async for _ in beta.run():
            pass
        async for _ in alpha.run():
            pass

    app = dashboard(workload)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: alpha.current_turn is not None and not beta.is_running)
        assert agents_table(app).row_count == 2
        a = row(app, "alpha")
        assert a["agent"] == "alpha"
        assert "running" in a["state"]
        assert a["queue"] == "2"
        assert a["current"] == "work"
        assert a["counts"] == "0/0/0"
        assert a["values"] == "0"
        assert a["ctx"] == "0/10 0/∞"
        b = row(app, "beta")
        assert "done" in b["state"]
        assert b["queue"] == "0"
        assert b["current"] == ""
        assert b["counts"] == "1/0/0"
        assert b["ctx"] == "1/4 2/3"  # context queue and pool against their limits
        assert b["values"] == "1"  # fill's None result is a yielded value
        assert set(b["rate"]) - {"▁"}  # the sparkline shows the completed turn
        screen = text_of(app)
        assert "alpha" in screen
        assert "beta" in screen
        assert "2 agent(s) · 1 turn(s) running" in status(screen)

        gate.set()
        await until(pilot, lambda: row(app, "alpha")["counts"] == "3/0/0")
        a = row(app, "alpha")
        assert "done" in a["state"]
        assert a["values"] == "3"
        assert a["queue"] == "0"
        assert a["current"] == ""


async def test_cursor_moves_with_arrows_and_j_k(until: Any) -> None:
    @tool()
    async def noop() -> None:
        return None

    names = ["ant", "bee", "cat"]
    for name in names:
        Agent(name, "idle", [noop])
    app = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: agents_table(app).row_count == 3)
        table = agents_table(app)
        assert app.focused is table
        assert app.selected_agent == "ant"
        await pilot.press("j")
        assert app.selected_agent == "bee"
        await pilot.press("down")
        assert app.selected_agent == "cat"
        await pilot.press("j")  # stays on the last row
        assert app.selected_agent == "cat"
        await pilot.press("k")
        assert app.selected_agent == "bee"
        await pilot.press("up", "up")
        assert app.selected_agent == "ant"
        assert table.cursor_row == 0
        await pilot.press("j")
        app.refresh_view()
        assert app._main.query_one(RunningPanel).agent == "bee"


async def test_number_keys_switch_tabs() -> None:
    app = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        assert active_tab(app) == "tab-running"  # the initial panel
        for key, tab in [
            ("1", "tab-queue"),
            ("2", "tab-running"),
            ("3", "tab-values"),
            ("4", "tab-context"),
            ("5", "tab-events"),
            ("6", "tab-timeline"),
            ("7", "tab-output"),
            ("1", "tab-queue"),
        ]:
            await pilot.press(key)
            assert active_tab(app) == tab


async def test_the_focus_follows_the_panel_a_number_key_shows() -> None:
    @tool()
    async def noop() -> None:
        return None

    Agent("solo", "idle", [noop])
    app = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        main = app._main
        agents = agents_table(app)
        expected = {
            "1": main.query_one(QueueTable),
            "2": agents,  # Running: nothing to move in; the agents table chooses
            "3": main.query_one(ValuesLog),
            "4": agents,  # Context: likewise
            "5": main.query_one("#event-log", Log),  # the log, not the filter
            "6": main.query_one(TimelineTable),
            "7": main.query_one("#output", Log),
        }
        for key in "1234567654321":
            await pilot.press(key)
            await pilot.pause()
            assert app.focused is expected[key], (key, app.focused)


# -- panels ------------------------------------------------------------------------------


async def test_queue_panel_shows_the_selected_agents_pending_turns(until: Any) -> None:
    gates = [asyncio.Event() for _ in range(3)]

    @tool()
    async def work(n: int, note: str = "") -> int:
        await gates[n].wait()
        return n

    @tool()
    async def other(x: Any) -> None:
        return None

    alpha = Agent("alpha", "works", [work])
    beta = Agent("beta", "waits", [other])

    async def workload() -> None:
        await beta.put(Turn(other, args=[BadRepr()], timeout=7))
        await beta.put(Turn(other, args=["x" * 10_000], timeout=2.5))
        for n in range(3):
            await alpha.put(Turn(work, args=[n], kwargs={"note": f"n{n}"}, timeout=30))
        async for _ in alpha.run():
            pass

    app = dashboard(workload)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("1")
        queue = app._main.query_one(QueueTable)
        await until(pilot, lambda: alpha.current_turn is not None and queue.row_count == 2)
        assert table_rows(queue) == [
            ["1", "work", "1, note=n1", "30s"],
            ["2", "work", "2, note=n2", "30s"],
        ]
        gates[0].set()  # the agent takes the next turn: the queue shrinks
        await until(pilot, lambda: queue.row_count == 1)
        assert table_rows(queue) == [["1", "work", "2, note=n2", "30s"]]

        await pilot.press("escape", "j")  # back to the agents; select beta and its queue
        assert app.selected_agent == "beta"
        await until(pilot, lambda: queue.row_count == 2)
        rows = table_rows(queue)
        assert [r[1] for r in rows] == ["other", "other"]
        assert rows[0][2].startswith("<BadRepr: repr ")  # a broken repr, previewed
        assert rows[1][2].startswith("xxxx")
        assert len(rows[1][2]) <= 40
        assert [r[3] for r in rows] == ["7s", "2.5s"]
        for gate in gates:
            gate.set()


async def test_running_panel_bars_remaining_time_and_timeouts(until: Any, clock: Any) -> None:
    gate = asyncio.Event()

    @tool()
    async def long_job() -> str:
        await gate.wait()
        return "ok"

    @tool()
    async def hangs() -> None:
        await asyncio.Event().wait()

    worker = Agent("worker", "slow", [long_job])
    stuck = Agent("stuck", "times out", [hangs])

    async def run(agent: Agent) -> None:
        async for _ in agent.run():
            pass

    async def workload() -> None:
        await worker.put(Turn(long_job, timeout=10))
        await stuck.put(Turn(hangs, timeout=0.05))
        results = await asyncio.gather(run(worker), run(stuck), return_exceptions=True)
        assert isinstance(results[1], TurnTimeoutError)

    model = DashboardModel(clock=clock)
    app = dashboard(workload, model=model)
    async with app.run_test(size=SIZE) as pilot:
        panel = app._main.query_one(RunningPanel)
        await until(
            pilot,
            lambda: (
                bool(model.store.running_turns("worker")) and model.agent("stuck").timed_out == 1
            ),
        )

        def cells() -> list[list[Any]]:
            table = panel.render()
            return [list(column.cells) for column in table.columns]

        clock.now = 1002.0  # 2 s of 10 s: green
        agents, tools, bars, times = cells()
        assert [str(a) for a in agents] == ["worker", "stuck"]
        assert [str(t) for t in tools] == ["long_job", "hangs"]  # plain Text, never markup
        assert isinstance(times[0], Text)
        assert times[0].plain == "  2.0s   8.0s left"
        assert str(times[0].style) == "green"
        assert bars[0].plain.count("█") > 0
        assert bars[0].plain.count("░") > bars[0].plain.count("█")
        assert times[1].plain == "◷ timed out at 0.05s"  # marked, in red
        assert "red" in str(times[1].style)

        clock.now = 1007.5  # 75 %: yellow
        _, _, bars, times = cells()
        assert times[0].plain == "  7.5s   2.5s left"
        assert str(times[0].style) == "yellow"

        clock.now = 1009.5  # 95 %: red, nearly full
        _, _, bars, times = cells()
        assert times[0].plain == "  9.5s   0.5s left"
        assert str(times[0].style) == "red"
        assert bars[0].plain.count("░") <= 2

        app.refresh_view()
        await pilot.pause()
        screen = screen_text(app)
        assert "0.5s left" in screen
        assert "timed out at 0.05s" in screen
        gate.set()
        await until(pilot, lambda: not model.store.running_turns("worker"))
        assert "no turn is running" not in screen_text(app)  # the timeout stays listed


async def test_values_panel_tails_and_follows(until: Any) -> None:
    orders: asyncio.Queue[int | None] = asyncio.Queue()

    @tool()
    async def produce() -> AsyncIterator[str]:
        count = 0
        while (batch := await orders.get()) is not None:
            for _ in range(batch):
                yield f"value {count}"
                count += 1

    streamer = Agent("streamer", "streams", [produce])

    async def workload() -> None:
        await streamer.put(Turn(produce, timeout=600))
        async for _ in streamer.run():
            pass

    app = dashboard(workload)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        values = app._main.query_one(ValuesLog)
        assert isinstance(values, Log)

        orders.put_nowait(100)
        await until(pilot, lambda: values.line_count == 100)
        assert values.lines[-1].endswith("produce      value 99")
        assert values.max_scroll_y > 0
        assert values.is_vertical_scroll_end
        assert values.following

        values.focus()
        await pilot.press("home")  # scroll back: following stops
        await until(pilot, lambda: values.scroll_y == 0)
        assert not values.is_vertical_scroll_end
        orders.put_nowait(50)
        await until(pilot, lambda: values.line_count == 150)
        assert values.scroll_y == 0  # new values did not drag the view down
        assert not values.following

        await pilot.press("end")  # follow again
        await until(pilot, lambda: values.is_vertical_scroll_end)
        orders.put_nowait(50)
        await until(pilot, lambda: values.line_count == 200)
        await until(pilot, lambda: values.is_vertical_scroll_end)
        assert values.following
        assert values.lines[-1].endswith("value 199")
        orders.put_nowait(None)


async def test_context_panel_shows_window_pool_and_evictions(until: Any, text_of: Any) -> None:
    @tool()
    async def learn(pool: ContextPool[str], window: ContextQueue[str]) -> None:
        for n in range(4):
            await window.append(ContextItem(f"window note {n}"))
            await pool.add(
                ContextItem(f"pooled body {n}", description=f"description {n}", id=f"item-{n}")
            )

    scholar = Agent(
        "scholar",
        "learns",
        [learn],
        context_queue=ContextQueue(limit=2),
        context_pool=ContextPool(limit=2),
    )

    async def workload() -> None:
        await scholar.put(Turn(learn))
        async for _ in scholar.run():
            pass

    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("4")
        await until(pilot, lambda: model.agent("scholar").evictions == 4)
        screen = text_of(app)
        assert "queue 2/2" in screen
        assert "pool 2/2 · evictions 4" in screen
        assert "window note 2" in screen
        assert "window note 3" in screen
        assert "window note 1" not in screen  # evicted from the window
        for text in ("item-2", "item-3", "description 3", "pooled body 3"):
            assert text in screen
        assert "item-0" not in screen
        assert row(app, "scholar")["ctx"] == "2/2 2/2"


async def test_events_panel_logs_and_filters(until: Any) -> None:
    @tool()
    async def job(n: int) -> int:
        return n

    alpha = Agent("alpha", "a", [job])
    beta = Agent("beta", "b", [job])

    async def workload() -> None:
        for agent in (alpha, beta):
            await agent.put(Turn(job, args=[1]))
            async for _ in agent.run():
                pass

    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("5")
        log = app._main.query_one("#event-log", Log)
        await until(pilot, lambda: model.agent("beta").completed == 1 and log.line_count >= 8)
        lines = list(log.lines)
        assert any("alpha" in line and "← job queued" in line for line in lines)
        assert any("beta" in line and "✔ job" in line for line in lines)
        assert any("run ended: completed" in line for line in lines)

        await pilot.press("slash")
        field = app._main.query_one("#filter", Input)
        assert app.focused is field
        await pilot.press(*"beta")
        await until(pilot, lambda: field.value == "beta" and 0 < log.line_count < len(lines))
        assert all("beta" in line for line in log.lines)
        assert any("✔ job" in line for line in log.lines)

        await pilot.press("q")  # typed into the filter: it does not quit
        assert field.value == "betaq"
        assert app.return_code is None
        await until(pilot, lambda: log.line_count == 0)

        for _ in range(5):
            await pilot.press("backspace")
        await pilot.press(*"zz")  # a filter nothing matches... then a kind
        await until(pilot, lambda: log.line_count == 0)
        await pilot.press("backspace", "backspace", *"put")
        await until(pilot, lambda: log.line_count > 0)
        assert all("put" in line for line in log.lines)

        await pilot.press("escape")  # leave the filter
        assert app.focused is agents_table(app)
        panel = app._main.query_one(EventsPanel)
        panel.set_filter("")
        assert log.line_count == len(lines)


async def test_timeline_and_inspector(until: Any, text_of: Any) -> None:
    @tool()
    async def lookup(query: str, limit: int = 3) -> str:
        return f"found {query}"

    @tool()
    async def explode(reason: str) -> None:
        raise ValueError(f"exploded: {reason}")

    agent = Agent("inspected", "inspected", [lookup, explode])

    async def workload() -> None:
        await agent.put(
            Turn(
                lookup,
                args=["tides"],
                kwargs={"limit": 7},
                timeout=12,
                metadata={"request": "r-42"},
                tags=["research"],
            )
        )
        await agent.put(Turn(explode, kwargs={"reason": "on purpose"}))
        with pytest.raises(ValueError, match="on purpose"):
            async for _ in agent.run():
                pass

    app = dashboard(
        workload,
        trace_id=lambda scope: f"trace-of-{scope.target.tool.name}",
        trace_url="http://jaeger.local/trace/{trace_id}",
    )
    model = app.model
    async with app.run_test(size=(110, 40)) as pilot:
        await until(pilot, lambda: model.agent("inspected").failed == 1)
        await until(pilot, lambda: app.workload_done.is_set())
        await pilot.press("6")  # opened after everything ended: still lists the turns
        timeline = app._main.query_one(TimelineTable)
        await until(pilot, lambda: timeline.row_count == 2)
        assert [r[:2] for r in table_rows(timeline)] == [
            ["inspected", "lookup"],
            ["inspected", "explode"],
        ]
        await focus_timeline(app, pilot)
        assert timeline.selected_uuid == model.store.recent[-1].uuid  # the newest

        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        screen = text_of(app)
        assert "explode" in screen
        assert "failed after" in screen  # stop reason
        assert "exception" in screen
        assert "ValueError('exploded: on purpose')" in screen
        assert "reason = on purpose" in screen
        assert "trace-of-explode" in screen  # the trace id, and where to see it
        assert "http://jaeger.local/trace/trace-of-explode" in screen
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app._main)

        await pilot.press("k")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        screen = text_of(app)
        assert model.store.recent[0].uuid in screen
        assert "lookup (coroutine) on " in screen
        assert "completed" in screen
        assert "0: tides" in screen  # arguments
        assert "limit = 7" in screen
        assert "request = r-42" in screen  # metadata
        assert "research" in screen  # tags
        assert "of 12s" in screen  # timing against the timeout
        assert "started" in screen  # timing: start
        assert "ended" in screen  # ... and end
        assert "output    found tides" in screen
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app._main)


async def test_inspector_of_hostile_turn(until: Any, text_of: Any) -> None:
    @tool()
    async def weird(blob: Any, text: str) -> AsyncIterator[Any]:
        yield BadRepr()
        yield "many\nlines\nof\ntext"

    agent = Agent("weird", "weird", [weird])

    async def workload() -> None:
        await agent.put(
            Turn(weird, args=[b"\x00" * 10_000, "x" * 10_000_000], metadata={"m": BadRepr()})
        )
        async for _ in agent.run():
            pass

    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=(110, 40)) as pilot:
        await until(pilot, lambda: model.agent("weird").completed == 1)
        await pilot.press("6")
        await until(pilot, lambda: app._main.query_one(TimelineTable).row_count == 1)
        app.action_inspect()
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        screen = text_of(app)
        assert "<10000 bytes>" in screen
        assert "m = <BadRepr: repr failed (RuntimeError)>" in screen
        assert "output    2 value(s)" in screen
        assert "many⏎lines⏎of⏎text" in screen


# -- controls ------------------------------------------------------------------------------


async def test_p_really_pauses_and_resumes_the_selected_agent(until: Any) -> None:
    gates = [asyncio.Event() for _ in range(3)]
    taken: list[int] = []

    @tool()
    async def step(n: int) -> int:
        taken.append(n)
        await gates[n].wait()
        return n

    bystander = Agent("a-bystander", "listed first", [step])
    agent = Agent("pausable", "pausable", [step])

    async def workload() -> None:
        for n in range(3):
            await agent.put(Turn(step, args=[n]))
        async for _ in agent.run():
            pass

    model = DashboardModel()
    notes = Notes()
    app = dashboard(workload, model=model)
    async with app.run_test(size=SIZE, message_hook=notes) as pilot:
        await until(pilot, lambda: taken == [0] and agents_table(app).row_count == 2)
        assert app.selected_agent == "a-bystander"
        await pilot.press("j")
        assert app.selected_agent == "pausable"
        await pilot.press("p")
        assert agent.is_paused
        assert not bystander.is_paused  # only the selected agent
        gates[0].set()  # the current turn finishes; the agent must not take the next
        await until(pilot, lambda: model.agent("pausable").phase == "paused")
        await until(pilot, lambda: "paused" in row(app, "pausable")["state"])
        for _ in range(20):
            await pilot.pause()
        assert taken == [0]
        assert agent.queue_depth == 2
        assert model.agent("pausable").completed == 1
        assert "pausable will pause before its next turn" in notes

        await pilot.press("p")
        assert not agent.is_paused
        assert "pausable resumed" in notes
        await until(pilot, lambda: taken == [0, 1])
        gates[1].set()
        gates[2].set()
        await until(pilot, lambda: model.agent("pausable").completed == 3)
        assert taken == [0, 1, 2]


async def test_p_without_agents_only_warns() -> None:
    notes = Notes()
    app = dashboard()
    async with app.run_test(size=SIZE, message_hook=notes) as pilot:
        await pilot.press("p")
        await pilot.pause()
        assert "select an agent first" in notes
        assert app.return_code is None


async def test_space_freezes_the_view_while_the_model_keeps_draining(until: Any) -> None:
    gates = [asyncio.Event() for _ in range(4)]

    @tool()
    async def step(n: int) -> str:
        await gates[n].wait()
        return f"result {n}"

    agent = Agent("frozen", "frozen", [step])

    async def workload() -> None:
        for n in range(4):
            await agent.put(Turn(step, args=[n]))
        async for _ in agent.run():
            pass

    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        values = app._main.query_one(ValuesLog)
        gates[0].set()
        await until(pilot, lambda: values.line_count == 1)
        assert row(app, "frozen")["counts"] == "1/0/0"

        await pilot.press("space")
        assert app.frozen
        screen = screen_text(app)
        assert "FROZEN · +0 new record(s)" in status(screen)
        cells_before = row(app, "frozen")
        processed = model.processed
        gates[1].set()
        gates[2].set()
        await until(pilot, lambda: model.agent("frozen").completed == 3)
        await until(pilot, lambda: "+0 new" not in status(screen_text(app)))
        assert model.processed > processed  # the model kept draining
        assert model.agent("frozen").values == 3
        assert values.line_count == 1  # ...but the widgets did not change
        assert row(app, "frozen") == cells_before
        line = status(screen_text(app))
        assert "FROZEN" in line
        assert f"+{model.processed - processed} new record(s)" in line
        assert "space to resume" in line

        await pilot.press("space")
        assert not app.frozen
        await until(pilot, lambda: values.line_count == 3)
        assert row(app, "frozen")["counts"] == "3/0/0"
        assert "FROZEN" not in status(screen_text(app))
        gates[3].set()


def help_text(app: Dashboard) -> str:
    assert isinstance(app.screen, HelpScreen)
    content = app.screen.query_one("#help-keys", Static).render()
    return str(content)


async def test_help_lists_every_key(until: Any, text_of: Any) -> None:
    app = dashboard(asyncio.Event().wait)  # a workload: without one, e (its error) is unlisted
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        lines = help_text(app).splitlines()
        for binding in Binding.make_bindings(Dashboard.BINDINGS):
            key = app.get_key_display(binding)
            assert any(
                key in line.split("  ")[0].split() and binding.description in line for line in lines
            ), (key, binding.description)
        text = "\n".join(lines)
        assert "pause or resume the selected agent" in text  # the tooltips, too
        for keys in ("j ↓", "k ↑", "tab", "^p"):  # the table's, the screen's, the palette
            assert keys in text, keys
        for symbol, meaning in (*AgentsTable.LEGEND, *TimelineTable.LEGEND):
            assert any(symbol in line and meaning in line for line in lines), symbol
        assert "pygents-tui — keys" in text_of(app)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app._main)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("question_mark")  # ? closes it too
        await until(pilot, lambda: app.screen is app._main)
        await pilot.press("question_mark", "q")  # q in the help closes the help only
        await until(pilot, lambda: app.screen is app._main)
        assert app.return_code is None
    assert app.return_code is None


async def test_help_shows_the_keys_of_the_focused_panel(until: Any) -> None:
    app = dashboard()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert "Inspect" not in help_text(app)  # the agents table has the focus
        assert "With the focus on the agents" in help_text(app)
        await pilot.press("escape", "6", "question_mark")
        text = help_text(app)
        assert "With the focus on the timeline" in text
        assert "Inspect — open this turn in the inspector" in text
        await pilot.press("escape", "3", "question_mark")
        assert "Follow — follow the newest line again" in help_text(app)


async def test_a_binding_added_to_the_app_shows_in_the_help() -> None:
    class Extended(Dashboard):
        BINDINGS: ClassVar[list[BindingType]] = [
            Binding("x", "bell", "Ring the bell", tooltip="a key added later"),
        ]

    app = Extended()
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        lines = help_text(app).splitlines()
        assert any(
            line.startswith("x ") and "Ring the bell — a key added later" in line for line in lines
        )
        assert any("Pause" in line for line in lines)  # the inherited keys stay


async def test_q_quits_with_zero_and_stops_the_workload(until: Any) -> None:
    entered = asyncio.Event()
    outcome: list[str] = []

    @tool()
    async def forever() -> None:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise

    agent = Agent("endless", "endless", [forever])

    async def workload() -> None:
        await agent.put(Turn(forever, timeout=600))
        async for _ in agent.run():
            pass

    app = dashboard(workload)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, entered.is_set)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0
    assert outcome == ["cancelled"]


async def test_failing_workload_stays_open_and_quits_with_one(until: Any) -> None:
    @tool()
    async def job() -> int:
        return 1

    agent = Agent("before-failure", "runs before the failure", [job])

    async def workload() -> None:
        await agent.put(Turn(job))
        async for _ in agent.run():
            pass
        raise RuntimeError("the workload broke")

    notes = Notes()
    app = dashboard(workload)
    async with app.run_test(size=SIZE, message_hook=notes) as pilot:
        await until(pilot, app.workload_done.is_set)
        for _ in range(10):
            await pilot.pause()
        assert app.screen is app._main  # still open
        assert app.return_code is None
        assert isinstance(app.workload_error, RuntimeError)
        assert "RuntimeError: the workload broke" in notes
        screen = screen_text(app)
        assert "workload failed" in status(screen)
        assert row(app, "before-failure")["counts"] == "1/0/0"  # the final state is shown
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 1


async def test_finished_workload_stays_open_with_the_final_state(until: Any) -> None:
    _agent, workload = numbered("finisher", 4)
    notes = Notes()
    app = dashboard(workload)
    async with app.run_test(size=SIZE, message_hook=notes) as pilot:
        await until(pilot, lambda: "the workload finished; press q to quit" in notes)
        for _ in range(10):
            await pilot.pause()
        app.refresh_view()
        assert app.screen is app._main
        assert app.return_code is None
        final = row(app, "finisher")
        assert "done" in final["state"]
        assert final["counts"] == "4/0/0"
        assert final["values"] == "4"
        assert "0 turn(s) running · 4 done" in status(screen_text(app))
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def palette(pilot: Any, query: str) -> None:
    await pilot.press("ctrl+p", *query)
    await pilot.pause(0.3)  # the palette searches asynchronously
    await pilot.press("enter")
    await pilot.pause()


async def test_command_palette_commands(until: Any) -> None:
    gate = asyncio.Event()

    @tool()
    async def job(n: int) -> int:
        await gate.wait()
        return n

    agent = Agent("commanded", "commanded", [job])

    async def workload() -> None:
        for n in range(3):
            await agent.put(Turn(job, args=[n]))
        async for _ in agent.run():
            pass

    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: agent.current_turn is not None)

        await palette(pilot, "pause")
        assert agent.is_paused
        await pilot.press("p")
        assert not agent.is_paused

        await palette(pilot, "freeze")
        assert app.frozen
        await pilot.press("space")
        assert not app.frozen

        await palette(pilot, "filter")
        assert active_tab(app) == "tab-events"
        assert app.focused is app._main.query_one("#filter", Input)
        await pilot.press("escape")

        await palette(pilot, "help")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app._main)

        gate.set()
        await until(pilot, lambda: model.agent("commanded").completed == 3)
        await pilot.press("6")
        await until(pilot, lambda: app._main.query_one(TimelineTable).row_count == 3)
        await palette(pilot, "inspect")
        assert isinstance(app.screen, InspectorScreen)
        assert app.screen.record.uuid == model.store.recent[-1].uuid


async def test_small_terminals_and_resizing(until: Any) -> None:
    gate = asyncio.Event()

    @tool()
    async def job(n: int) -> AsyncIterator[str]:
        yield f"line {n}\nwith a break"
        await gate.wait()

    agents = [Agent(f"agent-{i}", "many", [job]) for i in range(12)]

    async def workload() -> None:
        for i, agent in enumerate(agents):
            await agent.put(Turn(job, args=[i], timeout=60))

        async def run(agent: Agent) -> None:
            async for _ in agent.run():
                pass

        await asyncio.gather(*(run(a) for a in agents))

    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: len(model.store.running) == 12)
        for size in [(80, 24), (60, 20), (40, 12), (20, 6), (120, 40)]:
            await pilot.resize_terminal(*size)
            for tab in ("queue", "running", "values", "context", "events", "timeline", "output"):
                app.action_show_tab(f"tab-{tab}")
                # A resize lays the screen out again on the app's own time: wait for the
                # footer to be drawn at the new size before reading it.
                await until(pilot, lambda rows=size[1]: len(screen_text(app).splitlines()) == rows)
                assert active_tab(app) == f"tab-{tab}"
                # the footer keeps the bottom line however little room there is, led by
                # the quit key (its label may be cut short, differently across Textual
                # versions), with the palette that reaches the rest
                footer = screen_text(app).splitlines()[-1]
                assert footer.split()[0] == "q", footer
                assert "^p palette" in footer, footer
            assert app.view_error is None
        # keys still work at the last size (esc: from the last panel back to the agents)
        await pilot.press("escape", "j", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.resize_terminal(30, 10)  # a modal in a tiny terminal
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app._main)
        assert app.selected_agent == "agent-1"
        assert app.return_code is None
        gate.set()
        await until(pilot, lambda: not model.store.running)
        assert sum(s.completed for s in model.store.agents.values()) == 12


# -- nothing the dashboard does can raise into an agent ----------------------------------


async def test_a_failing_panel_neither_stops_the_app_nor_the_agents(
    until: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = asyncio.Event()
    broken_refreshes = 0

    def broken(self: AgentsTable, agent: str | None = None) -> None:
        nonlocal broken_refreshes
        broken_refreshes += 1
        raise RuntimeError("panel bug")

    @tool()
    async def job(n: int) -> int:
        await gate.wait()
        return n

    agent = Agent("resilient", "resilient", [job])
    results: list[int] = []

    async def workload() -> None:
        for n in range(3):
            await agent.put(Turn(job, args=[n]))
        async for _turn, value in agent.run():
            results.append(value)

    model = DashboardModel()
    notes = Notes()
    app = dashboard(workload, model=model)
    async with app.run_test(size=SIZE, message_hook=notes) as pilot:
        await until(pilot, lambda: agent.current_turn is not None)
        monkeypatch.setattr(AgentsTable, "refresh_from", broken)
        await until(pilot, lambda: broken_refreshes >= 3)  # the timer keeps ticking
        gate.set()
        await until(pilot, lambda: results == [0, 1, 2])
        assert model.agent("resilient").completed == 3  # the model still drained
        assert isinstance(app.view_error, RuntimeError)
        assert "RuntimeError: panel bug" in notes
        assert sum("panel bug" in m for m in notes.messages) == 1  # said once
        assert app.return_code is None
        monkeypatch.undo()
        await until(pilot, lambda: row(app, "resilient")["counts"] == "3/0/0")  # recovers
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_hostile_values_and_a_broken_model_never_reach_the_agents(
    until: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    @tool()
    async def spew() -> AsyncIterator[Any]:
        yield BadRepr()
        yield "x" * 10_000_000
        yield b"\xff\x00" * 100
        yield "two\nlines"

    agent = Agent("spewer", "spews", [spew])
    results: list[Any] = []

    async def workload() -> None:
        for _ in range(2):
            await agent.put(Turn(spew))
        async for _turn, value in agent.run():
            results.append(value)

    def broken_event(self: DashboardModel, event: Any) -> None:
        raise RuntimeError("model bug")

    monkeypatch.setattr(DashboardModel, "on_event", broken_event)
    model = DashboardModel()
    app = dashboard(workload, model=model)
    with caplog.at_level(logging.ERROR, logger="pygents"):
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("3")
            await until(pilot, lambda: len(results) == 8)
            await until(pilot, lambda: model.agent("spewer").completed == 2)
            values = app._main.query_one(ValuesLog)
            await until(pilot, lambda: values.line_count == 8)
            lines = list(values.lines)
            assert lines[0].endswith("<BadRepr: repr failed (RuntimeError)>")
            assert all(len(line) < 250 for line in lines)
            assert lines[3].endswith("two⏎lines")
            assert app.view_error is None
    assert any("model bug" in str(r.exc_info) for r in caplog.records if r.exc_info)
