"""The bubblewrap sandbox is a boundary: secrets, processes, paths and network stay out.

Everything here runs real ``bwrap`` and real processes (CI installs bubblewrap). Tests
never sleep to synchronise: a background process started inside a command writes to a
FIFO in the working directory, which the test reads from outside; the FIFO reaches
end-of-file exactly when every process holding its write end has exited, which is how
"it is gone" is observed, together with a marker in the process's command line looked
up in the host's ``/proc``.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from assistant.runtime import (
    BubblewrapRuntime,
    LocalRuntime,
    Runtime,
    default_runtime,
)
from system_programs import needs

pytestmark = needs("bwrap")

SECRET = "sk-secret-" + secrets.token_hex(8)
#: The timeout of the commands that must time out: long enough for the command to have
#: started its background process first, even on a loaded machine.
EXPIRES = 5.0


@pytest.fixture
async def sandbox() -> AsyncIterator[BubblewrapRuntime]:
    async with BubblewrapRuntime(max_output=1_000, name="sandbox") as rt:
        yield rt


def _marked(marker: str) -> list[int]:
    """Live processes (zombies have no command line) whose command line holds ``marker``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


class Held:
    """A FIFO in a runtime's directory that a command's background process writes to.

    The test keeps a write end of its own until the background process has said
    ``ready``, so the reader cannot see end-of-file before that process opened it.
    """

    def __init__(self, root: Path) -> None:
        self.path = root / "held"
        os.mkfifo(self.path)
        os.chmod(self.path, 0o666)  # sandboxed commands may run as another user
        self._read_fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        self._keep: int | None = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
        self.reader = asyncio.StreamReader()

    async def __aenter__(self) -> Held:
        loop = asyncio.get_running_loop()
        self._transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(self.reader), os.fdopen(self._read_fd, "rb", 0)
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._let_go()
        self._transport.close()

    def _let_go(self) -> None:
        if self._keep is not None:
            os.close(self._keep)
            self._keep = None

    async def readline(self) -> bytes:
        async with asyncio.timeout(60):  # a bound for a broken run, not a synchronisation
            return await self.reader.readline()

    async def gone(self) -> None:
        """Return once no process holds the FIFO open for writing any more."""
        self._let_go()
        async with asyncio.timeout(60):
            await self.reader.read()


def _background(marker: str) -> str:
    """A command starting a ``setsid`` background process, then waiting for good."""
    return f"setsid sh -c 'echo ready; sleep 1000; exit 0' {marker} > held & sleep 1000"


@pytest.fixture(params=["bubblewrap", "local"])
async def any_runtime(request: pytest.FixtureRequest) -> AsyncIterator[Runtime]:
    runtime: Runtime
    if request.param == "bubblewrap":
        runtime = BubblewrapRuntime(name="sandbox")
    else:
        runtime = LocalRuntime(name="local")
    try:
        yield runtime
    finally:
        await runtime.close()


async def test_a_setsid_background_process_is_gone_after_a_timeout(any_runtime: Runtime) -> None:
    marker = f"pygents-held-{secrets.token_hex(6)}"
    async with Held(any_runtime.root) as held:
        run = asyncio.create_task(any_runtime.run(_background(marker), timeout=EXPIRES))
        assert await held.readline() == b"ready\n", "the background process never started"
        assert _marked(marker), "the background process is not visible from outside"
        result = await run
        assert result.timed_out
        assert result.exit_code is None
        assert "timed out" in result.summary()
        await held.gone()
    assert _marked(marker) == []


async def test_a_setsid_background_process_is_gone_after_close(any_runtime: Runtime) -> None:
    marker = f"pygents-held-{secrets.token_hex(6)}"
    async with Held(any_runtime.root) as held:
        run = asyncio.create_task(any_runtime.run(_background(marker), timeout=600))
        assert await held.readline() == b"ready\n", "the background process never started"
        assert _marked(marker)
        await any_runtime.close()
        await held.gone()
        result = await run
    assert not result.ok
    assert _marked(marker) == []


