"""Everything known about one turn, and its trace."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pygents import StopReason
from pygents_tui.state import DashboardView, ToolTally, TraceTree, TurnRow
from pygents_tui.text._cut import cut_middle
from pygents_tui.text._errors import Traceback, summary
from pygents_tui.text._visible import visible
from pygents_tui.ui._export import saved, trace_origin, write_trace
from pygents_tui.ui.widgets._attention import service_tokens
from pygents_tui.ui.widgets._fit import split_label
from pygents_tui.ui.widgets.trace import hook_timeline, spans_heading, waterfall

_LABEL = 10  # the width of the label column
_TOOLS = 12  # an agent's tools listed, most called first


class _Lines:
    """Builds the inspector's text. Labels are styled spans and user text is appended
    as plain text: nothing a turn carries is ever parsed as markup, and its control
    characters are made visible (its line breaks and tabs are kept)."""

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
        value = visible(value, lines=True)  # also the link: a terminal gets it raw
        self.text.append(value, style=Style(link=value, underline=True) if link else None)


def trace_link(trace_url: str, trace_id: str) -> str:
    """``trace_url`` with the id filled in; a template that does not format is shown
    as given rather than breaking the inspector."""
    try:
        return trace_url.format(trace_id=trace_id)
    except (IndexError, KeyError, ValueError):
        return trace_url


def _state(record: TurnRow, elapsed: float) -> str:
    """How it ended (or that it runs) and after how long: from its start to its end
    (or now), on the clock of the agent's process, which stamped both."""
    if record.stop_reason is StopReason.ERROR:
        what = "failed"  # the word the agents table and the event log use
    elif record.stop_reason is not None:
        what = str(record.stop_reason)
    else:
        what = "stale (its process stopped sending)" if record.stale else "running"
    timeout = f" of {record.timeout:g}s (its timeout)" if record.timeout else ""
    return f"{what} after {elapsed:.3f}s{timeout}"


def _timed(record: TurnRow) -> str:
    """What the state line's seconds measure (`_state`): the agent's process stamps a
    turn's start and end (in-process as the runtime reports them; for ``listen`` in
    its records and spans). The trace's figures measure spans instead
    (`spans_heading`)."""
    if record.ended is None:
        return "its start, stamped by the agent's process, to now"
    return "start to end, both stamped by the agent's process"


def describe(
    record: TurnRow,
    trace_url: str | None = None,
    now: float | None = None,
    wall_time: Callable[[float], datetime] | None = None,
    epoch: float = 0.0,
    service: str | None = None,
    tools: Mapping[str, ToolTally] | None = None,
) -> Text:
    """The inspector's text for ``record``: plain text with bold labels. Times are
    dates with ``wall_time``, else seconds since ``epoch`` (the dashboard's start).
    ``service``: the tokens of the turn's service (`service_tokens`), if any;
    ``tools``: its agent's calls per tool, when its sender traces them as steps (another
    framework's agent). The times come with the state; a traceback, the longest part,
    comes last."""
    elapsed = record.elapsed_at(now if now is not None else record.started)
    if wall_time is not None:  # the dates of the view's own start and end times
        started = wall_time(record.started).isoformat(timespec="milliseconds")
        ended = "running"
        if record.ended is not None:
            ended = wall_time(record.ended).isoformat(timespec="milliseconds")
    else:
        started = f"{record.started - epoch:+.3f}s"
        ended = f"{record.ended - epoch:+.3f}s" if record.ended is not None else "running"
    lines = _Lines()
    kind = "stream" if record.streaming else "coroutine"
    if record.paced_as is not None:  # another framework's run: no pygents tool kind
        lines.add("tool", f"{record.tool} on {record.agent_label}")
    else:
        lines.add("tool", f"{record.tool} ({kind}) on {record.agent_label}")
    lines.add("state", _state(record, elapsed))
    lines.add("timed", _timed(record))
    lines.add("started", started)
    lines.add("ended", ended)
    if service is not None:
        lines.add("tokens", f"service {service}")
    if record.error:
        lines.add("exception", record.error)
    for label, value in record.details():
        if label:
            lines.add(label, value)
        else:
            lines.add(value=value, indent="  ")
        if label == "trace" and trace_url:
            lines.add(value=trace_link(trace_url, value), indent=" " * _LABEL, link=True)
    if tools:
        lines.add("agent's tools")
        for name, tally in sorted(tools.items(), key=lambda item: -item[1].calls)[:_TOOLS]:
            why = cut_middle(tally.last_error or "", 120)
            failed = f", {tally.failed} failed ({why})" if tally.failed else ""
            took = tally.seconds / tally.calls if tally.calls else 0.0
            lines.add(value=f"{name}: {tally.calls} call(s), {took:.3f}s each{failed}", indent="  ")
        if len(tools) > _TOOLS:
            lines.add(value=f"and {len(tools) - _TOOLS} more", indent="  ")
    return lines.text


