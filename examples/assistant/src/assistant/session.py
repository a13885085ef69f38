"""A session: one assistant holding one conversation, run one message at a time.

:meth:`Session.run` appends the user's message and drives the agent until the model
calls ``stop`` (or answers without calling a tool, or a limit is reached), streaming
:class:`Event`s. Call it again for a follow-up: the conversation goes on.

The agent's queue never holds more than the next turn. ``respond`` hands the model's
reply to the session, which checks each call (known tool, enabled, valid arguments,
within the limits) and queues the calls one at a time as the previous one finishes,
``stop`` last. So whatever ends a run — ``stop``, a limit, an error, a cancelled
task, a consumer that stops reading — nothing stale is left for the next message;
and every call the model made gets exactly one answer in the conversation (a result,
an error, or why it did not run), as chat APIs require before the next message.
"""

from __future__ import annotations

import contextlib
import itertools
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from pygents import Agent, AgentRegistry, ContextItem, Turn, TurnTimeoutError

from .events import Event, Outcome, TokenUsage
from .limits import Budget, Limits
from .model import Message, Model, Reply, TextDelta, ToolCall
from .persona import ASSISTANT, TASK_TOOLS, Persona
from .runtime import Runtime, default_runtime
from .tools import RESPOND_TIMEOUT, Conversation, Toolset, check_arguments, clip, toolset

if TYPE_CHECKING:
    from .tasks import TaskManager

__all__ = ["Session", "build_session", "close_session"]

_ids = itertools.count(1)
_SHOWN: Final = 200  # characters of a tool result in a "tool" event
_ANSWER: Final = 4000  # characters of an error in a tool message


@dataclass
class _Call:
    """One call of the model's reply, checked: a tool and arguments to run, or the error
    to answer it with."""

    call: ToolCall
    error: str | None = None


@dataclass
class _Run:
    """One message's run: the message, its budget, the calls still to run, and how it
    ended."""

    message: str
    budget: Budget
    pending: deque[_Call] = field(default_factory=deque)
    next: Turn | None = None  # the turn to queue once the current one is over
    current: Turn | None = None  # the turn queued or running
    finished: bool = False  # nothing more to run: stop queued, answered, or a limit
    outcome: Outcome | None = None


