"""One deadline per turn, cheap enough to consult for every streamed value.

``asyncio.timeout`` cannot be held across the ``yield`` of an async generator: it
would cancel whatever the *consumer* happens to be awaiting. A :class:`Deadline`
instead cancels the task only while turn code is running (``stepping``); if it
expires while the consumer has control, the next step raises at once. This is how
a streaming turn's timeout bounds the whole stream, consumer time included.
"""

from __future__ import annotations

import asyncio

__all__ = ["Deadline"]


class Deadline:
    """Arm with a timeout in seconds; bracket turn code with ``stepping``.

    After a step raises, call :meth:`settle` with the exception: it withdraws the
    cancellation this deadline requested and says whether the step timed out. The
    same bookkeeping ``asyncio.timeout`` does, so cancellation from elsewhere still
    propagates as cancellation.
    """

    __slots__ = ("_cancelling", "_fired", "_handle", "_task", "expired", "stepping", "when")

    def __init__(self, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._cancelling = self._task.cancelling() if self._task is not None else 0
        self.stepping = False
        self.expired = False
        self._fired = False
        self.when = loop.time() + timeout
        self._handle = loop.call_at(self.when, self._on_deadline)

    def _on_deadline(self) -> None:
        self.expired = True
        if self.stepping and self._task is not None:
            self._fired = True
            self._task.cancel()

    def settle(self, exc: BaseException | None) -> bool:
        """Withdraw our cancellation (if we made one); True if the step timed out."""
        if not self._fired:
            return self.expired and exc is None
        self._fired = False
        assert self._task is not None
        ours = self._task.uncancel() <= self._cancelling
        return ours and (exc is None or isinstance(exc, asyncio.CancelledError))

    def close(self) -> None:
        """Disarm; the deadline no longer fires."""
        self._handle.cancel()
