"""The assistant's process runtimes: commands, timeouts, output cap, confined files.

The tests that describe behaviour every runtime shares run against both the bubblewrap
sandbox and :class:`LocalRuntime`; the ones about how ``LocalRuntime`` kills process
groups, and keeps background processes until ``close()``, use it alone.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant.process import ProcessRuntime
from assistant.runtime import (
    BubblewrapRuntime,
    CommandResult,
    LocalRuntime,
    PathEscapeError,
    Runtime,
)
from system_programs import needs

KINDS = ["local", pytest.param("bubblewrap", marks=needs("bwrap"))]
#: LocalRuntime or BubblewrapRuntime: they take the same arguments.
RuntimeClass = Callable[..., ProcessRuntime]


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> RuntimeClass:
    return LocalRuntime if request.param == "local" else BubblewrapRuntime


@pytest.fixture
async def runtime(kind: RuntimeClass) -> AsyncIterator[ProcessRuntime]:
    async with kind(max_output=1_000, name="test") as rt:
        yield rt


@pytest.fixture
async def local() -> AsyncIterator[LocalRuntime]:
    async with LocalRuntime(max_output=1_000, name="test") as rt:
        yield rt


@pytest.fixture
def reachable() -> Iterator[Path]:
    """A directory any user may enter (``tmp_path`` may be private to root, and the
    sandbox does not run commands as root)."""
    path = Path(tempfile.mkdtemp(prefix="pygents-runtime-test-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path)


def _alive(pid: int) -> bool:
    """True if ``pid`` is a live process; an unreaped zombie counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_gone(pid: int, within: float = 30.0) -> bool:
    """Wait until ``pid`` exits (a zombie counts as gone), on a pidfd: no polling loop.

    ``within`` only bounds a broken run; a process that is gone returns at once.
    """
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)  # readable once the process has exited
        return bool(poller.poll(within * 1000))
    finally:
        os.close(pidfd)


def test_local_runtime_satisfies_protocol(kind: RuntimeClass, reachable: Path) -> None:
    assert isinstance(kind(reachable / "rt"), Runtime)


async def test_run_captures_output_and_exit_code(runtime: ProcessRuntime) -> None:
    result = await runtime.run("echo hello; echo oops >&2; pwd; echo $HOME")
    assert result.exit_code == 0
    assert not result.timed_out
    assert not result.truncated
    assert result.output.splitlines() == ["hello", "oops", str(runtime.root), str(runtime.root)]
    assert result.summary() == f"[exit code 0]\n{result.output}"


async def test_nonzero_exit(runtime: ProcessRuntime) -> None:
    result = await runtime.run("echo failing; exit 3")
    assert result.exit_code == 3
    assert result.output == "failing\n"
    assert not result.ok
    assert result.summary().startswith("[exit code 3]\n")


async def test_no_output_summary(runtime: ProcessRuntime) -> None:
    result = await runtime.run("true")
    assert result == CommandResult("true", 0, "")
    assert result.summary() == "[exit code 0] (no output)"


