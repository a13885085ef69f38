"""The selected agent's Redis mailbox: its workers, running turns and dead letters.

Shown for agents a Redis source serves (``pygents-tui listen --redis URL``); for any
other agent the main screen says why it is empty. Each row can be selected, and the
keys of this panel act on the selected row (with ``--control``; the app confirms
first): ``x`` cancels a running turn, ``r`` retries a dead letter, ``d`` drops it,
``D`` drains a worker. The panel only names what is selected; the app asks the
sources to act, so a read-only source answers with its one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message

from pygents_tui._plain import plain
from pygents_tui.state import Action, DashboardView
from pygents_tui.widgets._panel import NavigableTable

if TYPE_CHECKING:
    from pygents.redis import MailboxSurvey

__all__ = ["MailboxPanel", "MailboxReader"]


@runtime_checkable
class MailboxReader(Protocol):
    """What the panel reads of a Redis source (`pygents_tui.listen.redis_source`),
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


def rows(mailbox: MailboxSurvey, control: bool) -> list[tuple[str, tuple[str, ...]]]:
    """The panel's rows as ``(key, cells)``: a summary, then the workers (``w:``), the
    running turns (``p:`` and their message id) and the dead letters (``d:`` and
    their id)."""
    stats = mailbox.stats
    state = "paused" if mailbox.paused else "serving"
    summary = f"{stats.depth} unfinished · {stats.pending} running · {stats.dead_letters} dead" + (
        f" · {mailbox.malformed} unreadable" if mailbox.malformed else ""
    )
    mode = "control on: x r d D act on the selected row" if control else "read-only"
    found: list[tuple[str, tuple[str, ...]]] = [
        ("m:", ("mailbox", mailbox.agent, f"{state} · {summary}", "", mode)),
    ]
    for problem in mailbox.problems:
        found.append((f"m:{len(found)}", ("problem", "", problem, "", "")))
    for worker in mailbox.workers:
        where = f"{worker.host} pid {worker.pid}" if worker.host else ""
        flags = " ".join(
            flag for flag, on in (("draining", worker.draining), ("paused", worker.paused)) if on
        )
        found.append(
            (f"w:{worker.name}", ("worker", worker.name, where, f"{worker.expires_in:.1f}s", flags))
        )
    for turn in mailbox.pending:
        found.append(
            (
                f"p:{turn.message_id}",
                ("running", turn.tool or "?", f"on {turn.consumer} · turn {turn.turn_uuid}",
                 _age(turn.idle), f"{turn.deliveries} deliveries"),
            )
        )  # fmt: skip
    for dead in mailbox.dead_letters:
        found.append(
            (
                f"d:{dead.id}",
                ("dead", dead.tool or "?", dead.error or dead.reason, _age(dead.age),
                 f"{dead.deliveries} deliveries"),
            )
        )  # fmt: skip
    return found


class MailboxPanel(NavigableTable[Text]):
    """See the module docstring. Rows are keyed ``<kind>:<id>``."""

    COLUMNS: ClassVar[tuple[tuple[str, str, int], ...]] = (
        ("kind", "", 8),
        ("name", "Worker / tool", 22),
        ("detail", "Where / turn / error", 44),
        ("age", "Idle / age", 11),
        ("more", "", 16),
    )
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

    def __init__(self, model: DashboardView, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", id=id)
        self.model = model
        self._shown: list[tuple[str, tuple[str, ...]]] = []

    def refresh_from(self, agent: str | None) -> None:
        reader = self.model.sources.find(MailboxReader)  # type: ignore[type-abstract]
        mailbox = reader.mailbox(agent) if reader is not None and agent is not None else None
        found = rows(mailbox, reader.control) if mailbox is not None and reader else []
        if reader is not None and reader.error is not None:
            found.insert(0, ("m:error", ("redis", "unavailable", reader.error, "", "")))
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

    def action_mailbox(self, action: Action, kind: str) -> None:
        selected = self.selected or ""
        found, _, target = selected.partition(":")
        hints = {"p": "a running turn", "d": "a dead letter", "w": "a worker"}
        hint = f"select {hints[kind]} in the Mailbox panel first"
        self.post_message(self.Act(action, target if found == kind else None, hint))
