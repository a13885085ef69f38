"""A worker process for the re-run test: ``python rerun_worker.py URL NAME``.

Serves the agent ``relay`` with the streaming tool ``count``. Its first delivery of a
turn yields five values (``a1-0`` … ``a1-4``) and then waits forever, so that the test
can kill the process mid-stream; a later delivery yields all ``n`` values, named after
its attempt (``a2-0`` …). Stops cleanly on SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator

from pygents import Agent, tool
from pygents.redis import Mailboxes, Worker, current_delivery


@tool()
async def count(n: int) -> AsyncIterator[str]:
    """Counts to ``n``; the first delivery stalls after five values."""
    delivery = current_delivery()
    attempt = delivery.attempt if delivery is not None else 1
    if attempt == 1:
        for index in range(5):
            yield f"a1-{index}"
        await asyncio.Event().wait()  # mid-stream until the process is killed
    for index in range(n):
        yield f"a{attempt}-{index}"


async def main(url: str, name: str) -> None:
    agent = Agent("relay", "Relays counts", [count])
    async with Mailboxes(url) as mailboxes:
        worker = Worker(mailboxes, agent, name=name, visibility_timeout=1.0)
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, worker.stop)
        await worker.run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