async def test_background_processes_end_with_the_command_in_the_sandbox(
    sandbox: BubblewrapRuntime,
) -> None:
    marker = f"pygents-held-{secrets.token_hex(6)}"
    async with Held(sandbox.root) as held:
        # The command waits (on a FIFO of its own) until the background process is up.
        command = (
            f"mkfifo up; setsid sh -c 'echo ready; echo > up; sleep 1000; exit 0' {marker}"
            " > held & read _ < up; echo started"
        )
        run = asyncio.create_task(sandbox.run(command))
        assert await held.readline() == b"ready\n"
        result = await run
        await held.gone()
    assert result.exit_code == 0
    assert result.output == "started\n"
    assert _marked(marker) == []


@pytest.mark.parametrize(
    "command",
    [
        "tr '\\0' '\\n' < /proc/$PPID/environ",
        "tr '\\0' '\\n' < /proc/1/environ",
        "env",
        "cat /proc/[0-9]*/environ | tr '\\0' '\\n'",
    ],
)
async def test_the_parent_environment_is_unreadable_in_the_sandbox(
    sandbox: BubblewrapRuntime, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("PYGENTS_TEST_TOKEN", SECRET)
    result = await sandbox.run(command)
    assert result.exit_code == 0, result.output
    assert f"HOME={sandbox.root}" in result.output  # it did read an environment
    assert SECRET not in result.output
    assert "OPENAI_API_KEY" not in result.output


async def test_the_default_runtime_hides_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("PYGENTS_ASSISTANT_RUNTIME", raising=False)
    runtime = default_runtime("default", report=pytest.fail)
    try:
        result = await runtime.run("tr '\\0' '\\n' < /proc/$PPID/environ; env")
    finally:
        await runtime.close()
    assert "PATH=" in result.output
    assert SECRET not in result.output


async def test_the_parent_processes_are_not_visible(sandbox: BubblewrapRuntime) -> None:
    result = await sandbox.run("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done")
    assert result.exit_code == 0
    assert "pytest" not in result.output
    assert "bwrap" in result.output  # pid 1 is the sandbox's own init
    pids = (await sandbox.run("ls -d /proc/[0-9]* | wc -l")).output
    assert int(pids) < 10


async def test_paths_outside_the_working_directory_do_not_exist(
    sandbox: BubblewrapRuntime, tmp_path: Path
) -> None:
    (tmp_path / "outside.txt").write_text("outside")
    outside = [tmp_path, tmp_path / "outside.txt", Path.home(), Path(__file__).parent]
    checks = "; ".join(f"test -e '{path}' && echo 'visible {path}'" for path in outside)
    result = await sandbox.run(f"{checks}; echo done")
    assert result.output == "done\n"


def _existing(name: str, directories: tuple[str, ...]) -> list[str]:
    return [directory for directory in directories if os.path.exists(f"{directory}/{name}")]


async def test_only_the_working_directory_is_writable(sandbox: BubblewrapRuntime) -> None:
    name = f"pygents-sandbox-{secrets.token_hex(6)}"
    result = await sandbox.run(
        f"for d in / /usr /etc /usr/local/bin; do touch $d/{name} 2>/dev/null && echo $d; done;"
        f" echo private > /tmp/{name} && echo tmp; echo mine > {name} && echo root"
    )
    assert result.output == "tmp\nroot\n"
    assert (sandbox.root / name).read_text() == "mine\n"
    # Nothing reached the host: not the system directories, not its /tmp.
    assert _existing(name, ("", "/usr", "/etc", "/usr/local/bin", "/tmp")) == []


async def test_files_the_tools_write_are_editable_by_commands(sandbox: BubblewrapRuntime) -> None:
    await sandbox.write_file("notes/a.txt", "one\n")
    result = await sandbox.run("echo two >> notes/a.txt && echo three > notes/b.txt && ls notes")
    assert result.output == "a.txt\nb.txt\n"
    assert await sandbox.read_file("notes/a.txt") == "one\ntwo\n"


async def _connect(runtime: BubblewrapRuntime) -> tuple[str, bool]:
    """Have a sandboxed command connect to a listener of this test on 127.0.0.1."""
    connected = asyncio.Event()

    async def accept(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connected.set()
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        result = await runtime.run(
            f"bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null"
            " && echo connected || echo refused",
            timeout=60,
        )
        if result.output == "connected\n":
            async with asyncio.timeout(60):
                await connected.wait()
    finally:
        server.close()
        await server.wait_closed()
    return result.output, connected.is_set()


async def test_the_network_is_off_by_default(sandbox: BubblewrapRuntime) -> None:
    assert await _connect(sandbox) == ("refused\n", False)


async def test_the_network_can_be_enabled() -> None:
    async with BubblewrapRuntime(name="online", network=True) as online:
        assert await _connect(online) == ("connected\n", True)


async def test_output_is_capped_in_the_sandbox(sandbox: BubblewrapRuntime) -> None:
    result = await sandbox.run("head -c 10000000 /dev/zero | tr '\\0' x; echo; exit 4")
    assert result.exit_code == 4
    assert result.truncated
    assert result.output == "x" * 1_000
    assert "truncated to the first 1000 characters" in result.summary()


async def test_a_timeout_is_reported_with_the_output_so_far(sandbox: BubblewrapRuntime) -> None:
    async with Held(sandbox.root) as held:
        command = "echo started; echo ready > held; sleep 1000"
        run = asyncio.create_task(sandbox.run(command, timeout=EXPIRES))
        assert await held.readline() == b"ready\n"
        result = await run
    assert result.timed_out
    assert result.output == "started\n"
    assert result.summary() == (
        "[timed out; the command and its child processes were killed]\nstarted\n"
    )


async def test_cancelling_a_command_kills_its_sandbox(sandbox: BubblewrapRuntime) -> None:
    marker = f"pygents-held-{secrets.token_hex(6)}"
    async with Held(sandbox.root) as held:
        run = asyncio.create_task(sandbox.run(_background(marker), timeout=600))
        assert await held.readline() == b"ready\n"
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        await held.gone()
    assert _marked(marker) == []


async def test_commands_do_not_run_as_root_on_the_host(sandbox: BubblewrapRuntime) -> None:
    marker = f"pygents-held-{secrets.token_hex(6)}"
    async with Held(sandbox.root) as held:
        run = asyncio.create_task(sandbox.run(_background(marker), timeout=600))
        assert await held.readline() == b"ready\n"
        # bwrap, its pid 1, the command's shell and the background shell all name it.
        host_uids = {os.stat(f"/proc/{pid}").st_uid for pid in _marked(marker)}
        await sandbox.close()
        await held.gone()
        await run
    assert host_uids == {os.getuid() if os.getuid() != 0 else 65534}


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root process hands directories over")
async def test_as_root_a_given_directory_is_handed_to_nobody_or_refused() -> None:
    base = Path(tempfile.mkdtemp(prefix="pygents-given-"))
    try:
        os.chmod(base, 0o755)
        (base / "open" / "sub").mkdir(parents=True)
        (base / "open" / "sub" / "kept.txt").write_text("kept\n")
        async with BubblewrapRuntime(base / "open") as runtime:
            result = await runtime.run("echo more >> sub/kept.txt && cat sub/kept.txt")
            assert result.output == "kept\nmore\n"
        assert os.stat(base / "open" / "sub" / "kept.txt").st_uid == 65534
        (base / "locked" / "root").mkdir(parents=True)
        os.chmod(base / "locked", 0o700)
        message = f"cannot enter {base / 'locked'} (mode 700)"
        with pytest.raises(PermissionError, match=re.escape(message)):
            BubblewrapRuntime(base / "locked" / "root")
        assert os.stat(base / "locked" / "root").st_uid == 0  # refused before handing over
    finally:
        shutil.rmtree(base)