def trace_section(record: TurnRow, tree: TraceTree | None, why_not: str | None) -> Text:
    """The trace heading and its span tree (the heading says what its figures
    measure); with no spans, one line why, then the turn's hook events where its
    feeder kept them (in-process), as its timeline."""
    text = Text()
    text.append("trace spans", style="bold")
    if tree is not None:
        text.append(f"  {spans_heading(tree, record)}\n", style="dim")
        text.append_text(waterfall(tree))
        return text
    if why_not is not None:
        text.append(f"  {why_not}", style="dim")
    elif record.trace_id is None:
        text.append("  this turn was not traced", style="dim")
    else:
        text.append("  none received yet: spans arrive as they end", style="dim")
    events = record.hook_events()
    if events:
        text.append("\n\n")
        text.append_text(hook_timeline(record, events))
    return text


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


_HINT = "esc to go back"
_EXPORT_HINT = " · x: write the trace to a file (OTLP JSON)"


class InspectorScreen(TextScreen):
    """Arguments, metadata, timing, stop reason, output or exception (with its
    traceback), trace id, and the trace's spans, or, with none, the turn's hook
    events. It follows the turn: repainted when the view changes (a running turn
    ends, more of its spans arrive). ``x`` writes the trace as an OTLP JSON file
    (`pygents_tui.ui._export`), offered only once there are spans to write."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "export_trace", "Export trace", tooltip="write it as OTLP JSON")
    ]

    def __init__(
        self,
        view: DashboardView,
        record: TurnRow,
        trace_url: str | None = None,
        wall_time: Callable[[float], datetime] | None = None,
    ) -> None:
        super().__init__()
        self.view = view
        self.record = record
        self.trace_url = trace_url
        self.wall_time = wall_time
        self._version = -1
        self._body = Static(id="inspector-body")
        self._trace = Static(id="inspector-trace")
        self._hint = Static()
        self._exportable: bool | None = None  # (not known before the first refresh)
        self.refresh_view()

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="inspector-dialog"):
            yield self._body
            yield self._trace
            yield self._hint

    def _tree(self) -> TraceTree | None:
        """The turn's trace, if any of its spans are here to draw (or to write)."""
        trace_id = self.record.trace_id
        return self.view.trace_tree(trace_id) if trace_id else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``x`` only when there is a trace to write."""
        if action == "export_trace":
            return self._exportable
        return True

    def refresh_view(self) -> None:
        """Repaint if the view changed since the last call (the app's timer calls it
        while this screen is up)."""
        view = self.view
        if view.version == self._version:
            return
        self._version = view.version
        found = view.find_turn(self.record.key)
        if found is not None:
            self.record = found
        record = self.record
        service, _instance, _name = split_label(
            record.agent_label, record.agent_label.rpartition("/")[2]
        )
        tokens = service_tokens(view, service) if service else None
        agent = view.agent_row(record.agent) if record.agent is not None else None
        body = describe(
            record,
            self.trace_url,
            view.clock(),
            self.wall_time,
            view.epoch,
            service=tokens,
            tools=agent.tools if agent is not None else None,
        )
        self._body.update(body)
        tree = self._tree()
        section = trace_section(record, tree, view.unavailable("trace"))
        self._trace.update(Text("\n").append_text(section))
        exportable = tree is not None
        if exportable != self._exportable:
            self._exportable = exportable
            hint = _HINT + (_EXPORT_HINT if exportable else "")
            self._hint.update(Text(hint, style="dim"))
            if self.is_mounted:
                self.refresh_bindings()

    def action_export_trace(self) -> None:
        record, view = self.record, self.view
        tree = self._tree()
        if tree is None:  # (gone since it was offered: evicted by newer traces)
            why = view.unavailable("trace") or "no spans of this turn's trace yet"
            self.notify(f"nothing to export: {why}", severity="warning", markup=False)
            return
        origin = trace_origin(record.started, view.clock(), time.time_ns())
        folder: Path | None = getattr(self.app, "export_dir", None)  # the dashboard's
        saved(self.app, "trace", lambda: write_trace(tree, origin, folder))


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


class DetailScreen(TextScreen):
    """Something a panel's row cuts, shown whole: ``lines`` of ``(label, value)``
    under ``title`` (a dead letter's error, from the Mailbox panel)."""

    def __init__(self, title: str, lines: list[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines

    def body(self) -> Text:
        lines = _Lines()
        lines.add(value=self.title_text)
        lines.add()
        for label, value in self.lines:
            lines.add(label, value)
        return lines.text
