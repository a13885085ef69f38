"""Setting the rows of a ``DataTable`` to a given order of keys in one pass.

Textual's ``add_row`` and ``remove_row`` are made for a row at a time: each
``add_row`` sets the cursor again (its watchers run) and sorts the columns twice;
each ``remove_row`` re-indexes every row left. With 2,000 agents, a filter erased
added 2,000 rows for 60–90 ms, and a filter typed removed rows for 1.7 ms each.
`relayout` changes the table's rows in one pass, then sorts them into place with
Textual's ``sort`` and does once what each of those calls does at its end (the
cursor clamped, the dimensions updated when idle, a repaint). It writes the table's
own row mappings, which Textual does not publish; the agents table's tests check the
rows, their order and the cursor after it (`tests/tui/test_agents_repaint.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, Row, RowKey

__all__ = ["relayout"]


def relayout(table: DataTable[Any], order: Sequence[str], first: str) -> None:
    """Make ``table``'s rows those of the keys ``order``, in that order: the others
    removed, the new ones added with empty cells but in column ``first``, where
    each gets a `Text` of its own (its identity sorts the rows into place). Nothing
    is measured: the table's columns must have their widths set."""
    wanted = set(order)
    data, rows = table._data, table.rows
    for row_key in [row_key for row_key in rows if row_key.value not in wanted]:
        del rows[row_key]
        del data[row_key]
    columns = [column.key for column in table.ordered_columns]
    first_key = ColumnKey(first)
    added = False
    for key in order:
        row_key = RowKey(key)
        if row_key not in rows:
            if not rows:  # the first row lights the cursor up: Textual's own way
                table.add_row(*(Text() if c == first else None for c in columns), key=key)
                continue
            cells: dict[ColumnKey, Any] = dict.fromkeys(columns)
            cells[first_key] = Text()
            data[row_key] = cells
            rows[row_key] = Row(row_key, 1)
            added = True
    place = {id(data[RowKey(key)][first_key]): n for n, key in enumerate(order)}
    table.sort(first, key=lambda cell: place[id(cell)])  # the locations, anew
    if added:
        table._new_rows.clear()  # nothing to measure: the widths are set
    table._require_update_dimensions = True
    table.cursor_coordinate = table.cursor_coordinate  # clamped to the rows left
    table.hover_coordinate = table.hover_coordinate
    table.check_idle()
    table.refresh(layout=True)