async def test_secrets_not_in_environment(
    runtime: ProcessRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYGENTS_TEST_SECRET", "hunter2")
    result = await runtime.run("env")
    assert "hunter2" not in result.output
    assert f"HOME={runtime.root}" in result.output


async def test_timeout_kills_process_group(local: LocalRuntime) -> None:
    started = time.monotonic()
    result = await local.run(
        "echo $$ > shell.pid; sleep 30 & echo $! > child.pid; echo started; wait",
        timeout=0.2,
    )
    assert time.monotonic() - started < 5
    assert result.timed_out
    assert result.exit_code is None
    assert result.output == "started\n"
    assert "timed out" in result.summary()
    shell_pid = int((local.root / "shell.pid").read_text())
    child_pid = int((local.root / "child.pid").read_text())
    assert _wait_gone(shell_pid)
    assert _wait_gone(child_pid)
    with pytest.raises(ProcessLookupError):
        os.kill(shell_pid, 0)


async def test_output_is_capped_without_blocking(runtime: ProcessRuntime) -> None:
    started = time.monotonic()
    result = await runtime.run("head -c 10000000 /dev/zero | tr '\\0' x; echo; exit 4")
    assert time.monotonic() - started < 10
    assert result.exit_code == 4
    assert result.truncated
    assert len(result.output) == runtime.max_output == 1_000
    assert set(result.output) == {"x"}
    assert "truncated to the first 1000 characters" in result.summary()


async def test_output_cap_counts_characters_not_bytes(runtime: ProcessRuntime) -> None:
    # 999 ASCII characters then a multi-byte one: exactly at the cap, not truncated.
    result = await runtime.run("printf '%0999d\\303\\251' 0")
    assert result.output == "0" * 999 + "é"
    assert not result.truncated


async def test_undecodable_output_is_replaced(runtime: ProcessRuntime) -> None:
    result = await runtime.run("printf 'a\\377b'")
    assert result.output == "a\ufffdb"


async def test_write_read_round_trip(runtime: ProcessRuntime) -> None:
    confirmation = await runtime.write_file("a/b/c.txt", "héllo\n")
    assert "a/b/c.txt" in confirmation
    assert await runtime.read_file("a/b/c.txt") == "héllo\n"
    assert (runtime.root / "a" / "b" / "c.txt").read_text(encoding="utf-8") == "héllo\n"
    await runtime.write_file("a/b/c.txt", "replaced")
    assert await runtime.read_file("./a/b/../b/c.txt") == "replaced"
    result = await runtime.run("cat a/b/c.txt")
    assert result.output == "replaced"


async def test_read_missing_file(runtime: ProcessRuntime) -> None:
    with pytest.raises(FileNotFoundError, match=re.escape("'nope.txt' does not exist")):
        await runtime.read_file("nope.txt")


@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd"])
async def test_path_escapes_refused(runtime: ProcessRuntime, path: str) -> None:
    message = re.escape(f"outside the working directory {runtime.root}; use a path inside it")
    with pytest.raises(PathEscapeError, match=message):
        await runtime.read_file(path)
    with pytest.raises(PathEscapeError, match=message):
        await runtime.write_file(path, "x")
    assert not (runtime.root.parent / "x").exists()


async def test_symlink_pointing_outside_refused(runtime: ProcessRuntime, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (runtime.root / "link").symlink_to(outside)
    (runtime.root / "file_link").symlink_to(outside / "secret.txt")
    with pytest.raises(PathEscapeError):
        await runtime.read_file("link/secret.txt")
    with pytest.raises(PathEscapeError):
        await runtime.read_file("file_link")
    with pytest.raises(PathEscapeError):
        await runtime.write_file("link/new.txt", "x")
    assert not (outside / "new.txt").exists()
    assert (outside / "secret.txt").read_text() == "secret"


async def test_symlink_inside_root_allowed(runtime: ProcessRuntime) -> None:
    await runtime.write_file("real.txt", "data")
    (runtime.root / "alias.txt").symlink_to(runtime.root / "real.txt")
    assert await runtime.read_file("alias.txt") == "data"


async def test_runtimes_are_isolated(kind: RuntimeClass) -> None:
    async with kind() as one, kind() as two:
        assert one.root != two.root
        await one.write_file("mine.txt", "one")
        assert await one.list_files() == ["mine.txt"]
        assert await two.list_files() == []
        with pytest.raises(FileNotFoundError):
            await two.read_file("mine.txt")
        assert (await two.run("ls")).output == ""


async def test_close_removes_temp_dir(kind: RuntimeClass) -> None:
    rt = kind()
    root = rt.root
    assert root.is_dir()
    assert root.name.startswith("pygents-assistant-")
    await rt.write_file("x/y.txt", "data")
    await rt.close()
    assert not root.exists()
    await rt.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        await rt.run("true")


async def test_close_keeps_given_root(kind: RuntimeClass, reachable: Path) -> None:
    root = reachable / "given" / "dir"
    async with kind(root) as rt:
        assert root.is_dir()
        await rt.write_file("kept.txt", "data")
    assert (root / "kept.txt").read_text() == "data"


async def test_close_kills_background_processes(local: LocalRuntime) -> None:
    result = await local.run("sleep 30 > /dev/null 2>&1 & echo $! > bg.pid")
    assert result.exit_code == 0
    pid = int((local.root / "bg.pid").read_text())
    assert _alive(pid)
    await local.close()
    assert _wait_gone(pid)


async def test_list_files(runtime: ProcessRuntime) -> None:
    assert await runtime.list_files() == []
    await runtime.write_file("b.txt", "")
    await runtime.write_file("a/z.txt", "")
    await runtime.write_file("a/b/c.txt", "")
    await runtime.run("mkdir -p empty/dir && touch .hidden")
    assert await runtime.list_files() == [".hidden", "a/b/c.txt", "a/z.txt", "b.txt"]


@pytest.mark.parametrize(
    ("command", "seconds", "message"),
    [
        (None, 1.0, "command must be a non-empty string, got None"),
        ("  ", 1.0, "command must be a non-empty string"),
        ("echo a\0b", 1.0, "NUL"),
        ("true", "abc", "timeout must be a number of seconds, got 'abc'"),
        ("true", True, "timeout must be a number"),
        ("true", float("nan"), "positive, finite"),
        ("true", float("inf"), "positive, finite"),
        ("true", -100, "positive, finite"),
        ("true", 0, "positive, finite"),
    ],
)
async def test_bad_arguments_are_value_errors_for_the_model(
    runtime: ProcessRuntime, command: Any, seconds: Any, message: str
) -> None:
    """What a model may send: the runtime refuses it with a message, and stays usable."""
    with pytest.raises(ValueError, match=re.escape(message)):
        await runtime.run(command, timeout=seconds)
    assert (await runtime.run("echo still fine")).output == "still fine\n"
