"""A traced producer process: ``python traced_producer.py REDIS_URL OTLP_HTTP_ENDPOINT``.

Inside a span of its own, creates a turn for ``courier`` and puts it on the mailbox,
waits for the result, and prints the span's ids, the turn's uuid and the result.
"""

from __future__ import annotations

import json

from opentelemetry import trace
from traced_process import greet, run_traced

from pygents import Turn
from pygents.redis import Mailboxes


async def produce(mailboxes: Mailboxes) -> None:
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


if __name__ == "__main__":
    run_traced("mailbox-producer", produce)
