"""The file tools stay inside the working directory: links, races, FIFOs, big files.

They run against both process runtimes: the file operations are shared, but the
sandbox hands its directory to another user when the tests run as root.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from assistant.files import (
    DirectoryError,
    FileToolError,
    LinkedFileError,
    MissingFileError,
    NotRegularFileError,
)
from assistant.runtime import (
    BubblewrapRuntime,
    LocalRuntime,
    PathEscapeError,
    Runtime,
)
from system_programs import needs

LIMIT = 1_000
KINDS = ["local", pytest.param("bubblewrap", marks=needs("bwrap"))]


@pytest.fixture(params=KINDS)
async def runtime(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Runtime]:
    """A runtime in a fresh directory, and ``tmp_path/outside/secret.txt`` outside it."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret")
    made: Runtime
    if request.param == "local":
        made = LocalRuntime(max_output=LIMIT)
    else:
        made = BubblewrapRuntime(max_output=LIMIT)
    try:
        yield made
    finally:
        await made.close()


@pytest.fixture
def linked_secret(runtime: Runtime) -> Iterator[Path]:
    """A secret file outside the runtime's directory, hard-linked into it as
    ``linked.txt``. It lives beside the directory (the same file system, so the link
    can always be made) and is removed after the test."""
    outside = Path(tempfile.mkdtemp(prefix="outside-", dir=runtime.root.parent))
    secret = outside / "secret.txt"
    secret.write_text("secret")
    os.link(secret, runtime.root / "linked.txt")
    try:
        yield secret
    finally:
        shutil.rmtree(outside)


async def test_every_refusal_is_a_value_error_with_a_bounded_message(runtime: Runtime) -> None:
    long = "x/" * 3_000 + "../" * 3_001
    for call in (runtime.read_file(long), runtime.write_file(long, "data")):
        with pytest.raises(FileToolError) as caught:
            await call
        assert isinstance(caught.value, ValueError)
        assert len(str(caught.value)) < 300
    for path in ("", "   ", "a\0b"):
        with pytest.raises(FileToolError, match="path"):
            await runtime.read_file(path)


async def test_a_hard_link_to_a_file_outside_is_not_read(
    runtime: Runtime, linked_secret: Path
) -> None:
    with pytest.raises(LinkedFileError, match=re.escape("'linked.txt' has 2 hard links")):
        await runtime.read_file("linked.txt")


async def test_writing_to_a_hard_link_replaces_it_and_leaves_the_outside_file_alone(
    runtime: Runtime, linked_secret: Path
) -> None:
    secret = linked_secret
    assert await runtime.write_file("linked.txt", "mine") == "wrote 4 characters to linked.txt"
    assert secret.read_text() == "secret"
    assert secret.stat().st_nlink == 1
    assert await runtime.read_file("linked.txt") == "mine"


async def test_reading_a_fifo_is_refused_without_blocking(runtime: Runtime) -> None:
    os.mkfifo(runtime.root / "pipe")
    try:
        async with asyncio.timeout(30):  # a bound for a broken run: it must not block at all
            with pytest.raises(NotRegularFileError, match="FIFO"):
                await runtime.read_file("pipe")
            with pytest.raises(NotRegularFileError, match="FIFO"):
                await runtime.write_file("pipe", "data")
    finally:  # had it blocked, a writer lets the worker thread go
        fd = os.open(runtime.root / "pipe", os.O_RDWR | os.O_NONBLOCK)
        os.close(fd)
    assert stat.S_ISFIFO(os.stat(runtime.root / "pipe").st_mode)


