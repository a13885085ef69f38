"""A worker process for the listener's end-to-end test: an agent traced by
``pygents_otel`` in live mode, exporting over OTLP to wherever the standard
variables point (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_PROTOCOL``).

``python live_worker.py SETUP SERVICE AGENT VALUES``:

* ``SETUP`` is ``configure`` (``pygents_otel.configure()``, live mode from
  ``OTEL_INSTRUMENTATION_PYGENTS_LIVE``) or ``sdk`` (the application builds its own
  providers with the OTLP exporters, then ``PygentsInstrumentor().instrument()``);
* the agent streams ``VALUES`` values, then runs ``wait_for_go``, which waits for a
  line on standard input — the test decides when the turn ends — with a 60 s timeout.

It prints ``WAITING`` when the second turn starts and ``DONE`` when its run ended.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator, Callable

from opentelemetry import _logs, trace
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from pygents import Agent, Turn, tool
from pygents_otel import PygentsInstrumentor, configure

TIMEOUT = 60.0


def with_sdk(service: str) -> Callable[[], object]:
    """The application's own SDK: what ``PygentsInstrumentor`` users have."""
    resource = Resource.create({"service.name": service, "service.instance.id": str(uuid.uuid4())})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(
        BatchLogRecordProcessor(OTLPLogExporter(), schedule_delay_millis=200)
    )
    trace.set_tracer_provider(tracer_provider)
    _logs.set_logger_provider(logger_provider)
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument()

    def shutdown() -> None:
        instrumentor.uninstrument()
        tracer_provider.shutdown()
        logger_provider.shutdown()

    return shutdown


@tool
async def stream(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


@tool
async def wait_for_go() -> str:
    print("WAITING", flush=True)
    line = await asyncio.to_thread(sys.stdin.readline)
    return line.strip()


async def work(agent_name: str, values: int) -> None:
    agent = Agent(agent_name, "streams, then waits for the test", [stream, wait_for_go])
    await agent.put(Turn(stream, args=[values]))
    await agent.put(Turn(wait_for_go, timeout=TIMEOUT))
    async for _ in agent.run():
        pass


def main(setup: str, service: str, agent_name: str, values: str) -> None:
    if setup == "sdk":
        shutdown = with_sdk(service)
    else:
        shutdown = configure(service, metrics_exporter="none").shutdown
    try:
        asyncio.run(work(agent_name, int(values)))
    finally:
        shutdown()
    print("DONE", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
