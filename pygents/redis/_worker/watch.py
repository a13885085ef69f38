"""The worker's side of control: what the control hashes ask of it, read on a timer.

Every ``control_interval`` seconds a worker reads the control hash of each mailbox it
serves (one pipelined ``HMGET`` each, see `pygents.redis._producer.control` for why a timer)
and keeps here what applies to it: the paused mailboxes, the deliveries it holds that
must be cancelled, and whether it is asked to drain. Cancelling a running delivery
cancels the lane task running it (`Controls.cancel_running`); the worker then records
the outcome as ``CANCELLED`` instead of leaving the delivery unfinished.

The cancellation is asked again at every read of the control hashes while the delivery
still runs, not once: a turn's own code can absorb one. redis-py does, on Python 3.11:
its send path awaits ``asyncio.wait_for``, which returns the command's reply instead of
raising when the cancellation lands just as the command completes — about half the
time for a tool polling Redis. Cancelled once, such a turn ran on, its request was
never acted on again, and its caller waited for good.

A worker says in the control hash when it applies a pause (``paused:<worker>``) or
starts draining (``draining:<worker>``), once per change: surveys show it, and a
caller can wait for it. It also says who it is in its telemetry
(``identity:<worker>``, a JSON pair ``[service.name, service.instance.id]``), when
``pygents_otel`` instrumented this process (`pygents._identity`): a dashboard that
hears the process over OTLP then knows its agent rows are this worker's, and that a
sender merely naming its agent like the mailbox is not. The field is read with the
rest, and written again whenever it is missing or wrong (the worker of that name
started again, Redis restarted empty): it costs a write only then.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from redis.asyncio import Redis

from pygents._identity import IDENTITY
from pygents.redis._worker.entries import Served

if TYPE_CHECKING:
    from pygents.redis._worker.delivering import Deliveries, WorkerState

__all__ = ["Controls", "Watcher"]

_log = logging.getLogger("pygents.redis")


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
        # Running deliveries whose task was cancelled: how many times, all taken back
        # when the delivery ends.
        self.cancelling: dict[str, int] = {}
        self.changed = asyncio.Event()  # set when the paused set changes
        self.reclaim: set[str] = set()  # resumed mailboxes whose turns to take back

    async def refresh(self, held: Mapping[str, set[str]]) -> None:
        """Read the control hashes; keep what applies to the deliveries in ``held``.

        Only the fields that can concern this worker are read (``HMGET``): the pause,
        its own drain request, and a cancel request per delivery it holds — bounded by
        what it holds, however large a hash grows."""
        pipe = self.client.pipeline(transaction=False)
        asked: list[list[str]] = []
        said = f"identity:{self.name}"
        for served in self.served.values():
            ids = list(held[served.name])
            asked.append(ids)
            pipe.hmget(served.keys.control, ["paused", f"drain:{self.name}", said] + [
                f"cancel:{message_id}" for message_id in ids
            ])  # fmt: skip
        found = await pipe.execute(raise_on_error=False)
        paused: set[str] = set()
        wanted: set[str] = set()
        identity = self.identity()
        unsaid: list[Served] = []
        for served, ids, values in zip(self.served.values(), asked, found, strict=True):
            if not isinstance(values, list):
                continue  # the key is not a hash: no request can be read from it
            if values[0]:
                paused.add(served.name)
            if values[1]:
                self.draining = True
            if identity is not None and values[2] != identity:
                unsaid.append(served)
            wanted.update(m for m, v in zip(ids, values[3:], strict=True) if v)
        if identity is not None and unsaid:
            await self._say_identity(unsaid, said, identity)
        self.cancel = wanted
        if paused != self.paused:
            self.paused = frozenset(paused)
            self.changed.set()
        self.cancel_running()

    @staticmethod
    def identity() -> str | None:
        """This process's identity as the control hash holds it, if it has one."""
        found = IDENTITY.current
        if found is None:
            return None
        return json.dumps([found.service, found.instance], separators=(",", ":"))

    async def _say_identity(self, mailboxes: list[Served], field: str, identity: str) -> None:
        pipe = self.client.pipeline(transaction=False)
        for served in mailboxes:
            pipe.hset(served.keys.control, field, identity)
        await pipe.execute(raise_on_error=False)  # a full Redis: said at a later read

    def cancel_running(self) -> None:
        """Cancel the lane task of every running delivery asked to be cancelled. Runs
        while those tasks are suspended inside their turn, so the cancellation lands in
        the turn.

        Again at every read while the delivery still runs: a cancellation the turn's
        code absorbed (see the module docstring) is not the end of the request."""
        for message_id in self.cancel:
            task = self.running.get(message_id)
            if task is not None:
                self.cancelling[message_id] = self.cancelling.get(message_id, 0) + 1
                task.cancel()

    def finished(self, message_id: str, task: asyncio.Task[Any]) -> bool:
        """A running delivery ended (any way): True if it was cancelled by request.

        Takes back every cancellation that the request added to the lane task, so that
        the lane goes on with its next delivery, and a cancellation from elsewhere (the
        worker stopping) is still seen in ``task.cancelling()``."""
        self.running.pop(message_id, None)
        times = self.cancelling.pop(message_id, 0)
        for _ in range(times):
            task.uncancel()
        return times > 0


class Watcher:
    """A worker's side of control: acts on what its `Controls` read (see the module)."""

    __slots__ = ("claim", "deliveries", "state", "stop")

    def __init__(
        self,
        state: WorkerState,
        deliveries: Deliveries,
        claim: Callable[[Served], Awaitable[bool]],
        stop: Callable[[], None],
    ) -> None:
        self.state = state
        self.deliveries = deliveries
        self.claim = claim  # take over a mailbox's idle turns: True once a scan is over
        self.stop = stop  # the worker's own stop

    async def watch(self) -> None:
        """Act on the control requests: drain, hand back what a newly paused mailbox
        read ahead, take back at once what was handed back on resume."""
        state, controls = self.state, self.state.controls
        before = controls.paused
        await controls.refresh(state.held)
        if controls.draining:
            _log.info("pygents.redis: %s drains, as asked through Redis", state.name)
            state.lanes.close()  # no turn starts from now on; the rest is handed back
            await self.say("draining", state.served.values(), True)
            self.stop()
            return
        paused = [state.served[name] for name in controls.paused - before]
        for served in paused:
            await self.deliveries.hand_back(served)
        await self.say("paused", paused, True)
        resumed = [state.served[name] for name in before - controls.paused]
        await self.say("paused", resumed, False)
        # What was handed back on pause is taken back now, not at the keeper's next
        # round (every visibility_timeout / 4): ticks go on until a scan is complete.
        controls.reclaim.update(s.name for s in resumed)
        for name in list(controls.reclaim):
            if name in controls.paused or await self.claim(state.served[name]):
                controls.reclaim.discard(name)

    async def say(self, what: str, mailboxes: Iterable[Served], on: bool) -> None:
        """Set (or clear) ``<what>:<worker>`` in the control hashes of ``mailboxes``."""
        pipe = self.state.mailboxes.client.pipeline(transaction=False)
        field = f"{what}:{self.state.name}"
        for served in mailboxes:
            if on:
                pipe.hset(served.keys.control, field, 1)
            else:
                pipe.hdel(served.keys.control, field)
        if len(pipe):
            await pipe.execute(raise_on_error=False)  # a hash gone wrong: said nowhere
