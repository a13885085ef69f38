"""How a worker takes entries from Redis: set-up, reads, take-overs and hand-backs.

Entries are read as bytes. The client of `Mailboxes` decodes every reply as UTF-8,
and a single field that is not UTF-8 would then fail the whole ``XREADGROUP`` or
claim reply — every entry read with it, again at each retry. Reading bytes and
decoding each entry on its own (`pygents.redis._worker.entries.decode_entry`) confines a bad entry
to itself: it is dead-lettered, the others run. `read_waiting` gives the same entries
through the ``READ`` script, packed in one string that `unpack` splits by the lengths
it carries, so that no byte of an entry can be mistaken for a separator.

A full Redis (``maxmemory`` with the ``noeviction`` policy) refuses the writes that
may grow memory. Workers must keep draining it — finishing a turn deletes its entry —
so the set-up tolerates that refusal (see `setup`), and `FULL` lists what the loops
treat as a reason to back off, not to stop.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Final

from redis.asyncio import Redis
from redis.client import NEVER_DECODE
from redis.exceptions import OutOfMemoryError, ResponseError

from pygents.redis._cluster import connection_lost
from pygents.redis._lua.control import HANDED_BACK_IDLE, WORKER_FIELDS
from pygents.redis._lua.mailbox import ANNOUNCE, CLAIM, FULL_GROUP, GROUP, HAND_BACK, Keys

__all__ = [
    "FULL",
    "Entry",
    "claim",
    "hand_back",
    "leave",
    "read",
    "read_waiting",
    "setup",
    "unpack",
]

_log = logging.getLogger("pygents.redis")

FULL: Final = (OutOfMemoryError,)
"""What a full Redis raises: the worker's loops back off and retry, as when Redis is away."""

Entry = tuple[str, Mapping[bytes, bytes] | None]
"""A message id and the entry's raw fields (``None``: the entry was deleted)."""


async def setup(
    client: Redis, keys: Keys, agents_key: str, agent: str, tools: Iterable[str]
) -> None:
    """Create the consumer group and announce the agent's tools.

    On a full Redis a plain ``XGROUP CREATE`` is refused even when the group exists:
    then the group is looked up, and created by a script allowed to exceed
    ``maxmemory`` only if it is missing (Redis 7; on older servers the refusal stands
    and the worker retries).
    """
    try:
        await client.xgroup_create(keys.mailbox, GROUP, id="0", mkstream=True)
    except OutOfMemoryError:
        if not await _has_group(client, keys.mailbox):
            try:
                await client.eval(FULL_GROUP, 1, keys.mailbox, GROUP)
            except ResponseError:
                raise OutOfMemoryError("Redis is full and cannot create the group") from None
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise
    if not keys.tag:
        await client.eval(ANNOUNCE, 2, keys.tools, agents_key, agent, *sorted(tools))
        return
    # On a cluster the agents set is in another slot than the mailbox: its own command,
    # which a full Redis may refuse as the script would (the set is only for listing).
    await client.eval(ANNOUNCE, 1, keys.tools, agent, *sorted(tools))
    with contextlib.suppress(OutOfMemoryError):
        await client.sadd(agents_key, agent)


async def _has_group(client: Redis, mailbox: str) -> bool:
    try:
        groups = await client.xinfo_groups(mailbox)
    except ResponseError:
        return False  # no stream
    return any(g.get("name") == GROUP for g in groups)


async def read(
    client: Redis, consumer: str, mailboxes: list[str], count: int, block_ms: int
) -> list[tuple[str, list[Entry]]]:
    """New entries of ``mailboxes`` for ``consumer``, undecoded, by mailbox key."""
    found: Any = await client.execute_command(  # type: ignore[no-untyped-call]
        "XREADGROUP", "GROUP", GROUP, consumer, "COUNT", count, "BLOCK", block_ms,
        "STREAMS", *mailboxes, *(">" for _ in mailboxes),
        **{NEVER_DECODE: True},
    )  # fmt: skip
    return [
        (key.decode(), [(message_id.decode(), fields) for message_id, fields in entries])
        for key, entries in found or ()
    ]


