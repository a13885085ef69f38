"""Instrumented before any SDK exists: dormant at no cost, then tracing on its own."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pygents import Turn, tool
    from pygents_otel import PygentsInstrumentor

    @tool()
    async def work() -> int:
        return 1

    async def main() -> None:
        instrumentor = PygentsInstrumentor()
        instrumentor.instrument()                     # no SDK yet
        assert instrumentor.subscriber is None        # dormant
        assert await Turn(work).returning() == 1      # runs untraced, nothing breaks

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)           # the application installs its SDK

        turn = Turn(work)                             # the first turn created wakes it
        assert instrumentor.subscriber is not None
        assert await turn.returning() == 1
        print(sorted(span.name for span in exporter.get_finished_spans()))

    asyncio.run(main())
    """
)


def test_dormant_instrumentor_wakes_when_an_sdk_is_installed() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['execute_tool work', 'turn work']"
