"""Results coming back: a reply stream per client, read by one task.

Workers append *records* to the reply stream named in each turn's envelope, in
batches (one stream entry holds a JSON array of records)::

    [turn_uuid, "v", index, attempt, value]      # a streaming tool's value
    [turn_uuid, "o", 0, attempt, outcome_dict]   # how the turn ended (exactly once)

One reader task per `Replies` follows the stream while some handle waits, hands
each record to the handle of its turn (`pygents.redis._producer.handle.TurnHandle`), and trims what
it has read. The stream is bounded (``MAXLEN ~``, the producer's ``reply_maxlen``)
and expires when nobody writes to it for a while (its ``reply_ttl``), so a caller
that went away leaves nothing behind for long.

An outcome can fail to arrive: trimmed before it was read (the bound), or lost with
Redis's data (a restart without persistence). Waiting for it would never end, so the
reader *checks* the waiting turns — every ``check_interval`` seconds while some
handle waits, and as soon as Redis answers again after a failure — in one atomic
script: a turn that is no longer in its mailbox has been recorded (its outcome was
added in the same step that removed it), so once the reader has read the stream up
to where it stood at the check, a handle still without an outcome will never get
one. It fails with `RepliesLostError` if entries the reader never read were trimmed
(and the turn is older than what is left), and `TurnLostError` otherwise.

The reader is the only thing that resolves a waiting handle, so it never ends on an
error while handles wait: whatever a read or a check raises is taken for a lost
connection — backed off, retried, and checked again once Redis answers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from redis.exceptions import ResponseError

import pygents.redis._outage as _outage
from pygents.redis._cluster import CONNECTION_ERRORS, disconnect
from pygents.redis._mailbox_types import (
    MailboxClosedError,
    RepliesLostError,
    TurnLostError,
    bounded,
)
from pygents.redis._producer.handle import TurnHandle

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from pygents.redis._lua.mailbox import Keys
    from pygents.redis._outage import Outage


__all__ = ["CHECK", "CONNECTION_ERRORS", "Backoff", "Replies", "TurnHandle", "closed_message"]

_log = logging.getLogger("pygents.redis")
_CHECK_BATCH: Final = 1000  # turns per check script call (each is one XRANGE)
_END: Final = (2**64, 0)  # after every stream id
_CLOSE_GRACE: Final = 0.05  # seconds a cancelled reader gets before its socket is closed
_CLOSE_LIMIT: Final = 5.0  # seconds `close` keeps cancelling and disconnecting, at most

# KEYS: the reply stream, then each mailbox followed by its workers' sorted set. ARGV:
# the reader's position in the reply stream, then pairs (index into KEYS of a mailbox,
# message id). First trims, exactly, what the reader has read (so every entry left but
# one at its position is unread). Returns {the stream's last id, its first entry's id,
# entries ever added to it, its length, 1 if an entry at the position is left else 0,
# {positions of the pairs whose entry is no longer in its mailbox}, {indexes into KEYS
# of the mailboxes without a live worker (no heartbeat expiring later than now)}}; ids
# "0-0" and counts 0 for a stream that does not exist.
CHECK: Final = """
local last, first, added, length, at = '0-0', '0-0', 0, 0, 0
if ARGV[1] ~= '0-0' and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('XTRIM', KEYS[1], 'MINID', ARGV[1])
  at = #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1])
end
local info = redis.pcall('XINFO', 'STREAM', KEYS[1])
if type(info) == 'table' and info['err'] == nil then
  for i = 1, #info, 2 do
    local name, value = info[i], info[i + 1]
    if name == 'last-generated-id' then last = value
    elseif name == 'recorded-first-entry-id' then first = value
    elseif name == 'entries-added' then added = value
    elseif name == 'length' then length = value end
  end
