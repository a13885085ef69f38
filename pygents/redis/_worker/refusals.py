"""Results Redis will not take: the bound a worker checks before writing, and what it
writes instead of a record Redis refuses.

Redis takes no argument longer than its ``proto-max-bulk-len`` (512 MB by default, as
low as 1 MB if configured so). A longer one is refused with ``Protocol error: invalid
bulk length`` and the connection is closed under it — often before the refusal can
be read, so that it looks like a lost connection. A turn's outcome, or a streamed
value, is one argument of the writer's ``RECORD`` call. Written blindly, a result too
large for Redis was never recorded, its turn never acknowledged, and the *finished*
turn ran again after each visibility timeout until it was dead-lettered as if its
workers had died.

A finished turn is never run again because its outcome could not be written:

* `ResultLimit` bounds every record before it is sent: ``Worker(max_result_bytes=...)``,
  and Redis' own ``proto-max-bulk-len`` when ``CONFIG GET`` may read it
  (`server_limit`; a managed Redis often refuses ``CONFIG``, and the configured bound
  then stands alone). An outcome above it becomes a short failure that names both
  sizes; a streamed value above it fails its turn from inside (see
  `pygents.redis._driver.Sink`).
* `Refusals` handles what Redis refuses anyway (`refused`: a server's reply that the
  same write would get again — not a lost connection, a full Redis or a "not now",
  which are retried). The refused outcome is replaced by its failure, with Redis'
  reply as the reason, written where the outcome would have gone: the turn is
  acknowledged once, and its caller told. A refused value is dropped, with its
  turn's later values, and the turn's outcome becomes that failure. A record too
  large for Redis ends its batch (`Refusals.before`), so that its refusal is the last
  reply of the batch's pipeline and the records before it are written; a batch that
  keeps failing *as if* the connection were lost on such a record, while Redis
  answers otherwise, is taken for a refusal of it (`Refusals.lost`).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Final

from redis.exceptions import NoScriptError, ReadOnlyError, ResponseError

from pygents.redis._cluster import connection_lost
from pygents.redis._lua.mailbox import Keys
from pygents.redis._mailbox_types import bounded, failed_outcome, reply_record
from pygents.redis._worker.intake import FULL

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = [
    "DEFAULT_MAX_RESULT_BYTES",
    "NEVER_REFUSED",
    "Record",
    "Refusals",
    "ResultLimit",
    "refused",
    "server_limit",
    "size_text",
]

_log = logging.getLogger("pygents.redis")

Record = tuple[Keys | None, str, str, str, int, str]
"""One record for the writer: the keys of its turn's mailbox (``None`` for a streamed
value), message id, agent, reply key (``""``: nobody waits), deliveries, and the reply
record (JSON, ASCII: its length is its size in bytes)."""

DEFAULT_MAX_RESULT_BYTES: Final = 64 * 1024 * 1024
"""``Worker(max_result_bytes=...)`` by default: far below Redis' default
``proto-max-bulk-len`` (512 MB), far above any result worth a round trip."""

NEVER_REFUSED: Final = 1024 * 1024
"""The lowest ``proto-max-bulk-len`` Redis accepts: no argument this short is ever
refused for its size."""

FRAME: Final = 100
"""Bytes a ``RECORD`` argument adds to its record (indexes, message id, delivery
count: ``"12 13 1700000000000-0 1 "``); 100 is more than they ever take."""

_STRIKES: Final = 2  # lost "connections" on one large record, Redis answering, = refused

# Server replies that say "not now" rather than "never": Redis busy with a script, too
# few replicas for a write, a replica cut off from its primary. Retried like a lost
# connection, as are a full Redis (`FULL`), a missing script, a demoted primary's
# READONLY and a cluster's CLUSTERDOWN or TRYAGAIN (`connection_lost`).
_NOT_NOW: Final = ("BUSY ", "NOREPLICAS ", "MASTERDOWN ")
_DECODER: Final = json.JSONDecoder()


def size_text(size: int) -> str:
    """``2.0 MiB``, ``1 MiB``, ``512 bytes``: a size for messages (a whole number of
    units without a decimal, so that a limit reads as it was configured)."""
    value, unit = float(size), "bytes"
    for larger in ("KiB", "MiB", "GiB"):
        if value < 1024:
            break
        value, unit = value / 1024, larger
    if unit == "bytes":
        return f"{size} bytes"
    return f"{value:.0f} {unit}" if value.is_integer() else f"{value:.1f} {unit}"


def refused(exc: BaseException) -> bool:
    """Whether ``exc`` is Redis refusing a write for what it is: a server's reply that
    the same write would get again (an argument too long, a key it may not touch).
    Not a lost connection, a full Redis, a missing script or a "not now": those are
    retried, and the write goes through later."""
    if not isinstance(exc, ResponseError) or isinstance(exc, (*FULL, NoScriptError)):
        return False
    if isinstance(exc, ReadOnlyError) or connection_lost(exc):
        return False
    return not str(exc).startswith(_NOT_NOW)


async def server_limit(client: Redis) -> tuple[int | None, str]:
    """Redis' ``proto-max-bulk-len`` and ``""``; or ``None`` and why it cannot be read
    (``CONFIG`` refused or renamed, as on most managed Redis). A lost connection
    propagates: the caller backs off as for any other command."""
    try:
        found: Any = await client.config_get("proto-max-bulk-len")
    except ResponseError as exc:
        if not refused(exc):
            raise
        return None, f"CONFIG GET was refused: {bounded(str(exc))}"
    try:
        return int(found["proto-max-bulk-len"]), ""
    except (KeyError, TypeError, ValueError):
        return None, f"CONFIG GET gave no proto-max-bulk-len: {bounded(str(found))}"


class ResultLimit:
    """The largest record a worker writes, in bytes (``bytes``, read for every record):
    its own ``max_result_bytes``, and Redis' ``proto-max-bulk-len`` once learned."""

    __slots__ = ("bytes", "most", "server")

    def __init__(self, most: int = DEFAULT_MAX_RESULT_BYTES) -> None:
        self.most = most
        self.server: int | None = None
        self.bytes = most

    def learn(self, server: int) -> None:
        """Redis' ``proto-max-bulk-len``, as ``CONFIG GET`` read it."""
        self.server = server
        self.bytes = min(self.most, server - FRAME)

    def too_large(self, what: str, size: int) -> str:
        """Why ``what``, of ``size`` bytes (more than `bytes`), is not written."""
        if self.server is not None and self.server - FRAME < self.most:
            bound = f"{size_text(self.server)} (Redis' proto-max-bulk-len)"
        else:
            bound = f"{size_text(self.most)} (Worker(max_result_bytes=...))"
        return f"{what} is {size_text(size)}; this worker writes at most {bound}"


