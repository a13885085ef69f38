"""What a panel shows of its rows: the user's filter and sort, remembered per panel.

Every filterable panel holds one `RowChoice` and passes its rows through `choose`;
the main screen edits it (``/`` types the filter, ``s`` and ``S`` sort) and shows
`describe` in the panel's title line, so an active filter stays in sight.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from pygents_tui._filter import FilterError, Query, parse

__all__ = ["Filterable", "RowChoice"]

Row = TypeVar("Row")


class RowChoice:
    """A panel's filter (the last query that parsed, and the error of the one typed
    since, if any) and its sort: one of ``sorts`` (column names), or none."""

    def __init__(self, sorts: Sequence[str] = ()) -> None:
        self.sorts = tuple(sorts)
        self.query = Query()
        self.typed = ""  # what the user typed, shown while editing again
        self.error: str | None = None
        self.sort: int | None = None  # an index in `sorts`; None: the panel's own order
        self.reverse = False
        self.version = 0  # bumped by every change, so that a panel knows to rebuild

    def set_query(self, text: str) -> None:
        """Filter by ``text``; a query that does not parse keeps the last good one and
        records its one-line error instead."""
        self.typed = text
        try:
            query = parse(text)
        except FilterError as exc:
            self.error = str(exc)
        else:
            self.error = None
            self.query = query
        self.version += 1

    def cycle_sort(self) -> None:
        """The next sort column, then the panel's own order again."""
        if not self.sorts:
            return
        if self.sort is None:
            self.sort = 0
        elif self.sort == len(self.sorts) - 1:
            self.sort = None
        else:
            self.sort += 1
        self.version += 1

    def flip_sort(self) -> None:
        """Reverse the sort (sorting by the first column if none was chosen)."""
        if not self.sorts:
            return
        if self.sort is None:
            self.sort = 0
        else:
            self.reverse = not self.reverse
        self.version += 1

    @property
    def sort_column(self) -> str | None:
        return None if self.sort is None else self.sorts[self.sort]

    def choose(
        self,
        rows: Iterable[Row],
        fields: Callable[[Row], Mapping[str, str]],
        sort_key: Callable[[Row, str], Any] | None = None,
    ) -> list[Row]:
        """The ``rows`` that pass the filter, sorted as chosen (stable: rows that tie
        keep the panel's order)."""
        query = self.query
        chosen = [row for row in rows if query.matches(fields(row))] if query else list(rows)
        column = self.sort_column
        if column is not None and sort_key is not None:
            chosen.sort(key=lambda row: sort_key(row, column), reverse=self.reverse)
        return chosen

    def describe(self) -> str:
        """The filter and sort in force, for the panel's title line ('' when none)."""
        parts = []
        if self.error is not None:
            parts.append(f"filter error: {self.error}")
        if self.query:
            parts.append(f"filter: {self.query.text}")
        column = self.sort_column
        if column is not None:
            parts.append(f"sort: {column} {'▼' if self.reverse else '▲'}")
        return " · ".join(parts)


class Filterable(Protocol):
    """A panel that filters (and may sort) its rows with a `RowChoice`."""

    choice: RowChoice

    def choice_changed(self) -> None:
        """Rebuild what is shown after the filter or the sort changed."""
