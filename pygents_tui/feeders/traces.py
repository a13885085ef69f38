"""Received spans grouped by trace, in a store bounded by bytes, and turned into a
tree (or a waterfall) on demand.

Every span is kept, not only pygents' own: the HTTP call or database query made
inside a tool, or a model's ``chat`` span, is what makes a turn's trace worth
opening. Traces are evicted least recently touched first once the store's byte
budget (estimated at decode time) is spent; one trace holds at most ``max_spans``
spans, the rest counted.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from pygents_tui.listen.decode import ReceivedSpan, Value, cut_middle
from pygents_tui.state import SpanNode, TraceTree

__all__ = ["TraceStore", "flatten"]

_ATTRIBUTE_TEXT = 200


@dataclass(slots=True)
class _Trace:
    spans: dict[str, ReceivedSpan] = field(default_factory=dict)
    size: int = 0
    dropped: int = 0


class TraceStore:
    """Spans by trace id. ``add()`` is on the ingestion path: a dict insert, an LRU
    move and, now and then, an eviction."""

    def __init__(self, *, max_bytes: int = 32 * 1024 * 1024, max_spans: int = 2000) -> None:
        self.max_bytes = max_bytes
        self.max_spans = max_spans
        self._traces: OrderedDict[str, _Trace] = OrderedDict()
        self.size = 0
        self.evicted = 0  # traces evicted to stay within the byte budget
        self.dropped = 0  # spans that did not fit in their trace

    def __len__(self) -> int:
        return len(self._traces)

    def __contains__(self, trace_id: object) -> bool:
        return trace_id in self._traces

    def add(self, span: ReceivedSpan) -> None:
        traces = self._traces
        trace = traces.get(span.trace_id)
        if trace is None:
            trace = traces[span.trace_id] = _Trace()
        else:
            traces.move_to_end(span.trace_id)
        previous = trace.spans.get(span.span_id)
        if previous is None and len(trace.spans) >= self.max_spans:
            trace.dropped += 1
            self.dropped += 1
            return
        trace.spans[span.span_id] = span  # a resent span replaces its first copy
        grown = span.size - (previous.size if previous is not None else 0)
        trace.size += grown
        self.size += grown
        while self.size > self.max_bytes and len(traces) > 1:
            _, oldest = traces.popitem(last=False)
            self.size -= oldest.size
            self.evicted += 1

    def spans(self, trace_id: str) -> list[ReceivedSpan]:
        trace = self._traces.get(trace_id)
        return list(trace.spans.values()) if trace is not None else []

    def span(self, trace_id: str, span_id: str) -> ReceivedSpan | None:
        """One span, if it arrived (and is still kept)."""
        trace = self._traces.get(trace_id)
        return trace.spans.get(span_id) if trace is not None else None

    def tree(self, trace_id: str) -> TraceTree | None:
        """The trace as nested `SpanNode` objects, roots by start time. Spans whose
        parent has not arrived are roots marked ``orphan``; cycles (only a broken or
        hostile sender makes them) are cut where they close. Built without recursion,
        however deep the tree."""
        trace = self._traces.get(trace_id)
        if trace is None or not trace.spans:
            return None
        spans = trace.spans
        origin = min(s.start_ns for s in spans.values())
        finish = max(s.end_ns for s in spans.values())
        children: dict[str, list[str]] = {}
        roots: list[str] = []
        for span in spans.values():
            parent = span.parent_id
            if parent is not None and parent in spans and parent != span.span_id:
                children.setdefault(parent, []).append(span.span_id)
            else:
                roots.append(span.span_id)
        # Spans caught in a parent cycle are reachable from no root: make them roots.
        reachable = _walk(roots, children)
        for span_id in spans:
            if span_id not in reachable:
                roots.append(span_id)
                reachable |= _walk([span_id], children, reachable)
        built: dict[str, SpanNode] = {}
        top_level = set(roots)
        for span_id, kids in _post_order(roots, children):
            span = spans[span_id]
            nodes = sorted((built.pop(c) for c in kids), key=lambda n: (n.start, n.name))
            orphan = span_id in top_level and span.parent_id is not None
            built[span_id] = _node(span, origin, tuple(nodes), orphan)
        top = sorted((built[r] for r in roots if r in built), key=lambda n: (n.start, n.name))
        return TraceTree(
            trace_id=trace_id,
            roots=tuple(top),
            spans=len(spans),
            dropped=trace.dropped,
            duration=(finish - origin) / 1e9,
        )


def _walk(
    starts: list[str], children: dict[str, list[str]], seen: set[str] | None = None
) -> set[str]:
    found: set[str] = set()
    stack = list(starts)
    while stack:
        span_id = stack.pop()
        if span_id in found or (seen is not None and span_id in seen):
            continue
        found.add(span_id)
        stack.extend(children.get(span_id, ()))
    return found


def _post_order(roots: list[str], children: dict[str, list[str]]) -> list[tuple[str, list[str]]]:
    """Every span after its children, each once. A span has at most one parent, so
    a child is claimed once; the span where a cycle was cut is not finished when its
    cycle comes back to it, so it is nobody's child."""
    order: list[tuple[str, list[str]]] = []
    entered: set[str] = set()
    finished: set[str] = set()
    for root in roots:
        stack: list[tuple[str, bool]] = [(root, False)]
        while stack:
            span_id, expanded = stack.pop()
            if expanded:
                order.append((span_id, [c for c in children.get(span_id, ()) if c in finished]))
                finished.add(span_id)
                continue
            if span_id in entered:
                continue
            entered.add(span_id)
            stack.append((span_id, True))
            stack.extend((c, False) for c in children.get(span_id, ()) if c not in entered)
    return order


def _node(
    span: ReceivedSpan, origin: int, children: tuple[SpanNode, ...], orphan: bool
) -> SpanNode:
    return SpanNode(
        name=span.name,
        span_id=span.span_id,
        parent_id=span.parent_id,
        service=span.resource.service,
        kind=span.kind,
        start=(span.start_ns - origin) / 1e9,
        end=(span.end_ns - origin) / 1e9,
        status=span.status,
        status_message=span.status_message,
        attributes=tuple((key, _render(value)) for key, value in sorted(span.attributes.items())),
        children=children,
        orphan=orphan,
    )


def _render(value: Value) -> str:
    text = "[" + ", ".join(map(str, value)) + "]" if isinstance(value, tuple) else str(value)
    return cut_middle(text, _ATTRIBUTE_TEXT)


def flatten(tree: TraceTree) -> list[tuple[int, SpanNode]]:
    """The tree depth first as ``(depth, node)`` rows: a waterfall's lines."""
    return tree.rows()
