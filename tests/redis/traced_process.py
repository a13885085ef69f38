"""What the traced producer and worker processes share (``traced_producer.py``,
``traced_worker.py``): the tool both know, and a process's set-up — OpenTelemetry
exporting over OTLP/HTTP under a service name of its own, and a connection to the
mailboxes — from the two arguments ``REDIS_URL OTLP_HTTP_ENDPOINT``."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

import pygents_otel
from pygents import tool
from pygents.redis import Mailboxes


@tool()
async def greet(name: str) -> str:
    """Greets someone."""
    return f"hello, {name}"


def run_traced(service_name: str, body: Callable[[Mailboxes], Awaitable[None]]) -> None:
    """Run ``body`` with the mailboxes at ``sys.argv[1]``, its spans exported to the
    OTLP/HTTP endpoint ``sys.argv[2]``; the spans are flushed however it ends."""
    url, endpoint = sys.argv[1], sys.argv[2]

    async def main() -> None:
        telemetry = pygents_otel.configure(
            service_name=service_name,
            endpoint=endpoint,
            protocol="http/protobuf",
            traces_exporter="otlp",
            metrics_exporter="none",
        )
        try:
            async with Mailboxes(url) as mailboxes:
                await body(mailboxes)
        finally:
            telemetry.shutdown()

    asyncio.run(main())
