"""User text is data: names, arguments, context, tags, errors that look like markup are
shown as they are, on every panel, in the inspector, the toasts and the header."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from on_screen import screen_text
from textual.message import Message
from textual.notifications import Notification, Notify

from pygents import Agent, ContextItem, ContextPool, ContextQueue, Turn, tool
from pygents_tui import Dashboard, DashboardModel
from pygents_tui.ui.screens import HelpScreen, InspectorScreen
from pygents_tui.ui.widgets import AgentsTable

SIZE = (160, 50)


def named(fn: Callable[..., Any], name: str) -> Any:
    """A tool whose name looks like markup (tools take their function's name)."""
    fn.__name__ = fn.__qualname__ = name
    return tool(fn)


class Toasts:
    """Every notification the app sends (a ``run_test`` message hook)."""

    def __init__(self) -> None:
        self.sent: list[Notification] = []

    def __call__(self, message: Message) -> None:
        if isinstance(message, Notify):
            self.sent.append(message.notification)


async def test_markup_like_text_in_every_user_field_is_shown_as_plain_text(until: Any) -> None:
    gate = asyncio.Event()

    async def _blocks(*args: Any, **kwargs: Any) -> str:
        await gate.wait()
        return "[/out]"

    async def _learns(pool: ContextPool[str], window: ContextQueue[str]) -> None:
        await window.append(ContextItem("[/cq]"))
        await pool.add(ContextItem("[/pc]", description="[/pd]", id="[/pid]"))

    async def _streams() -> AsyncIterator[str]:
        yield "[/val]"
        yield "[bold"

    async def _fails() -> None:
        raise ValueError("[/err] [@click=app.quit]quit[/]")

    async def _hangs() -> None:
        await asyncio.Event().wait()

    blocks = named(_blocks, "[/tool]")
    learns = named(_learns, "[b]learn")
    streams = named(_streams, "[red]s[/blue]")
    fails = named(_fails, "[bold")
    hangs = named(_hangs, "[/hang]")

    waiting = Agent("[/x]", "[/desc]", [blocks])
    busy = Agent(
        "[bold",
        "[/desc2]",
        [learns, streams, fails, hangs],
        context_queue=ContextQueue(limit=3),
        context_pool=ContextPool(limit=3),
    )
    finished = asyncio.Event()

    async def drain(agent: Agent) -> None:
        try:
            async for _ in agent.run():
                pass
        except Exception:
            pass  # the failing and the hanging turns end their runs

    async def workload() -> None:
        for _ in range(3):
            await waiting.put(
                Turn(
                    blocks,
                    args=["[/arg]"],
                    kwargs={"[/k]": "[/v]"},
                    metadata={"[/mk]": "[/mv]"},
                    tags=["[/tag]"],
                )
            )
        running = asyncio.ensure_future(drain(waiting))
        for turn in (Turn(learns), Turn(streams)):
            await busy.put(turn)
        await drain(busy)
        await busy.put(Turn(fails))
        await drain(busy)
        await busy.put(Turn(hangs, timeout=0.01))
        await drain(busy)
        finished.set()
        await running
        raise RuntimeError("[/boom] [bold")

    toasts = Toasts()
    model = DashboardModel(trace_id=lambda scope: "[/trace]")
    app = Dashboard(
        workload, model=model, title="[/title] [bold", trace_url="http://t/[/u]/{trace_id}"
    )
    app.animation_level = "none"
    async with app.run_test(size=SIZE, message_hook=toasts, notifications=True) as pilot:
        await until(pilot, lambda: finished.is_set() and waiting.current_turn is not None)
        assert "[/title] [bold" in screen_text(app)  # the header's subtitle

        table = app._main.query_one(AgentsTable)
        expected = {
            "[bold": ["[/hang]", "[/val]", "[/cq]", "[/pid]", "[/pd]", "[/pc]", "[bold"],
            "[/x]": ["[/tool]", "[/arg]", "[/k]=[/v]"],
        }
        for name in ("[/x]", "[bold"):
            table.move_cursor(row=table.get_row_index(name))
            await until(pilot, lambda name=name: app.selected_agent == name)
            seen = ""
            for key in "123456":
                await pilot.press(key)
                app.refresh_view()
                await pilot.pause()
                seen += screen_text(app)
            for text in [name, *expected[name]]:
                assert text in seen, (name, text)
            assert app.view_error is None
        assert app.return_code is None

        # The inspector, for every turn: four ended, one running.
        uuids = [record.uuid for record in (*model.store.recent, *model.store.running.values())]
        assert len(uuids) == 5
        inspected = ""
        for uuid in uuids:
            app.action_inspect(uuid)
            await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
            inspected += screen_text(app)
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is app._main)
        for text in (
            "[/tool] (coroutine) on [/x]",
            "0: [/arg]",
            "[/k] = [/v]",
            "[/mk] = [/mv]",
            "[/tag]",
            "[/trace]",
            "http://t/[/u]/[/trace]",
            "ValueError('[/err] [@click=app.quit]quit[/]')",
            "[red]s[/blue] (stream) on [bold",
            "[/val]",
            "[b]learn",
        ):
            assert text in inspected, text
        assert app.return_code is None  # the [@click=app.quit] was not an action

        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app._main)

        # Toasts: pausing an agent by its name, and the workload's own failure.
        table.move_cursor(row=table.get_row_index("[/x]"))
        await until(pilot, lambda: app.selected_agent == "[/x]")
        await pilot.press("p")
        await until(pilot, lambda: "[/x] will pause before its next turn" in screen_text(app))
        await pilot.press("p")
        gate.set()
        await until(pilot, lambda: "RuntimeError: [/boom] [bold" in screen_text(app))
        screen = screen_text(app)
        assert "[/x] resumed" in screen
        assert "RuntimeError: [/boom] [bold" in screen
        assert toasts.sent
        assert not any(toast.markup for toast in toasts.sent)
        assert app.view_error is None
        assert app.return_code is None  # still open: the failure is shown, not fatal
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 1
