"""The model layer of the assistant: messages, a model protocol and two models.

* :class:`ScriptedModel` replays scripted replies offline and deterministically.
* :class:`OpenAICompatibleModel` streams from any OpenAI-compatible
  ``/chat/completions`` endpoint using only the standard library (HTTP/1.1 over
  ``asyncio.open_connection``, server-sent events, chunked transfer encoding).

Every model's :meth:`~Model.stream` yields zero or more :class:`TextDelta` while the
reply's text arrives, then exactly one :class:`Reply` with the full text and tool calls.
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from pygents import DecoratedTool

__all__ = [
    "Message",
    "Model",
    "ModelError",
    "OpenAICompatibleModel",
    "Reply",
    "ScriptedModel",
    "TextDelta",
    "ToolCall",
    "model_from_env",
    "tool_definitions",
]

DEFAULT_MODEL = "gpt-4o-mini"
_ERROR_BODY_PREVIEW = 500
_T = TypeVar("_T")


class ModelError(RuntimeError):
    """The model endpoint failed: bad status, malformed response, or an error event."""


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


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply's text, as it streams."""

    text: str


@dataclass(frozen=True)
class Reply:
    """The complete reply: all of its text plus the tool calls it asks for."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()


class Model(Protocol):
    """Anything that turns a conversation (and the tools on offer) into a streamed reply."""

    def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[TextDelta | Reply]:
        """Yield zero or more :class:`TextDelta`, then exactly one :class:`Reply`."""
        ...


# --------------------------------------------------------------------------- scripted


class ScriptedModel:
    """A deterministic offline model.

    ``script`` is either a sequence of replies (one per :meth:`stream` call, in order)
    or a function from the conversation so far to the next reply. Each reply's text is
    streamed in ``chunk``-character :class:`TextDelta` pieces before the reply itself.
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
    ) -> AsyncIterator[TextDelta | Reply]:
        self.calls.append((tuple(messages), tuple(tools)))
        reply = self._next_reply(messages)
        text = reply.text
        for start in range(0, len(text), self.chunk):
            if start:
                await asyncio.sleep(0)
            yield TextDelta(text[start : start + self.chunk])
        yield reply


# --------------------------------------------------------------------------- HTTP


