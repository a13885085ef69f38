"""How a worker handles one delivery: queue it in a lane, run its turn as its agent
(or move it to the dead letters), and hand its outcome to the writer.

The control requests (`pygents.redis._worker.watch`) act here too: a delivery of a paused
mailbox is handed back when its lane reaches it, one asked to be cancelled before it
started is recorded as cancelled without running, and a running one cancelled by
request is recorded as ``CANCELLED`` — not left unfinished, as when the worker stops.

A `Worker` owns one `Deliveries`; what the worker's parts share (who it is, what it
serves and holds, its lanes and counters) is one `WorkerState`, handed to each part,
so that no part reaches into another's attributes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from pygents._turn import Turn
from pygents._turn_run import Runner
from pygents.redis._driver import Sink, run_as
from pygents.redis._mailbox_types import DELIVERY, Delivery, bounded, cancelled_outcome
from pygents.redis._worker.entries import DeadEntry, Malformed, Served, decode_entry, parse_entry
from pygents.redis._worker.intake import hand_back
from pygents.redis._worker.lanes import Lanes
from pygents.redis._worker.stats import WorkerCounters

if TYPE_CHECKING:
    from pygents.redis._producer.mailbox import Mailboxes
    from pygents.redis._worker.flusher import Flusher
    from pygents.redis._worker.watch import Controls

__all__ = ["Deliveries", "WorkerState"]


@dataclass(eq=False, slots=True)
class WorkerState:
    """What a worker's parts (its reader, deliveries, watcher and writer) share."""

    name: str
    mailboxes: Mailboxes
    served: dict[str, Served]
    controls: Controls
    lanes: Lanes
    counters: WorkerCounters = field(default_factory=WorkerCounters)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    # Per agent: the deliveries read and not recorded yet, and among them those whose
    # job started (a turn ran, or a move to the dead letters): a stopping worker hands
    # back everything else it holds.
    held: dict[str, set[str]] = field(init=False)
    begun: dict[str, set[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.held = {name: set() for name in self.served}
        self.begun = {name: set() for name in self.served}

    def recorded(self, agent: str, message_id: str) -> None:
        """The writer recorded (or gave up on) this delivery: it is not held any more."""
        self.held[agent].discard(message_id)
        self.begun[agent].discard(message_id)

    def dead_lettered(self) -> None:
        self.counters.dead_lettered += 1

    def unreplicated(self) -> None:
        self.counters.unreplicated += 1

    def failed(self, delay: float) -> None:
        self.counters.connection_failures += 1
        self.counters.last_backoff = delay

    async def stopped_or(self, event: asyncio.Event) -> None:
        """Wait until ``event`` is set or the worker stops."""
        waits = [asyncio.ensure_future(e.wait()) for e in (event, self.stopping)]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()


class Deliveries:
    """The deliveries of one worker, from the entry read to the outcome handed over."""

    __slots__ = ("flusher", "max_deliveries", "state")

    def __init__(self, state: WorkerState, flusher: Flusher, max_deliveries: int) -> None:
        self.state = state
        self.flusher = flusher
        self.max_deliveries = max_deliveries

    def take(
        self,
        served: Served,
        message_id: str,
        raw: Mapping[bytes, bytes] | None,
        deliveries: int,
        last_error: str | None,
    ) -> None:
        """Queue an entry's turn, or its move to the dead letters if it cannot run."""
        self.state.held[served.name].add(message_id)
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
        self.state.lanes.add(partial(self._run, served, message_id, turn, reply, deliveries))

    def _dead(self, dead: DeadEntry) -> None:
        """Queue an entry's move to the dead letters, in a lane like any delivery."""

        async def move(runner: Runner) -> None:
            self.state.begun[dead.served.name].add(dead.message_id)
            await self.flusher.dead_letter(dead)

        self.state.lanes.add(move)

    async def hand_back(self, served: Served) -> None:
        """Give back the turns of ``served`` read ahead and not started (paused)."""
        held = self.state.held[served.name]
        held.intersection_update(self.state.begun[served.name])  # queued jobs then skip
        await hand_back(self.state.mailboxes.client, served.keys, self.state.name, held)

    async def _run(
        self,
        served: Served,
        message_id: str,
        turn: Turn,
        reply: str | None,
        attempt: int,
        runner: Runner,
    ) -> None:
        state, controls = self.state, self.state.controls
        if message_id not in state.held[served.name]:
            return  # handed back (its mailbox was paused) while it waited in a lane
        if served.name in controls.paused:
            await self.hand_back(served)
            return
        state.begun[served.name].add(message_id)
        sink = Sink(turn.uuid, reply, attempt, self.flusher.value, self.flusher.limit)
        if message_id in controls.cancel:  # cancelled before it started
            self._cancelled(served, message_id, turn, reply, sink)
            return
        token = DELIVERY.set(Delivery(served.name, turn.uuid, message_id, attempt, state.name))
        task = asyncio.current_task()
        assert task is not None  # a lane's

        async def route(routed: Turn) -> None:
            await state.mailboxes.put(served.name, routed, reply=False)

        controls.running[message_id] = task
        asked = False
        try:
            try:
                outcome = await run_as(served.agent, turn, sink, route, state.name, runner)
            finally:
                asked = controls.finished(message_id, task)
                DELIVERY.reset(token)
        except asyncio.CancelledError:
            if asked and not task.cancelling():  # cancelled by request, not stopping
                self._cancelled(served, message_id, turn, reply, sink)
                return
            self.flusher.unfinished(
                served, message_id, f"worker {bounded(state.name)} stopped while the turn ran"
            )
            raise
        state.counters.turns += 1
        self.flusher.outcome(served, message_id, reply, attempt, sink.outcome_record(outcome))

    def _cancelled(
        self, served: Served, message_id: str, turn: Turn, reply: str | None, sink: Sink
    ) -> None:
        """Record a delivery cancelled through ``Mailboxes.cancel`` (once, as any outcome:
        the writer's script records only what its acknowledgement took)."""
        data = cancelled_outcome(
            turn.uuid,
            served.name,
            values=sink.values,
            deliveries=sink.attempt,
            worker=self.state.name,
            streaming=turn.tool.streaming,
        )
        self.state.counters.turns += 1
        self.flusher.outcome(served, message_id, reply, sink.attempt, sink.outcome_record(data))