async def test_sockets_and_devices_are_refused(runtime: Runtime) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(runtime.root / "sock"))
        with pytest.raises(NotRegularFileError, match="a socket"):
            await runtime.read_file("sock")
    try:
        os.mknod(runtime.root / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        return  # making a device needs privileges the test may not have
    with pytest.raises(NotRegularFileError, match="a character device"):
        await runtime.read_file("null")


async def test_a_large_file_is_cut_with_a_note(runtime: Runtime) -> None:
    await runtime.write_file("big.txt", "")  # then sparse: 512 MiB of NUL bytes, at once
    os.truncate(runtime.root / "big.txt", 512 * 1024 * 1024)
    text = await runtime.read_file("big.txt")
    content, note = text[:LIMIT], text[LIMIT:]
    assert content == "\0" * LIMIT
    assert note == (
        "\n[read_file: cut here; the file has 536,870,912 bytes and only its first 1,000 "
        "characters are shown. Use bash (head, tail, sed -n, grep) to read the rest.]"
    )


async def test_a_file_exactly_at_the_cap_is_not_cut(runtime: Runtime) -> None:
    await runtime.write_file("exact.txt", "é" * LIMIT)
    assert await runtime.read_file("exact.txt") == "é" * LIMIT
    await runtime.write_file("over.txt", "é" * (LIMIT + 1))
    assert (await runtime.read_file("over.txt")).startswith("é" * LIMIT + "\n[read_file: cut")


async def test_symlinks_inside_the_root_are_followed_inside_it(runtime: Runtime) -> None:
    await runtime.write_file("a/b/real.txt", "data")
    (runtime.root / "a" / "rel").symlink_to("b/real.txt")
    (runtime.root / "a" / "up").symlink_to("../a/b")
    (runtime.root / "abs").symlink_to(runtime.root / "a" / "b")
    assert await runtime.read_file("a/rel") == "data"
    assert await runtime.read_file("a/up/real.txt") == "data"
    assert await runtime.read_file("abs/real.txt") == "data"
    await runtime.write_file("a/rel", "changed")  # writes the target, keeps the link
    assert (runtime.root / "a" / "rel").is_symlink()
    assert await runtime.read_file("a/b/real.txt") == "changed"


async def test_symlinks_leading_outside_are_refused(runtime: Runtime, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (runtime.root / "d").mkdir()
    (runtime.root / "d" / "up").symlink_to("../../outside/secret.txt")
    (runtime.root / "loop").symlink_to("loop")
    (runtime.root / "abs").symlink_to(outside)
    for path in ("d/up", "abs/secret.txt"):
        with pytest.raises(PathEscapeError):
            await runtime.read_file(path)
    with pytest.raises(PathEscapeError):
        await runtime.write_file("abs/new.txt", "x")
    with pytest.raises(FileToolError, match="too many symlinks"):
        await runtime.read_file("loop")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_missing_files_and_directories_are_reported(runtime: Runtime) -> None:
    await runtime.write_file("file.txt", "x")
    with pytest.raises(MissingFileError, match="does not exist"):
        await runtime.read_file("nope.txt")
    with pytest.raises(MissingFileError, match="'nope' does not exist"):
        await runtime.read_file("nope/file.txt")
    with pytest.raises(MissingFileError, match="is not a directory"):
        await runtime.write_file("file.txt/inner.txt", "x")
    for path in (".", "..", "sub/.."):
        await runtime.write_file("sub/x.txt", "x")
        with pytest.raises((DirectoryError, PathEscapeError)):
            await runtime.read_file(path)
    with pytest.raises(IsADirectoryError):
        await runtime.write_file("sub", "x")


async def test_writes_keep_the_mode_of_the_file_they_replace(runtime: Runtime) -> None:
    await runtime.write_file("run.sh", "#!/bin/sh\necho one\n")
    os.chmod(runtime.root / "run.sh", 0o755)
    await runtime.write_file("run.sh", "#!/bin/sh\necho two\n")
    assert stat.S_IMODE(os.stat(runtime.root / "run.sh").st_mode) == 0o755
    assert (await runtime.run("./run.sh")).output == "two\n"
    assert await runtime.list_files() == ["run.sh"]  # no temporary file left behind


_SWAPPER = """
import ctypes, os, sys
root, outside = sys.argv[1], sys.argv[2]
directory, link = os.path.join(root, "d"), os.path.join(root, "d.link")
os.symlink(outside, link)
renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
AT_FDCWD, RENAME_EXCHANGE = -100, 2
print("swapping", flush=True)
while True:  # "d" is the directory, then the symlink to outside, then the directory...
    if renameat2(AT_FDCWD, directory.encode(), AT_FDCWD, link.encode(), RENAME_EXCHANGE):
        raise OSError(ctypes.get_errno(), "renameat2")
"""


def _files_under(root: Path) -> list[str]:
    return [name for _top, _dirs, names in os.walk(root) for name in names]


async def test_a_directory_swapped_for_a_symlink_never_lets_a_write_out(
    tmp_path: Path,
) -> None:
    """Another process atomically exchanges ``d`` with a symlink to a directory outside,
    back and forth, as fast as it can, while the file tools write into ``d``: every write
    lands inside the root or is refused; nothing lands outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    async with LocalRuntime(tmp_path / "root") as runtime:
        (runtime.root / "d").mkdir()
        swapper = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _SWAPPER,
            str(runtime.root),
            str(outside),
            stdout=asyncio.subprocess.PIPE,
        )
        assert swapper.stdout is not None
        try:
            assert await swapper.stdout.readline() == b"swapping\n"
            written = refused = 0
            for number in range(3_000):
                try:
                    await runtime.write_file(f"d/{number}.txt", "x")
                    written += 1
                except FileToolError:  # refused: an escape, or it kept changing
                    refused += 1
            assert swapper.returncode is None, "the swapper stopped before the writes did"
        finally:
            swapper.kill()
            await swapper.wait()
        assert list(outside.iterdir()) == []
        assert len(_files_under(runtime.root)) == written
        assert written + refused == 3_000
