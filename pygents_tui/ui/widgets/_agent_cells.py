"""What the agents table writes in a row: each cell's text and style, and what its
filter and its sorts read of an agent (`pygents_tui.ui.widgets.agents`)."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text

from pygents_tui.state import AgentRow, Capacity
from pygents_tui.text._cut import cut
from pygents_tui.text._plain import plain
from pygents_tui.text._visible import visible
from pygents_tui.ui._filter import state_words
from pygents_tui.ui.widgets._fit import fit_label, split_label
from pygents_tui.ui.widgets._text import sparkline

__all__ = [
    "TOKENS_COLUMN",
    "agent_fields",
    "agent_sort_key",
    "cell",
    "cells",
    "sized",
    "unseen_turns",
]

_STATE_STYLE = {
    "running": ("running", "green"),
    "paused": ("paused", "yellow"),
    "finished": ("done", "blue"),
    "failed": ("failed", "red"),
    "idle": ("idle", "dim"),
    "stale": ("stale", "dim italic"),  # listen mode: its process stopped sending
}
TOKENS_COLUMN = ("tokens", "Tokens", 6)
_GONE = "—"  # what a finished agent no longer has: a queue, a context


def cell(column: str, value: str, finished: bool) -> Text:
    """A cell as plain text: agent and tool names are data, never markup nor control
    codes. A finished agent's cells are dimmed."""
    if column == "state":
        label, style = _STATE_STYLE.get(value, (value, ""))
        return plain(label, style="dim" if finished else style)
    if column == "rate":  # coloured: in a browser, white blocks read as a rendering fault
        return plain(value, style="dim" if finished else "cyan")
    return plain(value, style="dim" if finished else "")


def _capacity(capacity: Capacity | None) -> str:
    if capacity is None:
        return "?"
    return f"{capacity.size}/{capacity.limit or '∞'}"


def unseen_turns(row: AgentRow) -> bool:
    """Whether none of ``row``'s turns is reported here (a mailbox heard of only in
    Redis): its counts and values are unknown, shown ``?``, not ``0``."""
    return bool(getattr(row, "turns_unseen", False))


def _counts(row: AgentRow) -> str:
    """Completed / failed / timed out, then ``⊘n`` once a turn was cancelled (a sibling
    failing under a task group cancels the others' turns: without it those turns would
    be counted nowhere, and the agent would look as if it never ran)."""
    if unseen_turns(row):
        return "?/?/?"
    counts = f"{row.completed}/{row.failed}/{row.timed_out}"
    return f"{counts} ⊘{row.cancelled}" if row.cancelled else counts


def sized(row: AgentRow) -> tuple[str, str, str, str]:
    """The queue, counts, values and context cells, whose content sizes their columns;
    what a finished agent no longer has is a dash, what is not known yet a question
    mark."""
    if row.gone:
        depth = context = _GONE
    else:
        depth = str(row.queue_depth) if row.queue_depth is not None else "?"
        context = f"{_capacity(row.context_queue)} {_capacity(row.context_pool)}"
    values = "?" if unseen_turns(row) else str(row.values)
    return depth, _counts(row), values, context


def cells(
    row: AgentRow, widths: Mapping[str, int], sized_cells: tuple[str, str, str, str] | None = None
) -> tuple[str, ...]:
    """The row's cells as text, in the order of ``AgentsTable.COLUMNS``, each cut to
    its column's width (the label so that the agent's own name stays whole).
    ``sized_cells``: the row's `sized` cells, when the caller has them already.
    Names are made visible (`visible`) before they are cut (`fit_label` does it for
    the label): a format character's escape is several cells wide, and the cut must
    count them."""
    depth, counts, values, context = sized_cells or sized(row)
    rate = widths["rate"]
    return (
        fit_label(row.label, row.name, widths["agent"]),
        row.state,
        cut(depth, widths["queue"], "head"),
        cut(visible(row.current_tool or ""), widths["current"], "head"),
        cut(counts, widths["counts"], "head"),
        cut(values, widths["values"], "head"),
        cut(context, widths["ctx"], "head"),
        sparkline(row.throughput, rate) or "▁" * rate,
    )


def agent_fields(row: AgentRow) -> dict[str, str]:
    """What the filter matches an agent row against."""
    service, instance, name = split_label(row.label, row.name)
    fields = {
        "agent": name,
        "service": service,
        "instance": instance,
        "state": state_words(row.state),
        "tool": row.current_tool or "",
        "text": row.label,
    }
    if row.conversation is not None:
        fields["conversation"] = row.conversation
    return fields


def agent_sort_key(row: AgentRow, column: str) -> tuple[float, str]:
    """What sorting by ``column`` orders agent rows by (then by label)."""
    number: float = 0
    text = row.label.casefold()
    if column == "state":
        text = f"{row.state} {text}"
    elif column == "queue":
        number = row.queue_depth if row.queue_depth is not None else -1
    elif column == "current":
        text = f"{row.current_tool or ''} {text}"
    elif column == "failed":
        number = row.failed + row.timed_out
    elif column == "values":
        number = row.values
    return number, text