@dataclass(eq=False)
class Session:
    """One assistant: a persona, a model, a runtime, limits, and one conversation.

    Build it with :func:`build_session`; the agent it runs on is made here and is
    named after the session. ``clock`` measures the wall-time limit (injectable for
    tests). ``background`` is the task manager once delegation is enabled.
    """

    name: str
    model: Model
    runtime: Runtime
    persona: Persona = ASSISTANT
    limits: Limits = field(default_factory=Limits)
    clock: Callable[[], float] = time.monotonic
    summary: str | None = None
    outcome: Outcome | None = None
    background: TaskManager | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    # Names this conversation on every turn's telemetry (``gen_ai.conversation.id``), so
    # a GenAI viewer follows the session across its runs; new for each session object.
    conversation_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    conversation: Conversation = field(init=False)
    agent: Agent = field(init=False)
    _tools: Toolset = field(init=False, repr=False)
    _running: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        self._tools = toolset()
        self.conversation = Conversation(session=self)
        self.agent = self._new_agent()

    def _new_agent(self) -> Agent:
        tools = self._tools
        names = (*self.persona.tools, *(TASK_TOOLS if self.persona.may_delegate else ()), "stop")
        return Agent(
            self.name,
            f"A model-driven assistant ({self.persona.name})",
            [tools.respond, *(tools.specs[name].tool for name in names)],
            self.conversation,
        )

    @property
    def memory(self) -> Conversation:
        """The conversation (the agent's context queue)."""
        return self.conversation

    def available(self) -> tuple[str, ...]:
        """The tools the model may call now: the persona's, the task tools when
        delegation is on, and ``stop``."""
        tasks = TASK_TOOLS if self.persona.may_delegate and self.background else ()
        return (*self.persona.tools, *tasks, "stop")

    def offered(self) -> list[dict[str, Any]]:
        """The tool definitions the model is offered."""
        return [self._tools.specs[name].definition for name in self.available()]

    # -- a run ----------------------------------------------------------------------------

    async def run(self, message: str) -> AsyncIterator[Event]:
        """Add ``message`` to the conversation and work on it until the model stops.

        Streams the model's text, each tool call's result, a ``limit`` event if a
        limit ends the run, and ``done`` with the summary. :attr:`outcome` says how the
        run ended. One run at a time: a second concurrent call raises ``RuntimeError``.
        """
        if self._running:
            raise RuntimeError(
                f"session {self.name!r} is already working on a message; "
                "finish reading its run() (or cancel it) before sending another"
            )
        self._running = True
        self.summary = self.outcome = None
        run = _Run(message, Budget(self.limits, self.clock))
        finished = False
        why = "the run was cancelled before this call finished; it may not have run"
        try:
            await self.conversation.append(ContextItem(content=Message("user", message)))
            for event in await self._advance(run):
                yield event
            await self._queue_next(run)
            while self.agent.queue_depth:
                failure: Exception | None = None
                async with contextlib.aclosing(self.agent.run()) as stream:
                    while True:
                        try:
                            turn, value = await anext(stream)
                        except StopAsyncIteration:
                            break
                        except Exception as exc:  # a turn failed (its hooks have run)
                            failure = exc
                            break
                        events, done = await self._take(run, turn, value)
                        if done:
                            events += await self._advance(run)
                        for event in events:
                            yield event
                        if done:  # queued last: no yield between queuing and running it
                            await self._queue_next(run)
                if failure is not None:
                    handled = await self._failed(run, failure)
                    if handled is None:
                        raise failure
                    for event in handled:
                        yield event
                    await self._queue_next(run)
            if run.outcome is None:  # stop ended the run: answer its call too
                assert run.current is not None
                assert run.current.tool is self._tools.stop
                await self._answer(run.current.metadata["tool_call_id"], "stopped")
                run.outcome = Outcome(self.summary or "(done)", "stop")
            finished = True
        except Exception as exc:
            why = f"the run ended with an error ({type(exc).__name__}) before this call ran"
            run.outcome = Outcome(f"error: {clip(str(exc), 200)}", "error")
            raise
        except BaseException:
            run.outcome = Outcome("(cancelled)", "cancelled")
            raise
        finally:
            try:
                if not finished:
                    await self._settle(run, why)
            finally:
                self.outcome = run.outcome
                self._running = False
        assert run.outcome is not None
        self.summary = run.outcome.summary
        yield Event("done", run.outcome.summary, self.name)

    async def _take(self, run: _Run, turn: Turn, value: Any) -> tuple[list[Event], bool]:
        """Handle one value; ``True`` when its turn is over and the next may be queued."""
        if turn.tool is self._tools.respond:
            if isinstance(value, TextDelta):
                return [Event("text", value.text, self.name)], False
            if isinstance(value, Reply):
                self._plan(run, value)
                return [], True
            self.usage.add(value)  # token usage (or anything else the model streams)
            return [], False
        text = _as_text(value)
        await self._answer(turn.metadata["tool_call_id"], text)
        return [Event("tool", f"{turn.tool.name}: {text[:_SHOWN]}", self.name)], True

    def _plan(self, run: _Run, reply: Reply) -> None:
        """Check the reply's calls and line them up, ``stop`` last."""
        if not reply.tool_calls:
            self.summary = reply.text
            run.outcome = Outcome(reply.text, "answer")
            run.finished = True
            return
        available = self.available()
        calls: list[_Call] = []
        stops: list[_Call] = []
        for call in reply.tool_calls:
            error = None
            if call.name not in available:
                error = f"no tool named {clip(repr(call.name), 60)}; the tools are: " + ", ".join(
                    available
                )
            else:
                problem = check_arguments(self._tools.specs[call.name], call.arguments)
                if problem is not None:
                    error = f"invalid arguments for {call.name}: {problem}"
            if call.name == "stop" and error is None:
                if stops:
                    error = "stop was called more than once in one reply; the first one counts"
                else:
                    stops.append(_Call(call))
                    continue
            calls.append(_Call(call, error))
        # The model asked for every call at once: they all run, then stop ends the run.
        run.pending.extend(calls + stops)

    async def _advance(self, run: _Run) -> list[Event]:
        """Answer what needs no turn (refused calls, calls a limit stops) and pick the
        next turn, ``run.next``, for :meth:`_queue_next`."""
        events: list[Event] = []
        budget = run.budget
        while run.pending:
            item = run.pending[0]
            if item.error is None and item.call.name == "stop":
                run.pending.popleft()
                run.next = self._turn(item.call, run)
                run.finished = True
                return events
            limit = budget.before_step()
            if limit is not None:
                return events + await self._limit(run, limit)
            run.pending.popleft()
            budget.steps += 1
            if item.error is None:
                run.next = self._turn(item.call, run)
                return events
            await self._answer(item.call.id, f"error: {item.error}")
            shown = f"{item.call.name}: error: {item.error}"
            events.append(Event("tool", shown[:_SHOWN], self.name))
            limit = budget.failed()
            if limit is not None:
                return events + await self._limit(run, limit)
        if run.finished:
            return events
        limit = budget.before_model_call()
        if limit is not None:
            return events + await self._limit(run, limit)
        budget.model_calls += 1
        run.next = Turn(
            self._tools.respond,
            timeout=min(RESPOND_TIMEOUT, budget.remaining()),
            metadata=self._metadata(run),
        )
        return events

    def _turn(self, call: ToolCall, run: _Run) -> Turn:
        spec = self._tools.specs[call.name]
        timeout = min(spec.turn_timeout(call.arguments), run.budget.remaining())
        meta = {"tool_call_id": call.id, **self._metadata(run)}
        return Turn(spec.tool, kwargs=dict(call.arguments), timeout=timeout, metadata=meta)

    def _metadata(self, run: _Run) -> dict[str, str]:
        """What every turn of a run tells telemetry (the keys pygents_otel reads): the
        conversation it belongs to, and the user's message as the input of the agent run
        that takes it (a viewer shows that, not the first ``respond`` call's arguments)."""
        return {"conversation_id": self.conversation_id, "run_input": run.message}

    async def _queue_next(self, run: _Run) -> None:
        turn, run.next = run.next, None
        if turn is not None:
            run.current = turn
            await self.agent.put(turn)

    async def _failed(self, run: _Run, exc: Exception) -> list[Event] | None:
        """A turn raised: answer its call and go on (or end on a limit); ``None`` when it
        was the model call, whose failure ends the run with that error."""
        turn = run.current
        if turn is None or turn.tool is self._tools.respond:
            if isinstance(exc, TurnTimeoutError) and run.budget.out_of_time():
                return await self._limit(run, "wall_time")
            return None
        text = f"error: {type(exc).__name__}: {clip(str(exc), _ANSWER)}"
        await self._answer(turn.metadata["tool_call_id"], text)
        events = [Event("tool", f"{turn.tool.name}: {text}"[:_SHOWN], self.name)]
        run.finished = False  # if stop itself failed, the model decides again
        limit = run.budget.failed()
        if limit is not None:
            return events + await self._limit(run, limit)
        return events + await self._advance(run)

    async def _limit(self, run: _Run, limit: str) -> list[Event]:
        """End the run on ``limit``: answer the calls left, queue nothing more."""
        text = run.budget.describe(limit)
        for item in run.pending:
            await self._answer(item.call.id, f"not run: {text}")
        run.pending.clear()
        run.next = None
        run.finished = True
        run.outcome = Outcome(f"stopped: {text}", "limit", limit)
        return [Event("limit", text, self.name)]

    async def _answer(self, call_id: str, text: str) -> None:
        message = Message("tool", text, tool_call_id=call_id)
        await self.conversation.append(ContextItem(content=message))

    async def _settle(self, run: _Run, why: str) -> None:
        """After a run that did not finish: nothing queued, every call answered."""
        run.pending.clear()
        if self.agent.queue_depth:
            # The run was cancelled between queuing a turn and starting it (the agent
            # was paused, say). pygents has no way to unqueue a turn, so the session
            # moves on to a fresh agent with the same conversation; the turn never runs.
            AgentRegistry.discard(self.name, self.agent)
            self.agent = self._new_agent()
        for call_id in _unanswered(self.conversation):
            await self._answer(call_id, f"not run: {why}")


