"""What a panel shows of its rows: the user's filter and sort, remembered per panel.

Every filterable panel holds one `RowChoice` and passes its rows through `choose`;
the main screen edits it (``/`` types the filter, ``s`` and ``S`` sort) and shows
`describe` in the panel's title line, so an active filter stays in sight.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from pygents import StopReason
from pygents_tui.state import DashboardView, TurnRow
from pygents_tui.ui._filter import FilterError, Query, parse, state_words
from pygents_tui.ui.widgets._fit import split_label

__all__ = [
    "Filterable",
    "RowChoice",
    "agent_names",
    "turn_fields",
    "turn_name",
    "turn_sort_key",
]

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


_TURN_STATE = {
    StopReason.COMPLETED: "completed",
    StopReason.ERROR: "failed",
    StopReason.TIMEOUT: "timed out",
    StopReason.CANCELLED: "cancelled",
}


def agent_names(view: DashboardView) -> dict[str, str]:
    """Each agent's own name by key: turns carry their agent's key and label only."""
    return {row.key: row.name for row in view.agent_rows()}


def turn_name(turn: TurnRow, names: Mapping[str, str]) -> str:
    """The own name of ``turn``'s agent (its label when the agent is not listed)."""
    return names.get(turn.agent or "", turn.agent_label)


def turn_fields(turn: TurnRow, names: Mapping[str, str]) -> dict[str, str]:
    """What the filter matches a turn row against (Running, Timeline)."""
    service, instance, name = split_label(turn.agent_label, turn_name(turn, names))
    reason = turn.stop_reason
    state = _TURN_STATE.get(reason, str(reason)) if reason else "running"
    if turn.stale:
        state = "stale"
    fields = {
        "agent": name,
        "service": service,
        "instance": instance,
        "state": state_words(state),
        "tool": turn.tool,
        "text": turn.agent_label,
    }
    if turn.conversation is not None:
        fields["conversation"] = turn.conversation
    return fields


def turn_sort_key(turn: TurnRow, column: str, now: float) -> tuple[float, str]:
    """What sorting turns by ``column`` orders them by (then by their agent's label)."""
    label = turn.agent_label.casefold()
    if column == "tool":
        return 0, f"{turn.tool} {label}"
    if column == "took":
        return turn.elapsed_at(now), label
    if column == "started":
        return turn.started, label
    return 0, label
