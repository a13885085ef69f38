"""The selected agent's Redis mailbox: its workers, running turns and dead letters.

Shown for agents a Redis source serves (``pygents-tui listen --redis URL``); for any
other agent the main screen says why it is empty. Each row can be selected, and the
keys of this panel act on the selected row (with ``--control``; the app confirms
first): ``x`` cancels a running turn, ``r`` retries a dead letter, ``d`` drops it,
``D`` drains a worker; a row says so. The panel only names what is selected; the app
asks the sources to act, so a read-only source answers with its one line. Enter on a
dead letter shows it whole (its row cuts the error, with ``…`` as every cell).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, ClassVar, Final, Protocol, runtime_checkable

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message

from pygents_tui.state import Action, DashboardView
from pygents_tui.text._cut import cut, cut_middle
from pygents_tui.text._plain import plain
from pygents_tui.text._plural import counted
from pygents_tui.ui.widgets._panel import NavigableTable

if TYPE_CHECKING:
    from pygents.redis import DeadLetterRow, MailboxSurvey

__all__ = ["COLUMNS", "MailboxPanel", "MailboxReader", "dead_letter_lines", "rows"]


@runtime_checkable
class MailboxReader(Protocol):
    """What the panel reads of a Redis source (`pygents_tui.feeders.redis.source`),
    found among the view's sources; the panel never imports it (nor Redis)."""

    control: bool
    error: str | None

    def mailbox(self, agent: str) -> MailboxSurvey | None: ...


def _age(seconds: float) -> str:
    if seconds >= 1e6:
        return "handed back"  # a turn a paused worker gave back: never delivered since
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds:.1f}s" if seconds < 60 else f"{seconds / 60:.1f}m"


COLUMNS: Final[tuple[tuple[str, str, int], ...]] = (
    ("kind", "", 9),
    ("name", "Worker / tool", 18),
    ("detail", "Where / turn / error", 44),
    ("age", "Idle / age", 11),
    ("more", "", 16),
)
"""The panel's columns (key, label, width); every cell is cut to its width with ``…``."""
_WIDTHS: Final = tuple(width for _key, _label, width in COLUMNS)
_KEYS: Final = "x cancel turn · r retry · d drop · D drain"
_READ_ONLY: Final = "start listen with --control to act"
_DELIVERED: Final = "delivered"
"""A turn a worker holds that the agent's telemetry does not show running: Redis does
not say whether its worker started it or holds it read ahead (``prefetch``)."""


def _cells(*cells: str, error: bool = False) -> tuple[str, ...]:
    """The cells of a row, each cut to its column's width with ``…``: ids and names
    keep both ends, an error its start (enter shows a dead letter whole)."""
    return tuple(
        cut(cell, width, "head" if error and column == 2 else "middle")
        for column, (cell, width) in enumerate(zip(cells, _WIDTHS, strict=True))
    )


def _held(consumer: str, turn_uuid: str) -> str:
    """``on <worker> · turn <uuid>`` in the detail column, each cut in its middle so
    that the label and both ends of each id stay."""
    worker = cut_middle(consumer, 16)
    room = _WIDTHS[2] - len(f"on {worker} · turn ")
    return f"on {worker} · turn {cut_middle(turn_uuid, room)}"


def rows(
    mailbox: MailboxSurvey, control: bool, running: Collection[str] = ()
) -> list[tuple[str, tuple[str, ...]]]:
    """The panel's rows as ``(key, cells)``: the mailbox's counts (``m:``), the keys
    that act, then the workers (``w:``), the delivered turns (``p:`` and their message
    id) and the dead letters (``d:`` and their id). ``running``: the uuids of the
    agent's turns its telemetry shows running; a delivered turn among them says
    ``running``, any other ``delivered`` (started, or read ahead: Redis cannot tell)."""
    stats = mailbox.stats
    state = "paused" if mailbox.paused else "serving"
    counts = f"{stats.waiting} waiting + {stats.pending} delivered = {stats.depth} unfinished"
    more = f"{state} · {stats.dead_letters} dead"
    found: list[tuple[str, tuple[str, ...]]] = [
        ("m:", _cells("mailbox", mailbox.agent, counts, "", more)),
    ]
    if mailbox.malformed:
        unreadable = counted(mailbox.malformed, "unreadable entry", "unreadable entries")
        found.append(("m:malformed", _cells("problem", "", unreadable, "", "")))
    for problem in mailbox.problems:
        found.append((f"m:{len(found)}", _cells("problem", "", problem, "", "", error=True)))
    keys = ("keys", "control on", _KEYS) if control else ("keys", "read-only", _READ_ONLY)
    found.append(("m:keys", _cells(*keys, "", "")))
    for worker in mailbox.workers:
        where = f"{worker.host} pid {worker.pid}" if worker.host else ""
        flags = " ".join(
            flag for flag, on in (("draining", worker.draining), ("paused", worker.paused)) if on
        )
        expires = f"{worker.expires_in:.1f}s"
        found.append((f"w:{worker.name}", _cells("worker", worker.name, where, expires, flags)))
    for turn in mailbox.pending:
        kind = "running" if turn.turn_uuid and turn.turn_uuid in running else _DELIVERED
        found.append(
            (
                f"p:{turn.message_id}",
                _cells(kind, turn.tool or "?", _held(turn.consumer, turn.turn_uuid),
                       _age(turn.idle), counted(turn.deliveries, "delivery", "deliveries")),
            )
        )  # fmt: skip
    for dead in mailbox.dead_letters:
        found.append(
            (
                f"d:{dead.id}",
                _cells("dead", dead.tool or "?", dead.error or dead.reason, _age(dead.age),
                       counted(dead.deliveries, "delivery", "deliveries"), error=True),
            )
        )  # fmt: skip
    return found


