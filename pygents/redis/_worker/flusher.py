"""The worker's writer: outcomes, streamed values and dead letters, in batches.

Records accumulate while the event loop is busy and go out together, in one
pipeline per batch with one ``RECORD`` script call for each run of records whose reply
streams take the same limits (the producer's, see `pygents.redis._worker.entries.ReplyTo`; almost
always one run) — see ``_lua.mailbox``: values first, in the order
they were produced, and each outcome after its turn's values. A batch that fails
because Redis went away, or is full, is kept and retried after a backoff. A record
Redis refuses for what it is (longer than its ``proto-max-bulk-len``, say) is not
retried: its turn's outcome becomes the failure that says why, and the turn is
settled once, never run again (`pygents.redis._worker.refusals`, which also bounds
every record before it is sent). The scripts check what they write to before writing
(see ``_lua.mailbox``), so that a bad key named by one entry — a reply key holding a
hash, say — dead-letters that entry alone and never fails its batch.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, cast

from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot
from redis.exceptions import NoScriptError, ResponseError

from pygents.redis._cluster import connection_lost, queue_script
from pygents.redis._durability import NodeCommand
from pygents.redis._lua.mailbox import DEAD, GROUP, RECORD
from pygents.redis._mailbox_types import Outcome, bounded, outcome_record
from pygents.redis._producer.replies import Backoff
from pygents.redis._worker.entries import ReplyTo
from pygents.redis._worker.intake import FULL
from pygents.redis._worker.refusals import Record, Refusals, ResultLimit, refused

if TYPE_CHECKING:
    from pygents.redis._producer.mailbox import Mailboxes
    from pygents.redis._worker.entries import DeadEntry, Served

__all__ = ["Flusher"]

_log = logging.getLogger("pygents.redis")
_BATCH: Final = 512  # records per script call
_ROOM: Final = 8192  # buffered values beyond which a streaming turn waits


def _retried(exc: BaseException) -> bool:
    """A write failed with nothing written, and would not fail so for ever: Redis is
    full, the connection was lost (see `connection_lost`), or Redis said "not now"
    (see `refused`). Write it all again, after a backoff."""
    if isinstance(exc, FULL) or connection_lost(exc):
        return True
    return isinstance(exc, ResponseError) and not refused(exc)


_Runs = list[tuple[tuple[int, int], list[Record]]]  # see `_by_limits`


class Flusher:
    """Batches a worker's writes; see the module docstring."""

    def __init__(
        self,
        mailboxes: Mailboxes,
        backoff: Backoff,
        recorded: Callable[[str, str], None],
        worker: str,
        dead_lettered: Callable[[], None],
        unreplicated: Callable[[], None] = lambda: None,
        limit: ResultLimit | None = None,
    ) -> None:
        self.mailboxes = mailboxes
        self.backoff = backoff
        self.recorded = recorded
        self.worker = worker
        self.dead_lettered = dead_lettered
        self.unreplicated = unreplicated  # a batch fewer replicas confirmed than asked
        self._records: list[Record] = []
        self._errors: list[tuple[str, str, str]] = []
        self._wake = asyncio.Event()
        self._closed = False
        self._drained = asyncio.Event()
        self._drained.set()
        self._record = mailboxes.client.register_script(RECORD)
        self._dead = mailboxes.client.register_script(DEAD)
        # The largest record written (read by each turn's `Sink` before it hands one
        # over), and what is written instead of one Redis refuses.
        self.limit = limit or ResultLimit()
        self.refusals = Refusals(mailboxes.client, self.limit, worker)

    # -- what the turns hand over -----------------------------------------------------

    async def value(self, reply: str, record: str) -> None:
        if len(self._records) >= _ROOM:
            self._drained.clear()
            await self._drained.wait()
        self._records.append((None, "", "", reply, 0, record))
        self._wake.set()

    def outcome(
        self, served: Served, message_id: str, reply: str | None, deliveries: int, record: str
    ) -> None:
        turn = (served.keys, message_id, served.name, reply or "", deliveries, record)
        self._records.append(turn)
        self._wake.set()

    def unfinished(self, served: Served, message_id: str, error: str) -> None:
        """Remember why a delivery did not finish (the next one reports it)."""
        self._errors.append((served.keys.errors, message_id, error))
        self._wake.set()

    # -- writing ----------------------------------------------------------------------

    async def run(self) -> None:
        """Write batches until `close` (then `flush_now` writes the rest).

        The loop ends on a flag rather than by cancellation: a cancellation landing
        inside the Redis client may be absorbed by it.
        """
        while not self._closed:
            await self._wake.wait()
            self._wake.clear()
            while (self._records or self._errors) and not self._closed:
                try:
                    await self._write()
                except Exception as exc:
                    await self._failed("recording outcomes", exc)
                else:
                    self.backoff.succeeded("recording outcomes")

    async def learn(self) -> None:
        """Read Redis' ``proto-max-bulk-len`` into the limit (at the worker's set-up)."""
        await self.refusals.learn()

    async def _failed(self, what: str, exc: Exception) -> None:
        """A write failed: raise what is no Redis trouble, else back off (and see
        whether Redis dropped the connection over a record too long for it)."""
        if not _retried(exc):
            raise exc
        await self.backoff.wait(what, exc)
        if connection_lost(exc):
            await self.refusals.lost(self._records)

    def close(self) -> None:
        self._closed = True
        self._wake.set()

    async def flush_now(self, attempts: int = 3) -> None:
        """Write what is left (at shutdown); gives up after ``attempts`` failures."""
        for _ in range(attempts):
            if not (self._records or self._errors):
                return
            try:
                while self._records or self._errors:
                    await self._write()
                return
            except Exception as exc:
                await self._failed("recording outcomes at shutdown", exc)
        _log.error(
            "pygents.redis: %d outcomes could not be recorded before stopping; their turns "
            "will be delivered again",
            len(self._records),
        )

    async def _write(self) -> None:
        refusals = self.refusals
        count, alone = refusals.before(self._records, _BATCH)
        batch = self._records[:count]
        slot_of = _slot if self.mailboxes.clustered else None
        if slot_of is not None:
            # A script names keys of one slot on a cluster: one RECORD call per slot.
            # A stable sort keeps each turn's values before its outcome, and a record
            # Redis may refuse for its size stays last (see `Refusals.before`).
            large = refusals.large
            batch = self._records[:count] = sorted(
                batch, key=lambda record: (record is large, slot_of(record))
            )
        errors = self._errors[:]
        runs = _by_limits(batch, self._limits, slot_of, alone)
        replication = self.mailboxes.replication
        waits = bool(replication and runs)
        replicated: Any = None
        if waits and slot_of is not None:
            # On a cluster, WAIT per node, after that node's writes on their connection.
            results, replicated = await replication.on_nodes(
                cast(RedisCluster, self.mailboxes.client), self._node_commands(errors, runs)
            )
        else:
            results = await self._pipelined(errors, runs, slot_of is not None, waits)
            replicated = results.pop() if waits else None
        if waits and replication.short(replicated):
            self.unreplicated()
            replication.warn_outcomes(len(batch), replicated)
        # The last error of an unfinished delivery only informs its next one: a full
        # Redis may refuse it, and it is not kept.
        del self._errors[: len(errors)]
        done: list[Record] = []
        again: list[Record] = []  # refused records' stand-ins, and what is written again
        unexplained = False
        handled = 0  # runs looked at; those after it stay as they were
        failure: Exception | None = None
        try:
            for (_, run), result in zip(runs, results[len(errors) :], strict=True):
                if isinstance(result, NoScriptError):  # Redis restarted, or scripts flushed
                    await self.mailboxes.client.script_load(RECORD)
                    break  # this call wrote nothing: it and the rest are written again
                if isinstance(result, Exception) and _retried(result):
                    failure = result  # this call wrote nothing: it and the rest are kept
                    break
                handled += 1
                if isinstance(result, Exception):  # refused: this call wrote nothing
                    instead = refusals.instead(run, result)
                    unexplained = unexplained or instead is None
                    again += run if instead is None else instead
                    if str(result).startswith("Protocol error"):
                        await refusals.learn()  # a lower limit than the worker knew
                    continue
                agents = {message_id: agent for _, message_id, agent, _, _, _ in run}
                for message_id, reason in zip(result[1::2], result[2::2], strict=True):
                    self.dead_lettered()
                    self._moved(agents[message_id], message_id, reason)
                done += run
        finally:
            again += [record for _, run in runs[handled:] for record in run]
            self._records[: len(batch)] = again
            if unexplained:
                refusals.alone = len(again)
            refusals.written(done)
            for mailbox, message_id, agent, _, _, _ in done:
                if mailbox is not None:
                    self.recorded(agent, message_id)
            if len(self._records) < _ROOM:
                self._drained.set()
        if failure is not None:
            raise failure

    async def _pipelined(
        self, errors: list[tuple[str, str, str]], runs: _Runs, clustered: bool, waits: bool
    ) -> list[Any]:
        """The batch's writes in one pipeline (a cluster pipeline splits it by node),
        then ``WAIT`` when ``waits`` (on a single server: one connection)."""
        pipe: Any = self.mailboxes.client.pipeline(transaction=False)  # or a cluster's
        for errors_key, message_id, error in errors:
            pipe.hset(errors_key, message_id, error)
        for limits, run in runs:
            keys, args = self._call(limits, run)
            if not clustered:
                # EVALSHA by hand: a script object queued in a pipeline costs a SCRIPT
                # EXISTS round trip at every execute; a missing script is loaded below.
                pipe.evalsha(self._record.sha, len(keys), *keys, *args)
            else:  # a cluster pipeline refuses EVALSHA (see `_cluster.queue_script`)
                await queue_script(pipe, self._record, keys, args)
        if waits:  # after the writes, on their connection (see `_durability`)
            self.mailboxes.replication.wait_after(pipe)
        # ``reset`` gives the connection back even when a command fails (redis-py keeps
        # it then: each such failure would leak one from the pool). Not ``async with``:
        # entering a cluster pipeline initializes it, which empties what was queued.
        try:
            results: list[Any] = await pipe.execute(raise_on_error=False)
            return results
        finally:
            await pipe.reset()

    def _node_commands(self, errors: list[tuple[str, str, str]], runs: _Runs) -> list[NodeCommand]:
        """The same writes as `_pipelined`'s, for `Replication.on_nodes`."""
        commands: list[NodeCommand] = [
            (key, ("HSET", key, message_id, error)) for key, message_id, error in errors
        ]
        for limits, run in runs:
            keys, args = self._call(limits, run)
            commands.append((keys[0], ("EVAL", RECORD, len(keys), *keys, *args)))
        return commands

    def _call(self, limits: tuple[int, int], run: list[Record]) -> tuple[list[str], list[Any]]:
        """The keys and arguments of one ``RECORD`` call for ``run``."""
        keys: dict[str, int] = {}
        args: list[Any] = [GROUP, *limits, self.worker]
        for mailbox, message_id, _, reply, deliveries, record in run:
            mk = 0
            if mailbox is not None:
                mk = keys.get(mailbox.mailbox, 0)
                if not mk:
                    mk = keys[mailbox.mailbox] = len(keys) + 1
                    keys[mailbox.errors] = mk + 1
                    keys[mailbox.dead] = mk + 2
            rk = 0
            if reply:
                rk = keys.get(reply, 0) or keys.setdefault(reply, len(keys) + 1)
            args.append(f"{mk} {rk} {message_id or '-'} {deliveries} {record}")
        return list(keys), args

    def _limits(self, reply: str | None) -> tuple[int, int]:
        """The ``MAXLEN`` and TTL (ms) to write ``reply`` with: its producer's, carried
        in the envelope (`ReplyTo`), else this worker's own."""
        maxlen = ttl_ms = None
        if isinstance(reply, ReplyTo):
            maxlen, ttl_ms = reply.maxlen, reply.ttl_ms
        own = self.mailboxes
        return maxlen or own.reply_maxlen, ttl_ms or max(1, round(own.reply_ttl * 1000))

    def _moved(self, agent: str, message_id: str, reason: str) -> None:
        _log.warning(
            "pygents.redis: dead-lettered %s of agent %r: %s",
            message_id,
            bounded(agent),
            bounded(reason),
        )

    # -- dead letters -----------------------------------------------------------------

    async def dead_letter(self, dead: DeadEntry) -> None:
        """Move a delivery to the dead-letter stream, telling its caller if known.

        Never raises but for cancellation: whatever the entry holds, its fields are text
        here (see `pygents.redis._worker.entries.decode_entry`), and the script checks its keys.
        """
        served, message_id, reason, deliveries = (
            dead.served,
            dead.message_id,
            dead.reason,
            dead.deliveries,
        )
        turn_uuid, reply = dead.caller()
        outcome = Outcome(
            turn_uuid,
            served.name,
            None,
            error_type="DeadLetter",
            error=reason,
            deliveries=deliveries,
            worker=self.worker,
            dead_letter=True,
        )
        record = outcome_record(turn_uuid, deliveries, outcome.to_dict())
        keys = served.keys
        entry = {
            "message_id": message_id,
            "reason": reason,
            "error": dead.error,
            "deliveries": str(deliveries),
            "worker": self.worker,
            "payload": dead.fields.get("turn", ""),
        }
        flat = [part for pair in entry.items() for part in pair]
        self.dead_lettered()  # counted now, as the caller may learn of it before we do
        while True:
            try:
                # With Mailboxes(replicas=...), followed by WAIT (see `_durability`).
                moved, replicated = await self.mailboxes.replication.run(
                    self.mailboxes.client,
                    self._dead,
                    [keys.mailbox, keys.errors, keys.dead, reply or keys.mailbox],
                    [
                        GROUP,
                        message_id,
                        *self._limits(reply),
                        1 if reply and turn_uuid else 0,
                        record,
                        *flat,
                    ],
                )
                if self.mailboxes.replication.short_of(replicated):
                    self.unreplicated()
                    self.mailboxes.replication.warn_outcomes(1, replicated)
                break
            except Exception as exc:
                if not _retried(exc):
                    if not isinstance(exc, ResponseError):
                        raise
                    if reply:  # a reply key this worker may not write (an ACL): untold
                        _log.warning(
                            "pygents.redis: cannot tell the caller of %s of agent %r that "
                            "it is dead-lettered (reply key %s: %s)",
                            message_id,
                            bounded(served.name),
                            bounded(reply),
                            bounded(str(exc)),
                        )
                        reply = None
                        continue
                    moved = f"error: {exc}"
                    break
                await self.backoff.wait("dead-lettering", exc)
        self.backoff.succeeded("dead-lettering")
        self.recorded(served.name, message_id)
        if moved == 1:
            self._moved(served.name, message_id, reason)
        elif moved != 0:  # left pending: taken over again after the visibility timeout
            _log.error(
                "pygents.redis: cannot dead-letter %s of agent %r (dead-letter key %s: %s)",
                message_id,
                bounded(served.name),
                keys.dead,
                bounded(str(moved)),
            )


