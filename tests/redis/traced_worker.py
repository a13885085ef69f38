"""A traced worker process: ``python traced_worker.py REDIS_URL OTLP_HTTP_ENDPOINT``.

Serves the agent ``courier`` (tool ``greet``) and exports its spans over OTLP/HTTP.
Stops on SIGTERM, flushing its spans before it exits.
"""

from __future__ import annotations

import asyncio
import signal

from traced_process import greet, run_traced

from pygents import Agent
from pygents.redis import Mailboxes, Worker


async def serve(mailboxes: Mailboxes) -> None:
    worker = Worker(mailboxes, Agent("courier", "Carries greetings", [greet]))
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, worker.stop)
    await worker.run()


if __name__ == "__main__":
    run_traced("mailbox-worker", serve)
