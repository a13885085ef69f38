"""Token usage in the dashboard: values that report it (int ``input_tokens`` and
``output_tokens``) show as tokens in the values panel and add up per turn in the
inspector; every other value stays a plain preview."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from pilot import dashboard
from textual.widgets import Log

from pygents import Agent, Turn, tool
from pygents_tui.feeders.process.model import DashboardModel
from pygents_tui.ui.screens import InspectorScreen
from pygents_tui.ui.widgets import TimelineTable, ValuesLog


@dataclass(frozen=True)
class Usage:
    """Shaped like a model client's usage (the assistant example's, for one)."""

    input_tokens: int | None
    output_tokens: int | None


class Exploding:
    """Every attribute read fails."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no {name} here")

    def __repr__(self) -> str:
        return "Exploding()"


@dataclass
class Strings:
    input_tokens: str = "12"
    output_tokens: str = "5"


@dataclass
class Flags:
    input_tokens: bool = True
    output_tokens: bool = False


async def test_usage_values_show_as_tokens_and_add_up_in_the_turn_inspector(
    until: Any, text_of: Callable[[object], str]
) -> None:
    second = asyncio.Event()

    @tool()
    async def chat(prompt: str) -> AsyncIterator[Any]:
        """Two model calls in one turn, the second after the test says so."""
        yield "Hello"
        yield Usage(1200, 34)
        await second.wait()
        yield "[bold]again[/bold]"
        yield Usage(30, None)  # the endpoint did not say how many came out

    agent = Agent("talker", "talks", [chat])

    async def workload() -> None:
        await agent.put(Turn(chat, args=["hi"], timeout=600))
        async for _ in agent.run():
            pass

    model = DashboardModel()
    app = dashboard(workload, model=model)
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.press("3")
        values = app._main.query_one(ValuesLog)
        assert isinstance(values, Log)
        await until(pilot, lambda: values.line_count == 2)
        assert values.lines[0].endswith("chat         Hello")
        assert values.lines[1].endswith("chat         tokens: 1,200 in, 34 out")

        await pilot.press("6")  # the running turn already shows its tokens so far
        await until(pilot, lambda: app._main.query_one(TimelineTable).row_count == 1)
        app.action_inspect()
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        assert "tokens    1,200 in, 34 out" in text_of(app)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app._main)

        second.set()
        await until(pilot, lambda: model.agent("talker").completed == 1)
        await pilot.press("3")
        await until(pilot, lambda: values.line_count == 4)
        assert values.lines[2].endswith("chat         [bold]again[/bold]")  # plain text
        assert values.lines[3].endswith("chat         tokens: 30 in, ? out")

        await pilot.press("6")
        app.action_inspect()
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        screen = text_of(app)
        assert "tokens    1,230 in, 34 out" in screen  # the turn's total, kept once ended
        assert "output    4 value(s)" in screen


async def test_a_returned_usage_counts_for_its_turn(model: DashboardModel) -> None:
    @tool()
    async def call_model() -> Usage:
        return Usage(7, 2)

    agent = Agent("caller", "calls", [call_model])
    await agent.put(Turn(call_model))
    async for _ in agent.run():
        pass
    model.store.drain()
    [record] = model.store.recent
    assert record.tokens == (7, 2)
    assert ("tokens", "7 in, 2 out") in record.details()
    assert [v.text for v in model.agent("caller").values_tail] == ["tokens: 7 in, 2 out"]


@pytest.mark.parametrize(
    "value",
    [
        "input_tokens output_tokens",
        42,
        None,
        {"input_tokens": 1, "output_tokens": 2},  # a mapping: keys are not attributes
        Usage(None, None),  # reports nothing
        Usage(-1, 5),  # not a count
        Strings(),
        Flags(),
        Exploding(),
    ],
    ids=repr,
)
async def test_values_that_do_not_report_tokens_stay_previews(
    model: DashboardModel, value: Any
) -> None:
    @tool()
    async def emit() -> AsyncIterator[Any]:
        yield value

    agent = Agent("emitter", "emits", [emit])
    await agent.put(Turn(emit))
    async for _ in agent.run():
        pass
    model.store.drain()
    [record] = model.store.recent
    assert record.tokens is None
    assert all(label != "tokens" for label, _ in record.details())
    [shown] = model.agent("emitter").values_tail
    assert not shown.text.startswith("tokens:")


async def test_huge_token_counts_stay_short(model: DashboardModel) -> None:
    @tool()
    async def emit() -> AsyncIterator[Usage]:
        yield Usage(10**5000, 3)

    agent = Agent("big", "big", [emit])
    await agent.put(Turn(emit))
    async for _ in agent.run():
        pass
    model.store.drain()
    [shown] = model.agent("big").values_tail
    assert shown.text == "tokens: 10^15+ in, 3 out"
