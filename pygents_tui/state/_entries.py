"""The dashboard's log lines and value previews, and the bounded ring that keeps them.

One definition for every source: the in-process subscriber and the OTLP receiver
both write these, and every panel reads them the same way."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["LogEntry", "Ring", "ValueEntry"]

T = TypeVar("T")


@dataclass(slots=True)
class ValueEntry:
    """One value a turn produced, as the values panel shows it (a bounded preview)."""

    at: float
    tool: str
    text: str


@dataclass(slots=True)
class LogEntry:
    """One line of the event log; ``agent`` is the agent's label (or ``—``)."""

    at: float
    agent: str
    kind: str
    text: str


class Ring(Generic[T]):
    """A bounded deque that remembers how many items it was ever given, so the
    number that fell off (``dropped``) can be shown, and a reader can tell how many
    items are new since it last looked (``total``)."""

    __slots__ = ("items", "total")

    def __init__(self, maxlen: int) -> None:
        self.items: deque[T] = deque(maxlen=maxlen)
        self.total = 0

    def append(self, item: T) -> None:
        self.items.append(item)
        self.total += 1

    @property
    def maxlen(self) -> int | None:
        """How many items it keeps."""
        return self.items.maxlen

    @property
    def dropped(self) -> int:
        return self.total - len(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __getitem__(self, index: int) -> T:
        return self.items[index]
