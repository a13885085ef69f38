"""Fixtures for the listener's tests: a fleet model, a receiver on loopback with
system-chosen ports, and senders made of the real OpenTelemetry SDK and OTLP
exporters (see ``otlp_sender.py``), and worker processes traced by ``pygents_otel``
(see ``worker_processes.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from otlp_sender import MakeSender, Sender
from worker_processes import Spawn, Workers

from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver


@pytest.fixture
def fleet() -> FleetModel:
    """A fleet model on the real clocks, slow to call anything stale."""
    return FleetModel(stale_after=3600.0)


@pytest.fixture
async def receiver(fleet: FleetModel) -> AsyncIterator[Receiver]:
    async with Receiver(fleet, grpc_port=0, http_port=0) as running:
        yield running


@pytest.fixture
async def senders(receiver: Receiver) -> AsyncIterator[MakeSender]:
    """``senders(protocol, **options)``: a new sender to ``receiver``, closed after."""
    made: list[Sender] = []

    def make(protocol: str, **options: Any) -> Sender:
        endpoint = receiver.grpc_endpoint if protocol == "grpc" else receiver.http_endpoint
        sender = Sender(protocol, endpoint, **options)
        made.append(sender)
        return sender

    yield make
    for sender in made:
        await sender.close()


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    """``spawn(setup, service, agent, endpoint, protocol, env=None)``: a worker process
    (``live_worker.py``); every one is killed at the end, whatever happened."""
    workers = Workers(tmp_path)
    yield workers.start
    workers.close()