class _Response:
    """An HTTP/1.1 response being read from a stream: status, headers, body chunks."""

    def __init__(self, reader: asyncio.StreamReader, timeout: float) -> None:
        self._reader = reader
        self._timeout = timeout
        self.status = 0
        self.reason = ""
        self.headers: dict[str, str] = {}

    async def _read(self, pending: Awaitable[_T]) -> _T:
        try:
            async with asyncio.timeout(self._timeout):
                return await pending
        except TimeoutError:
            raise ModelError(f"model endpoint did not respond within {self._timeout}s") from None

    async def _readline(self) -> bytes:
        return await self._read(self._reader.readuntil(b"\n"))

    async def read_head(self) -> None:
        try:
            while True:
                status_line = (await self._readline()).decode("latin-1").strip()
                parts = status_line.split(" ", 2)
                if len(parts) < 2 or not parts[0].startswith("HTTP/"):
                    raise ModelError(f"malformed HTTP status line: {status_line!r}")
                self.status = int(parts[1])
                self.reason = parts[2] if len(parts) > 2 else ""
                headers: dict[str, str] = {}
                while True:
                    line = (await self._readline()).decode("latin-1").strip()
                    if not line:
                        break
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                self.headers = headers
                if self.status != 100:  # skip interim "100 Continue" responses
                    return
        except asyncio.IncompleteReadError:
            raise ModelError("model endpoint closed the connection before responding") from None

    async def iter_body(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive, decoded from chunked encoding if need be."""
        try:
            if "chunked" in self.headers.get("transfer-encoding", "").lower():
                while True:
                    size_line = (await self._readline()).decode("latin-1").strip()
                    size = int(size_line.split(";", 1)[0], 16)
                    if size == 0:
                        while (await self._readline()).strip():  # trailers
                            pass
                        return
                    data = await self._read(self._reader.readexactly(size))
                    await self._readline()  # the CRLF after each chunk
                    yield data
            elif "content-length" in self.headers:
                left = int(self.headers["content-length"])
                while left > 0:
                    data = await self._read(self._reader.read(min(left, 65536)))
                    if not data:
                        raise ModelError("model endpoint closed the connection mid-body")
                    left -= len(data)
                    yield data
            else:
                while data := await self._read(self._reader.read(65536)):
                    yield data
        except asyncio.IncompleteReadError:
            raise ModelError("model endpoint closed the connection mid-body") from None
        except ValueError as exc:
            raise ModelError(f"malformed chunked response: {exc}") from None

    async def read_body(self) -> bytes:
        return b"".join([chunk async for chunk in self.iter_body()])


async def _sse_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The ``data`` payload of each server-sent event in a byte stream."""
    buffer = b""
    data_lines: list[str] = []
    async for chunk in chunks:
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for raw in lines:
            line = raw.rstrip(b"\r").decode("utf-8")
            if not line:
                if data_lines:
                    yield "\n".join(data_lines)
                    data_lines = []
            elif line.startswith("data:"):
                value = line[5:]
                data_lines.append(value[1:] if value.startswith(" ") else value)
            # comments (":"), "event:", "id:" and "retry:" lines carry nothing we need
    tail = buffer.rstrip(b"\r").decode("utf-8")
    if tail.startswith("data:"):
        value = tail[5:]
        data_lines.append(value[1:] if value.startswith(" ") else value)
    if data_lines:
        yield "\n".join(data_lines)


def _parse_arguments(text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_raw": text}


class _ToolCallBuilder:
    """Assembles ``delta.tool_calls`` fragments into whole :class:`ToolCall` objects."""

    def __init__(self) -> None:
        self._calls: dict[int, dict[str, Any]] = {}
        self._last: int | None = None

    def add(self, fragment: dict[str, Any]) -> None:
        index = fragment.get("index")
        if not isinstance(index, int):
            known = {c["id"] for c in self._calls.values()}
            new = fragment.get("id") and fragment["id"] not in known
            index = len(self._calls) if new or self._last is None else self._last
        self._last = index
        call = self._calls.setdefault(index, {"id": "", "name": "", "arguments": []})
        if fragment.get("id"):
            call["id"] = fragment["id"]
        function = fragment.get("function") or {}
        if function.get("name"):
            call["name"] += function["name"]
        if function.get("arguments"):
            call["arguments"].append(function["arguments"])

    def build(self) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(
                id=call["id"] or f"call_{index}",
                name=call["name"],
                arguments=_parse_arguments("".join(call["arguments"])),
            )
            for index, call in sorted(self._calls.items())
        )


class OpenAICompatibleModel:
    """Streams chat completions from an OpenAI-compatible endpoint (stdlib only)."""

    def __init__(
        self, base_url: str, api_key: str | None, model: str, *, timeout: float = 60.0
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model
        self.timeout = timeout
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._path = parts.path.rstrip("/") + "/chat/completions"
        default_port = (self._https and self._port == 443) or (not self._https and self._port == 80)
        host = f"[{self._host}]" if ":" in self._host else self._host
        self._host_header = host if default_port else f"{host}:{self._port}"

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel({self.base_url!r}, model={self.model!r})"

    def _request(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> bytes:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_openai() for m in messages],
            "stream": True,
        }
        if tools:
            payload["tools"] = list(tools)
        body = json.dumps(payload).encode("utf-8")
        headers = {
            "Host": self._host_header,
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            "Content-Length": str(len(body)),
            "Connection": "close",
            "User-Agent": "pygents-assistant",
        }
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        head = f"POST {self._path} HTTP/1.1\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in headers.items()
        )
        return head.encode("latin-1") + b"\r\n" + body

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[TextDelta | Reply]:
        url = f"{self.base_url}/chat/completions"
        try:
            async with asyncio.timeout(self.timeout):
                reader, writer = await asyncio.open_connection(
                    self._host,
                    self._port,
                    ssl=ssl.create_default_context() if self._https else None,
                )
        except TimeoutError:
            raise ModelError(f"timed out connecting to {url}") from None
        except OSError as exc:
            raise ModelError(f"cannot connect to {url}: {exc}") from exc
        try:
            writer.write(self._request(messages, tools))
            await writer.drain()
            response = _Response(reader, self.timeout)
            await response.read_head()
            if response.status != 200:
                body = (await response.read_body()).decode("utf-8", "replace")
                raise ModelError(
                    f"{url} answered HTTP {response.status} {response.reason}: "
                    f"{body[:_ERROR_BODY_PREVIEW]}"
                )
            content_type = response.headers.get("content-type", "")
            if "text/event-stream" not in content_type and "json" in content_type:
                # A server that ignored "stream": true and sent one whole completion.
                reply = self._from_completion(await response.read_body())
                if reply.text:
                    yield TextDelta(reply.text)
                yield reply
                return
            text: list[str] = []
            calls = _ToolCallBuilder()
            async for data in _sse_events(response.iter_body()):
                if data.strip() == "[DONE]":
                    break
                try:
                    event = json.loads(data)
                except json.JSONDecodeError:
                    raise ModelError(f"malformed event from {url}: {data[:200]!r}") from None
                if isinstance(event, dict) and event.get("error"):
                    raise ModelError(f"{url} reported an error: {event['error']}")
                choices = event.get("choices") if isinstance(event, dict) else None
                if not choices:
                    continue  # e.g. a final usage-only chunk
                delta = choices[0].get("delta") or {}
                if piece := delta.get("content"):
                    text.append(piece)
                    yield TextDelta(piece)
                for fragment in delta.get("tool_calls") or ():
                    calls.add(fragment)
            yield Reply("".join(text), calls.build())
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except (OSError, ssl.SSLError):
                pass

    @staticmethod
    def _from_completion(body: bytes) -> Reply:
        try:
            message = json.loads(body)["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ModelError(f"malformed completion: {body[:200]!r}") from None
        return Reply(
            message.get("content") or "",
            tuple(
                ToolCall(
                    id=call.get("id") or f"call_{i}",
                    name=call["function"]["name"],
                    arguments=_parse_arguments(call["function"].get("arguments") or ""),
                )
                for i, call in enumerate(message.get("tool_calls") or ())
            ),
        )


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


def model_from_env(fallback: Model | None = None) -> Model:
    """An :class:`OpenAICompatibleModel` configured from the environment, else ``fallback``.

    Reads ``OPENAI_BASE_URL`` (or ``OPENAI_API_BASE``), ``OPENAI_API_KEY`` (optional,
    local servers often need none) and ``OPENAI_MODEL`` (default ``gpt-4o-mini``).
    """
    base_url = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
    if base_url:
        return OpenAICompatibleModel(
            base_url,
            os.environ.get("OPENAI_API_KEY") or None,
            os.environ.get("OPENAI_MODEL") or DEFAULT_MODEL,
        )
    if fallback is None:
        raise RuntimeError(
            "no model configured: set OPENAI_BASE_URL (or OPENAI_API_BASE), "
            "OPENAI_API_KEY and optionally OPENAI_MODEL, or pass a fallback model"
        )
    return fallback
