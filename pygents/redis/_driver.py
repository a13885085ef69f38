"""The worker's turn driver: running one delivered turn as its agent.

(Named for its role next to ``Agent.run()``, the other driver of turns; the worker's
statistics are published by `_stats`, a different thing.)

A worker runs many turns of an agent at once, so it does not use the agent's own
queue and ``run()`` loop (one turn at a time). Each delivered turn runs in its own
agent-run scope — what subscribers see as one ``invoke_agent`` per delivery — with
the agent's context published for injection, its turn hooks applied as ``run()``
applies them, and its agent hooks fired where ``run()`` fires them. Values are routed as ``run()``
routes them, except that a ``Turn`` goes to the agent's *mailbox* (durable, shared by
the replicas) and everything else goes back to the caller instead of being yielded.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pygents._agent import Agent
from pygents._agent_run import AgentRun, verdict
from pygents._context import ContextItem
from pygents._enums import AgentHook, StopReason, ToolType
from pygents._hooks import dispatch, fire
from pygents._observe import BUS
from pygents._scope import AGENT_RUN_SCOPE, stop_reason_for
from pygents._turn import Turn
from pygents._turn_run import Runner, TurnRun
from pygents.redis._mailbox_lua import Keys
from pygents.redis._mailbox_types import bounded, outcome_data

__all__ = [
    "Malformed",
    "ReplyTo",
    "Served",
    "Sink",
    "caller_of",
    "decode_entry",
    "parse_entry",
    "reply_to",
    "run_as",
]

_ERROR_TEXT: Final = 1000
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
    return ReplyTo(
        reply, _limit(envelope.get("reply_maxlen")), _limit(envelope.get("reply_ttl_ms"))
    )


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

    @property
    def name(self) -> str:
        return self.agent.name


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
            record = json.dumps([self.turn_uuid, "v", index, self.attempt, value], allow_nan=False)
        except (TypeError, ValueError):
            raise TypeError(
                f"value #{index} of turn {self.turn_uuid} is a {type(value).__name__}, which "
                "JSON cannot carry back to the caller; yield JSON-ready values (str, int, "
                "float, bool, None, list, dict)"
            ) from None
        self.values += 1  # counted once it can reach the caller
        await self.emit(self.reply, record)

    def outcome_record(self, outcome: dict[str, Any]) -> str:
        """The outcome as a reply record; an output JSON cannot carry becomes an error."""
        try:
            return json.dumps([self.turn_uuid, "o", 0, self.attempt, outcome], allow_nan=False)
        except (TypeError, ValueError):
            output = outcome["output"]
            failed = dict(
                outcome,
                output=None,
                stop_reason=StopReason.ERROR.value,
                error_type="TypeError",
                error=f"the turn returned a {type(output).__name__}, which JSON cannot carry "
                "back to the caller; return JSON-ready values",
            )
            return json.dumps([self.turn_uuid, "o", 0, self.attempt, failed])


_ROUTED: Final = (Turn, ContextItem)


async def run_as(
    agent: Agent,
    turn: Turn,
    sink: Sink,
    route_turn: Callable[[Turn], Awaitable[None]],
    worker: str,
    runner: Runner,
) -> dict[str, Any]:
    """Run ``turn`` as ``agent`` would, sending values to ``sink``; its outcome data.

    Drives the turn's [`TurnRun`][pygents._turn_run.TurnRun] as ``Agent.run()`` does
    (the agent's turn hooks added, the lane's ``runner`` lent), in an
    [`AgentRun`][pygents._agent_run.AgentRun] of its own that never takes the agent:
    many deliveries of one agent run at once. Exceptions of the turn become its
    outcome; cancellation (the worker stopping) propagates, leaving the delivery
    unfinished.
    """
    run = AgentRun(agent, None)
    if observers := BUS.scopers_by_kind[AGENT_RUN_SCOPE]:
        BUS.start(run, observers)
    hooks = agent._hooks
    tool = turn._tool
    output: Any = None
    error: BaseException | None = None
    try:
        if (hooks or BUS.hot) and (pending := _hot(AgentHook.BEFORE_TURN, agent, (agent,), run)):
            await pending
        turn_run = turn._open(run, tool.streaming, agent._turn_hooks, runner)
        try:
            if tool.streaming:
                await _stream(agent, turn_run, run, sink, route_turn)
            else:
                value = await turn_run.call()
                check = tool.type is ToolType.COMPLETION_CHECK
                if check:
                    verdict(tool, value)
                if not turn_run.finish_quietly(value):
                    await turn_run.finish(None, value)
                if check:
                    output = value  # the caller's answer; a verdict is not a value
                elif isinstance(value, _ROUTED):
                    await _route(agent, value, route_turn, run)
                    if hooks or BUS.hot:
                        await _value_event(agent, turn, value, run)
                else:
                    output = value
                    if hooks or BUS.hot:
                        await _value_event(agent, turn, value, run)
        except BaseException as exc:
            if turn._run is turn_run:
                await turn_run.finish(exc)
            raise
        if (hooks or BUS.hot) and (
            pending := _hot(AgentHook.AFTER_TURN, agent, (agent, turn), run)
        ):
            await pending
    except Exception as exc:
        error = exc
        if hooks or BUS.any:
            error = await _turn_failed(agent, turn, exc, run)
    except BaseException as exc:
        error = exc
        raise
    finally:
        run.error = error
        run.stop_reason = stop_reason_for(error)
        if run._observers:
            BUS.end(run)
    if error is None:
        reason = StopReason.COMPLETED
    elif turn.stop_reason is StopReason.TIMEOUT and error is turn.error:
        reason = StopReason.TIMEOUT
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


async def _stream(
    agent: Agent,
    turn_run: TurnRun,
    run: AgentRun,
    sink: Sink,
    route_turn: Callable[[Turn], Awaitable[None]],
) -> None:
    """A streaming turn, step by step, in the bracket ``TurnRun`` asks of its drivers;
    ``ON_TURN_VALUE`` fires for every value, after a routed one is routed."""
    turn = turn_run.target
    await turn_run.start_stream()
    turn_run.resume()
    try:
        async for value in turn_run.agen:
            if turn_run.step_done(value):
                await turn_run.value_hooks(value)
            if isinstance(value, _ROUTED):
                await _route(agent, value, route_turn, run)
                if agent._hooks or BUS.hot:
                    await _value_event(agent, turn, value, run)
            else:
                if agent._hooks or BUS.hot:
                    await _value_event(agent, turn, value, run)
                await sink.value(value)
            turn_run.resume()
        turn_run.step_failed(None)
    except BaseException as exc:
        turn_run.step_failed(exc)
        raise
    await turn_run.finish(None)


def _hot(event: AgentHook, agent: Agent, args: tuple[Any, ...], run: AgentRun) -> Any:
    """A per-turn agent event as ``run()`` dispatches it: subscribers are told now, and
    the agent's hooks come back to await only when one is bound (else ``None``)."""
    return dispatch(event, agent, agent._hooks, args, None, run)


async def _value_event(agent: Agent, turn: Turn, value: Any, run: AgentRun) -> None:
    if pending := _hot(AgentHook.ON_TURN_VALUE, agent, (agent, turn, value), run):
        await pending


async def _route(
    agent: Agent, value: Any, route_turn: Callable[[Turn], Awaitable[None]], run: AgentRun
) -> None:
    """A routed value: a turn to the agent's mailbox, context to the agent's memory."""
    entered = BUS.enter(run)
    try:
        if isinstance(value, Turn):
            await route_turn(value)
        elif value.id is None:
            await agent._context_queue.append(value)
        else:
            await agent._context_pool.add(value)
    finally:
        BUS.exit(run, entered)


async def _turn_failed(agent: Agent, turn: Turn, exc: Exception, run: AgentRun) -> Exception:
    """The agent's failure hooks; an exception one of them raises replaces ``exc``."""
    try:
        if turn.stop_reason is StopReason.TIMEOUT:
            await fire(AgentHook.ON_TURN_TIMEOUT, agent, agent._hooks, (agent, turn), None, run)
        else:
            await fire(AgentHook.ON_TURN_ERROR, agent, agent._hooks, (agent, turn, exc), None, run)
    except Exception as hook_error:
        return hook_error
    return exc
