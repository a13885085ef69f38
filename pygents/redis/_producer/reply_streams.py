"""A client's reply streams on a Redis Cluster: one per mailbox it waits on.

A worker records an outcome in the same script that acknowledges its turn, so the
reply stream must be in the mailbox's hash slot (`Keys.reply_key`), and a client that
puts turns for agents on several shards has several reply streams. A multi-key
``XREAD`` must stay within one slot, so each stream gets its own reader — the
single-server `Replies`, unchanged: its trimming, expiry and checks (whose script names
the reply stream and the mailboxes of its turns: one slot here too).

`ReplyStreams` routes each handle to the reader of its agent's stream, created on first
use and kept while the client lives (one small object per mailbox the client put
turns on; its position in the stream must outlive the reader task). A reader blocks on
one connection of its shard while handles wait: ``max_connections`` (redis-py's, per
node) bounds how many mailboxes of one shard a client can wait on at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from pygents.redis._mailbox_types import MailboxClosedError
from pygents.redis._producer.replies import Replies, closed_message

if TYPE_CHECKING:
    from pygents.redis._producer.handle import TurnHandle

__all__ = ["ReplyStreams"]


class ReplyStreams:
    """The reply streams of one clustered [`Mailboxes`][pygents.redis.Mailboxes], by key."""

    __slots__ = ("_by_key", "_closed", "_make", "key_for")

    def __init__(self, key_for: Callable[[str], str], make: Callable[[str], Replies]) -> None:
        self.key_for = key_for  # agent name -> its reply stream's key
        self._make = make  # reply stream key -> its reader
        self._by_key: dict[str, Replies] = {}
        self._closed = False

    def of(self, agent: str) -> Replies:
        """The reader of ``agent``'s reply stream."""
        key = self.key_for(agent)
        found = self._by_key.get(key)
        if found is None:
            found = self._by_key[key] = self._make(key)
        return found

    @property
    def reads(self) -> int:
        return sum(r.reads for r in self._by_key.values())

    @property
    def checks(self) -> int:
        return sum(r.checks for r in self._by_key.values())

    def expect(self, handle: TurnHandle) -> None:
        self.of(handle.agent).expect(handle)

    def forget(self, handle: TurnHandle) -> None:
        found = self._by_key.get(self.key_for(handle.agent))
        if found is not None:
            found.forget(handle)

    def follow(self, handle: TurnHandle) -> None:
        if self._closed:
            handle._fail(MailboxClosedError, closed_message(handle))
        else:
            self.of(handle.agent).follow(handle)

    async def close(self) -> None:
        """Stop every reader (each in bounded time, all at once)."""
        self._closed = True
        await asyncio.gather(*(r.close() for r in self._by_key.values()))
