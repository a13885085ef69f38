"""The worker's side of control: what the control hashes ask of it, read on a timer.

Every ``control_interval`` seconds a worker reads the control hash of each mailbox it
serves (one pipelined ``HGETALL`` each, see `pygents.redis._control` for why a timer)
and keeps here what applies to it: the paused mailboxes, the deliveries it holds that
must be cancelled, and whether it is asked to drain. Cancelling a running delivery
cancels the lane task running it (`Controls.cancel_running`); the worker then records
the outcome as ``CANCELLED`` instead of leaving the delivery unfinished.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from redis.asyncio import Redis

from pygents.redis._entries import Served

__all__ = ["Controls"]


class Controls:
    """What the control hashes of the served mailboxes ask of worker ``name``."""

    def __init__(self, client: Redis, served: Mapping[str, Served], name: str) -> None:
        self.client = client
        self.served = served
        self.name = name
        self.paused: frozenset[str] = frozenset()  # agent names
        self.cancel: set[str] = set()  # message ids held here, to cancel
        self.draining = False
        self.running: dict[str, asyncio.Task[Any]] = {}  # message id -> its lane task
        self.cancelling: set[str] = set()  # running deliveries whose task was cancelled
        self.changed = asyncio.Event()  # set when the paused set changes

    async def refresh(self, held: Mapping[str, set[str]]) -> None:
        """Read the control hashes; keep what applies to the deliveries in ``held``."""
        pipe = self.client.pipeline(transaction=False)
        for served in self.served.values():
            pipe.hgetall(served.keys.control)
        found = await pipe.execute(raise_on_error=False)
        paused: set[str] = set()
        wanted: set[str] = set()
        drain = f"drain:{self.name}"
        for served, fields in zip(self.served.values(), found, strict=True):
            if not isinstance(fields, dict):
                continue  # the key is not a hash: no request can be read from it
            if fields.get("paused"):
                paused.add(served.name)
            if drain in fields:
                self.draining = True
            mine = held[served.name]
            for field, value in fields.items():
                if field.startswith("cancel:") and value in mine:
                    wanted.add(value)
        self.cancel = wanted
        if paused != self.paused:
            self.paused = frozenset(paused)
            self.changed.set()
        self.cancel_running()

    def cancel_running(self) -> None:
        """Cancel the lane task of every running delivery asked to be cancelled. Runs
        while those tasks are suspended inside their turn, so the cancellation lands in
        the turn."""
        for message_id in self.cancel:
            task = self.running.get(message_id)
            if task is not None and message_id not in self.cancelling:
                self.cancelling.add(message_id)
                task.cancel()

    def finished(self, message_id: str, task: asyncio.Task[Any]) -> bool:
        """A running delivery ended (any way): True if it was cancelled by request.

        Takes back the cancellation that the request added to the lane task, so that
        the lane goes on with its next delivery."""
        self.running.pop(message_id, None)
        if message_id not in self.cancelling:
            return False
        self.cancelling.discard(message_id)
        task.uncancel()
        return True
