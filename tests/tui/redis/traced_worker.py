"""A worker process traced over OTLP: ``python traced_worker.py URL NAME``.

``pygents_otel.configure()`` (live mode, exporter and endpoint from the standard
variables the test sets), then a `pygents.redis.Worker` named ``NAME`` serving the
agent ``desk`` from the mailboxes at ``URL``: what a real deployment runs, whose
agent rows over OTLP the dashboard must merge with the ``desk`` mailbox. Reads
control requests every 50 ms; stops cleanly on SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
import sys

from pygents import Agent, tool
from pygents.redis import Mailboxes, Worker
from pygents_otel import configure


@tool()
async def work(n: int) -> int:
    """Returns its argument."""
    return n


async def main(url: str, name: str) -> None:
    telemetry = configure(service_name="desk-svc")
    agent = Agent("desk", "Does the work it is given", [work])
    try:
        async with Mailboxes(url) as mailboxes:
            worker = Worker(mailboxes, agent, name=name, control_interval=0.05)
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, worker.stop)
            await worker.run()
    finally:
        telemetry.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
