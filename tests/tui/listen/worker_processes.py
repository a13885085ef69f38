"""Worker processes for the listener's end-to-end tests: ``live_worker.py`` run as a
real process, traced by ``pygents_otel`` in live mode and exporting over OTLP.

The ``spawn`` fixture (conftest) starts them and kills whatever is left at the end.
Import it from a test module here as ``from worker_processes import Worker``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

from pygents_tui.feeders import FleetModel

__all__ = ["VALUES", "Spawn", "Worker", "Workers"]

WORKER = Path(__file__).with_name("live_worker.py")
VALUES = 50  # the values each worker's first turn streams


@dataclass
class Worker:
    service: str
    agent: str
    process: subprocess.Popen[str]
    stderr: IO[str]

    def log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()[-3000:]

    def go(self) -> None:
        """Let the worker's waiting turn end (it reads one line)."""
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()


class Workers:
    """Starts workers into ``directory`` (their standard error goes to a file there)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.started: list[Worker] = []

    def start(
        self,
        setup: str,
        service: str,
        agent: str,
        endpoint: str,
        protocol: str,
        env: Mapping[str, str] | None = None,
    ) -> Worker:
        """``env``: more variables (``OTEL_RESOURCE_ATTRIBUTES``...) for this worker."""
        chosen = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PYGENTS_"))}
        chosen |= {
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
            "OTEL_INSTRUMENTATION_PYGENTS_LIVE": "true",
            "OTEL_METRICS_EXPORTER": "none",
            "OTEL_BSP_SCHEDULE_DELAY": "200",
            **(env or {}),
        }
        stderr = (self.directory / f"{service}-{len(self.started)}.err").open("w+")
        process = subprocess.Popen(
            [sys.executable, str(WORKER), setup, service, agent, str(VALUES)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
            env=chosen,
        )
        worker = Worker(service, agent, process, stderr)
        self.started.append(worker)
        return worker

    def close(self) -> None:
        """Kill every worker still running, and wait for each."""
        for worker in self.started:
            if worker.process.poll() is None:
                worker.process.kill()
            worker.process.wait(timeout=30)
            if worker.process.stdin is not None:
                worker.process.stdin.close()
            worker.stderr.close()


Spawn = Callable[..., Worker]


async def drain_until(
    fleet: FleetModel, holds: Callable[[], bool], deadline: float, workers: list[Worker]
) -> None:
    """Drain the model each time something arrives (and at least every half second, so
    staleness is re-checked), until ``holds()`` — or fail at ``deadline`` (monotonic)
    with what the workers said."""
    while True:
        fleet.store.drain()
        if holds():
            return
        left = deadline - time.monotonic()
        if left <= 0:
            logs = "\n".join(f"--- {w.service}:\n{w.log()}" for w in workers)
            pytest.fail(f"the fleet model did not get there in time; workers said:\n{logs}")
        try:
            async with asyncio.timeout(min(left, 0.5)):
                await fleet.arrived.wait()
        except TimeoutError:
            pass
