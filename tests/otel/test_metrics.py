"""Metrics (SPEC §2.5), read with the SDK's ``InMemoryMetricReader``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import (
    Gauge,
    Histogram,
    HistogramDataPoint,
    InMemoryMetricReader,
    Metric,
    NumberDataPoint,
    Sum,
)

from pygents import (
    Agent,
    ContextItem,
    ContextPool,
    ContextQueue,
    DecoratedTool,
    Turn,
    TurnTimeoutError,
    tool,
)
from pygents.testing import drain
from pygents_otel import PygentsInstrumentor
from stuck_tools import blocking_tool

pytestmark = pytest.mark.usefixtures("instrument")

# The GenAI semantic conventions' advisory bucket boundaries for operation durations.
GENAI_BUCKETS = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip
WORK_SECONDS = 0.02  # how long the "slow" tools take, to tell seconds from milliseconds


def collect(reader: InMemoryMetricReader) -> dict[str, Metric]:
    found: dict[str, Metric] = {}
    data = reader.get_metrics_data()
    for resource_metrics in data.resource_metrics if data else ():
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                assert metric.name not in found, f"{metric.name} reported twice"
                found[metric.name] = metric
    return found


def histogram_points(metric: Metric) -> list[HistogramDataPoint]:
    assert isinstance(metric.data, Histogram), metric.name
    return list(metric.data.data_points)


def number_points(metric: Metric) -> list[NumberDataPoint]:
    assert isinstance(metric.data, (Sum, Gauge)), metric.name
    return list(metric.data.data_points)


def point_where(points: list[Any], **attributes: Any) -> Any:
    """The one point whose attributes include ``attributes`` (dots spelled ``__``)."""
    wanted = {k.replace("__", "."): v for k, v in attributes.items()}
    matching = [p for p in points if wanted.items() <= dict(p.attributes or {}).items()]
    assert len(matching) == 1, (wanted, [dict(p.attributes or {}) for p in points])
    return matching[0]


# -- GenAI durations ----------------------------------------------------------------------


Tools = tuple[DecoratedTool[..., Any], DecoratedTool[..., Any]]


@pytest.fixture
def fetch_tools() -> Tools:
    """``slow_fetch`` works for ``WORK_SECONDS`` and returns "page"; ``broken`` fails."""

    @tool
    async def slow_fetch() -> str:
        await asyncio.sleep(WORK_SECONDS)  # the tool's work, not a wait for the test
        return "page"

    @tool
    async def broken() -> None:
        raise ValueError("no")

    return slow_fetch, broken


async def test_tool_duration_is_a_histogram_in_seconds_by_tool_and_error(
    metric_reader: InMemoryMetricReader, fetch_tools: Tools
) -> None:
    slow_fetch, broken = fetch_tools
    started = time.perf_counter()
    for _ in range(2):
        assert await Turn(slow_fetch).returning() == "page"
    elapsed = time.perf_counter() - started
    with pytest.raises(ValueError, match="no"):
        await Turn(broken).returning()

    metric = collect(metric_reader)["gen_ai.execute_tool.duration"]
    assert metric.unit == "s"
    points = histogram_points(metric)
    ok = point_where(
        points, gen_ai__operation__name="execute_tool", gen_ai__tool__name="slow_fetch"
    )
    assert ok.count == 2
    assert WORK_SECONDS <= ok.sum <= elapsed  # seconds: not ms (x1000), not minutes
    assert tuple(ok.explicit_bounds) == GENAI_BUCKETS
    assert "error.type" not in ok.attributes
    failed = point_where(points, gen_ai__tool__name="broken")
    assert failed.count == 1
    assert failed.attributes["error.type"] == "ValueError"
    assert failed.attributes["gen_ai.operation.name"] == "execute_tool"


async def test_agent_duration_is_a_histogram_in_seconds_by_agent_and_error(
    metric_reader: InMemoryMetricReader, fetch_tools: Tools
) -> None:
    slow_fetch, broken = fetch_tools
    thinker = Agent("thinker", "Thinks", [slow_fetch])
    crasher = Agent("crasher", "Crashes", [broken])
    await thinker.put(Turn(slow_fetch))
    await crasher.put(Turn(broken))
    started = time.perf_counter()
    assert await drain(thinker) == ["page"]
    elapsed = time.perf_counter() - started
    with pytest.raises(ValueError, match="no"):
        await drain(crasher)

    metric = collect(metric_reader)["gen_ai.invoke_agent.duration"]
    assert metric.unit == "s"
    points = histogram_points(metric)
    ok = point_where(points, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="thinker")
    assert ok.count == 1
    assert WORK_SECONDS / 2 <= ok.sum <= elapsed  # seconds: not ms (x1000), not minutes
    assert tuple(ok.explicit_bounds) == GENAI_BUCKETS
    assert "error.type" not in ok.attributes
    failed = point_where(points, gen_ai__agent__name="crasher")
    assert failed.count == 1
    assert failed.attributes["error.type"] == "ValueError"


# -- pygents' own ------------------------------------------------------------------------


async def test_turns_are_counted_by_tool_and_stop_reason(
    metric_reader: InMemoryMetricReader,
) -> None:
    @tool
    async def job(fail: bool) -> str:
        if fail:
            raise ValueError("failed job")
        return "ok"

    @tool
    async def other() -> str:
        return "other"

    for fail in (False, False, True, False):
        if fail:
            with pytest.raises(ValueError, match="failed job"):
                await Turn(job, args=[fail]).returning()
        else:
            assert await Turn(job, args=[fail]).returning() == "ok"
    await Turn(other).returning()

    metrics = collect(metric_reader)
    turns = metrics["pygents.turns"]
    assert isinstance(turns.data, Sum)
    assert turns.data.is_monotonic
    points = number_points(turns)
    assert point_where(points, pygents__tool__name="job", **reason("completed")).value == 3
    assert point_where(points, pygents__tool__name="job", **reason("error")).value == 1
    assert point_where(points, pygents__tool__name="other", **reason("completed")).value == 1
    assert len(points) == 3

    duration = metrics["pygents.turn.duration"]
    assert duration.unit == "s"
    durations = histogram_points(duration)
    assert sum(p.count for p in durations) == 5
    assert point_where(durations, pygents__tool__name="job", **reason("completed")).count == 3


def reason(value: str) -> dict[str, str]:
    return {"pygents__turn__stop_reason": value}


async def test_timeouts_and_cancellations_are_counted_under_their_own_stop_reason(
    metric_reader: InMemoryMetricReader,
) -> None:
    started = asyncio.Event()
    blocked = blocking_tool(started)
    with pytest.raises(TurnTimeoutError):
        await Turn(blocked, timeout=0.01).returning()
    started.clear()
    task = asyncio.create_task(Turn(blocked).returning())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    points = number_points(collect(metric_reader)["pygents.turns"])
    assert point_where(points, **reason("timeout")).value == 1
    assert point_where(points, **reason("cancelled")).value == 1


async def test_streamed_values_are_counted_exactly(metric_reader: InMemoryMetricReader) -> None:
    @tool
    async def ticker(n: int) -> AsyncIterator[int]:
        for i in range(n):
            yield i

    @tool
    async def endless() -> AsyncIterator[int]:
        while True:
            yield 0

    assert len([v async for v in Turn(ticker, args=[7]).yielding()]) == 7
    agent = Agent("ticking", "Ticks", [ticker])
    await agent.put(Turn(ticker, args=[250]))
    assert len(await drain(agent)) == 250
    stream = Turn(endless).yielding()
    for _ in range(2):
        await anext(stream)
    await stream.aclose()  # stopped early: the two values streamed so far count

    points = number_points(collect(metric_reader)["pygents.tool.values"])
    assert point_where(points, gen_ai__tool__name="ticker").value == 257
    assert point_where(points, gen_ai__tool__name="endless").value == 2
    assert len(points) == 2


# -- gauges of the registered agents ------------------------------------------------------


async def test_gauges_report_each_agents_queue_and_context_sizes(
    metric_reader: InMemoryMetricReader,
) -> None:
    @tool
    async def task(n: int) -> int:
        return n

    memory: ContextQueue[str] = ContextQueue(limit=5)
    await memory.append(ContextItem("one"), ContextItem("two"))
    pool: ContextPool[str] = ContextPool()
    for key in ("a", "b", "c"):
        await pool.add(ContextItem(key, description=key, id=key))
    busy = Agent("busy", "Has work", [task], context_queue=memory, context_pool=pool)
    idle = Agent("idle", "Has nothing", [task])
    for n in range(3):
        await busy.put(Turn(task, args=[n]))

    metrics = collect(metric_reader)
    depth = number_points(metrics["pygents.agent.queue.depth"])
    assert point_where(depth, gen_ai__agent__name="busy").value == 3
    assert point_where(depth, gen_ai__agent__name="idle").value == 0
    queue_sizes = number_points(metrics["pygents.context.queue.size"])
    assert point_where(queue_sizes, gen_ai__agent__name="busy").value == 2
    assert point_where(queue_sizes, gen_ai__agent__name="idle").value == 0
    pool_sizes = number_points(metrics["pygents.context.pool.size"])
    assert point_where(pool_sizes, gen_ai__agent__name="busy").value == 3
    assert point_where(pool_sizes, gen_ai__agent__name="idle").value == 0

    assert await drain(busy) == [0, 1, 2]
    await idle.put(Turn(task, args=[9]))

    depth = number_points(collect(metric_reader)["pygents.agent.queue.depth"])
    assert point_where(depth, gen_ai__agent__name="busy").value == 0
    assert point_where(depth, gen_ai__agent__name="idle").value == 1


# -- uninstrument leaves no trace behind --------------------------------------------------


async def test_after_uninstrument_nothing_more_is_measured(
    instrument: PygentsInstrumentor, metric_reader: InMemoryMetricReader
) -> None:
    @tool
    async def step() -> int:
        return 1

    agent = Agent("observed", "Observed", [step])
    await agent.put(Turn(step))
    await Turn(step).returning()
    before = collect(metric_reader)
    assert point_where(number_points(before["pygents.turns"]), **reason("completed")).value == 1
    assert (
        point_where(
            number_points(before["pygents.agent.queue.depth"]), gen_ai__agent__name="observed"
        ).value
        == 1
    )

    instrument.uninstrument()
    await Turn(step).returning()
    await agent.put(Turn(step))

    after = collect(metric_reader)
    turns = after.get("pygents.turns")
    if turns is not None:  # kept from before, not increased
        assert point_where(number_points(turns), **reason("completed")).value == 1
    for gauge in (
        "pygents.agent.queue.depth",
        "pygents.context.queue.size",
        "pygents.context.pool.size",
    ):
        assert gauge not in after, f"{gauge} still reports after uninstrument()"
