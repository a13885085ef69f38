"""The values and errors of ``pygents.redis``: outcomes, statistics, dead letters.

Standard library only, so that they can be documented, compared and pickled without
a Redis client in sight.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pygents._enums import CANCELLED, FAILED, StopReason
from pygents._errors import PygentsError, cut

if TYPE_CHECKING:
    from pygents.redis._producer.handle import TurnHandle

__all__ = [
    "CANCEL_MESSAGE",
    "COMPACT",
    "DELIVERY",
    "ConsumerStats",
    "DeadLetter",
    "Delivery",
    "MailboxClosedError",
    "MailboxError",
    "MailboxFullError",
    "MailboxNotFoundError",
    "MailboxStats",
    "MailboxUnavailableError",
    "NotReplicatedError",
    "Outcome",
    "RedisFullError",
    "RemoteTurnError",
    "RepliesLostError",
    "TurnLostError",
    "TurnRerunError",
    "bounded",
    "cancelled_outcome",
    "current_delivery",
    "failed_outcome",
    "outcome_data",
    "outcome_record",
    "reply_record",
    "unique_name",
]

_LIMIT: Final = 200

COMPACT: Final = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
"""JSON text as envelopes and reply records are written: compact, refusing NaN and
infinities (``ValueError``: JSON has neither). One encoder, made once: ``json.dumps``
with any option builds a new encoder at every call, which a turn would pay twice."""
_REASONS: Final = {reason.value: reason for reason in StopReason}


def bounded(value: object, limit: int = _LIMIT) -> str:
    """``repr``-free, length-bounded text for messages (user values are data): a
    string cut by the core's one rule (`pygents._errors.cut`), anything else named
    by its type."""
    return cut(value if isinstance(value, str) else type(value).__name__, limit)


def unique_name() -> str:
    """Host, process id and a random suffix: a name no other process uses."""
    return f"{os.uname().nodename[:40]}-{os.getpid()}-{os.urandom(3).hex()}"


class MailboxError(PygentsError):
    """Base class of the errors of ``pygents.redis``."""


class MailboxFullError(MailboxError):
    """The mailbox already holds as many unfinished turns as its ``maxlen`` allows."""


class RedisFullError(MailboxFullError):
    """Redis refused the turn for want of memory: it reached its ``maxmemory`` and its
    eviction policy frees nothing (``noeviction``). Workers keep draining it: wait
    and retry, as for a full mailbox, or give Redis more memory."""


class MailboxNotFoundError(MailboxError, LookupError):
    """A control action named a mailbox, dead letter or worker that this Redis does
    not have (a typo, or it is gone already): nothing was changed."""


class MailboxUnavailableError(MailboxError, ConnectionError):
    """Redis could not be reached (down, wrong URL, network)."""


class NotReplicatedError(MailboxError):
    """The turns ARE in the mailbox, but fewer replicas than ``Mailboxes(replicas=...)``
    confirmed them within ``replica_timeout``: a failover before the replicas catch up
    could lose them.

    They were not taken back, since Redis cannot take a write back: they will run
    unless that happens, and ``handles`` follow their results as usual. Putting them
    again would run them twice if they survive; when in doubt, put the same `Turn`
    again only if its tool is idempotent on the turn's uuid (``current_delivery()``).
    ``confirmed`` says how many replicas did confirm them.
    """

    def __init__(
        self, message: str, handles: Sequence[TurnHandle] = (), confirmed: int = 0
    ) -> None:
        super().__init__(message)  # args: the message alone, as pickle and copy expect
        self.handles = list(handles)
        self.confirmed = confirmed


class RemoteTurnError(MailboxError):
    """A turn run by a worker did not complete: it failed, timed out, was cancelled,
    or was dead-lettered. ``outcome`` says which, with the worker's error."""

    def __init__(self, message: str, outcome: Outcome) -> None:
        super().__init__(message)
        self.outcome = outcome

    def __reduce__(self) -> tuple[type[RemoteTurnError], tuple[str, Outcome]]:
        # pickle and copy rebuild an exception from its args, which hold the message only
        return type(self), (str(self), self.outcome)


class RepliesLostError(MailboxError):
    """Results were trimmed from the reply stream before they were read: streamed
    values, or the outcome itself (the stream is bounded by ``reply_maxlen``)."""


