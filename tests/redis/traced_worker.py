"""A traced worker process: ``python traced_worker.py REDIS_URL OTLP_HTTP_ENDPOINT``.

Serves the agent ``courier`` (tool ``greet``) and exports its spans over OTLP/HTTP.
Stops on SIGTERM, flushing its spans before it exits.
"""

from __future__ import annotations

import asyncio
import signal
import sys

import pygents_otel
from pygents import Agent, tool
from pygents.redis import Mailboxes, Worker


@tool()
async def greet(name: str) -> str:
    """Greets someone."""
    return f"hello, {name}"


async def main(url: str, endpoint: str) -> None:
    telemetry = pygents_otel.configure(
        service_name="mailbox-worker",
        endpoint=endpoint,
        protocol="http/protobuf",
        traces_exporter="otlp",
        metrics_exporter="none",
    )
    try:
        async with Mailboxes(url) as mailboxes:
            worker = Worker(mailboxes, Agent("courier", "Carries greetings", [greet]))
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, worker.stop)
            await worker.run()
    finally:
        telemetry.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
