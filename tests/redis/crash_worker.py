"""A worker process for the crash test: ``python crash_worker.py URL NAME``.

Serves the agent ``ledger`` with the tool ``post``, whose side effect is visible in
Redis: it appends ``"<turn uuid> <pid> <attempt>"`` to the list ``sidefx`` and
counts its posts per process in the hash ``posted``. Stops cleanly on SIGTERM.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from pygents import Agent, tool
from pygents.redis import Mailboxes, Worker, current_delivery
from pygents.redis._cluster import connect


async def main(url: str, name: str) -> None:
    effects = connect(url, decode_responses=True)  # a cluster URL too

    @tool()
    async def post(amount: int) -> int:
        """Posts an amount to the ledger (a side effect), then confirms it."""
        delivery = current_delivery()
        assert delivery is not None
        await asyncio.sleep(0.005)  # some work, so that turns are in flight
        pipe = effects.pipeline(transaction=False)
        pipe.rpush("sidefx", f"{delivery.turn_uuid} {os.getpid()} {delivery.attempt}")
        pipe.hincrby("posted", str(os.getpid()), 1)
        await pipe.execute()
        return amount * 2

    agent = Agent("ledger", "Keeps the books", [post])
    async with Mailboxes(url) as mailboxes:
        worker = Worker(mailboxes, agent, name=name, concurrency=8, visibility_timeout=2.0)
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, worker.stop)
        await worker.run()
    await effects.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