def _unanswered(conversation: Conversation) -> list[str]:
    """The ids of the last assistant message's calls that no tool message answers."""
    answered: set[str | None] = set()
    for item in reversed(conversation.items):
        message = item.content
        if message.role == "tool":
            answered.add(message.tool_call_id)
        elif message.role == "assistant":
            return [call.id for call in message.tool_calls if call.id not in answered]
        else:
            return []
    return []


def _as_text(value: Any) -> str:
    summary = getattr(value, "summary", None)
    if callable(summary):
        return str(summary())
    return value if isinstance(value, str) else repr(value)


def build_session(
    model: Model,
    runtime: Runtime | None = None,
    *,
    name: str | None = None,
    persona: Persona = ASSISTANT,
    limits: Limits | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Session:
    """A new session (its agent registered under ``name``, default ``assistant-<n>``).

    Without a runtime it gets its own from :func:`~runtime.default_runtime`: a
    sandbox (bubblewrap, else Docker), or ``LocalRuntime`` only when asked for.
    """
    name = name or f"assistant-{next(_ids)}"
    runtime = runtime if runtime is not None else default_runtime(name)
    return Session(name, model, runtime, persona, limits or Limits(), clock)


async def close_session(session: Session) -> None:
    """Stop its delegated tasks, remove its agent from the registry, close its runtime."""
    if session.background is not None:
        await session.background.close()
    AgentRegistry.discard(session.name, session.agent)
    await session.runtime.close()
