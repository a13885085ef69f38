"""The worker's turn driver: running one delivered turn as its agent.

(Named for its role next to ``Agent.run()``, the other driver of turns; the worker's
statistics are published by `_stats`, a different thing.)

A worker runs many turns of an agent at once, so it does not use the agent's own
queue. Each delivered turn runs in an agent run of its own — what subscribers see
as one ``invoke_agent`` per delivery — with the agent's context published for
injection. The turn's life is driven by the runtime's own driver
(`pygents._agent_run.drive`, which ``run()`` is): the same hooks in the same order,
the same routing, the same failure handling, written once. Only the destinations
differ: a routed ``Turn`` goes to the agent's *mailbox* (durable, shared by the
replicas), and a plain value goes back to the caller (`Sink`) instead of being
yielded.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Final

from pygents._agent import Agent
from pygents._agent_run import drive
from pygents._enums import COMPLETED, TIMED_OUT
from pygents._lifecycle import PutTurn
from pygents._scope import stop_reason_for
from pygents._turn import Turn
from pygents._turn_run import Runner
from pygents.redis._mailbox_types import (
    bounded,
    failed_outcome,
    outcome_data,
    outcome_record,
    reply_record,
)

if TYPE_CHECKING:
    from pygents.redis._worker.refusals import ResultLimit

__all__ = ["Sink", "run_as"]

_ERROR_TEXT: Final = 1000


class Sink:
    """Where a running turn's values and outcome go (the worker's batched writer),
    each no larger than ``limit`` (see `pygents.redis._worker.result_limit`)."""

    __slots__ = ("attempt", "emit", "limit", "reply", "turn_uuid", "values")

    def __init__(
        self,
        turn_uuid: str,
        reply: str | None,
        attempt: int,
        emit: Callable[[str, str], Awaitable[None]],
        limit: ResultLimit,
    ) -> None:
        self.turn_uuid = turn_uuid
        self.reply = reply
        self.attempt = attempt
        self.emit = emit
        self.limit = limit
        self.values = 0

    async def value(self, value: Any) -> None:
        index = self.values
        if self.reply is None:
            self.values += 1
            return
        try:
            record = reply_record(self.turn_uuid, "v", index, self.attempt, value)
        except (TypeError, ValueError):
            raise TypeError(
                f"value #{index} of turn {self.turn_uuid} is a {type(value).__name__}, which "
                "JSON cannot carry back to the caller; yield JSON-ready values (str, int, "
                "float, bool, None, list, dict)"
            ) from None
        if len(record) > self.limit.bytes:  # ASCII: its length is its size
            # The turn fails with it (it can catch it), before anything is sent.
            raise ValueError(self.limit.too_large(f"value #{index}", len(record)))
        self.values += 1  # counted once it can reach the caller
        await self.emit(self.reply, record)

    def outcome_record(self, outcome: dict[str, Any]) -> str:
        """The outcome as a reply record (see `outcome_record`); one larger than the
        worker writes becomes the failure that says so (the turn is not run again)."""
        record = outcome_record(self.turn_uuid, self.attempt, outcome)
        if len(record) <= self.limit.bytes:
            return record
        error = self.limit.too_large("the result", len(record))
        failed = failed_outcome(outcome, "ValueError", error)
        return outcome_record(self.turn_uuid, self.attempt, failed)


async def run_as(
    agent: Agent,
    turn: Turn,
    sink: Sink,
    route_turn: PutTurn,
    worker: str,
    runner: Runner,
) -> dict[str, Any]:
    """Run ``turn`` as ``agent`` would, sending values to ``sink``; its outcome data.

    The runtime's own driver (`drive`, what ``Agent.run()`` is) takes the turn
    through its life, with the lane's ``runner`` lent, in an
    [`AgentRun`][pygents._agent_run.AgentRun] of its own that never takes the agent:
    many deliveries of one agent run at once. Exceptions of the turn, and of its
    hooks, become its outcome; cancellation (the worker stopping) propagates, leaving
    the delivery unfinished.
    """
    streaming = turn.tool.streaming
    output: Any = None
    error: BaseException | None = None
    stream = drive(agent, deque((turn,)), route_turn, runner)
    try:
        async with aclosing(stream):
            async for _, value in stream:
                if not streaming:
                    output = value  # the one value (or a completion check's verdict)
                    continue
                try:
                    await sink.value(value)
                except BaseException as exc:
                    # The turn fails with it, as it would had its tool raised it there.
                    await stream.athrow(exc)
    except Exception as exc:
        error = exc
    if error is None:
        reason = COMPLETED
    elif turn.stop_reason is TIMED_OUT and error is turn.error:
        reason = TIMED_OUT
    else:
        reason = stop_reason_for(error)
    return outcome_data(
        turn.uuid,
        agent.name,
        reason,
        output,
        None if error is None else type(error).__qualname__,
        None if error is None else bounded(str(error), _ERROR_TEXT),
        sink.values,
        sink.attempt,
        worker,
        streaming,
    )
