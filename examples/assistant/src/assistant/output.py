"""What every runtime shares about running a command: the result, the output cap, the timeout.

The three runtimes (:mod:`.local`, :mod:`.sandbox`, :mod:`.container`) start commands
differently, but cap their output and enforce their timeout with the same two pieces,
so that a command behaves the same wherever it runs:

* :class:`CappedText` decodes bytes incrementally and keeps at most ``limit``
  characters; past the cap it keeps accepting (and discarding) bytes, so a command
  printing gigabytes neither blocks on a full pipe nor fills memory. ``read_file``
  uses it too, so a file is capped exactly like command output.
* :func:`supervise` waits for a command for at most ``timeout`` seconds; on expiry or
  cancellation it kills the command (each runtime says how) and gives the rest of the
  output a bounded time to arrive.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

__all__ = [
    "CappedText",
    "CommandResult",
    "bounded",
    "check_command",
    "check_timeout",
    "supervise",
]

#: How long to keep reading output after killing a command that timed out.
DRAIN_AFTER_KILL = 1.0
#: Bytes read from a pipe or a file at a time.
CHUNK = 64 * 1024


def bounded(value: object, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters: user values never flood a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def check_command(command: object) -> str:
    """``command`` if it is a shell command line, or a :class:`ValueError` for the model."""
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"command must be a non-empty string, got {bounded(command)}")
    if "\0" in command:
        raise ValueError("command must not contain NUL bytes")
    return command


def check_timeout(timeout: object) -> float:
    """``timeout`` as seconds, or a :class:`ValueError` the model can act on."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise ValueError(f"timeout must be a number of seconds, got {bounded(timeout)}")
    if not (math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout must be a positive, finite number of seconds, got {timeout}")
    return float(timeout)


@dataclass(frozen=True)
class CommandResult:
    """What a command did: its exit code (``None`` if it was killed on timeout) and output.

    ``output`` is stdout and stderr interleaved, decoded as UTF-8 (undecodable bytes
    replaced), and at most ``max_output`` characters long; ``truncated`` says the rest
    was discarded.
    """

    command: str
    exit_code: int | None
    output: str
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        """True when the command finished on its own with exit code 0."""
        return not self.timed_out and self.exit_code == 0

    def summary(self) -> str:
        """A compact text for the model: a status line, then the output."""
        if self.timed_out:
            status = "timed out; the command and its child processes were killed"
        else:
            status = f"exit code {self.exit_code}"
        if self.truncated:
            status += f"; output truncated to the first {len(self.output)} characters"
        if not self.output:
            return f"[{status}] (no output)"
        return f"[{status}]\n{self.output}"


class CappedText:
    """Decode a byte stream incrementally, keeping at most ``limit`` characters."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []
        self._size = 0
        self.truncated = False

    @property
    def full(self) -> bool:
        """True once ``limit`` characters are kept: anything more is cut."""
        return self._size >= self._limit

    def _add(self, text: str) -> None:
        room = self._limit - self._size
        if len(text) > room:
            text = text[:room]
            self.truncated = True
        if text:
            self._parts.append(text)
            self._size += len(text)

    def feed(self, chunk: bytes) -> None:
        if self.full:
            if chunk:
                self.truncated = True  # keep draining the source, discard the bytes
            return
        self._add(self._decoder.decode(chunk))

    async def drain(self, stream: asyncio.StreamReader) -> None:
        """Feed everything ``stream`` yields until its end."""
        while chunk := await stream.read(CHUNK):
            self.feed(chunk)

    def text(self) -> str:
        if not self.full:
            self._add(self._decoder.decode(b"", final=True))
        return "".join(self._parts)


async def supervise(
    work: Callable[[], Awaitable[None]],
    *,
    timeout: float,  # noqa: ASYNC109 - expiry must kill the command, not only stop waiting
    kill: Callable[[], Awaitable[None]],
    leftovers: Callable[[], Awaitable[None]],
) -> bool:
    """Await ``work()`` for at most ``timeout`` seconds; return True if it timed out.

    On expiry, and also when the caller is cancelled, ``kill()`` runs before this
    returns (or the cancellation propagates), then ``leftovers()`` gets
    :data:`DRAIN_AFTER_KILL` seconds to collect what the command printed last.
    """
    finished = timed_out = False
    try:
        try:
            async with asyncio.timeout(timeout):
                await work()
            finished = True
        except TimeoutError:
            timed_out = True
    finally:
        if not finished:
            await kill()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(DRAIN_AFTER_KILL):
                    await leftovers()
    return timed_out
