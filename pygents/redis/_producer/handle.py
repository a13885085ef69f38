"""`TurnHandle`: one turn put on a mailbox, as its caller follows it.

The reply reader (`pygents.redis._producer.replies.Replies`) hands each record of the turn to its
handle: values (``"v"``) numbered from zero *per delivery* — a turn whose worker died
runs again from the start as delivery 2 — and one outcome (``"o"``), which says which
delivery recorded it. The handle therefore keeps each delivery's values apart and
never mixes two runs: `result()` returns the values of the run whose outcome was
recorded, and a stream that already yielded values of an earlier run raises
`TurnRerunError` rather than going on with another run's values.

Why an error rather than starting the stream afresh with a marker: values already
yielded cannot be taken back, and a marker travelling among the tool's own values
would be missed (or misread) by every caller that does not look for it — they would
splice two runs silently, which is the fault this prevents. An error cannot be
missed; the caller can still take the complete, consistent list from `result()`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pygents.redis._mailbox_types import (
    MailboxError,
    Outcome,
    RepliesLostError,
    TurnRerunError,
    bounded,
)

if TYPE_CHECKING:
    from pygents.redis._producer.replies import Replies
    from pygents.redis._producer.reply_streams import ReplyStreams

__all__ = ["TurnHandle"]


class TurnHandle:
    """A turn put on a mailbox: await its result, or stream its values.

    * ``await handle.result()`` — the tool's return value (a streaming tool's values
      as a list); [`RemoteTurnError`][pygents.redis.RemoteTurnError] if the turn did not complete.
    * ``async for value in handle`` — a streaming tool's values in order, then the
      loop ends (or raises ``RemoteTurnError``, like a local ``yielding()`` would).
    * ``await handle.outcome()`` — the full [`Outcome`][pygents.redis.Outcome], never
      raising for the turn's own failure.

    All three raise a [`MailboxError`][pygents.redis.MailboxError] when the outcome
    cannot arrive any more: [`RepliesLostError`][pygents.redis.RepliesLostError]
    (trimmed before it was read), [`TurnLostError`][pygents.redis.TurnLostError]
    (gone with Redis's data), [`MailboxClosedError`][pygents.redis.MailboxClosedError]
    (the `Mailboxes` was closed first). The stream also raises
    [`TurnRerunError`][pygents.redis.TurnRerunError] when the turn ran again after it
    had yielded values of the earlier run (see the module docstring for why).
    """

    __slots__ = (
        "_attempt",
        "_changed",
        "_error",
        "_gaps",
        "_outcome",
        "_replies",
        "_runs",
        "agent",
        "message_id",
        "turn_uuid",
    )

    def __init__(self, replies: Replies | ReplyStreams | None, agent: str, turn_uuid: str) -> None:
        self._replies = replies
        self.agent = agent
        self.turn_uuid = turn_uuid
        self.message_id = ""
        self._runs: dict[int, list[Any]] = {}  # values, by delivery (attempt)
        self._gaps: dict[int, str] = {}  # a delivery's values that were trimmed
        # The outcome as it arrived (a dict), made an Outcome when first asked for.
        self._outcome: Outcome | dict[str, Any] | None = None
        self._attempt = 0  # the delivery that recorded the outcome
        self._error: tuple[type[MailboxError], str] | None = None  # no outcome will come
        self._changed: asyncio.Event | None = None  # made when someone waits

    def __repr__(self) -> str:
        found = self._final()
        if found is not None:
            state = found.stop_reason or "dead"
        else:
            state = "failed" if self._error is not None else "pending"
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

    def _add(self, kind: str, index: int, attempt: int, data: Any) -> None:
        if kind == "v":
            values = self._runs.setdefault(attempt, [])
            if index == len(values):
                values.append(data)
            elif index > len(values) and attempt not in self._gaps:
                self._gaps[attempt] = (
                    f"values {len(values)}..{index - 1} of turn {self.turn_uuid} were "
                    "trimmed from the reply stream before they were read; read replies as "
                    "they come, or raise Mailboxes(reply_maxlen=...)"
                )
            # a lower index: the same value again (a duplicated write); kept once
        elif self._outcome is None and isinstance(data, dict):
            self._outcome = data
            self._attempt = attempt
            produced = data.get("values", 0)
            got = len(self._runs.get(attempt, ()))
            if isinstance(produced, int) and got < produced and attempt not in self._gaps:
                self._gaps[attempt] = (
                    f"turn {self.turn_uuid} produced {produced} values but only "
                    f"{got} reached this reader; raise Mailboxes(reply_maxlen=...)"
                )
        self._wake()

    def _fail(self, error: type[MailboxError], message: str) -> None:
        """No outcome will arrive: every wait, now and later, raises ``error``."""
        if self._outcome is None and self._error is None:
            self._error = (error, message)
            self._wake()

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()

    async def _wait(self) -> None:
        if self._error is not None:
            error, message = self._error
            raise error(message)  # a new exception per raise: no growing traceback
        if self._replies is None:
            raise RuntimeError(
                f"turn {self.turn_uuid} was put with reply=False: nothing comes back; "
                "put it with reply=True to wait for its result"
            )
        if self._changed is None:
            self._changed = asyncio.Event()
        self._changed.clear()
        self._replies.follow(self)
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
        if (gap := self._gaps.get(self._attempt)) is not None:
            raise RepliesLostError(gap)
        return list(self._runs.get(self._attempt, ()))

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._stream()

    async def _stream(self) -> AsyncIterator[Any]:
        sent = 0
        following = 0  # the delivery whose values this loop yields
        while True:
            # Looked at again after every value (the caller may be slow, and records
            # keep arriving): the run that recorded the outcome, else the newest run.
            newest = self._attempt if self._outcome is not None else max(self._runs, default=0)
            if sent == 0:
                following = newest  # nothing yielded yet: no run to be consistent with
            elif newest != following:
                outcome = self._final()
                if outcome is not None and not outcome.ok:
                    raise outcome.failure()
                raise TurnRerunError(
                    f"turn {self.turn_uuid} on agent {bounded(self.agent)!r} was run again "
                    f"(delivery {newest}) after {sent} values of delivery {following} had "
                    "been yielded: its worker stopped mid-stream and the new run starts "
                    "over; `await handle.result()` gives the values of the run that finished"
                )
            values = self._runs.get(following, ())
            if sent < len(values):
                sent += 1
                yield values[sent - 1]
                continue
            if (gap := self._gaps.get(following)) is not None:
                raise RepliesLostError(gap)
            outcome = self._final()
            if outcome is not None and following == self._attempt:
                if not outcome.ok:
                    raise outcome.failure()
                return  # an outcome comes after every value of its run
            await self._wait()
