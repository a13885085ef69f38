"""The worker's writer: outcomes, streamed values and dead letters, in batches.

Records accumulate while the event loop is busy and go out together, in one
``RECORD`` script call per batch (see ``_mailbox_lua``): values first, in the order
they were produced, and each outcome after its turn's values. A batch that fails
because Redis went away is kept and retried after a backoff; a turn whose outcome
cannot be recorded at all is simply not acknowledged, so it is delivered again.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from pygents._mailbox_lua import DEAD, GROUP, RECORD
from pygents._mailbox_types import Outcome, bounded
from pygents._replies import CONNECTION_ERRORS, Backoff
from pygents._serving import ReplyTo, reply_to

if TYPE_CHECKING:
    from pygents._mailbox import Mailboxes
    from pygents._serving import Malformed, Served

__all__ = ["Flusher"]

_log = logging.getLogger("pygents.redis")
_BATCH: Final = 512  # records per script call
_ROOM: Final = 8192  # buffered values beyond which a streaming turn waits

# (mailbox key or "", errors key or "", message id, agent, reply key or "", record)
_Record = tuple[str, str, str, str, str, str]


class Flusher:
    """Batches a worker's writes; see the module docstring."""

    def __init__(
        self, mailboxes: Mailboxes, backoff: Backoff, recorded: Callable[[str, str], None]
    ) -> None:
        self.mailboxes = mailboxes
        self.backoff = backoff
        self.recorded = recorded
        self._records: list[_Record] = []
        self._errors: list[tuple[str, str, str]] = []
        self._wake = asyncio.Event()
        self._closed = False
        self._drained = asyncio.Event()
        self._drained.set()
        self._record = mailboxes.client.register_script(RECORD)
        self._dead = mailboxes.client.register_script(DEAD)

    # -- what the turns hand over -----------------------------------------------------

    async def value(self, reply: str, record: str) -> None:
        if len(self._records) >= _ROOM:
            self._drained.clear()
            await self._drained.wait()
        self._records.append(("", "", "", "", reply, record))
        self._wake.set()

    def outcome(self, served: Served, message_id: str, reply: str | None, record: str) -> None:
        keys = served.keys
        self._records.append(
            (keys.mailbox, keys.errors, message_id, served.name, reply or "", record)
        )
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
                except CONNECTION_ERRORS as exc:
                    await self.backoff.wait("recording outcomes", exc)
                else:
                    self.backoff.succeeded("recording outcomes")

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
            except CONNECTION_ERRORS as exc:
                await self.backoff.wait("recording outcomes at shutdown", exc)
        _log.error(
            "pygents.redis: %d outcomes could not be recorded before stopping; their turns "
            "will be delivered again",
            len(self._records),
        )

    async def _write(self) -> None:
        batch = self._records[:_BATCH]
        errors = self._errors[:]
        pipe = self.mailboxes.client.pipeline(transaction=False)
        for errors_key, message_id, error in errors:
            pipe.hset(errors_key, message_id, error)
        for limits, run in self._by_limits(batch):
            keys: dict[str, int] = {}
            args: list[str | int] = [GROUP, *limits]
            for mailbox, errors_key, message_id, _, reply, record in run:
                mk = 0
                if mailbox:
                    mk = keys.get(mailbox, 0)
                    if not mk:
                        mk = keys[mailbox] = len(keys) + 1
                        keys[errors_key] = len(keys) + 1
                rk = 0
                if reply:
                    rk = keys.get(reply, 0) or keys.setdefault(reply, len(keys) + 1)
                args.append(f"{mk} {rk} {message_id or '-'} {record}")
            await self._record(keys=list(keys), args=args, client=pipe)  # queued
        try:
            await pipe.execute()
        except CONNECTION_ERRORS:
            raise
        except Exception as exc:  # a script error: drop the batch, its turns come again
            _log.error("pygents.redis: recording %d outcomes failed", len(batch), exc_info=exc)
        del self._records[: len(batch)]
        del self._errors[: len(errors)]
        for mailbox, _, message_id, agent, _, _ in batch:
            if mailbox:
                self.recorded(agent, message_id)
        if len(self._records) < _ROOM:
            self._drained.set()

    def _by_limits(self, batch: list[_Record]) -> list[tuple[tuple[int, int], list[_Record]]]:
        """The batch in runs of records whose reply streams take the same limits, in
        order (one ``RECORD`` call each; almost always a single run)."""
        runs: list[tuple[tuple[int, int], list[_Record]]] = []
        for record in batch:
            limits = self._limits(record[4]) if record[4] else None  # None: no reply
            if runs and (limits is None or limits == runs[-1][0]):
                runs[-1][1].append(record)
            else:
                runs.append((limits or self._limits(None), [record]))
        return runs

    def _limits(self, reply: str | None) -> tuple[int, int]:
        """The ``MAXLEN`` and TTL (ms) to write ``reply`` with: its producer's, carried
        in the envelope (`ReplyTo`), else this worker's own."""
        maxlen = ttl_ms = None
        if isinstance(reply, ReplyTo):
            maxlen, ttl_ms = reply.maxlen, reply.ttl_ms
        own = self.mailboxes
        return maxlen or own.reply_maxlen, ttl_ms or max(1, round(own.reply_ttl * 1000))

    # -- dead letters -----------------------------------------------------------------

    async def dead_letter(
        self,
        served: Served,
        message_id: str,
        fields: dict[str, str],
        reason: str,
        error: str,
        deliveries: int,
        worker: str,
        bad: Malformed | None = None,
    ) -> None:
        """Move a delivery to the dead-letter stream, telling its caller if known."""
        reply = bad.reply if bad is not None else _reply_of(fields)
        turn_uuid = bad.turn_uuid if bad is not None else _uuid_of(fields)
        outcome = Outcome(
            turn_uuid,
            served.name,
            None,
            error_type="DeadLetter",
            error=reason,
            deliveries=deliveries,
            worker=worker,
            dead_letter=True,
        )
        record = json.dumps([turn_uuid, "o", 0, deliveries, outcome.to_dict()])
        keys = served.keys
        entry = {
            "message_id": message_id,
            "reason": reason,
            "error": error,
            "deliveries": str(deliveries),
            "worker": worker,
            "payload": fields.get("turn", ""),
        }
        flat = [part for pair in entry.items() for part in pair]
        while True:
            try:
                await self._dead(
                    keys=[keys.mailbox, keys.errors, keys.dead, reply or keys.mailbox],
                    args=[
                        GROUP,
                        message_id,
                        *self._limits(reply),
                        1 if reply and turn_uuid else 0,
                        record,
                        *flat,
                    ],
                )
                break
            except CONNECTION_ERRORS as exc:
                await self.backoff.wait("dead-lettering", exc)
        self.backoff.succeeded("dead-lettering")
        self.recorded(served.name, message_id)
        _log.warning(
            "pygents.redis: dead-lettered %s of agent %r: %s",
            message_id,
            bounded(served.name),
            bounded(reason),
        )


def _envelope(fields: dict[str, str]) -> dict[str, object]:
    try:
        envelope = json.loads(fields.get("turn", ""))
    except ValueError:
        return {}
    return envelope if isinstance(envelope, dict) else {}


def _reply_of(fields: dict[str, str]) -> ReplyTo | None:
    return reply_to(_envelope(fields))


def _uuid_of(fields: dict[str, str]) -> str:
    turn = _envelope(fields).get("turn")
    found = turn.get("uuid") if isinstance(turn, dict) else None
    return found if isinstance(found, str) else ""
