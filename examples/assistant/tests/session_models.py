"""Models for the session tests: replies that wait on events (so a test knows exactly
where a run is), a clock a test moves, and a check that a conversation is well formed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from assistant.agent import Event, Session, build_session, close_session
from assistant.model import Message, Model, Reply, TextDelta, ToolCall


def call(n: int | str, name: str, **arguments: object) -> ToolCall:
    return ToolCall(id=f"c{n}", name=name, arguments=dict(arguments))


@dataclass(frozen=True)
class Usage:
    """Token usage as the model layer reports it (matched by its attribute names)."""

    input_tokens: int | None
    output_tokens: int | None


@dataclass
class Step:
    """One reply, and where it may be held: ``entered`` is set when the model is asked,
    ``streamed`` once the text went out; the reply waits for ``release`` if given.
    ``parts`` are streamed between the text and the reply (token usage, say)."""

    reply: Reply
    release: asyncio.Event | None = None
    parts: tuple[Any, ...] = ()
    entered: asyncio.Event = field(default_factory=asyncio.Event)
    streamed: asyncio.Event = field(default_factory=asyncio.Event)


class SteppedModel:
    """Replies with its steps in order; records every request like ``ScriptedModel``."""

    def __init__(self, steps: Sequence[Step | Reply]) -> None:
        self.steps = [s if isinstance(s, Step) else Step(s) for s in steps]
        self.calls: list[tuple[tuple[Message, ...], tuple[dict[str, Any], ...]]] = []

    def __repr__(self) -> str:
        return f"SteppedModel({len(self.steps)} steps)"

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[Any]:
        step = self.steps[len(self.calls)]
        self.calls.append((tuple(messages), tuple(tools)))
        step.entered.set()
        if step.reply.text:
            yield TextDelta(step.reply.text)
        step.streamed.set()
        if step.release is not None:
            await step.release.wait()
        for part in step.parts:
            yield part
        yield step.reply


class FailingModel:
    """Raises on its first request, then replies as scripted."""

    def __init__(self, error: Exception, then: Sequence[Reply]) -> None:
        self.error = error
        self.then = list(then)
        self.calls = 0

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[Any]:
        self.calls += 1
        if self.calls == 1:
            raise self.error
        yield self.then.pop(0)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def assert_well_formed(messages: Sequence[Message]) -> None:
    """Every call an assistant message makes is answered by exactly one tool message
    before the next user or assistant message, and no tool message answers anything else."""
    waiting: set[str] = set()
    for message in messages:
        if message.role == "tool":
            assert message.tool_call_id in waiting, f"unexpected answer {message}"
            waiting.discard(message.tool_call_id)
            continue
        assert not waiting, f"unanswered calls {waiting} before {message}"
        if message.role == "assistant":
            waiting = {c.id for c in message.tool_calls}
    assert not waiting, f"unanswered calls {waiting} at the end"


class Sessions:
    """Builds sessions (``build_session``'s options) and closes every one of them."""

    def __init__(self) -> None:
        self.made: list[Session] = []

    def __call__(self, model: Model, **options: Any) -> Session:
        self.made.append(build_session(model, **options))
        return self.made[-1]

    async def close(self) -> None:
        for session in self.made:
            await close_session(session)


async def finish(session: Session, message: str) -> list[Event]:
    """Every event of one run."""
    return [event async for event in session.run(message)]


def answers(session: Session) -> dict[str | None, str]:
    """Each tool message of the conversation, by the call id it answers."""
    return {
        item.content.tool_call_id: item.content.content
        for item in session.memory.items
        if item.content.role == "tool"
    }
