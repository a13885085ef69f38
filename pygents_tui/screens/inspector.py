"""Everything known about one turn."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pygents_tui._errors import Traceback, summary
from pygents_tui.model import TurnRecord

_LABEL = 10  # the width of the label column


class _Lines:
    """Builds the inspector's text. Labels are styled spans and user text is appended
    as plain text: nothing a turn carries is ever parsed as markup."""

    def __init__(self) -> None:
        self.text = Text()

    def add(self, label: str = "", value: str = "", indent: str = "", link: bool = False) -> None:
        """A line: ``label`` in bold, then ``value`` as plain text (``link``: as a
        link to itself, which a terminal lets you open with a click)."""
        if self.text:
            self.text.append("\n")
        if label:
            self.text.append(label, style="bold")
            if value:
                self.text.append(" " * max(_LABEL - len(label), 1))
        self.text.append(indent)
        self.text.append(value, style=Style(link=value, underline=True) if link else None)


def trace_link(trace_url: str, trace_id: str) -> str:
    """``trace_url`` with the id filled in; a template that does not format is shown
    as given rather than breaking the inspector."""
    try:
        return trace_url.format(trace_id=trace_id)
    except (IndexError, KeyError, ValueError):
        return trace_url


def describe(
    record: TurnRecord,
    trace_url: str | None = None,
    now: float | None = None,
    wall_time: Callable[[float], datetime] | None = None,
) -> Text:
    """The inspector's text for ``record``: plain text with bold labels."""
    details = record.inspect()
    started, ended = "—", "running"
    if wall_time is not None:  # the dates of the model's own start and end times
        started = wall_time(record.started).isoformat(timespec="milliseconds")
        if record.ended is not None:
            ended = wall_time(record.ended).isoformat(timespec="milliseconds")
    elapsed = record.elapsed_at(now) if now is not None else record.elapsed
    lines = _Lines()
    lines.add("turn", record.uuid)
    kind = "stream" if record.streaming else "coroutine"
    lines.add("tool", f"{record.tool} ({kind}) on {record.agent or '—'}")
    lines.add(
        "state", f"{record.stop_reason or 'running'} after {elapsed:.3f}s of {record.timeout:g}s"
    )
    if record.error:
        lines.add("exception", record.error)
    if record.streaming:
        lines.add("output", f"{details.values} value(s)")
        for value in details.last_values:
            lines.add(value=value, indent="  ")
    elif not record.error:
        lines.add("output", details.output or "")
    if record.trace_id:
        lines.add("trace", record.trace_id)
        if trace_url:
            url = trace_link(trace_url, record.trace_id)
            lines.add(value=url, indent=" " * _LABEL, link=True)
    lines.add()
    lines.add("arguments")
    for index, arg in enumerate(details.args):
        lines.add(value=f"{index}: {arg}", indent="  ")
    for key, value in details.kwargs:
        lines.add(value=f"{key} = {value}", indent="  ")
    lines.add("metadata")
    for key, value in details.metadata:
        lines.add(value=f"{key} = {value}", indent="  ")
    lines.add("started", started)
    lines.add("ended", ended)
    lines.add("tags", details.tags or "—")
    if details.traceback is not None:
        lines.add()
        lines.add("traceback")
        for line in details.traceback.lines():
            lines.add(value=line, indent="  ")
    return lines.text


class TextScreen(ModalScreen[None]):
    """A text to read over the main screen, scrolled with the arrows; ``esc`` (or
    ``q``) goes back."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Back", tooltip="go back to the dashboard")
    ]

    def body(self) -> Text:
        """What the screen shows: styled spans, with the program's text plain."""
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="inspector-dialog"):
            yield Static(self.body(), id="inspector-body")
            yield Static(Text("esc to go back", style="dim"))


class InspectorScreen(TextScreen):
    """Arguments, metadata, timing, stop reason, output or exception, trace id."""

    def __init__(
        self,
        record: TurnRecord,
        trace_url: str | None = None,
        now: float | None = None,
        wall_time: Callable[[float], datetime] | None = None,
    ) -> None:
        super().__init__()
        self.record = record
        self.trace_url = trace_url
        self.now = now
        self.wall_time = wall_time

    def body(self) -> Text:
        return describe(self.record, self.trace_url, self.now, self.wall_time)


class ErrorScreen(TextScreen):
    """Why the workload failed: the exception (an exception group's first leaves,
    named) and its traceback."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.summary = summary(error, 1000)
        self.traceback = Traceback.of(error)

    def body(self) -> Text:
        lines = _Lines()
        lines.add("the workload failed")
        lines.add(value=self.summary)
        lines.add()
        lines.add("traceback")
        for line in self.traceback.lines():
            lines.add(value=line, indent="  ")
        return lines.text
