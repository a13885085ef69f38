"""Previews cost O(their width) whatever the value: big containers are walked a few
items deep, never repr'd whole, and objects whose own repr is huge are asked once."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pygents import Agent, Turn, tool
from pygents_tui import Dashboard, DashboardModel
from pygents_tui.text._preview import preview
from pygents_tui.ui.screens import HelpScreen, InspectorScreen
from pygents_tui.ui.widgets import QueueTable

BIG = 200_000


class Spy(list[int]):
    """A list that counts the calls of its repr, the items taken from it, and the most
    items any single walk over it took."""

    reprs = 0
    taken = 0
    most = 0

    def __repr__(self) -> str:
        Spy.reprs += 1
        return super().__repr__()

    def __iter__(self) -> Iterator[int]:
        for walked, item in enumerate(super().__iter__(), start=1):
            Spy.taken += 1
            Spy.most = max(Spy.most, walked)
            yield item


class SpySet(set[int]):
    taken = 0

    def __iter__(self) -> Iterator[int]:
        for item in super().__iter__():
            SpySet.taken += 1
            yield item


class Loud:
    """An object whose own repr is a megabyte long."""

    calls = 0

    def __repr__(self) -> str:
        Loud.calls += 1
        return "L" * 1_000_000


class Point(NamedTuple):
    x: int
    y: list[int]


@dataclass
class Result:
    name: str
    rows: list[int] = field(default_factory=list)


def fresh_spy() -> Spy:
    Spy.reprs = Spy.taken = Spy.most = 0
    return Spy(range(BIG))


def test_a_200000_item_list_is_previewed_without_its_full_repr() -> None:
    spy = fresh_spy()
    text = preview(spy, 200)
    assert Spy.reprs == 0
    assert Spy.taken <= 12
    assert text.startswith("Spy([0, 1, 2, 3,")
    assert f"{BIG - 12} more" in text
    assert len(text) <= 200


def test_big_sets_and_dicts_are_not_sorted_nor_walked_whole() -> None:
    SpySet.taken = 0
    assert preview(SpySet(range(BIG)), 100).startswith("SpySet({")
    assert SpySet.taken <= 12
    mapping = {f"k{i}": i for i in range(BIG)}
    assert preview(mapping, 100).startswith("{'k0': 0, 'k1': 1,")


def test_nesting_is_cut_at_a_few_levels_and_the_width() -> None:
    deep: list[Any] = [1]
    for _ in range(1000):
        deep = [deep]
    assert preview(deep, 80) == "[[[[…]]]]"
    wide = [["x" * 10_000] * 50] * 50
    text = preview(wide, 80)
    assert len(text) == 80
    assert text.startswith("[['xxxx")
    assert text.endswith("…")


def test_named_tuples_dataclasses_and_exceptions_show_their_fields_bounded() -> None:
    spy = fresh_spy()
    assert preview(Point(1, spy), 60).startswith("Point(x=1, y=Spy([0, 1,")
    assert preview(Result("r", spy), 60).startswith("Result(name='r', rows=Spy([0,")
    assert Spy.reprs == 0
    error = ValueError("boom\n" * 1_000_000)
    text = preview(error, 100)
    assert text.startswith("ValueError('boom\\nboom\\n")
    assert len(text) <= 100


def test_an_object_with_a_huge_repr_is_asked_once_then_named() -> None:
    Loud.calls = 0
    first = preview(Loud(), 50)
    assert first == "L" * 49 + "…"
    assert preview([Loud(), Loud()], 50) == "[<Loud>, <Loud>]"
    assert preview(Loud(), 50) == "<Loud>"
    assert Loud.calls == 1


def test_huge_ints_strings_bytes_and_deques_are_bounded() -> None:
    assert preview(10**5000, 40) == "<int of 16610 bits>"
    assert preview(["y" * 10_000_000], 30) == "['" + "y" * 27 + "…"
    assert preview(deque(range(BIG)), 40).startswith("deque([0, 1, 2,")
    assert preview([b"\x00" * 10_000_000], 30).startswith("[b'\\x00\\x00")


# -- under the dashboard, with agents returning big values -------------------------------


async def test_big_results_are_previewed_everywhere_without_their_repr(until: Any) -> None:
    """Agents return (and queue) 200,000-item lists while every panel, the inspector
    and the help are shown: no full repr is ever built, and keys are answered."""
    spy = fresh_spy()
    gate = asyncio.Event()

    @tool()
    async def big(rows: list[int]) -> list[int]:
        return rows

    @tool()
    async def held(rows: list[int]) -> list[int]:
        await gate.wait()
        return rows

    crowd = [Agent(f"big-{i}", "returns a big list", [big, held]) for i in range(5)]

    async def churn(agent: Agent) -> None:
        for _ in range(4):
            await agent.put(Turn(big, args=[spy]))
        await agent.put(Turn(held, args=[spy]))
        await agent.put(Turn(big, args=[spy]))  # queued behind the held turn
        async for _ in agent.run():
            pass

    async def workload() -> None:
        await asyncio.gather(*(churn(agent) for agent in crowd))

    model = DashboardModel()
    app = Dashboard(workload, model=model)
    app.animation_level = "none"
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: sum(s.completed for s in model.store.agents.values()) == 20)
        for key in "123456":
            await pilot.press(key)
            app.refresh_view()
        await pilot.press("1")
        queue = app._main.query_one(QueueTable)
        await until(pilot, lambda: queue.row_count == 1)
        assert "Spy([0, 1, 2" in str(queue.get_row_at(0)[2])
        app.action_inspect(model.store.recent[-1].uuid)
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.press("escape")
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        gate.set()
        await until(pilot, app.workload_done.is_set)
        assert model.store.agents["big-0"].values_tail[-1].text.startswith("Spy([0, 1, 2")
        assert Spy.reprs == 0
        # A handful of items per preview, never the whole list — however many times the
        # panels were refreshed meanwhile (that depends on the machine's speed).
        assert 0 < Spy.most <= 12
        await pilot.press("q")
    assert app.return_code == 0