class TurnLostError(MailboxError):
    """The turn is gone from Redis without an outcome: not queued, not running, and
    nothing on the reply stream (Redis restarted without persistence, or its keys were
    deleted, evicted or expired). No outcome will ever come."""


class TurnRerunError(MailboxError):
    """A streaming turn was run again (its worker stopped mid-stream) after some values
    of the earlier run were already yielded: the stream cannot go on without mixing
    two runs. ``await handle.result()`` gives the values of the run that finished."""


class MailboxClosedError(MailboxError):
    """The `Mailboxes` was closed before the outcome of a turn arrived."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a turn put on a mailbox ended, as the worker that ran it recorded it.

    Attributes:
        turn_uuid: the turn's uuid (its idempotency key).
        agent: the agent whose mailbox it was put on.
        stop_reason: ``COMPLETED``, ``ERROR``, ``TIMEOUT`` or ``CANCELLED``; ``None``
            when the turn was dead-lettered without an outcome of its own.
        output: a coroutine tool's return value (``None`` for streaming tools, whose
            values arrive one by one, and for routed values).
        error_type: the exception's class name, when the turn did not complete.
        error: the exception's message (bounded), or the dead-letter reason.
        values: how many values a streaming tool produced.
        deliveries: how many times the turn was delivered to a worker.
        worker: the consumer name of the worker that recorded this outcome.
        dead_letter: the turn went to the dead-letter stream instead of running.
        streaming: the tool streams values (``TurnHandle.result()`` returns them).
    """

    turn_uuid: str
    agent: str
    stop_reason: StopReason | None
    output: Any = None
    error_type: str | None = None
    error: str | None = None
    values: int = 0
    deliveries: int = 1
    worker: str = ""
    dead_letter: bool = False
    streaming: bool = False

    @property
    def ok(self) -> bool:
        """The turn completed."""
        return self.stop_reason is StopReason.COMPLETED

    def to_dict(self) -> dict[str, Any]:
        """The JSON form that travels on the reply stream (built by `outcome_data`)."""
        return outcome_data(
            self.turn_uuid,
            self.agent,
            self.stop_reason,
            self.output,
            self.error_type,
            self.error,
            self.values,
            self.deliveries,
            self.worker,
            self.streaming,
            self.dead_letter,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        """Read the form [`to_dict`][pygents.redis.Outcome.to_dict] writes
        (``ValueError`` for an unknown stop reason)."""
        reason = data.get("stop_reason")
        return cls(
            str(data.get("turn_uuid", "")),
            str(data.get("agent", "")),
            None if reason is None else _REASONS.get(reason) or StopReason(reason),
            data.get("output"),
            data.get("error_type"),
            data.get("error"),
            int(data.get("values", 0)),
            int(data.get("deliveries", 1)),
            str(data.get("worker", "")),
            bool(data.get("dead_letter", False)),
            bool(data.get("streaming", False)),
        )

    def failure(self) -> RemoteTurnError:
        """The error that ``TurnHandle.result()`` raises for this outcome."""
        if self.dead_letter:
            how = f"was dead-lettered: {self.error}"
        else:
            reason = self.stop_reason.value if self.stop_reason else "no outcome"
            how = f"ended with {reason}: {self.error_type}: {self.error}"
        return RemoteTurnError(
            f"turn {self.turn_uuid} on agent {bounded(self.agent)!r} {how} "
            f"(worker {bounded(self.worker) or '?'}, delivery {self.deliveries})",
            self,
        )


def outcome_data(
    turn_uuid: str,
    agent: str,
    stop_reason: StopReason | None,
    output: Any,
    error_type: str | None,
    error: str | None,
    values: int,
    deliveries: int,
    worker: str,
    streaming: bool,
    dead_letter: bool = False,
) -> dict[str, Any]:
    """An outcome as JSON-ready data: what workers write and `Outcome` reads
    (built directly by workers, without an `Outcome` per turn)."""
    return {
        "turn_uuid": turn_uuid,
        "agent": agent,
        "stop_reason": None if stop_reason is None else stop_reason.value,
        "output": output,
        "error_type": error_type,
        "error": error,
        "values": values,
        "deliveries": deliveries,
        "worker": worker,
        "dead_letter": dead_letter,
        "streaming": streaming,
    }


CANCEL_MESSAGE: Final = "cancelled through Mailboxes.cancel()"


def cancelled_outcome(
    turn_uuid: str,
    agent: str,
    *,
    values: int = 0,
    deliveries: int = 0,
    worker: str = "",
    streaming: bool = False,
) -> dict[str, Any]:
    """The ``CANCELLED`` outcome of a turn cancelled through ``Mailboxes.cancel``: the
    one a worker records for a delivery it held, and the one the producer writes for a
    turn it removed before any worker took it (no values, delivery 0, no worker)."""
    return outcome_data(
        turn_uuid,
        agent,
        CANCELLED,
        None,
        "CancelledError",
        CANCEL_MESSAGE,
        values,
        deliveries,
        worker,
        streaming,
    )


def reply_record(turn_uuid: str, kind: str, index: int, attempt: int, data: Any) -> str:
    """One record of a reply stream, ``[uuid, "v" | "o", index, delivery, data]`` as
    `Replies` reads it: the one encoder of every writer (a worker's values and
    outcomes, its dead letters, the producer's own cancellations). ``TypeError`` or
    ``ValueError`` if JSON cannot carry ``data``.

    A reply stream's entry holds a JSON list of such records in its ``r`` field (the
    scripts join a batch's records with commas, see ``_lua.mailbox``)."""
    return COMPACT([turn_uuid, kind, index, attempt, data])


def outcome_record(turn_uuid: str, attempt: int, outcome: dict[str, Any]) -> str:
    """An outcome (`outcome_data`) as a reply record; an output JSON cannot carry
    becomes the error it is for the caller, so that an outcome always reaches it."""
    try:
        return reply_record(turn_uuid, "o", 0, attempt, outcome)
    except (TypeError, ValueError):
        output = outcome["output"]
        failed = failed_outcome(
            outcome,
            "TypeError",
            f"the turn returned a {type(output).__name__}, which JSON cannot carry "
            "back to the caller; return JSON-ready values",
        )
        return reply_record(turn_uuid, "o", 0, attempt, failed)


def failed_outcome(outcome: dict[str, Any], error_type: str, error: str) -> dict[str, Any]:
    """``outcome`` (`outcome_data`) as the failure it becomes when its output cannot
    reach the caller: not JSON (above), or more than Redis takes (the worker's
    ``_worker.result_limit``). The output is dropped; the rest is kept."""
    return dict(outcome, output=None, stop_reason=FAILED.value, error_type=error_type, error=error)


@dataclass(frozen=True, slots=True)
class ConsumerStats:
    """One consumer (worker process) of a mailbox's consumer group."""

    name: str
    pending: int  # turns delivered to it and not acknowledged yet
    idle: float  # seconds since it last read or claimed
    live: bool  # it heartbeats: a running worker, not a leftover of a dead one


@dataclass(frozen=True, slots=True)
class MailboxStats:
    """What a dashboard shows for one agent's mailbox."""

    agent: str
    depth: int  # turns not finished yet: waiting plus delivered-and-running
    pending: int  # delivered to a worker and not acknowledged yet
    dead_letters: int  # entries in the dead-letter stream
    workers: int  # live workers serving the agent
    consumers: tuple[ConsumerStats, ...] = ()

    @property
    def waiting(self) -> int:
        """Turns no worker has taken yet."""
        return max(0, self.depth - self.pending)


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """One entry of an agent's dead-letter stream."""

    id: str  # the dead-letter entry's stream id
    agent: str
    message_id: str  # the id the turn had in the mailbox
    reason: str
    error: str
    deliveries: int
    worker: str
    payload: str  # the mailbox entry exactly as it was put (replayable)


@dataclass(frozen=True, slots=True)
class Delivery:
    """The delivery of the turn a worker is running, for the tool that runs in it.

    ``turn_uuid`` is the idempotency key: a turn can be delivered more than once (its
    worker died before recording the outcome), and ``attempt`` counts deliveries.
    """

    agent: str
    turn_uuid: str
    message_id: str
    attempt: int
    worker: str


DELIVERY: Final[ContextVar[Delivery | None]] = ContextVar("pygents_delivery", default=None)


def current_delivery() -> Delivery | None:
    """The delivery being run in this task by a ``pygents.redis`` worker, if any."""
    return DELIVERY.get()
