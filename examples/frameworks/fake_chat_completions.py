"""A fake OpenAI Chat Completions server, to run the programs of the other-frameworks
guide (docs/guides/other-frameworks.md) offline: no key, no network, the same answers
every time. Start it in a terminal of its own (standard library only: any Python 3.11
runs it)::

    uv run python examples/frameworks/fake_chat_completions.py    # --port 0: a free port

and give the agent's process its address (any key will do)::

    export OPENAI_BASE_URL=http://127.0.0.1:8600/v1 OPENAI_API_KEY=offline

It speaks as much of ``POST /v1/chat/completions`` as an agent with tools and handoffs
needs (no streaming), and answers by the conversation so far:

* a user message that says ``fail``: HTTP 400, so the model call fails, and its run;
* the user's message, when the request offers tools: a call of the tool the message
  names, else of the first that is not a handoff (``transfer_to_…``), its required
  arguments filled in (a string is ``"Paris"``, a number ``1``);
* a tool's result, when a handoff is offered and the result is not an error: the
  handoff;
* anything else: an answer, `ANSWER` (or `GAVE_UP` when a tool's result in the
  conversation was an error).

Every answer reports the same usage, `USAGE` (with cached and reasoning tokens), so
the tokens a console shows can be checked against what was sent. The test suite serves
it in its own process with `serving` (tests/frameworks/harness.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ANSWER", "GAVE_UP", "PORT", "USAGE", "main", "serving"]

PORT = 8600
"""The port it listens on unless told otherwise (``--port``)."""

ANSWER = "sunny, says the specialist"
GAVE_UP = "the tool failed, sorry"
USAGE = {"prompt_tokens": 12, "completion_tokens": 3, "cached_tokens": 2, "reasoning_tokens": 1}
"""What every answer reports it used."""

HANDOFF = "transfer_to_"  # the OpenAI Agents SDK's handoff tools: transfer_to_<agent>
LIMIT = 1 << 20  # the largest request body read, in bytes
_SAMPLES = {"string": "Paris", "integer": 1, "number": 1, "boolean": True}


class _BadRequest(Exception):
    """A request this server cannot answer: HTTP 400 with this text."""


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _arguments(tool: dict[str, Any]) -> dict[str, Any]:
    """A sample value for each required parameter of ``tool`` (a JSON schema)."""
    schema = tool.get("parameters")
    schema = schema if isinstance(schema, dict) else {}
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    arguments: dict[str, Any] = {}
    for name in required if isinstance(required, list) else []:
        kind = properties.get(str(name))
        arguments[str(name)] = (
            _SAMPLES.get(str(kind.get("type"))) if isinstance(kind, dict) else None
        )
    return arguments


def _reply(body: Any) -> dict[str, Any]:
    """The assistant's message for a Chat Completions request ``body`` (see the module's
    rules); `_BadRequest` when there is nothing to answer."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise _BadRequest("the request needs a JSON object with a list of messages")
    if body.get("stream"):
        raise _BadRequest("this fake server does not stream: call it without stream=true")
    messages = [m for m in body["messages"] if isinstance(m, dict)]
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    if not users:
        raise _BadRequest("the request has no user message")
    if "fail" in users[-1]:
        raise _BadRequest("the model refused")
    offered = [
        t["function"]
        for t in body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    ]
    tools = [t for t in offered if not str(t.get("name")).startswith(HANDOFF)]
    handoffs = [t for t in offered if str(t.get("name")).startswith(HANDOFF)]
    results = [_text(m.get("content")) for m in messages if m.get("role") == "tool"]
    failed = any("error" in result.lower() for result in results)
    last = messages[-1].get("role") if messages else None
    if last == "user" and tools:
        named = [t for t in tools if str(t.get("name")) in users[-1]]
        tool = (named or tools)[0]
        name = str(tool.get("name"))
        return _tool_call(f"call_{name}", name, _arguments(tool))
    if last == "tool" and handoffs and not failed:
        return _tool_call("call_handoff", str(handoffs[0]["name"]), {})
    return {"role": "assistant", "content": GAVE_UP if failed else ANSWER}


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    """The whole Chat Completions response for ``message``, with `USAGE`."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": USAGE["prompt_tokens"],
            "completion_tokens": USAGE["completion_tokens"],
            "total_tokens": USAGE["prompt_tokens"] + USAGE["completion_tokens"],
            "prompt_tokens_details": {"cached_tokens": USAGE["cached_tokens"]},
            "completion_tokens_details": {"reasoning_tokens": USAGE["reasoning_tokens"]},
        },
    }


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the agents' own output is what the reader watches

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._error(404, f"no such endpoint: POST {self.path[:200]}")
            return
        try:
            length = int(self.headers.get("Content-Length") or "")
        except ValueError:
            self._error(411, "the request needs a Content-Length")
            return
        if not 0 <= length <= LIMIT:
            self._error(413, f"a request body is at most {LIMIT} bytes")
            return
        try:
            message = _reply(json.loads(self.rfile.read(length)))
        except (ValueError, _BadRequest) as error:  # not JSON, or nothing to answer
            self._error(400, str(error) if isinstance(error, _BadRequest) else "not JSON")
            return
        self._send(200, _completion(message))

    def do_GET(self) -> None:
        self._error(404, "only POST .../chat/completions is served")

    def _error(self, status: int, text: str) -> None:
        self._send(status, {"error": {"message": text, "type": "invalid_request_error"}})

    def _send(self, status: int, document: dict[str, Any]) -> None:
        data = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a client that hangs up mid-request never holds the exit


def _base_url(server: _Server) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/v1"


@contextmanager
def serving(port: int = 0) -> Iterator[str]:
    """The server on 127.0.0.1:``port`` (0: a free port) on a thread for the block;
    yields its base URL, the ``OPENAI_BASE_URL`` of its clients."""
    server = _Server(("127.0.0.1", port), _Handler)
    thread = threading.Thread(target=server.serve_forever, name="fake-chat-completions")
    thread.start()
    try:
        yield _base_url(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def main(argv: list[str] | None = None) -> int:
    """Serve on 127.0.0.1 until Ctrl-C; the exit status (2: the port is taken)."""
    parser = argparse.ArgumentParser(
        prog="fake_chat_completions.py",
        description="A fake OpenAI Chat Completions server on 127.0.0.1, for running "
        "agents offline (docs/guides/other-frameworks.md).",
    )
    parser.add_argument(
        "--port", type=int, default=PORT, help=f"default {PORT}; 0 takes a free one"
    )
    port = parser.parse_args(argv).port
    try:
        server = _Server(("127.0.0.1", port), _Handler)
    except OSError as error:
        print(
            f"fake_chat_completions.py: error: cannot listen on 127.0.0.1:{port}: "
            f"{error.strerror or error} (--port PORT, or --port 0 for a free one)",
            file=sys.stderr,
        )
        return 2
    base_url = _base_url(server)
    try:  # before the line: a Ctrl-C right after it must stop the server quietly too
        print(
            f"a fake Chat Completions API on {base_url}: "
            f"export OPENAI_BASE_URL={base_url} OPENAI_API_KEY=offline (Ctrl-C stops it)",
            flush=True,
        )
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
