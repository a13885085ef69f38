"""A traced producer process: ``python traced_producer.py REDIS_URL OTLP_HTTP_ENDPOINT``.

Inside a span of its own, creates a turn for ``courier`` and puts it on the mailbox,
waits for the result, and prints the span's ids, the turn's uuid and the result.
"""

from __future__ import annotations

import asyncio
import json
import sys

from opentelemetry import trace

import pygents_otel
from pygents import Turn, tool
from pygents.redis import Mailboxes


@tool()
async def greet(name: str) -> str:
    """The worker's tool, as the producer knows it."""
    return f"hello, {name}"


async def main(url: str, endpoint: str) -> None:
    telemetry = pygents_otel.configure(
        service_name="mailbox-producer",
        endpoint=endpoint,
        protocol="http/protobuf",
        traces_exporter="otlp",
        metrics_exporter="none",
    )
    try:
        async with Mailboxes(url) as mailboxes:
            with trace.get_tracer("producer").start_as_current_span("handle request") as span:
                turn = Turn(greet, kwargs={"name": "world"})
                handle = await mailboxes.put("courier", turn)
                result = await handle.result()
            context = span.get_span_context()
            print(
                json.dumps(
                    {
                        "trace_id": format(context.trace_id, "032x"),
                        "span_id": format(context.span_id, "016x"),
                        "uuid": turn.uuid,
                        "traceparent": turn.metadata.get("traceparent"),
                        "result": result,
                    }
                )
            )
    finally:
        telemetry.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
