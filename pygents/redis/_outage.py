"""What a worker's log says while it cannot use Redis: one line, not one per retry.

A worker's loops (reader, keeper, statistics, control, writer) each back off and retry
on their own when Redis is away (`pygents.redis._producer.replies.Backoff`). Each used to say so
once, without saying where, and then retry quietly forever: a wrong URL showed as five
anonymous lines and then silence. An `Outage` is shared by one worker's loops and
speaks for all of them: one WARNING line at the first failure, naming the URL (without
credentials) and the reason; one line every ``remind_every`` seconds while any loop
still fails (not one per retry); one line once every loop that failed works again.
"""

from __future__ import annotations

import logging
import time
from typing import Final

from pygents.redis._mailbox_types import bounded

__all__ = ["REMIND_EVERY", "Outage"]

_log = logging.getLogger("pygents.redis")

REMIND_EVERY: Final = 30.0
"""Seconds between two "still cannot use Redis" lines of one outage."""


class Outage:
    """One worker's failures to use Redis at ``where``, for its log (see the module)."""

    __slots__ = ("_failing", "_last_line", "_since", "failures", "remind_every", "where", "who")

    def __init__(self, who: str, where: str, remind_every: float | None = None) -> None:
        self.who = who
        self.where = where
        self.remind_every = REMIND_EVERY if remind_every is None else remind_every
        self.failures = 0  # in the current outage
        self._failing: set[object] = set()  # the loops (their backoffs) failing now
        self._since: float | None = None
        self._last_line = 0.0

    @property
    def ongoing(self) -> bool:
        return self._since is not None

    def failed(self, loop: object, what: str, exc: BaseException) -> None:
        """Loop ``loop`` failed at ``what`` with ``exc`` (it backs off, then retries)."""
        now = time.monotonic()
        self._failing.add(loop)
        self.failures += 1
        reason = f"{type(exc).__name__}: {bounded(str(exc))}"
        if self._since is None:
            self._since = self._last_line = now
            _log.warning(
                "pygents.redis: worker %s cannot use Redis at %s: %s failed (%s); "
                "retrying with backoff until it works",
                self.who,
                self.where,
                what,
                reason,
            )
        elif now - self._last_line >= self.remind_every:
            self._last_line = now
            _log.warning(
                "pygents.redis: worker %s still cannot use Redis at %s after %.0f s "
                "(%d failures; the last: %s failed, %s); retrying",
                self.who,
                self.where,
                now - self._since,
                self.failures,
                what,
                reason,
            )

    def succeeded(self, loop: object) -> None:
        """Loop ``loop`` works (again); the outage ends once no loop fails."""
        self._failing.discard(loop)
        if self._since is None or self._failing:
            return
        _log.warning(
            "pygents.redis: worker %s uses Redis at %s again, after %.1f s and %d failures",
            self.who,
            self.where,
            time.monotonic() - self._since,
            self.failures,
        )
        self._since = None
        self.failures = 0
