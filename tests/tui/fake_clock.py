"""The dashboard model's clock in tests (``from fake_clock import FakeClock``)."""

from __future__ import annotations


class FakeClock:
    """A monotonic clock the test moves by hand; the model reads it at ingestion.

    It moves only when told, and in whole microseconds, so durations, bars and
    timestamps drawn from it are exact.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now = round(self.now + seconds, 6)
