"""Workers: serve agents from their mailboxes, at least once, in one process.

A `Worker` runs five things side by side until `Worker.stop`:

* the *reader* takes new turns of every served mailbox with one ``XREADGROUP``, in
  batches: it holds up to ``concurrency + prefetch`` turns and reads when it can take
  at least ``concurrency`` (fewer with a small prefetch), so the lanes rarely wait
  for a read while turns wait in Redis, and a busy replica leaves the rest to others.
  After a read that brought all it asked for, the next goes through the ``READ``
  script instead, whose reply costs far less to parse (see ``_lua.mailbox``);
* ``concurrency`` *lanes* run the turns taken, each as its agent, one after the
  other in a lane and side by side across lanes;
* the *writer* (`Flusher` in `pygents.redis._worker.flusher`) records outcomes and streams
  values in batches, acknowledging each turn only once its outcome is recorded;
* the *keeper* heartbeats (which keeps this worker's own turns from looking idle),
  and takes over turns idle longer than ``visibility_timeout`` — their worker died
  — dead-lettering those delivered ``max_deliveries`` times already; every
  ``stats_interval`` it also reads the served mailboxes' statistics for
  ``served_stats()`` (what the dashboard and the telemetry gauges show).
* the *watcher* reads the served mailboxes' control hashes every
  ``control_interval`` and acts on them: pause, cancel, drain (`pygents.redis._worker.watch`;
  each delivery's side of it is in `pygents.redis._worker.delivering`).

A `Worker` is one class that owns its parts rather than inheriting them: a
`Deliveries` (each delivery's life), a `Watcher` (control requests), a `Flusher` (the
writer) and `Lanes`; what they share is one `WorkerState` handed to each.

Every loop survives Redis going away or filling up (``maxmemory``): it backs off
exponentially, then carries on, re-creating the consumer groups if Redis came back
empty. No entry can stop a worker: whatever cannot be read is dead-lettered with the
reason. Once stopped, a worker starts no new turn, and hands back the turns it read
ahead without counting their delivery.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from redis.exceptions import NoScriptError, ResponseError

from pygents._agent import Agent
from pygents._routing import ROUTES
from pygents.redis._cluster import connection_lost
from pygents.redis._lua.control import WORKER_FIELDS
from pygents.redis._lua.mailbox import GROUP, HEARTBEAT, READ
from pygents.redis._mailbox_types import unique_name
from pygents.redis._outage import Outage
from pygents.redis._producer.mailbox import Mailboxes
from pygents.redis._producer.reading import tool_names
from pygents.redis._producer.replies import Backoff
from pygents.redis._worker.delivering import Deliveries, WorkerState
from pygents.redis._worker.entries import Served
from pygents.redis._worker.flusher import Flusher
from pygents.redis._worker.intake import FULL, Entry, claim, leave, read_waiting, setup
from pygents.redis._worker.lanes import Lanes
from pygents.redis._worker.refusals import DEFAULT_MAX_RESULT_BYTES, ResultLimit
from pygents.redis._worker.slot_reads import Reads
from pygents.redis._worker.stats import SERVED, WorkerCounters, setting
from pygents.redis._worker.watch import Controls, Watcher

__all__ = ["Worker"]

_log = logging.getLogger("pygents.redis")


class Worker:
    """Serves ``agents`` from their mailboxes on ``mailboxes``' Redis.

    Args:
        mailboxes: where the mailboxes are (its URL, prefix and limits).
        agents: the agents to serve; their tools must be registered in this process.
        concurrency: turns run at once by this worker, across its agents.
        prefetch: turns read ahead of the lanes (default 3 × concurrency): many small
            turns then cost few round trips. Set 0 for long turns shared fairly
            among replicas (a worker then holds only what it runs). A stopping worker
            hands back the turns it read ahead, their delivery not counted.
        visibility_timeout: seconds without a heartbeat after which a turn held by
            a worker is presumed lost and taken over by another.
        max_deliveries: deliveries after which an unfinished turn is dead-lettered.
        name: the consumer name (default: host, pid and a random suffix).
        stop_grace: seconds [`run`][pygents.redis.Worker.run] waits, once stopped,
            for running turns.
        reconnect_delay: first delay after a lost connection (doubles each time).
        max_reconnect_delay: the cap of that delay.
        stats_interval: seconds between two readings of the served mailboxes'
            statistics for [`served_stats`][pygents.redis.served_stats] (``None``:
            never).
        control_interval: seconds between two readings of the served mailboxes'
            control requests (pause, cancel, drain: see ``Mailboxes.pause``);
            ``None``: never (the worker then ignores them).
        max_result_bytes: the largest outcome or streamed value written to Redis, as
            JSON (default 64 MiB; never more than Redis' ``proto-max-bulk-len``, read
            at start when Redis allows ``CONFIG GET``). A larger result fails its turn
            with a ``ValueError`` naming both sizes, at once and once: the turn is
            settled, not run again.
    """

    def __init__(
        self,
        mailboxes: Mailboxes,
        agents: Agent | Sequence[Agent],
        *,
        concurrency: int = 32,
        prefetch: int | None = None,
        visibility_timeout: float = 30.0,
        max_deliveries: int = 5,
        name: str | None = None,
        stop_grace: float = 10.0,
        reconnect_delay: float = 0.05,
        max_reconnect_delay: float = 5.0,
        stats_interval: float | None = 1.0,
        control_interval: float | None = 0.2,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
    ) -> None:
        if not isinstance(mailboxes, Mailboxes):
            raise TypeError(f"Worker() takes a Mailboxes first, got {type(mailboxes).__name__}")
        served = [agents] if isinstance(agents, Agent) else list(agents)
        if not served or not all(isinstance(a, Agent) for a in served):
            raise TypeError("Worker(agents=...) takes an Agent or a non-empty list of Agents")
        self.mailboxes = mailboxes
        self.concurrency: int = setting("concurrency", concurrency, 1, int)
        self.prefetch: int = (
            3 * self.concurrency if prefetch is None else setting("prefetch", prefetch, 0, int)
        )
        # A read waits until it can bring a batch worth the round trip: ``concurrency``
        # turns, or as many as prefetching allows (with none, one free lane is enough).
        self._read_at = max(1, min(self.concurrency, self.prefetch))
        self.visibility_timeout: float = setting("visibility_timeout", visibility_timeout, 0.01)
        self.max_deliveries: int = setting("max_deliveries", max_deliveries, 1, int)
        self.stop_grace: float = setting("stop_grace", stop_grace, 0)
        delay = setting("reconnect_delay", reconnect_delay, 0.001)
        cap = setting("max_reconnect_delay", max_reconnect_delay, delay)
        self.stats_interval: float | None = (
            None if stats_interval is None else setting("stats_interval", stats_interval, 0.01)
        )
        self.control_interval: float | None = (
            None
            if control_interval is None
            else setting("control_interval", control_interval, 0.01)
        )
        self.max_result_bytes: int = setting("max_result_bytes", max_result_bytes, 1024, int)
        self.name = name or unique_name()
        names = tool_names(served)
        self.served = {a.name: Served(a, mailboxes.keys(a.name), names[a.name]) for a in served}
        self._by_mailbox = {s.keys.mailbox: s for s in self.served.values()}
        self.controls = Controls(mailboxes.client, self.served, self.name)
        # What its parts share; each part is handed it (and what else it needs).
        state = self._state = WorkerState(
            self.name, mailboxes, self.served, self.controls, Lanes(self.concurrency)
        )
        self.counters: WorkerCounters = state.counters
        self._ready = asyncio.Event()
        self._started = False
        self._ready_once = False
        self._cursors = dict.fromkeys(self.served, "0-0")
        self._backoff = (delay, cap)
        self._outage = Outage(self.name, mailboxes.where)
        self._heartbeat = mailboxes.client.register_script(HEARTBEAT)
        self._reads = Reads(mailboxes.client, self.name, clustered=mailboxes.clustered)
        self._waiting = mailboxes.client.register_script(READ)
        self._backlog = False  # the last read brought all it asked for: more may wait
        self.flusher = Flusher(
            mailboxes,
            self._new_backoff(),
            state.recorded,
            self.name,
            state.dead_lettered,
            state.unreplicated,
            ResultLimit(self.max_result_bytes),
        )
        self._deliveries = Deliveries(state, self.flusher, self.max_deliveries)
        self._watcher = Watcher(state, self._deliveries, self._claim, self.stop)

    def __repr__(self) -> str:
        return f"<Worker {self.name!r} serving {sorted(self.served)}>"

    def _new_backoff(self) -> Backoff:
        return Backoff(*self._backoff, on_failure=self._state.failed, outage=self._outage)

    @property
    def free(self) -> int:
        """Turns this worker could take right now (it holds up to 2 × concurrency)."""
        return self.concurrency + self.prefetch - self._state.lanes.load

    @property
    def ready(self) -> bool:
        """The consumer groups exist and this worker announced itself."""
        return self._ready.is_set()

    async def wait_ready(self) -> None:
        await self._ready.wait()

    def stop(self) -> None:
        """Ask [`run`][pygents.redis.Worker.run] to stop taking turns, finish (within
        ``stop_grace``) and return. No turn starts after this call: those read ahead
        are handed back, for another worker."""
        self._state.stopping.set()
        self._state.lanes.close()

    # -- the main loop ----------------------------------------------------------------

    async def run(self) -> None:
        """Serve until [`stop`][pygents.redis.Worker.stop]; routes ``send()`` to the
        served agents meanwhile.

        A worker runs once. An unexpected error in one of its loops stops it, after
        the same clean-up as [`stop`][pygents.redis.Worker.stop], and is raised here.
        """
        if self._started:
            raise RuntimeError(f"{self!r} already ran; a Worker runs once, create another")
        self._started = True
        for name in self.served:
            ROUTES.add(name, self.mailboxes)
        keeper = self._every(self.visibility_timeout / 4, "heartbeat and claim", self._keep)
        loops = [
            asyncio.create_task(self._reader(), name=f"pygents.redis reader {self.name}"),
            asyncio.create_task(keeper, name=f"pygents.redis keeper {self.name}"),
        ]
        if self.stats_interval is not None:
            stats = self._every(self.stats_interval, "reading statistics", self._report)
            loops.append(asyncio.create_task(stats, name=f"pygents.redis stats {self.name}"))
        if self.control_interval is not None:
            watch = self._every(
                self.control_interval, "reading control requests", self._watcher.watch
            )
            loops.append(asyncio.create_task(watch, name=f"pygents.redis control {self.name}"))
        writer = asyncio.create_task(self.flusher.run(), name=f"pygents.redis writer {self.name}")
        self._state.lanes.start()
        stopping = asyncio.create_task(self._state.stopping.wait())
        failure: BaseException | None = None
        try:
            done, _ = await asyncio.wait(
                [stopping, writer, *loops], return_when=asyncio.FIRST_COMPLETED
            )
            failed = [t for t in (writer, *loops) if t in done and not t.cancelled()]
            failure = failed[0].exception() if failed else None
        finally:
            self.stop()
            stopping.cancel()
            for loop in loops:
                loop.cancel()
            try:
                await asyncio.gather(stopping, *loops, return_exceptions=True)
                await self._reads.close()
                # What it read ahead goes back now, for other workers, not once the
                # running turns have finished (a read cut short may have left some held
                # here too).
                await self._leave(goodbye=False)
                await self._state.lanes.drain(self.stop_grace)
                self.flusher.close()
                await asyncio.gather(writer, return_exceptions=True)
                await self.flusher.flush_now()
            finally:
                # This process's own bookkeeping goes whatever became of the goodbye
                # to Redis above (an error, or a second cancellation cutting it short):
                # left behind, a dashboard would go on showing a mailbox served here.
                SERVED.withdraw(self.name)
                for name in self.served:
                    ROUTES.discard(name, self.mailboxes)
            await self._leave()
        if failure is not None:
            raise failure

    async def _leave(self, *, goodbye: bool = True) -> None:
        """Hand back the turns read ahead, and say goodbye."""
        for served in self.served.values():
            began = self._state.begun[served.name]
            await leave(self.mailboxes.client, served.keys, self.name, began, goodbye=goodbye)

    async def _setup(self) -> None:
        """Create the consumer groups, announce the tools, learn how large a result
        Redis takes, heartbeat once."""
        agents = f"{self.mailboxes.prefix}:agents"
        for served in self.served.values():
            await setup(self.mailboxes.client, served.keys, agents, served.name, served.tool_names)
        if not self._ready_once:
            # What an earlier worker of this name left (it died before leaving) is not
            # about this one: a drain request would stop it at once.
            for kind in WORKER_FIELDS:
                await self._watcher.say(kind, self.served.values(), False)
            self._ready_once = True
        await self.flusher.learn()  # again after an outage: Redis may have restarted
        await self._beat()
        self._ready.set()

    async def _beat(self) -> None:
        ttl = max(1, round(self.visibility_timeout * 1000))
        for served in self.served.values():
            await self._heartbeat(
                keys=[served.keys.workers, served.keys.mailbox],
                args=[GROUP, self.name, ttl, *self._state.held[served.name]],
            )

    async def _guarded(self, what: str, backoff: Backoff, step: Any) -> None:
        """One step of a loop: connection errors back off, a lost group re-creates it,
        and a full Redis is waited out (the other loops keep freeing memory)."""
        try:
            if not self._ready.is_set():
                await self._setup()
            await step()
        except FULL as exc:
            await backoff.wait(f"{what} (Redis is full)", exc)
            return
        except Exception as exc:
            # The set-up included: one step's lost connection can fail another's
            # command in redis-py (`connection_lost`), and no such loss may stop a worker.
            # Asked first: a cluster without a primary for a slot, mid-failover, replies
            # with errors (ClusterDownError, TryAgainError) that are ResponseErrors too.
            if connection_lost(exc):
                self._ready.clear()
                await backoff.wait(what, exc)
                return
            if not isinstance(exc, ResponseError) or "NOGROUP" not in str(exc):
                raise
            _log.warning("pygents.redis: %s found no consumer group; re-creating it", what)
            self._ready.clear()
            return
        backoff.succeeded(what)

    async def _reader(self) -> None:
        backoff = self._new_backoff()
        while not self._state.stopping.is_set():
            while self.free < self._read_at:
                self._state.lanes.room.clear()
                await self._state.lanes.room.wait()
            if self._state.stopping.is_set():
                return  # what a stopped worker reads would only be handed back
            paused = self.controls.paused
            streams = [key for key, s in self._by_mailbox.items() if s.name not in paused]
            if not streams:  # every mailbox paused: wait for a resume, or the stop
                self.controls.changed.clear()
                await self._state.stopped_or(self.controls.changed)
                continue

            async def take(streams: list[str] = streams) -> None:
                count = self.free
                found = await self._read(streams, count)
                taken = 0
                for key, entries in found:
                    served = self._by_mailbox[key]
                    taken += len(entries)
                    for message_id, fields in entries:
                        self._deliveries.take(served, message_id, fields, 1, None)
                self._backlog = taken >= count

            await self._guarded("reading turns", backoff, take)

    async def _read(self, streams: list[str], count: int) -> list[tuple[str, list[Entry]]]:
        """New turns: while a backlog is known (the last read was full), those waiting,
        through the ``READ`` script; otherwise a read that blocks until some come.
        Any failure falls back to the blocking read next time."""
        client = self.mailboxes.client
        backlog, self._backlog = self._backlog, False
        if not backlog or self.mailboxes.clustered:  # READ names every mailbox: one slot
            return await self._reads(streams, count, 1000)
        try:
            return await read_waiting(client, self._waiting.sha, self.name, streams, count)
        except NoScriptError:  # Redis restarted, or its scripts were flushed
            await client.script_load(READ)
            return await read_waiting(client, self._waiting.sha, self.name, streams, count)

    async def _every(self, interval: float, what: str, step: Any) -> None:
        """Run ``step`` (guarded) every ``interval`` seconds until the worker stops."""
        backoff = self._new_backoff()
        while not self._state.stopping.is_set():
            await self._guarded(what, backoff, step)
            try:
                await asyncio.wait_for(self._state.stopping.wait(), interval)
            except TimeoutError:
                pass

    async def _report(self) -> None:
        for name in self.served:
            SERVED.publish(self.name, await self.mailboxes.stats(name))

    async def _keep(self) -> None:
        await self._beat()
        for served in self.served.values():
            if self.free <= 0:
                return
            if served.name not in self.controls.paused:
                await self._claim(served)

    async def _claim(self, served: Served) -> bool:
        """Take over turns of ``served`` idle longer than the visibility timeout: True
        once a scan of the whole mailbox is over (or nothing can be taken now)."""
        if self.free <= 0:
            return False
        cursor, found = await claim(
            self.mailboxes.client,
            served.keys,
            self.name,
            max(1, round(self.visibility_timeout * 1000)),
            self._cursors[served.name],
            self.free,
        )
        self._cursors[served.name] = cursor
        for message_id, fields, deliveries, last_error in found:
            if message_id in self._state.held[served.name]:
                continue  # ours already (a late heartbeat); it is running here
            self.counters.claimed += 1
            self._deliveries.take(served, message_id, fields, deliveries, last_error)
        return cursor == "0-0"
