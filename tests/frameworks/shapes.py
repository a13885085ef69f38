"""Small readers of a run's spans, shared by the framework tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

__all__ = ["attr", "by_trace", "children", "named", "parent_of", "root", "status"]


def attr(span: ReadableSpan, key: str) -> Any:
    return (span.attributes or {}).get(key)


def by_trace(spans: Sequence[ReadableSpan]) -> list[list[ReadableSpan]]:
    """One list per trace (a run), in the order the traces started."""
    traces: dict[int, list[ReadableSpan]] = {}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        assert span.context is not None
        traces.setdefault(span.context.trace_id, []).append(span)
    return list(traces.values())


def parent_of(span: ReadableSpan, spans: Sequence[ReadableSpan]) -> ReadableSpan | None:
    if span.parent is None:
        return None
    return next(
        (s for s in spans if s.context is not None and s.context.span_id == span.parent.span_id),
        None,
    )


def children(span: ReadableSpan, spans: Sequence[ReadableSpan]) -> list[ReadableSpan]:
    assert span.context is not None
    return [s for s in spans if s.parent is not None and s.parent.span_id == span.context.span_id]


def root(spans: Sequence[ReadableSpan]) -> ReadableSpan:
    (top,) = [s for s in spans if s.parent is None]
    return top


def named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def status(span: ReadableSpan) -> StatusCode:
    return span.status.status_code
