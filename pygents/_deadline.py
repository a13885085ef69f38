"""Deadlines for turns, cheap enough to consult for every streamed value.

``asyncio.timeout`` cannot be held across the ``yield`` of an async generator: it
would cancel whatever the *consumer* happens to be awaiting. A `Deadline`
instead cancels only the task running a step of turn code (the tool, or one of the
turn's own hooks up to its outcome); if it expires while the consumer has control,
the next step raises at once. This is how a streaming turn's
timeout bounds the whole stream, consumer time included, even when each step runs
in another task.

Drivers bracket each step: before it, `Deadline.enter` (or the same inline:
set ``task``/``baseline`` when the stepping task changed, then ``stepping = True``);
after it, ``stepping = False``, or `Deadline.settle` when it raised.

Timers: a bare turn arms its own. An agent runs one turn at a time, so its run
shares one `Watchdog` timer across consecutive deadlines instead of
scheduling and cancelling a timer per turn.
"""

from __future__ import annotations

import asyncio

__all__ = ["Deadline", "Watchdog"]


class Deadline:
    """One turn's deadline; see the module docstring for the stepping protocol.

    ``baseline`` is the stepping task's cancellation count when it took over, as
    ``asyncio.timeout`` records it on entry: after our cancellation is withdrawn, a
    count above it means someone else cancelled too, and cancellation wins.
    """

    __slots__ = (
        "_fired",
        "_handle",
        "_watchdog",
        "baseline",
        "expired",
        "loop",
        "stepping",
        "task",
        "when",
    )

    def __init__(
        self, timeout: float, loop: asyncio.AbstractEventLoop, watchdog: Watchdog | None = None
    ) -> None:
        self.loop = loop
        self.task: asyncio.Task[object] | None = None
        self.baseline = 0
        self.stepping = False
        self.expired = False
        self._fired: asyncio.Task[object] | None = None
        self.when = loop.time() + timeout
        self._watchdog = watchdog
        if watchdog is None:
            self._handle: asyncio.TimerHandle | None = loop.call_at(self.when, self.expire)
        else:
            self._handle = None
            watchdog.watch(self)

    def enter(self) -> None:
        """A step of turn code starts in the current task."""
        task = asyncio.current_task(self.loop)
        if task is not self.task:
            self.task = task
            self.baseline = task.cancelling() if task is not None else 0
        self.stepping = True

    def expire(self) -> None:
        """The deadline passed: interrupt the step in progress, or fail the next one."""
        self.expired = True
        task = self.task
        if self.stepping and task is not None:
            self._fired = task
            task.cancel()

    def settle(self, exc: BaseException | None) -> bool:
        """End the step, withdraw our cancellation; True if the step timed out."""
        self.stepping = False
        fired = self._fired
        if fired is None:
            return self.expired and exc is None
        self._fired = None
        ours = fired.uncancel() <= self.baseline
        return ours and (exc is None or isinstance(exc, asyncio.CancelledError))

    def close(self) -> None:
        """Disarm; the deadline no longer fires."""
        if self._handle is not None:
            self._handle.cancel()
        elif self._watchdog is not None:
            self._watchdog.release(self)


class Watchdog:
    """One timer serving the consecutive deadlines of an agent run.

    Deadlines of equal timeouts only move later, so the pending timer usually fires
    *before* the current deadline: it then re-arms itself for that deadline. Only a
    deadline earlier than the pending timer needs a new one.
    """

    __slots__ = ("_handle", "_when", "current", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.current: Deadline | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._when = 0.0

    def watch(self, deadline: Deadline) -> None:
        self.current = deadline
        if self._handle is None or self._when > deadline.when:
            self._arm(deadline.when)

    def release(self, deadline: Deadline) -> None:
        if self.current is deadline:
            self.current = None

    def _arm(self, when: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._handle = self.loop.call_at(when, self._fire)
        self._when = when

    def _fire(self) -> None:
        self._handle = None
        deadline = self.current
        if deadline is None:
            return
        if self.loop.time() >= deadline.when:
            self.current = None
            deadline.expire()
        else:
            self._arm(deadline.when)

    def close(self) -> None:
        """The run ended: cancel the timer."""
        self.current = None
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