def _slot(record: Record) -> int:
    """The hash slot of a record's keys (its mailbox's, or its reply stream's)."""
    keys, reply = record[0], record[3]
    return key_slot((keys.mailbox if keys is not None else reply).encode())


def _by_limits(
    batch: list[Record],
    limits_of: Callable[[str | None], tuple[int, int]],
    slot_of: Callable[[Record], int] | None = None,
    alone: bool = False,
) -> list[tuple[tuple[int, int], list[Record]]]:
    """The batch in runs of records whose reply streams take the same limits (and, on
    a cluster, whose keys are in the same slot), in order (one ``RECORD`` call each;
    almost always a single run on a single server); with ``alone``, one run each."""
    runs: list[tuple[tuple[int, int], list[Record]]] = []
    last: tuple[str, tuple[int, int]] | None = None  # a producer's turns come in a row
    last_slot = None
    for record in batch:
        reply = record[3]
        limits: tuple[int, int] | None = None  # no reply: any run will do
        if reply:
            if last is None or last[0] is not reply:
                last = (reply, limits_of(reply))
            limits = last[1]
        slot = slot_of(record) if slot_of is not None else 0
        if runs and not alone and slot == last_slot and (limits is None or limits == runs[-1][0]):
            runs[-1][1].append(record)
        else:
            runs.append((limits or limits_of(None), [record]))
        last_slot = slot
    return runs
