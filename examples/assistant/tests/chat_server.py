"""A local chat-completions server for the assistant's tests, on ``aiohttp.web``.

It records every request and answers each with the next answer the test queued:
an event stream written piece by piece (chunked transfer encoding, one HTTP chunk per
piece, so a test can split events across chunks), or a whole body with a
``Content-Length``. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

__all__ = [
    "Answer",
    "ChatServer",
    "Received",
    "chat_stream",
    "delta",
    "serve_chat",
    "sse",
    "streamed",
    "usage_chunk",
    "whole",
]

Answer = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Received:
    """One request the server answered; header names are lower-case."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class ChatServer:
    base_url: str
    received: list[Received] = field(default_factory=list)
    answers: deque[Answer] = field(default_factory=deque)

    def answer(self, *answers: Answer) -> None:
        """Queue answers: each request takes the next one."""
        self.answers.extend(answers)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        headers = {name.lower(): value for name, value in request.headers.items()}
        self.received.append(Received(request.method, request.path, headers, body))
        if not self.answers:
            return web.json_response(
                {"error": {"message": "the test queued no answer for this request"}},
                status=500,
            )
        return await self.answers.popleft()(request)


@asynccontextmanager
async def serve_chat() -> AsyncIterator[ChatServer]:
    """A running server on a free port of 127.0.0.1, its base URL ending in ``/v1``."""
    app = web.Application()
    runner = web.AppRunner(app)
    server = ChatServer("")
    app.router.add_post("/v1/chat/completions", server._handle)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        host, port = runner.addresses[0][:2]
        server.base_url = f"http://{host}:{port}/v1"
        yield server
    finally:
        await runner.cleanup()


def sse(*events: dict[str, Any] | str) -> list[bytes]:
    """Server-sent events, one per item (``"[DONE]"`` as-is)."""
    return [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n".encode() for e in events]


def streamed(pieces: Sequence[bytes], status: int = 200) -> Answer:
    """A ``text/event-stream`` answer in chunked encoding, one HTTP chunk per piece."""

    async def answer(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(status=status)
        response.content_type = "text/event-stream"
        await response.prepare(request)
        for piece in pieces:
            await response.write(piece)
        await response.write_eof()
        return response

    return answer


def whole(status: int, content_type: str, body: bytes) -> Answer:
    """An answer with its whole body and a ``Content-Length`` (no chunking)."""

    async def answer(request: web.Request) -> web.StreamResponse:
        response = web.Response(status=status, body=body)
        response.content_type = content_type
        return response

    return answer


def delta(**fields: Any) -> dict[str, Any]:
    """A chunk whose first choice carries ``fields`` as its delta."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": fields, "finish_reason": None}],
    }


def usage_chunk(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    """The last chunk of a stream asked for with ``include_usage``: no choices."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-test",
        "choices": [],
        "usage": {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        },
    }


def chat_stream(
    text: str = "",
    tool_calls: Sequence[tuple[str, str, dict[str, Any]]] = (),
    usage: tuple[int, int] | None = None,
) -> Answer:
    """A whole streamed reply: ``text`` in two pieces, then each ``(id, name,
    arguments)`` tool call, a finish reason, the usage chunk if given, ``[DONE]``."""
    events: list[dict[str, Any] | str] = [delta(role="assistant", content="")]
    half = len(text) // 2
    events += [delta(content=piece) for piece in (text[:half], text[half:]) if piece]
    for index, (call_id, name, arguments) in enumerate(tool_calls):
        function = {"name": name, "arguments": json.dumps(arguments)}
        fragment = {"index": index, "id": call_id, "type": "function", "function": function}
        events.append(delta(tool_calls=[fragment]))
    finish = delta()
    finish["choices"][0]["finish_reason"] = "tool_calls" if tool_calls else "stop"
    events.append(finish)
    if usage is not None:
        events.append(usage_chunk(*usage))
    events.append("[DONE]")
    return streamed(sse(*events))
