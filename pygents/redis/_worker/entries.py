"""Mailbox entries as a worker reads them: decoded, parsed, or refused with a reason.

A worker reads entries as bytes (see `intake`) and decodes each on its own here, so
that one bad entry is dead-lettered alone (`Malformed`, with its reason) and the
others run. A good entry gives the `Turn` to run and the reply stream its caller
named (`ReplyTo`, with the limits it asked for).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pygents._agent import Agent
from pygents._turn import Turn
from pygents.redis._lua.mailbox import Keys
from pygents.redis._mailbox_types import bounded

__all__ = [
    "DeadEntry",
    "Malformed",
    "ReplyTo",
    "Served",
    "caller_of",
    "decode_entry",
    "parse_entry",
    "reply_to",
]

_ESCAPED: Final = 65_536  # characters kept of a field that is not UTF-8, escaped
_LIMIT: Final = 2**48  # above any sane reply bound, below what Redis refuses


class ReplyTo(str):
    """A reply stream's key, with the ``reply_maxlen`` and ``reply_ttl`` (ms) its
    producer asked for in the envelope (``None``: the worker's own, as for envelopes
    that predate them). A ``str``, so that every place that passes a reply key along
    is unchanged; only the writer reads the limits."""

    maxlen: int | None
    ttl_ms: int | None

    def __new__(cls, key: str, maxlen: int | None = None, ttl_ms: int | None = None) -> ReplyTo:
        self = super().__new__(cls, key)
        self.maxlen = maxlen
        self.ttl_ms = ttl_ms
        return self


def reply_to(envelope: dict[str, Any]) -> ReplyTo | None:
    """The reply stream of an envelope and its limits; a limit that is not a positive
    integer in range is ignored (the worker's own applies), never an error."""
    reply = envelope.get("reply")
    if not isinstance(reply, str) or not reply:
        return None
    maxlen, ttl_ms = envelope.get("reply_maxlen"), envelope.get("reply_ttl_ms")
    key = (reply, type(maxlen), maxlen, type(ttl_ms), ttl_ms)  # True is not 1 here
    try:
        return _REPLIES[key]
    except (KeyError, TypeError):  # new, or a limit that is not hashable (garbage)
        found = ReplyTo(reply, _limit(maxlen), _limit(ttl_ms))
    if len(_REPLIES) >= _REPLIES_KEPT:
        _REPLIES.clear()  # a new producer now and then: start over, rarely
    try:
        _REPLIES[key] = found
    except TypeError:
        pass
    return found


# Every turn of one producer names the same reply stream and limits: one `ReplyTo`
# serves them all (a str subclass with attributes is costly to build per turn).
_REPLIES: dict[tuple[str, type, object, type, object], ReplyTo] = {}
_REPLIES_KEPT: Final = 1024


def _limit(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= _LIMIT:
        return value
    return None


class Malformed(Exception):
    """A mailbox entry that cannot be run; goes to the dead-letter stream as is."""

    def __init__(self, reason: str, turn_uuid: str = "", reply: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.turn_uuid = turn_uuid
        self.reply = reply


@dataclass(frozen=True, slots=True)
class Served:
    """One agent a worker serves."""

    agent: Agent
    keys: Keys
    tool_names: frozenset[str]
    # The agent's name, kept: a worker looks it up several times per turn, and the
    # agent's property costs a call each time.
    name: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.agent.name)


@dataclass(frozen=True, slots=True)
class DeadEntry:
    """A delivery that will not run, on its way to the dead-letter stream: all the
    worker knows of it, handed from the reader to the writer as one value."""

    served: Served
    message_id: str
    fields: dict[str, str]
    reason: str
    deliveries: int
    error: str = ""  # the error the last delivery left, if any
    bad: Malformed | None = None  # the parser's refusal, which knows the caller

    def caller(self) -> tuple[str, str | None]:
        """The turn uuid (or ``""``) and reply stream (a `ReplyTo` when the envelope
        could be read), to tell the caller if known."""
        if self.bad is not None:
            return self.bad.turn_uuid, self.bad.reply
        turn_uuid, reply = caller_of(self.fields)
        # On a cluster, a reply stream outside the mailbox's slot cannot be told.
        return turn_uuid, reply if reply is None or self.served.keys.holds(reply) else None


def decode_entry(fields: Mapping[bytes, bytes] | None) -> tuple[dict[str, str], str | None]:
    """A raw mailbox entry's fields as text, and why it cannot be read if so.

    Workers read entries without decoding (one field that is not UTF-8 would
    otherwise fail the whole read, and every entry read with it), then decode each
    entry here: bytes that are not UTF-8 come back escaped (``\\xff``), readable and
    bounded, for the dead letter, with the reason.
    """
    text: dict[str, str] = {}
    problem: str | None = None
    for name, value in (fields or {}).items():
        try:
            key = name.decode()
        except UnicodeDecodeError:
            key = bounded(name.decode(errors="backslashreplace"), 100)
            problem = problem or f"not UTF-8: the name of field {key!r}"
        try:
            text[key] = value.decode()
        except UnicodeDecodeError as exc:
            escaped = value.decode(errors="backslashreplace")
            text[key] = bounded(escaped, _ESCAPED)
            problem = problem or f"not UTF-8: field {key!r}, byte {exc.start}"
    return text, problem


def _envelope(raw: str) -> dict[str, Any]:
    """The JSON envelope of an entry; `Malformed` if it is not one."""
    try:
        envelope = json.loads(raw)
    except ValueError as exc:
        raise Malformed(f"not JSON: {bounded(str(exc))}") from None
    except RecursionError:
        raise Malformed("not JSON: nested too deeply to parse") from None
    if not isinstance(envelope, dict) or not isinstance(envelope.get("turn"), dict):
        raise Malformed("wrong shape: expected {'reply': ..., 'turn': Turn.to_dict()}")
    return envelope


def caller_of(fields: Mapping[str, str]) -> tuple[str, ReplyTo | None]:
    """The turn uuid (or ``""``) and reply stream of an entry, as far as they can be
    read; never raises (a dead letter tells the caller when it can)."""
    try:
        envelope = _envelope(fields.get("turn", ""))
    except Malformed:
        return "", None
    return _caller(envelope)


def _caller(envelope: dict[str, Any]) -> tuple[str, ReplyTo | None]:
    found = envelope["turn"].get("uuid")
    return (found if isinstance(found, str) else ""), reply_to(envelope)


def parse_entry(served: Served, fields: dict[str, str]) -> tuple[Turn, ReplyTo | None]:
    """The turn of a mailbox entry and its reply stream; `Malformed` if it
    cannot be run here (not JSON, wrong shape, unknown tool, not this agent's tool)."""
    raw = fields.get("turn")
    if raw is None:
        raise Malformed("the entry has no 'turn' field; put turns with Mailboxes.put()")
    envelope = _envelope(raw)
    data: dict[str, Any] = envelope["turn"]
    turn_uuid, reply = _caller(envelope)
    if reply is not None and not served.keys.holds(reply):
        raise Malformed(
            f"the reply stream {bounded(reply)!r} is in another hash slot than the mailbox "
            f"{bounded(served.keys.mailbox)!r} on this Redis Cluster: its outcome could not be "
            "recorded with the turn; put turns with Mailboxes.put()",
            turn_uuid,
        )
    tool_name = data.get("tool_name")
    if isinstance(tool_name, str) and tool_name not in served.tool_names:
        raise Malformed(
            f"unknown tool: agent {bounded(served.name)!r} in this worker has no tool "
            f"{bounded(tool_name)!r} (its tools: {', '.join(sorted(served.tool_names))})",
            turn_uuid,
            reply,
        )
    try:
        turn = Turn.from_dict(data)
    except Exception as exc:
        raise Malformed(
            f"wrong shape: {type(exc).__name__}: {bounded(str(exc), 500)}", turn_uuid, reply
        ) from None
    return turn, reply