def _head(record: str) -> tuple[str, str, int]:
    """The turn uuid, kind and index a reply record starts with (``["<uuid>","v",3,``),
    read without parsing the rest: a record may be hundreds of megabytes."""
    try:
        turn_uuid, at = _DECODER.raw_decode(record, 1)
        kind, at = _DECODER.raw_decode(record, at + 1)
        index, _ = _DECODER.raw_decode(record, at + 1)
    except (ValueError, IndexError):
        return "", "", 0
    if not isinstance(turn_uuid, str) or not isinstance(index, int):
        return "", "", 0
    return turn_uuid, str(kind), index


def _failed(record: str, error_type: str, error: str, values: int | None = None) -> str:
    """The outcome record ``record`` failed with ``error`` instead (its output dropped;
    ``values``: how many reached the caller, if fewer than the turn produced)."""
    turn_uuid, _, _, attempt, outcome = json.loads(record)
    failed = failed_outcome(outcome, error_type, error)
    if values is not None:
        failed["values"] = values
    return reply_record(turn_uuid, "o", 0, attempt, failed)


class Refusals:
    """The records of one worker's writer that Redis does not take (see the module)."""

    __slots__ = ("_fitted", "_said", "_struck", "alone", "client", "failing", "large",
                 "limit", "spoiled", "strikes", "worker")  # fmt: skip

    def __init__(self, client: Redis, limit: ResultLimit, worker: str) -> None:
        self.client = client
        self.worker = worker
        self.limit = limit
        self.large: Record | None = None  # the large record that ended the last batch
        self.alone = 0  # leading records to write one per call (see `instead`)
        # Message id -> how far its outcome fell back: 1, its failure is written
        # instead; 2, that was refused too: written without telling the caller.
        self.failing: dict[str, int] = {}
        # Turn uuid -> (values its caller got, error type, error), for a turn whose
        # value Redis refused: its later values are dropped, its outcome says why.
        self.spoiled: dict[str, tuple[int, str, str]] = {}
        self.strikes = 0
        self._struck: Record | None = None
        self._fitted = limit.bytes  # the limit the queued records were checked against
        self._said = False  # that CONFIG GET cannot be read here (said once)

    async def learn(self) -> None:
        """Read Redis' ``proto-max-bulk-len`` (a worker's set-up, and after a refusal);
        the records queued are checked against it before the next batch."""
        server, why = await server_limit(self.client)
        if server is not None:
            self.limit.learn(server)
        elif not self._said:
            self._said = True
            _log.info(
                "pygents.redis: worker %s cannot read Redis' proto-max-bulk-len (%s): it "
                "writes results of at most %s (Worker(max_result_bytes=...))",
                self.worker,
                why,
                size_text(self.limit.most),
            )

    def before(self, records: list[Record], most: int) -> tuple[int, bool]:
        """Make the head of ``records`` ready to write (records above a lowered limit
        replaced, refused values' turns failed). How many the next batch takes — up
        to ``most``, ending with the first record Redis could refuse for its size —
        and whether each goes in a call of its own (after a refusal `instead` could
        not pin on one record)."""
        if self.limit.bytes < self._fitted:
            self._refit(records)
        self._fitted = self.limit.bytes
        if self.spoiled:
            self._spoil(records, most)
        alone, self.alone = self.alone, 0
        count = min(most, len(records), alone or most)
        self.large = None
        for at in range(count):
            record = records[at]
            if len(record[5]) + FRAME > NEVER_REFUSED:
                self.large = record
                return at + 1, alone > 0
        return count, alone > 0

    def written(self, done: list[Record]) -> None:
        """These records were written: nothing of theirs is pending here any more."""
        self.strikes = 0
        if self.failing:
            for record in done:
                self.failing.pop(record[1], None)

    def instead(self, run: list[Record], exc: BaseException) -> list[Record] | None:
        """What to write again of ``run`` — one ``RECORD`` call Redis refused, which
        wrote nothing — or ``None`` when it cannot tell which record was refused:
        then the writer writes each alone next time (``alone``), to find out."""
        reply = bounded(str(exc))
        if len(run) > 1 and not (run[-1] is self.large and reply.startswith("Protocol error")):
            return None
        culprit = run[-1]  # the only one, or the one too long for Redis
        size = len(culprit[5])
        what = _what(culprit)
        error = f"Redis refused to record {what} ({size_text(size)}): {reply}"
        found = self._replace(culprit, "ResponseError", error)
        return run[:-1] + ([found] if found is not None else [])

    async def lost(self, records: list[Record]) -> None:
        """A batch ending with a large record failed as if the connection were lost.
        Redis closes the connection under an argument longer than it takes, often
        before its refusal can be read: once Redis answers again (it was not away)
        and the same record failed so `_STRIKES` times, it is taken as refused."""
        large = self.large
        if large is None:
            return
        try:
            await self.learn()
        except Exception as exc:
            if not connection_lost(exc):
                raise
            self.strikes = 0  # Redis is away: an outage, not a refusal
            return
        if len(large[5]) > self.limit.bytes:
            return  # above the limit just learned: `before` replaces it
        if large is not self._struck:
            self._struck, self.strikes = large, 0
        self.strikes += 1
        if self.strikes < _STRIKES:
            return
        self.strikes = 0
        if self.limit.server is None:
            why = (
                "it is likely longer than Redis' proto-max-bulk-len, which this worker "
                "cannot read (CONFIG GET); set Worker(max_result_bytes=...) below it"
            )
        else:  # Redis would take it: a proxy, or a socket timeout, cuts writes that long
            why = (
                f"Redis' proto-max-bulk-len ({size_text(self.limit.server)}) allows it, so "
                "something between them cuts writes that long; a lower "
                "Worker(max_result_bytes=...) fails such results before they are sent"
            )
        error = (
            f"Redis closed the connection each time {_what(large)} "
            f"({size_text(len(large[5]))}) was sent, and answered otherwise: {why}"
        )
        for at, record in enumerate(records):
            if record is large:
                found = self._replace(large, "ConnectionError", error)
                records[at : at + 1] = [found] if found is not None else []
                return

    def _replace(self, record: Record, error_type: str, error: str) -> Record | None:
        """What takes the place of ``record``, refused: its outcome's failure (or,
        that failure refused too, the turn settled without telling its caller);
        ``None`` to drop it (a value, whose turn's outcome then says why)."""
        keys, message_id, agent, reply, deliveries, text = record
        if keys is None:
            turn_uuid, _, index = _head(text)
            self.spoiled.setdefault(turn_uuid, (index, error_type, error))
            _log.warning(
                "pygents.redis: dropped value #%d of turn %s and those after it: %s; the "
                "turn fails with that reason",
                index,
                turn_uuid,
                error,
            )
            return None
        stage = self.failing[message_id] = self.failing.get(message_id, 0) + 1
        if stage == 1:
            _log.warning(
                "pygents.redis: the outcome of %s of agent %r cannot be recorded: %s; the "
                "turn fails with that reason instead (it is not run again)",
                message_id,
                bounded(agent),
                error,
            )
            return keys, message_id, agent, reply, deliveries, _failed(text, error_type, error)
        if stage == 2 and reply:
            _log.error(
                "pygents.redis: cannot record the outcome of %s of agent %r at all (%s): "
                "it is acknowledged without one; its caller is not told",
                message_id,
                bounded(agent),
                error,
            )
            return keys, message_id, agent, "", deliveries, text
        del self.failing[message_id]
        _log.error(
            "pygents.redis: cannot even acknowledge %s of agent %r (%s): it will be "
            "delivered again",
            message_id,
            bounded(agent),
            error,
        )
        return None

    def _spoil(self, records: list[Record], most: int) -> None:
        """Among the first ``most`` records, drop the values of turns with a refused
        value from that one on, and make each such turn's outcome the failure that
        says why (its caller then has every value before the refused one)."""
        kept: list[Record] = []
        for record in records[:most]:
            turn_uuid, _, index = _head(record[5])
            found = self.spoiled.get(turn_uuid)
            if found is None or (record[0] is None and index < found[0]):
                kept.append(record)
            elif record[0] is not None:  # its outcome
                del self.spoiled[turn_uuid]
                got, error_type, error = found
                kept.append((*record[:5], _failed(record[5], error_type, error, got)))
        records[:most] = kept

    def _refit(self, records: list[Record]) -> None:
        """Replace the records queued above the limit (it was just lowered)."""
        limit = self.limit.bytes
        for at in reversed(range(len(records))):
            record = records[at]
            if len(record[5]) > limit:
                error = self.limit.too_large(_what(record), len(record[5]))
                found = self._replace(record, "ValueError", error)
                records[at : at + 1] = [found] if found is not None else []


def _what(record: Record) -> str:
    """``the result``, or ``value #3``, for messages."""
    return "the result" if record[0] is not None else f"value #{_head(record[5])[2]}"
