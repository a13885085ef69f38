"""The worker's turn driver: running one delivered turn as its agent.

(Named for its role next to ``Agent.run()``, the other driver of turns; the worker's
statistics are published by `_stats`, a different thing.)

A worker runs many turns of an agent at once, so it does not use the agent's own
queue and ``run()`` loop (one turn at a time). Each delivered turn runs in an agent
run of its own — what subscribers see as one ``invoke_agent`` per delivery — with
the agent's context published for injection. Every step of the turn's life is the
runtime's (`pygents._lifecycle`, which ``run()`` calls too): the same hooks in the
same order, the same routing, the same failure handling. Only the destinations
differ: a routed ``Turn`` goes to the agent's *mailbox* (durable, shared by the
replicas), and a plain value goes back to the caller instead of being yielded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

from pygents._agent import Agent
from pygents._agent_run import AgentRun
from pygents._enums import COMPLETED, COMPLETION_CHECK, TIMED_OUT
from pygents._lifecycle import (
    ROUTED,
    PutTurn,
    after_turn,
    before_turn,
    fail_turn,
    open_turn,
    route,
    value_event,
    verdict,
)
from pygents._scope import stop_reason_for
from pygents._turn import Turn
from pygents._turn_run import Runner, TurnRun
from pygents.redis._mailbox_types import bounded, outcome_data, outcome_record, reply_record

__all__ = ["Sink", "run_as"]

_ERROR_TEXT: Final = 1000


class Sink:
    """Where a running turn's values and outcome go (the worker's batched writer)."""

    __slots__ = ("attempt", "emit", "reply", "turn_uuid", "values")

    def __init__(
        self,
        turn_uuid: str,
        reply: str | None,
        attempt: int,
        emit: Callable[[str, str], Awaitable[None]],
    ) -> None:
        self.turn_uuid = turn_uuid
        self.reply = reply
        self.attempt = attempt
        self.emit = emit
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
        self.values += 1  # counted once it can reach the caller
        await self.emit(self.reply, record)

    def outcome_record(self, outcome: dict[str, Any]) -> str:
        """The outcome as a reply record (see `outcome_record`)."""
        return outcome_record(self.turn_uuid, self.attempt, outcome)


async def run_as(
    agent: Agent,
    turn: Turn,
    sink: Sink,
    route_turn: PutTurn,
    worker: str,
    runner: Runner,
) -> dict[str, Any]:
    """Run ``turn`` as ``agent`` would, sending values to ``sink``; its outcome data.

    Drives the turn as ``Agent.run()`` does, through the same steps (the lane's
    ``runner`` lent), in an [`AgentRun`][pygents._agent_run.AgentRun] of its own
    that never takes the agent: many deliveries of one agent run at once. Exceptions
    of the turn, and of its hooks, become its outcome; cancellation (the worker
    stopping) propagates, leaving the delivery unfinished.
    """
    run = AgentRun.detached(agent)
    tool = turn.tool
    output: Any = None
    error: BaseException | None = None
    try:
        if pending := before_turn(run):
            await pending
        turn_run = open_turn(run, turn, runner)
        try:
            if tool.streaming:
                await _stream(run, turn_run, sink, route_turn)
            else:
                value = await turn_run.call()
                check = tool.type is COMPLETION_CHECK
                if check:
                    verdict(tool, value)
                if not turn_run.finish_quietly(value):
                    await turn_run.finish(None, value)
                if check:
                    output = value  # the caller's answer; a verdict is not a value
                elif isinstance(value, ROUTED):
                    await route(run, turn, value, route_turn)
                else:
                    if pending := value_event(run, turn, value):
                        await pending
                    output = value
        except BaseException as exc:
            await fail_turn(run, turn, turn_run, exc)
            raise
        if pending := after_turn(run, turn):
            await pending
    except Exception as exc:
        error = exc
    except BaseException as exc:
        error = exc
        raise
    finally:
        run.end(error)
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
        tool.streaming,
    )


async def _stream(run: AgentRun, turn_run: TurnRun, sink: Sink, route_turn: PutTurn) -> None:
    """A streaming turn, step by step, in the bracket ``TurnRun`` asks of its drivers
    (as ``run()`` drives it); a plain value goes to the sink once its hooks saw it."""
    turn = turn_run.target
    await turn_run.start_stream()
    turn_run.resume()
    try:
        async for value in turn_run.agen:
            if turn_run.step_done(value):
                await turn_run.value_hooks(value)
            if isinstance(value, ROUTED):
                await route(run, turn, value, route_turn)
            else:
                if pending := value_event(run, turn, value):
                    await pending
                await sink.value(value)
            turn_run.resume()
        turn_run.step_failed(None)
    except BaseException as exc:
        turn_run.step_failed(exc)
        raise
    await turn_run.finish(None)
