"""Results coming back: a reply stream per client, read by one task, and turn handles.

Workers append *records* to the reply stream named in each turn's envelope, in
batches (one stream entry holds a JSON array of records)::

    [turn_uuid, "v", index, attempt, value]      # a streaming tool's value
    [turn_uuid, "o", 0, attempt, outcome_dict]   # how the turn ended (exactly once)

One reader task per `Replies` follows the stream while some handle waits,
hands each record to the handle of its turn, and trims what it has read. The stream
is bounded (``MAXLEN ~``) and expires when nobody writes to it for a while, so a
caller that went away leaves nothing behind for long.

A turn can run more than once (its first worker died before recording the outcome):
values are then numbered again from zero, and a handle yields each index once.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from pygents._mailbox_types import Outcome, RepliesLostError, bounded

if TYPE_CHECKING:
    from redis.asyncio import Redis

CONNECTION_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)
"""What a lost or refused connection to Redis raises."""

__all__ = ["CONNECTION_ERRORS", "Backoff", "Replies", "TurnHandle"]

_log = logging.getLogger("pygents.redis")


class Backoff:
    """Exponential delays between reconnection attempts: never a busy loop."""

    __slots__ = ("delay", "failures", "initial", "maximum", "on_failure")

    def __init__(
        self, initial: float, maximum: float, on_failure: Callable[[float], None] | None = None
    ) -> None:
        self.initial = initial
        self.maximum = maximum
        self.delay = initial
        self.failures = 0
        self.on_failure = on_failure

    async def wait(self, what: str, exc: BaseException) -> None:
        """Sleep after a failure; the next failure sleeps twice as long (up to the cap)."""
        if self.failures == 0:
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
            _log.warning("pygents.redis: %s works again", what)
        self.failures = 0
        self.delay = self.initial


class TurnHandle:
    """A turn put on a mailbox: await its result, or stream its values.

    * ``await handle.result()`` — the tool's return value (a streaming tool's values
      as a list); [`RemoteTurnError`][pygents.redis.RemoteTurnError] if the turn did not complete.
    * ``async for value in handle`` — a streaming tool's values in order, then the
      loop ends (or raises ``RemoteTurnError``, like a local ``yielding()`` would).
    * ``await handle.outcome()`` — the full [`Outcome`][pygents.redis.Outcome], never
      raising for the turn's own failure.
    """

    __slots__ = (
        "_changed",
        "_gap",
        "_outcome",
        "_replies",
        "_values",
        "agent",
        "message_id",
        "turn_uuid",
    )

    def __init__(self, replies: Replies | None, agent: str, turn_uuid: str) -> None:
        self._replies = replies
        self.agent = agent
        self.turn_uuid = turn_uuid
        self.message_id = ""
        self._values: list[Any] = []
        self._gap: str | None = None
        # The outcome as it arrived (a dict), made an Outcome when first asked for.
        self._outcome: Outcome | dict[str, Any] | None = None
        self._changed: asyncio.Event | None = None  # made when someone waits

    def __repr__(self) -> str:
        found = self._final()
        state = "pending" if found is None else (found.stop_reason or "dead")
        return f"<TurnHandle {self.turn_uuid} on {self.agent!r} {state}>"

    def _final(self) -> Outcome | None:
        found = self._outcome
        if isinstance(found, dict):
            found = self._outcome = Outcome.from_dict(found)
        return found

    @property
    def done(self) -> bool:
        """The outcome has arrived."""
        return self._outcome is not None

    def _add(self, kind: str, index: int, data: Any) -> None:
        if kind == "v":
            if index == len(self._values):  # a lower index came already (an earlier run)
                self._values.append(data)
            elif index > len(self._values) and self._gap is None:
                self._gap = (
                    f"values {len(self._values)}..{index - 1} of turn {self.turn_uuid} were "
                    "trimmed from the reply stream before they were read; read replies as "
                    "they come, or raise Mailboxes(reply_maxlen=...)"
                )
        elif self._outcome is None:
            self._outcome = data
            produced = data.get("values", 0)
            if self._gap is None and len(self._values) < produced:
                self._gap = (
                    f"turn {self.turn_uuid} produced {produced} values but only "
                    f"{len(self._values)} reached this reader; raise Mailboxes(reply_maxlen=...)"
                )
        if self._changed is not None:
            self._changed.set()

    async def _wait(self) -> None:
        if self._replies is None:
            raise RuntimeError(
                f"turn {self.turn_uuid} was put with reply=False: nothing comes back; "
                "put it with reply=True to wait for its result"
            )
        if self._changed is None:
            self._changed = asyncio.Event()
        self._changed.clear()
        self._replies.follow()
        await self._changed.wait()

    async def outcome(self) -> Outcome:
        """Wait for the outcome (bound it with ``asyncio.timeout`` if you must)."""
        while (found := self._final()) is None:
            await self._wait()
        return found

    async def result(self) -> Any:
        """The return value, or the list of streamed values; raises if not completed."""
        outcome = await self.outcome()
        if not outcome.ok:
            raise outcome.failure()
        if not outcome.streaming:
            return outcome.output
        if self._gap is not None:
            raise RepliesLostError(self._gap)
        return list(self._values)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._stream()

    async def _stream(self) -> AsyncIterator[Any]:
        sent = 0
        while True:
            while sent < len(self._values):
                sent += 1
                yield self._values[sent - 1]
            if self._gap is not None:
                raise RepliesLostError(self._gap)
            outcome = self._final()
            if outcome is not None:
                if not outcome.ok:
                    raise outcome.failure()
                return
            await self._wait()


class Replies:
    """The reply stream of one [`Mailboxes`][pygents.redis.Mailboxes] and its reader."""

    __slots__ = ("_backoff", "_handles", "_last", "_task", "client", "key")

    def __init__(self, client: Redis, key: str, backoff: Backoff) -> None:
        self.client = client
        self.key = key
        self._handles: dict[str, TurnHandle] = {}
        self._last = "0-0"
        self._task: asyncio.Task[None] | None = None
        self._backoff = backoff

    def expect(self, handle: TurnHandle) -> None:
        self._handles[handle.turn_uuid] = handle

    def forget(self, handle: TurnHandle) -> None:
        if self._handles.get(handle.turn_uuid) is handle:
            del self._handles[handle.turn_uuid]

    def follow(self) -> None:
        """Make sure the reader runs (it stops by itself when nobody waits)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._read())

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def _read(self) -> None:
        try:
            trimmed = self._last
            while self._handles:
                try:
                    pipe = self.client.pipeline(transaction=False)
                    if trimmed != self._last:
                        pipe.xtrim(self.key, minid=self._last, approximate=True)
                    pipe.xread({self.key: self._last}, count=256, block=1000)
                    found = (await pipe.execute())[-1]
                except CONNECTION_ERRORS as exc:
                    await self._backoff.wait("reading replies", exc)
                    continue
                self._backoff.succeeded("reading replies")
                trimmed = self._last
                for _, entries in found or ():
                    for entry_id, fields in entries:
                        self._last = entry_id
                        self._deliver(fields.get("r", "[]"))
        finally:
            if self._task is asyncio.current_task():
                self._task = None

    def _deliver(self, batch: str) -> None:
        try:
            records = json.loads(batch)
        except ValueError:
            _log.error("pygents.redis: a reply entry of %s is not JSON; skipped", self.key)
            return
        for record in records:
            try:
                turn_uuid, kind, index, _attempt, data = record
                handle = self._handles.get(turn_uuid)
                if handle is None:
                    continue  # a handle that was dropped, or a late duplicate
                handle._add(kind, index, data)
                if kind == "o":
                    del self._handles[turn_uuid]
            except (TypeError, ValueError):
                _log.error("pygents.redis: a malformed reply record in %s; skipped", self.key)
