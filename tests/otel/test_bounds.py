"""User text is bounded on its way into spans and metrics.

Agent and tool names, descriptions, tags, context item ids and exception class names
come from the user: a name of 100,000 characters must not become a 100,000-character
span name or attribute.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from pygents import Agent, ContextItem, ContextPool, Turn, tool

HUGE = 100_000
NAME_LIMIT = 256  # names, tags, ids, error types, status descriptions
TEXT_LIMIT = 1024  # descriptions and exception messages
STACK_LIMIT = 8192  # stack traces (their end)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)


def metric_attribute_values(reader: InMemoryMetricReader) -> list[str]:
    data = reader.get_metrics_data()
    assert data is not None
    return [
        text
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
        for value in (point.attributes or {}).values()
        for text in strings(value)
    ]


@pytest.mark.usefixtures("instrument")
async def test_hostile_lengths_of_user_text_are_bounded_in_spans_and_metrics(
    exporter: InMemorySpanExporter, metric_reader: InMemoryMetricReader
) -> None:
    failure = type("E" * HUGE, (Exception,), {})

    async def body(key: str) -> AsyncIterator[Any]:
        yield ContextItem("fact", description="d" * HUGE, id="i" * HUGE)
        raise failure("m" * HUGE)

    body.__name__ = body.__qualname__ = "t" * HUGE
    body.__doc__ = "D" * HUGE
    hostile = tool(tags={"g" * HUGE, *(f"tag {i}" for i in range(500))})(body)

    agent = Agent(
        "a" * HUGE,
        "A" * HUGE,
        [hostile],
        context_pool=ContextPool(limit=3),
        tags={"x" * HUGE},
    )
    await agent.put(Turn(hostile, kwargs={"key": "k"}))
    with pytest.raises(failure):
        async for _ in agent.run():
            pass

    spans = exporter.get_finished_spans()
    assert {span.name.split(" ")[0] for span in spans} == {"invoke_agent", "turn", "execute_tool"}
    seen: list[str] = []
    for span in spans:
        assert len(span.name) <= len("execute_tool ") + NAME_LIMIT + 1
        assert len(span.status.description or "") <= NAME_LIMIT + 1
        for key, value in span.attributes.items():
            limit = TEXT_LIMIT if key.endswith(".description") else NAME_LIMIT
            for text in strings(value):
                assert len(text) <= limit + 1, (span.name[:40], key)
                seen.append(text)
            if key == "pygents.tags":
                assert isinstance(value, tuple)
                assert len(value) <= 64
        for event in span.events:
            for key, value in (event.attributes or {}).items():
                limit = {
                    "exception.message": TEXT_LIMIT,
                    "exception.stacktrace": STACK_LIMIT,
                }.get(key, NAME_LIMIT)
                for text in strings(value):
                    assert len(text) <= limit + 1, (span.name[:40], event.name, key)
                    seen.append(text)
    # The hostile texts are there, cut (so the test looked at them).
    for letter in "atADgxiEm":
        assert any(text.startswith(letter * 50) and text.endswith("…") for text in seen), letter

    metric_values = metric_attribute_values(metric_reader)
    assert any(text.startswith("a" * 50) for text in metric_values)
    assert any(text.startswith("t" * 50) for text in metric_values)
    assert all(len(text) <= NAME_LIMIT + 1 for text in metric_values)
