"""Everything known about one turn."""

from __future__ import annotations

from typing import ClassVar

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pygents_tui._preview import preview as _raw_preview
from pygents_tui.model import TurnRecord


def preview(value: object, width: int) -> str:
    return escape(_raw_preview(value, width))


def describe(record: TurnRecord, trace_url: str | None = None, now: float | None = None) -> str:
    """The inspector's text for ``record`` (markup-free apart from bold labels)."""
    turn = record.turn
    started = turn.start_time.isoformat(timespec="milliseconds") if turn.start_time else "—"
    ended = turn.end_time.isoformat(timespec="milliseconds") if turn.end_time else "running"
    elapsed = record.elapsed_at(now) if now is not None else record.elapsed
    lines = [
        f"[b]turn[/b]      {record.uuid}",
        f"[b]tool[/b]      {record.tool} ({'stream' if record.streaming else 'coroutine'})"
        f" on {record.agent or '—'}",
        f"[b]state[/b]     {record.stop_reason or 'running'} after {elapsed:.3f}s"
        f" of {record.timeout:g}s",
    ]
    if record.error:
        lines += [f"[b]exception[/b] {escape(record.error)}"]
    output = turn.output
    if isinstance(output, list) and record.streaming:
        lines += [f"[b]output[/b]    {len(output)} value(s)"]
        lines += [f"  {preview(v, 100)}" for v in output[-10:]]
    elif not record.error:
        lines += [f"[b]output[/b]    {preview(output, 100)}"]
    if record.trace_id:
        lines += [f"[b]trace[/b]     {record.trace_id}"]
        if trace_url:
            lines += [f"          {escape(trace_url.format(trace_id=record.trace_id))}"]
    lines += [
        "",
        "[b]arguments[/b]",
        *(f"  {i}: {preview(a, 100)}" for i, a in enumerate(turn.args)),
        *(f"  {k} = {preview(v, 100)}" for k, v in turn.kwargs.items()),
        "[b]metadata[/b]",
        *(f"  {k} = {preview(v, 100)}" for k, v in turn.metadata.items()),
        f"[b]started[/b]   {started}",
        f"[b]ended[/b]     {ended}",
        f"[b]tags[/b]      {', '.join(sorted(turn.tags)) or '—'}",
    ]
    return "\n".join(lines)


class InspectorScreen(ModalScreen[None]):
    """Arguments, metadata, timing, stop reason, output or exception, trace id."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss", "Back")]

    def __init__(
        self, record: TurnRecord, trace_url: str | None = None, now: float | None = None
    ) -> None:
        super().__init__()
        self.record = record
        self.trace_url = trace_url
        self.now = now

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="inspector-dialog"):
            yield Static(
                describe(self.record, self.trace_url, self.now), id="inspector-body", markup=True
            )
            yield Static("[dim]esc to go back[/dim]")
