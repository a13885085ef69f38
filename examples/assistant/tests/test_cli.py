"""The assistant's command line, in subprocesses (``python -m assistant`` and the
``pygents-assistant`` script): one-shot and interactive runs, the model it says it
uses, Ctrl-C."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiohttp import web

from assistant.__main__ import choose_models, main
from assistant.openai_model import OpenAIModel

from .chat_server import chat_stream, serve_chat

# The checkout's root: the command runs from anywhere, as the guide shows it from there.
CHECKOUT = Path(__file__).resolve().parents[3]
WAIT = 60  # seconds any one run may take, at most (a bound, not a pace)


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without model or telemetry settings, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    return {**env, **extra}


def assistant(*args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assistant", *args],
        cwd=CHECKOUT,
        env=clean_env(**env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


def test_plain_run_streams_the_conversation_and_prints_the_summary() -> None:
    result = assistant("--plain", "write two notes and count their words")
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "I'll write the notes first." in out  # streamed model text
    assert "[tool] write_file: wrote 22 characters to notes/tides.txt" in out
    assert "[tool] delegate_task: started t1: count the words of a short poem" in out
    assert "t2: count the words of a proverb" in out  # a sub-task's result came back
    assert out.rstrip().endswith("summary: notes written, words counted")
    # nothing configured: it says it plays the demo, and how to get a real model
    first = result.stderr.splitlines()[0]
    assert first.startswith("assistant: model ScriptedModel(offline, 4 replies)")
    assert "set OPENAI_API_KEY" in first


def test_the_pygents_assistant_script_runs_the_same_command_line() -> None:
    """The project's console script, installed beside this interpreter by ``uv sync``."""
    script = Path(sys.executable).with_name("pygents-assistant")
    result = subprocess.run(
        [str(script), "--plain", "--scripted", "--once", "write two notes"],
        cwd=CHECKOUT,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.splitlines()[0] == "assistant: model ScriptedModel(offline, 4 replies)"
    assert result.stdout.rstrip().endswith("summary: notes written, words counted")
    usage = subprocess.run(
        [str(script), "--help"], capture_output=True, text=True, timeout=WAIT, check=False
    )
    assert usage.stdout.startswith("usage: pygents-assistant "), usage.stderr


def test_scripted_runs_offline_even_with_a_key_set() -> None:
    result = assistant(
        "--plain", "--scripted", "--once", "go", OPENAI_API_KEY="sk-never-used-0123456789"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.splitlines()[0] == "assistant: model ScriptedModel(offline, 4 replies)"
    assert result.stdout.rstrip().endswith("summary: notes written, words counted")
    assert "sk-never-used" not in result.stdout + result.stderr


def test_a_key_alone_means_the_official_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-only-a-key")
    model, helpers, note = choose_models(scripted=False, conversation=False)
    assert isinstance(model, OpenAIModel)
    assert repr(model) == "OpenAIModel(model='gpt-4o-mini', base_url='https://api.openai.com/v1')"
    assert helpers("a sub-task") is model  # helpers share the client
    assert note == ""
    asyncio.run(model.aclose())


async def test_with_a_base_url_it_talks_to_that_server_and_says_so() -> None:
    async with serve_chat() as server:
        server.answer(chat_stream("Hello from the server.", usage=(5, 4)))
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "assistant",
            "--plain",
            "--once",
            "greet me",
            cwd=CHECKOUT,
            env=clean_env(
                OPENAI_BASE_URL=server.base_url,
                OPENAI_API_KEY="sk-local-0123456789",
                OPENAI_MODEL="gpt-test",
            ),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out_bytes, err_bytes = await asyncio.wait_for(proc.communicate(), WAIT)
    out, err = out_bytes.decode(), err_bytes.decode()
    assert proc.returncode == 0, err[-2000:]
    assert err.splitlines()[0] == (
        f"assistant: model OpenAIModel(model='gpt-test', base_url='{server.base_url}')"
    )
    assert "Hello from the server." in out
    assert out.rstrip().endswith("summary: Hello from the server.")
    assert "sk-local" not in out + err
    [request] = server.received
    assert request.headers["authorization"] == "Bearer sk-local-0123456789"
    assert request.body["messages"][-1] == {"role": "user", "content": "greet me"}


def test_without_a_task_it_holds_a_conversation_one_line_at_a_time() -> None:
    result = assistant("--scripted", stdin="write two notes\nhow many files now?\n")
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert result.stderr.startswith("assistant: model ScriptedModel(offline, 4 demo replies")
    first, _, rest = out.partition("summary: notes written, words counted")
    assert "I'll write the notes first." in first
    # the follow-up reached the model, in the same session: the notes are still there
    assert "Looking at the files for: how many files now?" in rest
    assert "summary: how many files now?: 2 file(s) in the working directory" in rest
    assert out.count("you> ") == 3  # two lines, then the prompt that met the end of input


def test_exit_ends_the_conversation_before_the_lines_after_it() -> None:
    result = assistant("--scripted", stdin="\n  exit  \nwrite two notes\n")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "[tool]" not in result.stdout
    assert result.stdout.count("you> ") == 2  # the empty line asked again


def test_ctrl_c_at_the_prompt_ends_cleanly_with_status_130() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant", "--scripted"],
        cwd=CHECKOUT,
        env=clean_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        seen = b""
        deadline = time.monotonic() + WAIT
        while b"you> " not in seen:  # wait for the prompt, however long start-up takes
            ready, _, _ = select.select(
                [proc.stdout], [], [], max(0.0, deadline - time.monotonic())
            )
            assert ready, f"no prompt within {WAIT}s: {seen!r}"
            chunk = os.read(proc.stdout.fileno(), 4096)
            assert chunk, f"the assistant ended before prompting: {seen!r}"
            seen += chunk
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err.decode()[-2000:]
    assert "assistant: interrupted" in err.decode()
    assert "Traceback" not in err.decode()


def test_a_task_given_twice_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["one task", "--once", "another"])
    assert exited.value.code == 2
    assert 'either "task" or --once "task"' in capsys.readouterr().err


async def test_ctrl_c_while_the_model_works_closes_the_session_and_exits_130() -> None:
    release = asyncio.Event()
    asked = asyncio.Event()

    async def silent(request: web.Request) -> web.StreamResponse:
        asked.set()
        await release.wait()
        return web.json_response({})

    async with serve_chat() as server:
        server.answer(silent)
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "assistant",
            cwd=CHECKOUT,
            env=clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_MODEL="gpt-test"),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            assert proc.stdin is not None
            proc.stdin.write(b"take your time\n")
            await proc.stdin.drain()
            await asyncio.wait_for(asked.wait(), WAIT)  # the model call is in flight
            proc.send_signal(signal.SIGINT)
            _, err_bytes = await asyncio.wait_for(proc.communicate(), WAIT)
        finally:
            release.set()
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    err = err_bytes.decode()
    assert proc.returncode == 130, err[-2000:]
    assert "assistant: interrupted" in err
    assert "Traceback" not in err
