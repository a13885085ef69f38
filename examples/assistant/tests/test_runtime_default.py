"""``default_runtime``: bubblewrap, else Docker, else a refusal that says what to do.

The environment each test passes is its own (``environ=``), so a missing ``bwrap`` or
Docker engine is real: an empty ``PATH``, a socket path that does not exist, a port
nobody listens on.
"""

from __future__ import annotations

import gc
import os
import shutil
import socket
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.runtime import (
    RUNTIME_VARIABLE,
    BubblewrapRuntime,
    LocalRuntime,
    NoSandboxError,
    default_runtime,
)
from system_programs import needs

needs_bwrap = needs("bwrap")


@pytest.fixture
def nothing(tmp_path: Path) -> dict[str, str]:
    """An environment with neither ``bwrap`` on ``PATH`` nor a Docker socket."""
    (tmp_path / "empty").mkdir()
    return {"PATH": str(tmp_path / "empty"), "DOCKER_HOST": f"unix://{tmp_path}/docker.sock"}


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory every user may enter: the probe runs ``bwrap`` as nobody under root."""
    path = Path(tempfile.mkdtemp(prefix="pygents-default-test-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path)


@needs_bwrap
async def test_the_default_is_the_bubblewrap_sandbox_without_a_word() -> None:
    lines: list[str] = []
    environ = {**os.environ, RUNTIME_VARIABLE: ""}
    runtime = default_runtime("quiet", environ=environ, report=lines.append)
    online = default_runtime("online", network=True, environ=environ, report=lines.append)
    try:
        assert isinstance(runtime, BubblewrapRuntime)
        assert runtime.network is False
        assert isinstance(online, BubblewrapRuntime)
        assert online.network is True
        assert (await runtime.run("echo sandboxed")).output == "sandboxed\n"
    finally:
        await runtime.close()
        await online.close()
    assert lines == []


def test_without_any_sandbox_it_refuses_and_says_how_to_get_one(
    nothing: dict[str, str],
) -> None:
    lines: list[str] = []
    with pytest.raises(NoSandboxError) as caught:
        default_runtime("none", environ=nothing, report=lines.append)
    message = str(caught.value)
    assert "bubblewrap: bwrap is not on PATH" in message
    assert f"Docker: no Docker engine: {nothing['DOCKER_HOST'][7:]} does not exist" in message
    assert "apt-get install bubblewrap" in message
    assert "start a Docker engine" in message
    assert f"{RUNTIME_VARIABLE}=local" in message
    assert lines == []


def test_an_engine_that_does_not_answer_is_the_last_fallback(nothing: dict[str, str]) -> None:
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        host = f"tcp://127.0.0.1:{closed.getsockname()[1]}"
        with warnings.catch_warnings():
            # docker leaves the socket of a refused connection to the garbage collector.
            warnings.simplefilter("ignore", ResourceWarning)
            with pytest.raises(NoSandboxError) as caught:
                default_runtime("none", environ={**nothing, "DOCKER_HOST": host})
            message = str(caught.value)
            del caught
            gc.collect()
    assert f"Docker: no Docker engine answers at {host}" in message
    assert len(message) < 1_000


def test_a_broken_bwrap_is_reported_with_its_own_words(
    nothing: dict[str, str], shared_dir: Path
) -> None:
    fake = shared_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(NoSandboxError) as caught:
        default_runtime("none", environ={**nothing, "PATH": str(shared_dir)})
    assert f"bubblewrap: {fake} failed (exit code 1): bwrap: setting up uid map" in str(
        caught.value
    )


async def test_local_is_used_only_when_asked_for_and_loudly(nothing: dict[str, str]) -> None:
    lines: list[str] = []
    runtime = default_runtime(
        "local", environ={**nothing, RUNTIME_VARIABLE: "local"}, report=lines.append
    )
    try:
        assert isinstance(runtime, LocalRuntime)
    finally:
        await runtime.close()
    (line,) = lines
    assert line.startswith("WARNING: commands run UNSANDBOXED on this machine")
    assert line.endswith(f"({RUNTIME_VARIABLE}=local)")


async def test_the_warning_goes_to_stderr_once_per_process(
    nothing: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    environ = {**nothing, RUNTIME_VARIABLE: " Local "}
    for _ in range(2):
        await default_runtime("local", environ=environ).close()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("UNSANDBOXED") <= 1  # once, unless an earlier test said it


@pytest.mark.parametrize("choice", ["bubblewrap", "docker"])
def test_an_explicit_choice_does_not_fall_back(nothing: dict[str, str], choice: str) -> None:
    with pytest.raises(NoSandboxError) as caught:
        default_runtime("none", environ={**nothing, RUNTIME_VARIABLE: choice})
    message = str(caught.value)
    assert ("bubblewrap:" in message) is (choice == "bubblewrap")
    assert ("Docker:" in message) is (choice == "docker")


def test_an_unknown_choice_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="is not one of auto, bubblewrap, docker, local") as caught:
        default_runtime("none", environ={RUNTIME_VARIABLE: "podman" * 200})
    assert len(str(caught.value)) < 200