async def read_waiting(
    client: Redis, sha: str, consumer: str, mailboxes: list[str], count: int
) -> list[tuple[str, list[Entry]]]:
    """Like `read`, without blocking, for when turns are known to wait: through the
    ``READ`` script (``sha``), whose packed reply costs the client a fraction of the
    parsing (see ``_lua.mailbox``). ``NoScriptError`` if Redis lost the script."""
    blob: bytes = await client.execute_command(  # type: ignore[no-untyped-call]
        "EVALSHA", sha, len(mailboxes), *mailboxes, GROUP, consumer, count,
        **{NEVER_DECODE: True},
    )  # fmt: skip
    return unpack(blob, mailboxes)


def unpack(blob: bytes, mailboxes: list[str]) -> list[tuple[str, list[Entry]]]:
    """The entries of a ``READ`` reply, by mailbox key (`ValueError` if garbled)."""
    found: list[tuple[str, list[Entry]]] = []
    at, end, find = 0, len(blob), blob.index
    while at < end:
        space = find(b" ", at)
        key = mailboxes[int(blob[at:space]) - 1]
        at = find(b" ", space + 1)
        entries: list[Entry] = []
        for _ in range(int(blob[space + 1 : at])):
            space = find(b" ", at + 1)
            message_id = blob[at + 1 : space].decode()
            at = find(b" ", space + 1)
            pairs = int(blob[space + 1 : at])
            fields: dict[bytes, bytes] = {}
            for _ in range(pairs):
                colon = find(b":", at + 1)
                at = colon + 1 + int(blob[at + 1 : colon])
                name = blob[colon + 1 : at]
                colon = find(b":", at + 1)
                at = colon + 1 + int(blob[at + 1 : colon])
                fields[name] = blob[colon + 1 : at]
            entries.append((message_id, fields if pairs >= 0 else None))
        found.append((key, entries))
        at += 1
    return found


async def claim(
    client: Redis, keys: Keys, consumer: str, idle_ms: int, cursor: str, count: int
) -> tuple[str, list[tuple[str, Mapping[bytes, bytes], int, str | None]]]:
    """Take over entries idle longer than ``idle_ms``: the next cursor, and each entry's
    id, raw fields, delivery count and last recorded error."""
    found: Any = await client.execute_command(  # type: ignore[no-untyped-call]
        "EVAL", CLAIM, 2, keys.mailbox, keys.errors, GROUP, consumer, idle_ms, cursor, count,
        **{NEVER_DECODE: True},
    )  # fmt: skip
    taken: list[tuple[str, Mapping[bytes, bytes], int, str | None]] = []
    for message_id, flat, deliveries, last_error in found[1:]:
        flat = flat or []
        fields = dict(zip(flat[::2], flat[1::2], strict=False))
        error = last_error.decode(errors="replace") if last_error else None
        taken.append((message_id.decode(), fields, int(deliveries), error))
    following: bytes = found[0]
    return following.decode(), taken


async def hand_back(client: Redis, keys: Keys, consumer: str, keep: Iterable[str]) -> int:
    """Hand back every turn ``consumer`` holds but those in ``keep``, their delivery
    uncounted (see ``HAND_BACK``): how many."""
    given: int = await client.eval(
        HAND_BACK, 1, keys.mailbox, GROUP, consumer, HANDED_BACK_IDLE, *keep
    )
    return given


async def leave(
    client: Redis, keys: Keys, consumer: str, started: Iterable[str], *, goodbye: bool = True
) -> None:
    """Hand back what ``consumer`` holds and never started; with ``goodbye``, also take
    it off the live workers (and clear what it said in the control hash)."""
    try:
        given = await hand_back(client, keys, consumer, started)
        if goodbye:
            pipe = client.pipeline(transaction=False)
            pipe.zrem(keys.workers, consumer)
            said = (f"{kind}:{consumer}" for kind in WORKER_FIELDS)
            pipe.hdel(keys.control, *said)
            await pipe.execute()
    except Exception as exc:
        if not (isinstance(exc, ResponseError) or connection_lost(exc)):
            raise
        # Redis away, or the group gone: the turns are taken over after the visibility
        # timeout instead, and the heartbeat expires by itself.
        _log.warning("pygents.redis: %s could not hand back its turns: %s", consumer, exc)
        return
    if given:
        _log.info("pygents.redis: %s handed back %d turns it had not started", consumer, given)
