"""SIGINT noted rather than raised, where raising it would land somewhere that
cannot take it."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["noted_interrupts"]


@contextmanager
def noted_interrupts() -> Iterator[Callable[[], bool]]:
    """SIGINT noted, not raised, while inside: the function says whether one came.

    Used where a `KeyboardInterrupt` would be lost or mangled: while the listen
    extra imports (grpcio's extension module, at its floor, swallows what is raised
    in its initialization, and the dashboard then started after a Ctrl-C), and while
    ``listen``'s receiver starts (a dashboard cancelled as it mounts prints Textual's
    errors). The caller checks the function when it is safe to stop."""
    noted: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        noted.append(signum)

    try:
        previous = signal.signal(signal.SIGINT, note)
    except ValueError:  # not the main thread: signals are not ours to handle
        yield lambda: False
        return
    try:
        yield lambda: bool(noted)
    finally:
        signal.signal(signal.SIGINT, previous)
