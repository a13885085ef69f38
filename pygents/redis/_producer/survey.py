"""The survey: everything a dashboard shows of the mailboxes, in one round trip.

[`Mailboxes.survey`][pygents.redis.Mailboxes.survey] sends one pipeline: the read-only
script ``SURVEY`` (`pygents.redis._lua.control`) once per mailbox, with ``EVALSHA_RO``
(a read-only ACL user may run it). The script decodes the entries on the server, so
that only bounded previews cross the network, and reports what it cannot read —
a key of the wrong type, an entry that is not a turn — as counted ``malformed`` rows
instead of failing. The result is plain frozen dataclasses, bounded by ``rows`` per
list; a mailbox's counts are a [`MailboxStats`][pygents.redis.MailboxStats], the same
value ``Mailboxes.stats`` and ``served_stats`` give.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from redis.client import NEVER_DECODE
from redis.exceptions import NoScriptError

from pygents._errors import cut
from pygents.redis._lua.control import SURVEY
from pygents.redis._lua.mailbox import GROUP
from pygents.redis._mailbox_types import ConsumerStats, MailboxStats

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from pygents.redis._lua.mailbox import Keys

__all__ = [
    "DeadLetterRow",
    "MailboxSurvey",
    "PendingTurn",
    "QueuedTurn",
    "Survey",
    "WorkerRow",
    "agent_names",
    "read_one",
    "surveyed",
]

PREVIEW: Final = 200  # characters of an argument preview or an error
MAX_AGENTS: Final = 1000  # mailboxes surveyed at most when none are named
_NAME: Final = re.compile(r"(?P<host>.+)-(?P<pid>\d+)-[0-9a-f]{6}")  # see unique_name
_IDENTITY: Final = 256  # characters kept of a service name or instance id, as a listener keeps


@dataclass(frozen=True, slots=True)
class PendingTurn:
    """A turn delivered to a worker and not finished yet."""

    message_id: str
    consumer: str  # the worker holding it
    turn_uuid: str  # "" when the entry is not a readable turn
    tool: str
    idle: float  # seconds since it was delivered or last heartbeated
    deliveries: int


@dataclass(frozen=True, slots=True)
class QueuedTurn:
    """A turn no worker has taken yet, in the order workers will take them."""

    position: int  # 1: the next one taken
    message_id: str
    turn_uuid: str
    tool: str
    timeout: float | None
    arguments: str  # a preview of the arguments (JSON), cut


@dataclass(frozen=True, slots=True)
class DeadLetterRow:
    """A dead letter, as listed (`Mailboxes.dead_letters` has the full entry)."""

    id: str  # what ``retry_dead_letter`` and ``drop_dead_letter`` take
    turn_uuid: str
    tool: str
    error: str
    reason: str
    age: float  # seconds since it was dead-lettered
    deliveries: int


@dataclass(frozen=True, slots=True)
class WorkerRow:
    """A live worker of a mailbox, from its heartbeat."""

    name: str
    host: str | None  # read from a default worker name (host-pid-suffix), if it is one
    pid: int | None
    expires_in: float  # seconds until its heartbeat lapses (it renews it on time)
    draining: bool  # draining, as asked: finishing its turns, then leaving
    paused: bool  # it applies the mailbox's pause (takes none of its turns)
    # Who it is in its telemetry (``service.name``, ``service.instance.id``), as it
    # says beside its heartbeat when ``pygents_otel`` instruments its process; ``None``
    # otherwise. What tells a dashboard that the agents it hears from that process
    # over OTLP are this worker's (see `pygents.redis._worker.watch`).
    service: str | None = None
    instance: str | None = None


@dataclass(frozen=True, slots=True)
class MailboxSurvey:
    """One mailbox as a dashboard shows it; each list holds ``rows`` at most."""

    stats: MailboxStats
    paused: bool
    workers: tuple[WorkerRow, ...]
    pending: tuple[PendingTurn, ...]
    queued: tuple[QueuedTurn, ...]
    dead_letters: tuple[DeadLetterRow, ...]  # newest first
    malformed: int  # entries or keys that could not be read (see ``problems``)
    problems: tuple[str, ...] = ()  # keys of the wrong type, said in words

    @property
    def agent(self) -> str:
        return self.stats.agent


@dataclass(frozen=True, slots=True)
class Survey:
    """Every surveyed mailbox, read in one round trip at ``time`` (Redis's clock, s)."""

    time: float
    mailboxes: tuple[MailboxSurvey, ...]
    truncated: bool = False  # more mailboxes exist than were surveyed

    def __getitem__(self, agent: str) -> MailboxSurvey:
        for found in self.mailboxes:
            if found.agent == agent:
                return found
        raise KeyError(agent)


_SHA: Final = hashlib.sha1(SURVEY.encode()).hexdigest()


async def surveyed(client: Redis, keys: Sequence[Keys], rows: int) -> list[Any]:
    """The ``SURVEY`` script's replies for ``keys``: one pipeline of ``EVALSHA_RO``;
    scripts missing from Redis's cache (first call, or after a restart) are sent whole
    once with ``EVAL_RO``, which caches them (no ``SCRIPT LOAD``: a read-only user may
    lack it)."""
    found: list[Any] = []
    for attempt in ("EVALSHA_RO", "EVAL_RO"):
        body = _SHA if attempt == "EVALSHA_RO" else SURVEY
        pipe = client.pipeline(transaction=False)
        for k in keys:
            pipe.execute_command(
                attempt, body, 4, k.mailbox, k.dead, k.workers, k.control,
                GROUP, rows, PREVIEW + 1, **{NEVER_DECODE: True},
            )  # fmt: skip
        found = await pipe.execute(raise_on_error=False)
        if not any(isinstance(r, NoScriptError) for r in found):
            break
    return found


async def agent_names(client: Redis, prefix: str) -> list[str]:
    """The agent names of the set ``<prefix>:agents``, sorted, skipping any that is
    not a name (empty, or not UTF-8): anyone may have written to the set."""
    raw: Any = await client.execute_command(  # type: ignore[no-untyped-call]
        "SMEMBERS", f"{prefix}:agents", **{NEVER_DECODE: True}
    )
    names = []
    for name in raw or ():
        try:
            text = name.decode()
        except UnicodeDecodeError:
            continue
        if text:
            names.append(text)
    return sorted(names)


def read_one(agent: str, raw: Any, rows: int) -> tuple[float, MailboxSurvey]:
    """A mailbox's survey from the script's JSON; anything unexpected counts as
    malformed (the script's output is built from keys anyone may have written)."""
    try:
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else None
        data = json.loads(text) if text is not None else None
        if not isinstance(data, dict):
            raise TypeError(type(raw).__name__)
        return _parsed(agent, data, rows)
    except Exception as exc:  # a failed script or an unexpected shape, never raised
        problem = cut(f"cannot survey: {type(exc).__name__}: {exc}", PREVIEW)
        stats = MailboxStats(agent, 0, 0, 0, 0)
        return 0.0, MailboxSurvey(stats, False, (), (), (), (), 1, (problem,))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []  # cjson writes {} for an empty list


def _text(value: Any) -> str:
    return cut(value if isinstance(value, str) else "", PREVIEW)


def _identity(value: Any) -> tuple[str | None, str | None]:
    """A worker's ``identity:`` field: ``[service, instance]`` as JSON; anything else
    (anyone may write the hash) is no identity."""
    if not isinstance(value, str) or len(value) > 4 * _IDENTITY:
        return None, None  # not what a worker writes: no need to parse it
    try:
        found = json.loads(value)
    except ValueError:
        return None, None
    if not (isinstance(found, list) and len(found) == 2 and all(found)):
        return None, None
    if not all(isinstance(part, str) for part in found):
        return None, None
    return cut(found[0], _IDENTITY), cut(found[1], _IDENTITY)


def _parsed(agent: str, data: dict[str, Any], rows: int) -> tuple[float, MailboxSurvey]:
    now = int(data["now"])
    flat = _list(data.get("control"))
    control = dict(zip(flat[::2], flat[1::2], strict=False))
    draining = {str(f)[9:] for f in control if str(f).startswith("draining:")}
    pausing = {str(f)[7:] for f in control if str(f).startswith("paused:")}
    said = {str(f)[9:]: _identity(v) for f, v in control.items() if str(f).startswith("identity:")}
    zset = _list(data.get("workers"))
    workers = []
    for name, score in zip(zset[::2], zset[1::2], strict=False):
        match = _NAME.fullmatch(str(name))
        workers.append(
            WorkerRow(
                str(name),
                match["host"] if match else None,
                int(match["pid"]) if match else None,
                max(0.0, (float(score) - now) / 1000),
                str(name) in draining,
                str(name) in pausing,
                *said.get(str(name), (None, None)),
            )
        )
    consumers = tuple(
        ConsumerStats(str(c[0]), int(c[1]), int(c[2]) / 1000, c[3] is True)
        for c in _list(data.get("consumers"))[:rows]
    )
    pending = tuple(
        PendingTurn(str(p[0]), str(p[1]), _text(p[4]), _text(p[5]), int(p[2]) / 1000, int(p[3]))
        for p in _list(data.get("pending"))[:rows]
    )
    queued = tuple(
        QueuedTurn(
            int(q[0]),
            str(q[1]),
            _text(q[2]),
            _text(q[3]),
            float(q[4]) if isinstance(q[4], (int, float)) and not isinstance(q[4], bool) else None,
            _text(q[5]),
        )
        for q in _list(data.get("queued"))[:rows]
    )
    dead = tuple(
        DeadLetterRow(
            str(d[0]),
            _text(d[1]),
            _text(d[2]),
            _text(d[3]),
            _text(d[4]),
            max(0.0, (now - int(str(d[0]).split("-")[0])) / 1000),
            int(d[5]) if str(d[5]).isdigit() else 0,
        )
        for d in _list(data.get("dead_rows"))[:rows]
    )
    stats = MailboxStats(
        agent=agent,
        depth=int(data.get("depth", 0)),
        pending=int(data.get("pending_total", 0)),
        dead_letters=int(data.get("dead", 0)),
        workers=int(data.get("live", 0)),
        consumers=consumers,
    )
    problems = tuple(_text(p) for p in _list(data.get("bad_keys")))
    malformed = int(data.get("malformed", 0)) + len(problems)
    survey = MailboxSurvey(
        stats, bool(control.get("paused")), tuple(workers), pending, queued, dead, malformed,
        problems,
    )  # fmt: skip
    return now / 1000, survey
