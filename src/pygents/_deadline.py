"""One deadline per turn, cheap enough to consult for every streamed value.

``asyncio.timeout`` cannot be held across the ``yield`` of an async generator: it
would cancel whatever the *consumer* happens to be awaiting. A :class:`Deadline`
instead cancels only the task running a step of turn code (:meth:`enter` /
:meth:`leave` bracket each step); if it expires while the consumer has control,
the next step raises at once. This is how a streaming turn's timeout bounds the
whole stream, consumer time included, even when each step runs in another task.
"""

from __future__ import annotations

import asyncio

__all__ = ["Deadline"]


class Deadline:
    """Arm with a timeout in seconds; bracket each step of turn code.

    After a step raises, :meth:`settle` withdraws the cancellation this deadline
    requested and says whether the step timed out — the bookkeeping
    ``asyncio.timeout`` does, so cancellation from elsewhere still propagates as
    cancellation.
    """

    __slots__ = ("_cancelling", "_fired", "_handle", "_loop", "expired", "task", "when")

    def __init__(self, timeout: float) -> None:
        self._loop = loop = asyncio.get_running_loop()
        self.task: asyncio.Task[object] | None = None
        self._cancelling = 0
        self.expired = False
        self._fired: asyncio.Task[object] | None = None
        self.when = loop.time() + timeout
        self._handle = loop.call_at(self.when, self._on_deadline)

    def enter(self) -> None:
        """A step of turn code starts in the current task."""
        task = asyncio.current_task(self._loop)
        self.task = task
        self._cancelling = task.cancelling() if task is not None else 0

    def leave(self) -> None:
        """The step ended; the consumer has control."""
        self.task = None

    def _on_deadline(self) -> None:
        self.expired = True
        task = self.task
        if task is not None:
            self._fired = task
            task.cancel()

    def settle(self, exc: BaseException | None) -> bool:
        """Leave the step, withdraw our cancellation; True if the step timed out."""
        self.task = None
        fired = self._fired
        if fired is None:
            return self.expired and exc is None
        self._fired = None
        ours = fired.uncancel() <= self._cancelling
        return ours and (exc is None or isinstance(exc, asyncio.CancelledError))

    def close(self) -> None:
        """Disarm; the deadline no longer fires."""
        self._handle.cancel()