def dead_letter_lines(dead: DeadLetterRow) -> list[tuple[str, str]]:
    """A dead letter whole, as ``(label, value)`` lines: what enter on its row shows
    (the row cuts its error to the column)."""
    return [
        ("dead letter", dead.id),
        ("turn", dead.turn_uuid or "?"),
        ("tool", dead.tool or "?"),
        ("reason", dead.reason),
        ("error", dead.error or "(none recorded)"),
        ("deliveries", str(dead.deliveries)),
        ("age", _age(dead.age)),
    ]


class MailboxPanel(NavigableTable[Text]):
    """See the module docstring. Rows are keyed ``<kind>:<id>``."""

    COLUMNS: ClassVar[tuple[tuple[str, str, int], ...]] = COLUMNS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "mailbox('cancel', 'p')", "Cancel turn", tooltip="the selected running turn"),
        Binding("r", "mailbox('retry', 'd')", "Retry", tooltip="put the dead letter back"),
        Binding("d", "mailbox('drop', 'd')", "Drop", tooltip="delete the dead letter"),
        Binding("D", "mailbox('drain', 'w')", "Drain", tooltip="drain and stop the worker"),
    ]

    class Act(Message):
        """Asks the app to do ``action`` to the selected agent's ``target`` (``None``:
        the selected row is not one it applies to; ``hint`` says which is)."""

        def __init__(self, action: Action, target: str | None, hint: str) -> None:
            super().__init__()
            self.action = action
            self.target = target
            self.hint = hint

    class Read(Message):
        """Asks the app to show ``lines`` (``(label, value)``) whole, under ``title``:
        what a row cuts (a dead letter's error)."""

        def __init__(self, title: str, lines: list[tuple[str, str]]) -> None:
            super().__init__()
            self.title = title
            self.lines = lines

    def __init__(self, view: DashboardView, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", id=id)
        self.view = view
        self._shown: list[tuple[str, tuple[str, ...]]] = []
        self._mailbox: MailboxSurvey | None = None

    def refresh_from(self, agent: str | None) -> None:
        reader = self.view.sources.find(MailboxReader)  # type: ignore[type-abstract]
        mailbox = reader.mailbox(agent) if reader is not None and agent is not None else None
        self._mailbox = mailbox
        found: list[tuple[str, tuple[str, ...]]] = []
        if mailbox is not None and reader is not None:
            running = {turn.uuid for turn in self.view.running_turns(agent)}
            found = rows(mailbox, reader.control, running)
        if reader is not None and reader.error is not None:
            error = _cells("redis", "unavailable", reader.error, "", "", error=True)
            found.insert(0, ("m:error", error))
        if found == self._shown:
            return
        selected = self.selected
        self.clear()
        for key, cells in found:
            self.add_row(*map(plain, cells), key=key)  # data from Redis, never markup
        self._shown = found
        keys = [key for key, _ in found]
        if selected in keys:
            self.move_cursor(row=keys.index(selected), animate=False)

    @property
    def selected(self) -> str | None:
        """The key of the row under the cursor."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def on_data_table_row_selected(self, event: NavigableTable.RowSelected) -> None:
        """Enter on a dead letter: its whole error (and the rest of it), on a screen."""
        found, _, target = str(event.row_key.value).partition(":")
        mailbox = self._mailbox
        if found != "d" or mailbox is None:
            return
        for dead in mailbox.dead_letters:
            if dead.id == target:
                event.stop()
                title = f"dead letter of mailbox {mailbox.agent}"
                self.post_message(self.Read(title, dead_letter_lines(dead)))
                return

    def action_mailbox(self, action: Action, kind: str) -> None:
        selected = self.selected or ""
        found, _, target = selected.partition(":")
        hints = {"p": "a running turn", "d": "a dead letter", "w": "a worker"}
        hint = f"select {hints[kind]} in the Mailbox panel first"
        self.post_message(self.Act(action, target if found == kind else None, hint))
