"""A worker process for the control tests: ``python control_worker.py URL NAME [CONCURRENCY]``.

Serves the agent ``desk`` with two tools whose effects are visible in Redis:

* ``work(n)`` appends ``"<turn uuid> <pid> <attempt>"`` to the list ``sidefx`` and
  returns ``n``, after a short pause (so that turns are in flight; 0.3 s when ``n`` is
  a multiple of 25, so that some are running when cancelled);
* ``hold()`` appends its turn uuid to the list ``started``, then waits until the key
  ``release`` exists (bounded: 60 s), so that a test can act on a running turn.

Reads control requests every 50 ms. Stops cleanly on SIGTERM; exits 0 once ``run``
returns (after a drain, too).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from pygents import Agent, tool
from pygents.redis import Mailboxes, Worker, current_delivery
from pygents.redis._cluster import connect


async def main(url: str, name: str, concurrency: int) -> None:
    effects = connect(url, decode_responses=True)  # a cluster URL too

    @tool()
    async def work(n: int) -> int:
        """Records a side effect, then returns its argument."""
        delivery = current_delivery()
        assert delivery is not None
        await asyncio.sleep(0.3 if n % 25 == 0 else 0.002)  # some long ones, to cancel
        await effects.rpush("sidefx", f"{delivery.turn_uuid} {os.getpid()} {delivery.attempt}")
        return n

    @tool()
    async def hold() -> str:
        """Runs until the test releases it."""
        delivery = current_delivery()
        assert delivery is not None
        await effects.rpush("started", delivery.turn_uuid)
        for _ in range(3000):
            if await effects.exists("release"):
                return "released"
            await asyncio.sleep(0.02)
        return "never released"

    agent = Agent("desk", "Does the work it is given", [work, hold])
    async with Mailboxes(url) as mailboxes:
        worker = Worker(
            mailboxes,
            agent,
            name=name,
            concurrency=concurrency,
            visibility_timeout=2.0,
            control_interval=0.05,
        )
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, worker.stop)
        await worker.run()
    await effects.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 4))
