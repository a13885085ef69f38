"""Acting on the agents served through Redis: the producer's side of control.

Every action goes through Redis itself — no server, no port. A mailbox's *control
hash* (``Keys.control``) holds what its workers are asked to do: ``paused``,
``cancel:<message id>`` and ``drain:<worker>``. Each worker reads the fields that
concern it in the control hashes of the mailboxes it serves every
``Worker(control_interval=...)`` seconds (0.2 by default: one ``HMGET`` per mailbox,
pipelined) and acts (`pygents.redis._worker.watch`).
A key read on a timer, rather than a control stream read with the turns, because the
worker's read blocks up to a second on the turns: a request in a stream would wait
for it, and every worker would need a cursor of its own in it.

What needs atomicity is a script (`pygents.redis._lua.control`): removing a queued
turn that a worker might take at the same instant, and moving a dead letter back.

A name, id or uuid this Redis does not have raises
[`MailboxNotFoundError`][pygents.redis.MailboxNotFoundError]; only ``cancel``
returns a result instead, so that it can be repeated safely.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final, Literal

from redis.exceptions import ResponseError

from pygents._errors import brief
from pygents.redis._cluster import queue_time, time_ms
from pygents.redis._lua.control import CANCEL, HANDED_BACK_IDLE, RETRY
from pygents.redis._lua.mailbox import GROUP
from pygents.redis._mailbox_types import (
    MailboxFullError,
    MailboxNotFoundError,
    bounded,
    cancelled_outcome,
    outcome_record,
)
from pygents.redis._producer.handle import TurnHandle
from pygents.redis._producer.replies import CONNECTION_ERRORS
from pygents.redis._producer.survey import agent_names

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from pygents.redis._lua.mailbox import Keys
    from pygents.redis._mailbox_types import MailboxUnavailableError
    from pygents.redis._producer.replies import Replies
    from pygents.redis._producer.reply_streams import ReplyStreams

__all__ = ["CancelResult", "Control"]

CancelResult = Literal["cancelling", "removed", "not found"]

_STREAM_ID: Final = re.compile(r"\d{1,20}-\d{1,20}")


class Control:
    """The control actions of [`Mailboxes`][pygents.redis.Mailboxes] (a mixin: it uses
    the client, prefix, reply reader and key naming of the `Mailboxes`)."""

    client: Redis
    prefix: str
    maxlen: int
    replies: Replies | ReplyStreams
    _reply_limits: dict[str, int]

    def keys(self, agent: str) -> Keys:
        raise NotImplementedError

    def unavailable(self, doing: str, exc: BaseException) -> MailboxUnavailableError:
        raise NotImplementedError

    async def _existing(self, agent: str, doing: str) -> Keys:
        """The keys of ``agent``'s mailbox, refused unless the mailbox exists."""
        keys = self.keys(agent)
        try:
            found = await self.client.exists(keys.mailbox)
        except CONNECTION_ERRORS as exc:
            raise self.unavailable(doing, exc) from exc
        if not found:
            raise MailboxNotFoundError(
                f"cannot {doing}: agent {bounded(agent)!r} has no mailbox on this Redis "
                f"(prefix {self.prefix!r}); check the name and the prefix"
            )
        return keys

    async def _call(self, doing: str, command: Any) -> Any:
        try:
            return await command
        except CONNECTION_ERRORS as exc:
            raise self.unavailable(doing, exc) from exc

    async def pause(self, agent: str) -> None:
        """Stop the workers of ``agent`` from starting its turns; running ones finish.

        Turns put meanwhile wait in the mailbox; turns a worker read ahead are handed
        back. Takes effect within a worker's ``control_interval``.
        """
        doing = f"pause agent {bounded(agent)!r}"
        keys = await self._existing(agent, doing)
        await self._call(doing, self.client.hset(keys.control, "paused", "1"))

    async def resume(self, agent: str) -> None:
        """Undo [`pause`][pygents.redis.Mailboxes.pause]."""
        doing = f"resume agent {bounded(agent)!r}"
        keys = await self._existing(agent, doing)
        await self._call(doing, self.client.hdel(keys.control, "paused"))

    async def cancel(
        self, agent: str, turn_uuid: str, *, message_id: str | None = None
    ) -> CancelResult:
        """Cancel a turn put on ``agent``'s mailbox; idempotent.

        Returns ``"cancelling"`` when a worker holds it: that worker cancels it and
        records the outcome, once, as ``CANCELLED`` (a turn that ends before the
        request reaches it keeps its own outcome). Returns ``"removed"`` when no
        worker ran it (still queued, or handed back by a paused worker): it leaves the
        mailbox at once, and its caller gets a ``CANCELLED`` outcome. Returns ``"not
        found"`` when the mailbox no longer holds it (finished, removed by an earlier
        cancel, or never put). ``message_id`` (``TurnHandle.message_id``) saves a scan
        of the mailbox.
        """
        doing = f"cancel turn {bounded(turn_uuid)} of agent {bounded(agent)!r}"
        if not isinstance(turn_uuid, str) or not turn_uuid:
            raise TypeError(f"Mailboxes.cancel() takes a turn uuid string, got {brief(turn_uuid)}")
        keys = await self._existing(agent, doing)
        found = await self._call(
            doing,
            self.client.eval(
                CANCEL,
                3,
                keys.mailbox,
                keys.control,
                keys.errors,
                GROUP,
                turn_uuid,
                message_id or "",
                HANDED_BACK_IDLE // 2,
            ),
        )
        if found[0] == "missing":
            return "not found"
        if found[0] == "running":
            return "cancelling"
        await self._tell_cancelled(agent, turn_uuid, found[2], doing)
        return "removed"

    async def _tell_cancelled(self, agent: str, turn_uuid: str, raw: str, doing: str) -> None:
        """Write the ``CANCELLED`` outcome of a removed turn to its caller's reply stream
        (after the script: a reply stream is not a key of the mailbox's)."""
        envelope = json.loads(raw)
        reply = envelope.get("reply")
        if not isinstance(reply, str) or not reply:
            return
        record = outcome_record(turn_uuid, 0, cancelled_outcome(turn_uuid, agent))
        maxlen = envelope.get("reply_maxlen")
        ttl = envelope.get("reply_ttl_ms")
        pipe = self.client.pipeline(transaction=False)
        pipe.xadd(
            reply,
            {"r": f"[{record}]"},  # an entry holds a list of records
            maxlen=maxlen if isinstance(maxlen, int) else self._reply_limits["reply_maxlen"],
            approximate=True,
        )
        pipe.pexpire(reply, ttl if isinstance(ttl, int) else self._reply_limits["reply_ttl_ms"])
        try:
            await pipe.execute()
        except CONNECTION_ERRORS as exc:
            raise self.unavailable(doing, exc) from exc
        except ResponseError:
            pass  # the reply key is not a stream: nobody can be told (as for workers)

    def _dead_id(self, dead_letter_id: str) -> str:
        if not isinstance(dead_letter_id, str) or not _STREAM_ID.fullmatch(dead_letter_id):
            raise MailboxNotFoundError(
                f"{brief(dead_letter_id)} is not a dead letter id (DeadLetter.id, like "
                "'1700000000000-0')"
            )
        return dead_letter_id

    async def retry_dead_letter(self, agent: str, dead_letter_id: str) -> TurnHandle:
        """Put a dead letter back on ``agent``'s mailbox, atomically: a fresh delivery.

        Returns a handle on the new run. It follows the outcome when this client put
        the turn (the entry names this client's reply stream); otherwise the outcome
        goes to whoever put it, and the handle has no replies to wait on.
        """
        doing = f"retry dead letter {bounded(str(dead_letter_id))} of agent {bounded(agent)!r}"
        keys = self.keys(agent)
        found = await self._call(
            doing,
            self.client.eval(
                RETRY, 2, keys.dead, keys.mailbox, self._dead_id(dead_letter_id), self.maxlen
            ),
        )
        if found[0] == "full":
            raise MailboxFullError(
                f"cannot {doing}: the mailbox holds {found[1]} unfinished turns and takes "
                f"at most {self.maxlen}; retry once workers drained it"
            )
        if found[0] != "ok":
            raise MailboxNotFoundError(f"cannot {doing}: {_RETRY_REFUSALS[found[0]]}")
        turn_uuid, reply = "", None
        try:
            envelope = json.loads(found[2])
            turn_uuid = str(envelope["turn"]["uuid"])
            reply = envelope.get("reply")
        except (ValueError, TypeError, KeyError):
            pass  # the entry is dead-lettered again by the worker, with the reason
        ours = reply == self.replies.key_for(agent) and turn_uuid
        handle = TurnHandle(self.replies if ours else None, agent, turn_uuid)
        handle.message_id = found[1]
        if ours:
            self.replies.expect(handle)
        return handle

    async def drop_dead_letter(self, agent: str, dead_letter_id: str) -> None:
        """Delete a dead letter for good."""
        doing = f"drop dead letter {bounded(str(dead_letter_id))} of agent {bounded(agent)!r}"
        keys = self.keys(agent)
        try:
            dropped = await self._call(
                doing, self.client.xdel(keys.dead, self._dead_id(dead_letter_id))
            )
        except ResponseError:
            dropped = 0  # the key is not a stream
        if not dropped:
            raise MailboxNotFoundError(f"cannot {doing}: no such dead letter")

    async def drain_worker(self, worker: str) -> list[str]:
        """Ask the live worker named ``worker`` to stop taking turns, finish those it
        runs, hand back those it read ahead, and leave its serve loop.

        Returns the agents it served. While it drains, surveys show it ``draining``;
        then it leaves the live workers.
        """
        doing = f"drain worker {bounded(str(worker))}"
        if not isinstance(worker, str) or not worker:
            raise TypeError(f"Mailboxes.drain_worker() takes a worker name, got {brief(worker)}")
        names = await self._call(doing, agent_names(self.client, self.prefix))
        pipe = self.client.pipeline(transaction=False)
        queue_time(pipe, f"{self.prefix}:agents")
        for name in names:
            pipe.zscore(self.keys(name).workers, worker)
        now, *scores = await self._call(doing, pipe.execute(raise_on_error=False))
        if isinstance(now, Exception):
            raise now
        now_ms = time_ms(now)
        served = [
            n for n, s in zip(names, scores, strict=True) if isinstance(s, float) and s > now_ms
        ]
        if not served:
            raise MailboxNotFoundError(
                f"cannot {doing}: no live worker of that name on this Redis (prefix "
                f"{self.prefix!r}); Mailboxes.survey() lists the workers"
            )
        pipe = self.client.pipeline(transaction=False)
        for name in served:
            pipe.hset(self.keys(name).control, f"drain:{worker}", str(now_ms))
        await self._call(doing, pipe.execute())
        return served


_RETRY_REFUSALS: Final = {
    "missing": "no such dead letter",
    "empty": "the dead letter holds no turn to put back",
    "mailbox": "the mailbox key holds something other than a stream",
}
