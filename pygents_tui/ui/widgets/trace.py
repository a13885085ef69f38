"""A turn's trace as a span tree with a waterfall, for the turn inspector; and,
where there are no spans, the turn's hook events as its timeline.

Every span of the trace is drawn, pygents' own and the others (an HTTP call or a
database query inside a tool, a model's ``chat``): indented under its parent, with
a bar placing it in the trace's time and its duration (`waterfall`, under the line
that says what the spans' figures measure, `spans_heading`). A turn of this process
traced by no SDK has no spans: its feeder's record of what happened to it (its start,
the hook events fired inside it, its values and its end) is drawn instead, each at
its time from the turn's start (`hook_timeline`). Span names and attributes, and the
events' texts, come from the program or from the network: they are appended as plain
text, never parsed as markup, with their control characters made visible, and cut to
a bound; so is the number of rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rich.text import Text

from pygents_otel import _names as k
from pygents_tui.state import EventRow, SpanNode, TraceTree, TurnRow
from pygents_tui.text._cut import cut_middle
from pygents_tui.text._plural import counted
from pygents_tui.text._visible import visible

__all__ = ["hook_timeline", "spans_heading", "waterfall"]

MAX_ROWS: Final = 200
_NAME = 34  # the width of the tree column (indent and name)
_DEEPEST = 12  # indent levels drawn; deeper spans line up at the last one
# What tells an HTTP call, a database query or a model call apart, first found first.
_NOTABLE: Final = (
    "url.full",
    "http.url",
    "http.route",
    "url.path",
    "db.query.text",
    "db.statement",
    "gen_ai.request.model",
    "llm.model_name",  # OpenInference's model call
    k.TOOL_CALL_ARGUMENTS,  # a tool call's arguments, when its sender sends them
    k.OI_INPUT,  # OpenInference's, on a tool span its arguments
    "rpc.method",
    "messaging.destination.name",
)
# What a tool call returned, when its sender sends it: a second line under the span.
_RESULTS: Final = (k.TOOL_CALL_RESULT, k.OI_OUTPUT)


def _duration(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f}µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f}ms"
    return f"{seconds:.2f}s"


def _bar(node: SpanNode, total: float, width: int) -> str:
    if total <= 0:
        return "█".ljust(width)
    left = min(int(node.start / total * width), width - 1)
    right = max(min(round(node.end / total * width), width), left + 1)
    return (" " * left + "█" * (right - left)).ljust(width)


def _shown(text: str, limit: int) -> str:
    """Received text on one line, cut to ``limit`` characters once made visible."""
    return cut_middle(visible(text), limit)


def _notable(node: SpanNode) -> list[str]:
    """The span's most telling attribute and, for a tool call, what it returned."""
    attributes = dict(node.attributes)
    found = [f"{key}={attributes[key]}" for key in _NOTABLE if attributes.get(key)][:1]
    if found and found[0].startswith((f"{k.TOOL_CALL_ARGUMENTS}=", f"{k.OI_INPUT}=")):
        found += [f"{key}={attributes[key]}" for key in _RESULTS if attributes.get(key)][:1]
    return found


def waterfall(tree: TraceTree, width: int = 28) -> Text:
    """The tree's spans, depth first, as text lines: tree, bar, duration, kind; under
    a span, its most telling attribute (a URL, a query, a model) and its error. Spans
    of another service than the first are labelled with it. Lines never wrap: what
    does not fit the screen is cut with an ellipsis."""
    text = Text(no_wrap=True, overflow="ellipsis")
    rows = tree.rows()
    services = {node.service for _, node in rows}
    first_service = rows[0][1].service if rows else ""
    shown = rows[:MAX_ROWS]
    for index, (depth, node) in enumerate(shown):
        if index:
            text.append("\n")
        indent = "  " * min(depth, _DEEPEST)
        name = _shown(node.name, max(_NAME - len(indent) - 1, 8))
        marker = "↳ " if node.orphan else ""
        text.append(f"{indent}{marker}")
        style = "red" if node.status == "error" else ("bold" if depth == 0 else "")
        text.append(name, style=style)
        text.append(" " * max(_NAME - len(indent) - len(marker) - len(name), 1))
        colour = "red" if node.status == "error" else "cyan"
        text.append(_bar(node, tree.duration, width), style=colour)
        text.append(f" {_duration(node.duration):>8}")
        if node.kind not in ("internal", "unspecified"):
            text.append(f" {node.kind}", style="dim")
        if len(services) > 1 and node.service != first_service:
            text.append(f" [{_shown(node.service, 24)}]", style="dim")
        under = "\n" + indent + "  " + " " * len(marker)
        for notable in _notable(node):
            text.append(under + _shown(notable, 100), style="dim")
        if node.status == "error" and node.status_message:
            text.append(under + _shown(node.status_message, 100), style="red")
    left = len(rows) - len(shown)
    if left > 0:
        text.append(f"\n… {left} more span(s)", style="dim")
    if tree.dropped:
        text.append(f"\n{tree.dropped} span(s) of this trace were dropped (over its bound)")
    return text


def _own_span(tree: TraceTree, uuid: str) -> SpanNode | None:
    """The turn's own span in its trace (the one naming its uuid), if it arrived."""
    for _depth, node in tree.rows():
        if node.name.startswith(k.TURN_SPAN_PREFIX) and (k.TURN_UUID, uuid) in node.attributes:
            return node
    return None


def spans_heading(tree: TraceTree, record: TurnRow) -> str:
    """What the span tree's figures measure: the spans of the turn's trace received
    so far (its agent run's and its other turns' too), from the first one's start to
    the last one's end, on their senders' clocks; and the turn's own span, which
    measures the turn, or that it has not arrived (its figure is then no measure of
    the turn)."""
    line = (
        f"{counted(tree.spans, 'span')} of its trace so far\n"
        f"  {_duration(tree.duration)} from the first one's start to the last one's end"
    )
    own = _own_span(tree, record.uuid)
    if own is not None:
        return f"{line}\n  the turn's own span: {_duration(own.duration)}"
    if record.paced_as is None:  # a pygents turn (another framework's run has no such span)
        return f"{line}\n  the turn's own span is not among them (yet)"
    return line


def hook_timeline(record: TurnRow, events: Sequence[EventRow]) -> Text:
    """The turn's hook events, as its feeder saw them, one a line at its time from the
    turn's start; an event that concerns another agent (a turn it put on another's
    queue) names it."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append("hook events", style="bold")
    text.append("  in seconds from its start, as this dashboard saw them", style="dim")
    if record.streaming:  # read from its output on each refresh, not told one by one
        text.append("\n  (a stream's values: at the refresh that read them)", style="dim")
    for event in events[:MAX_ROWS]:
        text.append("\n  ")
        if event.kind == "more":
            text.append(" " * 10)
        else:
            text.append(f"{event.at - record.started:+9.3f}s ", style="cyan")
        if event.agent != record.agent_label:
            text.append(_shown(event.agent, 24) + "  ", style="dim")
        text.append(_shown(event.text, 100), style="dim" if event.kind == "more" else "")
    return text
