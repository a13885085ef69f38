"""Each framework's scripted runs (`harness`) happen once per test session: the tests
read the same spans, and the frameworks cost a second or two each to run."""

from __future__ import annotations

import asyncio

import harness
import pytest
from opentelemetry.sdk.trace import ReadableSpan


def _run(service: str, instrumentation: str | None) -> tuple[list[str], tuple[ReadableSpan, ...]]:
    sink = harness.telemetry(service)
    try:
        if instrumentation is None:
            outcomes = asyncio.run(harness.run_pydantic_ai(sink))
        else:
            outcomes = asyncio.run(harness.run_openai_agents(sink, instrumentation))  # type: ignore[arg-type]
        return outcomes, sink.spans()
    finally:
        sink.shutdown()


@pytest.fixture(scope="session")
def pydantic_ai_run() -> tuple[list[str], tuple[ReadableSpan, ...]]:
    return _run("pydantic-ai-weather", None)


@pytest.fixture(scope="session")
def openai_agents_otel_run() -> tuple[list[str], tuple[ReadableSpan, ...]]:
    return _run("openai-agents-otel", "otel")


@pytest.fixture(scope="session")
def openai_agents_openinference_run() -> tuple[list[str], tuple[ReadableSpan, ...]]:
    return _run("openai-agents-openinference", "openinference")
