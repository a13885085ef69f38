"""The model layer of the assistant: messages, a model protocol and the scripted model.

* :class:`ScriptedModel` replays scripted replies offline and deterministically.
* :class:`~openai_model.OpenAIModel` (in ``openai_model.py``, which alone needs the
  ``openai`` package) streams from the OpenAI API or any server that speaks its
  chat-completions protocol.

Every model's :meth:`~Model.stream` yields zero or more :class:`TextDelta` while the
reply's text arrives, then at most one :class:`Usage` (the tokens the call used, when
the endpoint says), then exactly one :class:`Reply` with the full text and tool calls.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pygents import DecoratedTool

__all__ = [
    "Message",
    "Model",
    "ModelError",
    "Reply",
    "ScriptedModel",
    "TextDelta",
    "ToolCall",
    "Usage",
    "tool_definitions",
]


class ModelError(RuntimeError):
    """The model endpoint failed: bad status, unreachable, timed out, or an error event."""


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Message:
    """One conversation entry; ``role`` is system, user, assistant or tool."""

    role: str
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    def to_openai(self) -> dict[str, Any]:
        """This message in the chat-completions wire format."""
        if self.role == "tool":
            return {"role": "tool", "tool_call_id": self.tool_call_id, "content": self.content}
        if self.role == "assistant" and self.tool_calls:
            return {
                "role": "assistant",
                "content": self.content or None,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": json.dumps(call.arguments),
                        },
                    }
                    for call in self.tool_calls
                ],
            }
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True, repr=False)
class TextDelta:
    """A piece of the reply's text, as it streams."""

    text: str

    def __repr__(self) -> str:
        """The piece itself, quoted: the dashboard's Values panel shows each streamed
        value by its repr, and ``TextDelta(text='te the n')`` on every line buries the
        text it streams. The quotes keep the spaces at its ends visible."""
        return repr(self.text)


@dataclass(frozen=True)
class Usage:
    """The tokens one model call used, as the endpoint reported them (``None``: not
    reported). ``respond`` passes it on as a value of its turn: the dashboard adds up
    every value with integer ``input_tokens``/``output_tokens`` into the turn's tokens."""

    input_tokens: int | None
    output_tokens: int | None


@dataclass(frozen=True)
class Reply:
    """The complete reply: all of its text plus the tool calls it asks for."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()


Part = TextDelta | Usage | Reply
"""What :meth:`Model.stream` yields."""


class Model(Protocol):
    """Anything that turns a conversation (and the tools on offer) into a streamed reply."""

    def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[Part]:
        """Yield zero or more :class:`TextDelta`, at most one :class:`Usage`, then
        exactly one :class:`Reply`."""
        ...


# --------------------------------------------------------------------------- scripted


class ScriptedModel:
    """A deterministic offline model.

    ``script`` is either a sequence of replies (one per :meth:`stream` call, in order)
    or a function from the conversation so far to the next reply. Each reply's text is
    streamed in ``chunk``-character :class:`TextDelta` pieces before the reply itself.
    It reports no :class:`Usage`: it counts no tokens.
    """

    def __init__(
        self,
        script: Sequence[Reply] | Callable[[Sequence[Message]], Reply],
        *,
        chunk: int = 8,
    ) -> None:
        if chunk < 1:
            raise ValueError(f"chunk must be at least 1, got {chunk}")
        self._script = script
        self._position = 0
        self.chunk = chunk
        self.calls: list[tuple[tuple[Message, ...], tuple[dict[str, Any], ...]]] = []
        """Every ``stream`` call's messages and tools, in order."""

    def __repr__(self) -> str:
        if callable(self._script):
            name = getattr(self._script, "__name__", type(self._script).__name__)
            return f"ScriptedModel(offline, replies from {name}())"
        return f"ScriptedModel(offline, {len(self._script)} replies)"

    @property
    def remaining(self) -> int | None:
        """Replies left in a scripted sequence; ``None`` for a function script."""
        if callable(self._script):
            return None
        return len(self._script) - self._position

    def _next_reply(self, messages: Sequence[Message]) -> Reply:
        if callable(self._script):
            return self._script(messages)
        if self._position >= len(self._script):
            raise RuntimeError(
                f"ScriptedModel ran out of replies: the script has {len(self._script)} "
                f"and stream() was called {self._position + 1} times"
            )
        reply = self._script[self._position]
        self._position += 1
        return reply

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[Part]:
        self.calls.append((tuple(messages), tuple(tools)))
        reply = self._next_reply(messages)
        text = reply.text
        for start in range(0, len(text), self.chunk):
            if start:
                await asyncio.sleep(0)
            yield TextDelta(text[start : start + self.chunk])
        yield reply


# --------------------------------------------------------------------------- helpers


def tool_definitions(tools: Iterable[DecoratedTool[..., Any]]) -> list[dict[str, Any]]:
    """The OpenAI function-tool definitions for pygents tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.metadata.description or "",
                "parameters": tool.metadata.input_schema,
            },
        }
        for tool in tools
    ]
