"""A turn's trace as a span tree with a waterfall, for the turn inspector.

Every span of the trace is drawn, pygents' own and the others (an HTTP call or a
database query inside a tool, a model's ``chat``): indented under its parent, with
a bar placing it in the trace's time and its duration. Span names and attributes
come from the program or from the network: they are appended as plain text, never
parsed as markup, with their control characters made visible, and cut to a bound; so
is the number of rows.
"""

from __future__ import annotations

from typing import Final

from rich.text import Text

from pygents_otel import _names as k
from pygents_tui.state import SpanNode, TraceTree
from pygents_tui.text._cut import cut_middle
from pygents_tui.text._visible import visible

__all__ = ["waterfall"]

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