end
local gone = {}
for i = 2, #ARGV, 2 do
  local id = ARGV[i + 1]
  if #redis.call('XRANGE', KEYS[tonumber(ARGV[i])], id, id) == 0 then
    gone[#gone + 1] = i / 2
  end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local unserved = {}
for i = 2, #KEYS, 2 do
  if redis.call('ZCOUNT', KEYS[i + 1], '(' .. now, '+inf') == 0 then
    unserved[#unserved + 1] = i
  end
end
return {last, first, added, length, at, gone, unserved}
"""


def stream_id(text: object) -> tuple[int, int]:
    """A stream entry id (``"1700000000000-3"``) as a comparable pair; (0, 0) if malformed."""
    try:
        ms, _, seq = str(text).partition("-")
        return int(ms), int(seq or 0)
    except ValueError:
        return 0, 0


@dataclass(slots=True)
class _Verdict:
    """Turns a check found gone from their mailboxes, judged once the reader has read
    the reply stream up to ``position`` (where their outcomes would be)."""

    position: tuple[int, int]  # the stream's last id at the check
    trimmed_before: tuple[int, int] | None  # unread entries older than this were trimmed
    handles: list[TurnHandle]


class Backoff:
    """Exponential delays between reconnection attempts: never a busy loop."""

    __slots__ = ("delay", "failures", "initial", "maximum", "on_failure", "outage")

    def __init__(
        self,
        initial: float,
        maximum: float,
        on_failure: Callable[[float], None] | None = None,
        outage: Outage | None = None,
    ) -> None:
        self.initial = initial
        self.maximum = maximum
        self.delay = initial
        self.failures = 0
        self.on_failure = on_failure
        # A worker's loops share one: it speaks for all of them (see `_outage`).
        self.outage = outage

    async def wait(self, what: str, exc: BaseException) -> None:
        """Sleep after a failure; the next failure sleeps twice as long (up to the cap)."""
        if self.outage is not None:
            self.outage.failed(self, what, exc)
        elif self.failures == 0:
            _log.warning(
                "pygents.redis: %s failed (%s: %s); retrying with backoff",
                what,
                type(exc).__name__,
                bounded(str(exc)),
            )
        self.failures += 1
        delay = self.delay
        if self.on_failure is not None:
            self.on_failure(delay)
        self.delay = min(self.delay * 2, self.maximum)
        await asyncio.sleep(delay)

    def succeeded(self, what: str) -> None:
        if self.failures:
            if self.outage is not None:
                self.outage.succeeded(self)
            else:
                _log.warning("pygents.redis: %s works again", what)
        self.failures = 0
        self.delay = self.initial


class Replies:
    """The reply stream of one [`Mailboxes`][pygents.redis.Mailboxes] and its reader."""

    __slots__ = (
        "_backoff",
        "_check",
        "_check_at",
        "_closed",
        "_entries_read",
        "_handles",
        "_last",
        "_task",
        "_unserved",
        "_verdict",
        "check_interval",
        "checks",
        "client",
        "key",
        "keys_of",
        "maxlen",
        "reads",
    )

    def __init__(
        self,
        client: Redis,
        key: str,
        backoff: Backoff,
        keys_of: Callable[[str], Keys],
        *,
        maxlen: int,
        check_interval: float,
    ) -> None:
        self.client = client
        self.key = key
        self.keys_of = keys_of  # agent name -> its mailbox's keys
        # Mailboxes found without a live worker at the last check: (first seen, last said).
        self._unserved: dict[str, tuple[float, float | None]] = {}
        self.maxlen = maxlen
        self.check_interval = check_interval
        self.checks = 0  # checks run (for tests and curious callers)
        self.reads = 0  # reads issued
        self._handles: dict[str, TurnHandle] = {}
        self._last = "0-0"
        self._entries_read = 0  # entries of the stream this reader has read
        self._task: asyncio.Task[None] | None = None
        self._backoff = backoff
        self._check = client.register_script(CHECK)
        # Loop time of the next check: 0 is at once (after a reconnection), None is one
        # interval after the reader starts. Not at every start: a caller awaiting one
        # turn after another restarts the reader each time, and a turn that is only
        # just put needs no check.
        self._check_at: float | None = None
        self._verdict: _Verdict | None = None
        self._closed = False

    def _gone(self) -> bool:
        """`close` was called. A method, not the attribute, for the type checker: the
        attribute changes while the reader awaits, which it cannot see."""
        return self._closed

    def key_for(self, agent: str) -> str:
        """The reply stream named in the turns put for ``agent``: this one."""
        return self.key

    def expect(self, handle: TurnHandle) -> None:
        self._handles[handle.turn_uuid] = handle

    def forget(self, handle: TurnHandle) -> None:
        if self._handles.get(handle.turn_uuid) is handle:
            del self._handles[handle.turn_uuid]

    def follow(self, handle: TurnHandle) -> None:
        """Make sure the reader runs for ``handle`` (it stops when nobody waits)."""
        if self._closed:
            handle._fail(MailboxClosedError, closed_message(handle))
        elif self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._read())

    async def close(self) -> None:
        """Stop the reader, in bounded time, and fail every handle still waiting.

        The loop ends on a flag as well as by cancellation: the Redis client can absorb
        a cancellation (seen on Python 3.11 when it lands as the reader connects) and
        then wait on its socket for good. So a reader that has not ended shortly after
        being cancelled gets its connections closed under it, which ends any read, and
        is cancelled again — until it ends, for a few seconds at most.
        """
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            deadline = asyncio.get_running_loop().time() + _CLOSE_LIMIT
            while not task.done() and asyncio.get_running_loop().time() < deadline:
                task.cancel()
                done, _ = await asyncio.wait({task}, timeout=_CLOSE_GRACE)
                if not done:
                    await disconnect(self.client)
            if not task.done():
                _log.error("pygents.redis: the reply reader of %s did not stop", self.key)
            elif not task.cancelled() and (error := task.exception()) is not None:
                _log.error("pygents.redis: the reply reader failed", exc_info=error)
        handles = list(self._handles.values())
        self._handles.clear()
        for handle in handles:
            handle._fail(MailboxClosedError, closed_message(handle))

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        if self._check_at is None:
            self._check_at = loop.time() + self.check_interval
        try:
            trimmed = self._last
            while self._handles and not self._gone():
                try:
                    if self._verdict is None and loop.time() >= self._check_at:
                        self._verdict = await self._checked()
                        self._check_at = loop.time() + self.check_interval
                    pipe = self.client.pipeline(transaction=False)
                    if trimmed != self._last:
                        pipe.xtrim(self.key, minid=self._last, approximate=True)
                    # Not blocking while a verdict waits: it needs only what is there.
                    block = None if self._verdict is not None else 1000
                    pipe.xread({self.key: self._last}, count=256, block=block)
                    self.reads += 1
                    found = (await pipe.execute())[-1]
                except Exception as exc:
                    # Anything a read or a check raises counts as a lost connection
                    # (backed off, retried), not only what `connection_lost` says: this
                    # task alone resolves the handles waiting on it, and if it died they
                    # would wait for good. A server's reply is retried too: a reply key
                    # of another type (WRONGTYPE) until it is deleted, a cluster's
                    # refusal mid-failover until a primary serves the slot again.
                    if self._gone():  # `close` broke the connection: no warning, no retry
                        return
                    self._check_at = 0.0  # Redis may come back empty: check when it answers
                    await self._backoff.wait("reading replies", exc)
                    continue
                self._backoff.succeeded("reading replies")
                trimmed = self._last
                for _, entries in found or ():
                    self._entries_read += len(entries)
                    for entry_id, fields in entries:
                        self._last = entry_id
                        self._deliver(fields.get("r", "[]"))
                verdict = self._verdict
                if verdict is not None and (not found or stream_id(self._last) >= verdict.position):
                    self._verdict = None
                    self._judge(verdict)
        finally:
            self._verdict = None
            if self._check_at:
                self._check_at = None  # nobody waits: the next reader starts afresh
            if self._task is asyncio.current_task():
                self._task = None

    async def _checked(self) -> _Verdict | None:
        """Check the waiting turns (see the module docstring); those gone, if any."""
        waiting = [h for h in self._handles.values() if h.message_id]
        if not waiting:
            return None
        self.checks += 1
        entries_read = self._entries_read
        position = (0, 0)
        trimmed_before: tuple[int, int] | None = None
        gone: list[TurnHandle] = []
        unserved: dict[str, list[TurnHandle]] = {}  # mailbox key -> its waiting handles
        for start in range(0, len(waiting), _CHECK_BATCH):
            chunk = waiting[start : start + _CHECK_BATCH]
            keys = [self.key]
            slots: dict[str, int] = {}
            args: list[str | int] = [self._last]
            waiting_on: dict[int, list[TurnHandle]] = {}  # mailbox's index in KEYS
            for handle in chunk:
                mailbox = self.keys_of(handle.agent)
                slot = slots.get(mailbox.mailbox)
                if slot is None:
                    keys += [mailbox.mailbox, mailbox.workers]
                    slot = slots[mailbox.mailbox] = len(keys) - 1
                waiting_on.setdefault(slot, []).append(handle)
                args += [slot, handle.message_id]
            try:
                checked = await self._check(keys=keys, args=args)
                last, first, added, length, at, found, idle = checked
            except CONNECTION_ERRORS:
                # A cluster mid-failover replies CLUSTERDOWN or TRYAGAIN (ResponseErrors
                # too): the reader backs off and checks again as soon as Redis answers.
                raise
            except ResponseError as exc:  # a key of another type under our prefix
                _log.error("pygents.redis: checking waiting turns failed: %s", bounded(str(exc)))
                return None
            for index in idle:
                unserved[keys[int(index) - 1]] = waiting_on[int(index)]
            position = max(position, stream_id(last))
            # Every entry ever added was read by this reader, is still there unread,
            # or was trimmed unread; trimming takes the oldest, so outcomes older than
            # the first entry left may be among those. (After Redis lost the stream,
            # fewer entries were added to the new one than were read: none trimmed.)
            unread = int(length) - int(at)
            if int(added) - entries_read - unread > 0:
                trimmed_before = stream_id(first) if int(length) else _END
            gone += [chunk[int(i) - 1] for i in found]
        self._say_unserved(unserved)
        return _Verdict(position, trimmed_before, gone) if gone else None

    def _say_unserved(self, unserved: dict[str, list[TurnHandle]]) -> None:
        """Warn of the mailboxes this client waits on that no live worker serves.

        Said at the second check in a row that finds one so (a mailbox found empty of
        heartbeats once may be a worker just starting, or Redis just restarted), then
        every ``REMIND_EVERY`` seconds while it lasts. The wait goes on: a worker may
        come; bound it with ``asyncio.timeout`` if it must end."""
        now = time.monotonic()
        for mailbox in [m for m in self._unserved if m not in unserved]:
            del self._unserved[mailbox]  # served again, or nobody waits on it now
        for mailbox, handles in unserved.items():
            seen = self._unserved.get(mailbox)
            if seen is None:
                self._unserved[mailbox] = (now, None)  # the first sighting
                continue
            since, said = seen
            if said is not None and now - said < _outage.REMIND_EVERY:
                continue
            self._unserved[mailbox] = (since, now)
            _log.warning(
                "pygents.redis: no worker has heartbeated on mailbox %s (agent %r) for "
                "%.0f s or more; this client's %d waiting turns stay queued there until a "
                "worker serves agent %r",
                mailbox,
                bounded(handles[0].agent),
                now - since,
                len(handles),
                bounded(handles[0].agent),
            )

    def _judge(self, verdict: _Verdict) -> None:
        """Fail the handles of a verdict whose outcome did not come after all."""
        for handle in verdict.handles:
            if self._handles.get(handle.turn_uuid) is not handle:
                continue  # its outcome came
            del self._handles[handle.turn_uuid]
            # An outcome is written after its turn was put: a turn put after the first
            # entry left cannot have had its outcome trimmed.
            before = verdict.trimmed_before
            if before is not None and stream_id(handle.message_id) < before:
                handle._fail(
                    RepliesLostError,
                    f"the outcome of turn {handle.turn_uuid} on agent "
                    f"{bounded(handle.agent)!r} was trimmed from the reply stream before it "
                    f"was read (the stream keeps about reply_maxlen={self.maxlen} entries); "
                    "read results sooner, or raise Mailboxes(reply_maxlen=...)",
                )
            else:
                handle._fail(
                    TurnLostError,
                    f"turn {handle.turn_uuid} is no longer in the mailbox of agent "
                    f"{bounded(handle.agent)!r} and its outcome is not on the reply stream: "
                    "Redis lost it (restarted without persistence, or its keys were "
                    "deleted, evicted or expired); put the turn again if it should still run",
                )

    def _deliver(self, batch: str) -> None:
        try:
            records = json.loads(batch)
        except ValueError:
            _log.error("pygents.redis: a reply entry of %s is not JSON; skipped", self.key)
            return
        listed: list[Any] = records if isinstance(records, list) else [None]
        for record in listed:
            if not _well_formed(record):
                _log.error("pygents.redis: a malformed reply record in %s; skipped", self.key)
                continue
            turn_uuid, kind, index, attempt, data = record
            handle = self._handles.get(turn_uuid)
            if handle is None:
                continue  # a handle that was dropped, or a late duplicate
            handle._add(kind, index, attempt, data)
            if kind == "o":
                del self._handles[turn_uuid]


def _well_formed(record: Any) -> bool:
    """``[uuid, "v" | "o", index, delivery, data]`` as JSON decodes it (exact types:
    a bool is not an index), an outcome's data an object."""
    if type(record) is not list or len(record) != 5:
        return False
    uuid, kind, index, delivery, data = record
    return (
        type(uuid) is str
        and type(index) is int
        and type(delivery) is int
        and (kind == "v" or (kind == "o" and type(data) is dict))
    )


def closed_message(handle: TurnHandle) -> str:
    return (
        f"turn {handle.turn_uuid} on agent {bounded(handle.agent)!r}: the mailboxes were "
        "closed before its outcome arrived; keep the Mailboxes open (its `async with` "
        "block) until the handles you wait on resolve"
    )
