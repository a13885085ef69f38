"""A worker process for the failover test: ``python failover_worker.py SPEC NAME LOGS
REPLICAS [AGENT...]``.

Serves the agents named (by default ``ledger``; tool ``post``) on the mailboxes ``SPEC`` names (see
`failover_helpers.mailboxes_for`), with ``Mailboxes(replicas=REPLICAS)``. Each run of
the tool appends ``"<turn uuid> <pid> <attempt>"`` to ``LOGS/ran-NAME.txt`` — outside
Redis, so that a failover cannot lose the count of executions. Stops on SIGTERM and
prints its counters.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

# Run as a script, its path holds only this folder: the helpers it imports need
# tests/ too (system_programs), as under pytest.
sys.path.append(str(Path(__file__).resolve().parent.parent))

from failover_helpers import AGENT, mailboxes_for

from pygents import Agent, tool
from pygents.redis import Worker, current_delivery


async def main(spec: str, name: str, logs: str, replicas: int, names: list[str]) -> None:
    with (Path(logs) / f"ran-{name}.txt").open("a", buffering=1) as ran:

        @tool()
        async def post(amount: int) -> int:
            """Posts an amount to the ledger (a side effect), then confirms it."""
            delivery = current_delivery()
            assert delivery is not None
            await asyncio.sleep(0.002)  # some work, so that turns are in flight
            ran.write(f"{delivery.turn_uuid} {os.getpid()} {delivery.attempt}\n")
            return amount * 2

        agents = [Agent(agent, "Keeps the books", [post]) for agent in names or [AGENT]]
        options = {"replicas": replicas, "replica_timeout": 0.5}
        async with mailboxes_for(spec, **options) as mailboxes:
            worker = Worker(
                mailboxes,
                agents,
                name=name,
                concurrency=8,
                visibility_timeout=2.0,
                max_reconnect_delay=0.5,
                control_interval=None,
            )
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, worker.stop)
            await worker.run()
            print(f"{name}: {worker.counters}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]))
