"""The fake Chat Completions server the other-frameworks guide ships
(examples/frameworks/fake_chat_completions.py): its rules for any client that offers
tools, its answers to requests it cannot serve, and its command line. The OpenAI
Agents SDK's runs against it are the harness's (test_openai_agents.py)."""

from __future__ import annotations

import http.client
import json
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fake_chat_completions as fake  # on sys.path through the harness (conftest imports it)
import pytest

SCRIPT = Path(fake.__file__)


@pytest.fixture
def server() -> Iterator[tuple[str, int]]:
    with fake.serving() as base_url:
        host, port = base_url.removeprefix("http://").removesuffix("/v1").split(":")
        yield host, int(port)


def _post(
    where: tuple[str, int], body: bytes, path: str = "/v1/chat/completions", **headers: str
) -> tuple[int, dict[str, Any]]:
    connection = http.client.HTTPConnection(*where, timeout=30)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def _chat(where: tuple[str, int], **body: Any) -> dict[str, Any]:
    status, document = _post(where, json.dumps(body).encode())
    assert status == 200, document
    (choice,) = document["choices"]
    return dict(choice["message"])


def _tool(name: str, **parameters: str) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {key: {"type": kind} for key, kind in parameters.items()},
        "required": list(parameters),
    }
    return {"type": "function", "function": {"name": name, "parameters": schema}}


def test_a_prompt_calls_the_tool_it_names_else_the_first_with_sample_arguments(
    server: tuple[str, int],
) -> None:
    tools = [_tool("get_weather", city="string"), _tool("forecast", days="integer")]
    first = _chat(server, messages=[{"role": "user", "content": "hi"}], tools=tools)
    named = _chat(server, messages=[{"role": "user", "content": "forecast please"}], tools=tools)
    assert [c["function"] for c in first["tool_calls"]] == [
        {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    ]
    assert [c["function"] for c in named["tool_calls"]] == [
        {"name": "forecast", "arguments": '{"days": 1}'}
    ]


def test_after_a_tool_result_it_hands_off_when_it_can_and_answers_otherwise(
    server: tuple[str, int],
) -> None:
    asked = [
        {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "tool", "tool_call_id": "call_get_weather", "content": "sunny in Paris"},
    ]
    tools = [_tool("get_weather", city="string"), _tool("transfer_to_specialist")]
    handoff = _chat(server, messages=asked, tools=tools)
    answer = _chat(server, messages=asked, tools=tools[:1])
    failed = [*asked[:-1], {"role": "tool", "content": "An error occurred while running"}]
    gave_up = _chat(server, messages=failed, tools=tools)
    assert [c["function"]["name"] for c in handoff["tool_calls"]] == ["transfer_to_specialist"]
    assert (answer["content"], gave_up["content"]) == (fake.ANSWER, fake.GAVE_UP)


def test_every_answer_reports_the_same_usage(server: tuple[str, int]) -> None:
    status, document = _post(
        server, json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    )
    assert status == 200
    assert document["usage"]["prompt_tokens"] == fake.USAGE["prompt_tokens"]
    assert document["usage"]["completion_tokens_details"] == {
        "reasoning_tokens": fake.USAGE["reasoning_tokens"]
    }


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"not json", 400, "not JSON"),
        (b"[1, 2]", 400, "list of messages"),
        (b'{"messages": []}', 400, "no user message"),
        (b'{"messages": [{"role": "user", "content": "please fail"}]}', 400, "refused"),
        (b'{"messages": [{"role": "user", "content": "x"}], "stream": true}', 400, "stream"),
        (
            b'{"messages": [{"role": "user", "content": "x"}], "tools": [{"function": '
            b'{"name": "t", "parameters": {"required": [[1]], "properties": [2]}}}]}',
            200,
            "",
        ),
    ],
)
def test_a_request_it_cannot_serve_gets_a_json_error_and_the_server_serves_on(
    server: tuple[str, int], body: bytes, status: int, says: str
) -> None:
    answered, document = _post(server, body)
    assert answered == status, document
    assert says in document.get("error", {}).get("message", "")
    assert _chat(server, messages=[{"role": "user", "content": "hi"}])["content"] == fake.ANSWER


def test_a_body_over_the_limit_or_another_path_is_refused_unread(server: tuple[str, int]) -> None:
    huge = _post(server, b"", **{"Content-Length": str(fake.LIMIT + 1)})
    elsewhere = _post(server, b"{}", path="/v1/embeddings")
    assert (huge[0], elsewhere[0]) == (413, 404)


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def test_the_script_says_where_it_serves_and_ctrl_c_stops_it_cleanly() -> None:
    process = _start("--port", "0")
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 30)
    line = process.stdout.readline() if ready else ""
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert line.startswith("a fake Chat Completions API on http://127.0.0.1:"), line
    assert "export OPENAI_BASE_URL=http://127.0.0.1:" in line
    assert (process.returncode, err) == (0, "")


def test_a_port_in_use_is_one_line_and_exit_status_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        process = _start("--port", str(taken.getsockname()[1]))
        out, err = process.communicate(timeout=30)
    assert process.returncode == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "cannot listen on 127.0.0.1:" in err
    assert "--port 0" in err
