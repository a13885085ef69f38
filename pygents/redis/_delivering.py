"""How a worker handles one delivery: queue it in a lane, run its turn as its agent
(or move it to the dead letters), and hand its outcome to the writer.

The control requests (`pygents.redis._watch`) act here too: a delivery of a paused
mailbox is handed back when its lane reaches it, one asked to be cancelled before it
started is recorded as cancelled without running, and a running one cancelled by
request is recorded as ``CANCELLED`` — not left unfinished, as when the worker stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from functools import partial

from pygents._turn import Turn
from pygents._turn_run import Runner
from pygents.redis._driver import Sink, run_as
from pygents.redis._entries import DeadEntry, Malformed, Served, decode_entry, parse_entry
from pygents.redis._mailbox_types import DELIVERY, Delivery, bounded
from pygents.redis._watch import Watching

__all__ = ["Delivering"]


class Delivering(Watching):
    """The delivery side of `Worker` (a mixin: it uses the worker's state)."""

    max_deliveries: int

    def _take(
        self,
        served: Served,
        message_id: str,
        raw: Mapping[bytes, bytes] | None,
        deliveries: int,
        last_error: str | None,
    ) -> None:
        """Queue an entry's turn, or its move to the dead letters if it cannot run."""
        self._held[served.name].add(message_id)
        fields, unreadable = decode_entry(raw)
        if deliveries > self.max_deliveries:
            reason = (
                f"delivered {deliveries} times (max_deliveries={self.max_deliveries}) without "
                "an outcome: each worker running it died or lost Redis"
            )
            self._dead(DeadEntry(served, message_id, fields, reason, deliveries, last_error or ""))
            return
        if unreadable is not None:
            self._dead(DeadEntry(served, message_id, fields, unreadable, deliveries))
            return
        try:
            turn, reply = parse_entry(served, fields)
        except Malformed as bad:
            self._dead(DeadEntry(served, message_id, fields, bad.reason, deliveries, bad=bad))
            return
        except Exception as exc:  # whatever else an entry can do to the parser
            reason = f"cannot be read: {type(exc).__name__}: {bounded(str(exc))}"
            self._dead(DeadEntry(served, message_id, fields, reason, deliveries))
            return
        self._lanes.add(partial(self._run, served, message_id, turn, reply, deliveries))

    def _dead(self, dead: DeadEntry) -> None:
        """Queue an entry's move to the dead letters, in a lane like any delivery."""

        async def move(runner: Runner) -> None:
            self._begun[dead.served.name].add(dead.message_id)
            await self.flusher.dead_letter(dead)

        self._lanes.add(move)

    def _dead_lettered(self) -> None:
        self.counters.dead_lettered += 1

    def _recorded(self, agent: str, message_id: str) -> None:
        """The writer recorded (or gave up on) this delivery: it is not held any more."""
        self._held[agent].discard(message_id)
        self._begun[agent].discard(message_id)

    async def _run(
        self,
        served: Served,
        message_id: str,
        turn: Turn,
        reply: str | None,
        attempt: int,
        runner: Runner,
    ) -> None:
        if message_id not in self._held[served.name]:
            return  # handed back (its mailbox was paused) while it waited in a lane
        if served.name in self.controls.paused:
            await self._hand_back(served)
            return
        self._begun[served.name].add(message_id)
        sink = Sink(turn.uuid, reply, attempt, self.flusher.value)
        if message_id in self.controls.cancel:  # cancelled before it started
            self._cancelled(served, message_id, turn, reply, sink)
            return
        token = DELIVERY.set(Delivery(served.name, turn.uuid, message_id, attempt, self.name))
        task = asyncio.current_task()
        assert task is not None  # a lane's

        async def route(routed: Turn) -> None:
            await self.mailboxes.put(served.name, routed, reply=False)

        self.controls.running[message_id] = task
        asked = False
        try:
            try:
                outcome = await run_as(served.agent, turn, sink, route, self.name, runner)
            finally:
                asked = self.controls.finished(message_id, task)
                DELIVERY.reset(token)
        except asyncio.CancelledError:
            if asked and not task.cancelling():  # cancelled by request, not stopping
                self._cancelled(served, message_id, turn, reply, sink)
                return
            self.flusher.unfinished(
                served, message_id, f"worker {bounded(self.name)} stopped while the turn ran"
            )
            raise
        self.counters.turns += 1
        self.flusher.outcome(served, message_id, reply, attempt, sink.outcome_record(outcome))
