"""A turn's trace written out as an OTLP JSON file, for a trace viewer to open.

The document is an ``ExportTraceServiceRequest`` in OTLP's JSON encoding: the form
Jaeger's "upload JSON" and otel-desktop-viewer read. Ids are hex strings, as that
encoding requires (not base64, as a generic protobuf-to-JSON converter would write
them), and times are decimal strings of nanoseconds since the epoch.

The dashboard keeps a trace as a `TraceTree` whose times are offsets from the trace's
first start, so the caller gives that start (``origin_ns``): offsets and durations
come out exact, and the trace sits at the date the caller knows. Attribute values
are the texts the dashboard shows (already cut to its bounds), exported as strings.
Standard library only (Textual is named for types only).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygents_otel import _names as k
from pygents_tui.state import SpanNode, TraceTree

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["ExportError", "saved", "trace_document", "trace_origin", "write_trace"]

_KINDS = {"internal": 1, "server": 2, "client": 3, "producer": 4, "consumer": 5}
_STATUS = {"ok": 1, "error": 2}  # anything else is unset (0)
_SCOPE = {"name": "pygents-tui", "version": ""}


class ExportError(OSError):
    """The trace could not be written; the message says where, in one line."""


def _span(trace_id: str, node: SpanNode, origin_ns: int) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": node.span_id,
        "name": node.name,
        "kind": _KINDS.get(node.kind, 0),
        "startTimeUnixNano": str(origin_ns + round(node.start * 1e9)),
        "endTimeUnixNano": str(origin_ns + round(node.end * 1e9)),
        "attributes": [
            {"key": key, "value": {"stringValue": value}} for key, value in node.attributes
        ],
        "status": {"code": _STATUS.get(node.status, 0)},
    }
    if node.parent_id is not None:
        span["parentSpanId"] = node.parent_id
    if node.status_message:
        span["status"]["message"] = node.status_message
    return span


def trace_document(tree: TraceTree, origin_ns: int) -> dict[str, Any]:
    """``tree`` as an OTLP JSON ``ExportTraceServiceRequest``: one resource per
    service, each span with its parent, attributes, status and times."""
    by_service: dict[str, list[dict[str, Any]]] = {}
    for _, node in tree.rows():  # depth first, without recursion
        by_service.setdefault(node.service, []).append(_span(tree.trace_id, node, origin_ns))
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": k.SERVICE_NAME, "value": {"stringValue": service}}]
                },
                "scopeSpans": [{"scope": _SCOPE, "spans": spans}],
            }
            for service, spans in by_service.items()
        ]
    }


def write_trace(tree: TraceTree, origin_ns: int, folder: Path | None = None) -> Path:
    """Write ``tree`` to ``<folder>/trace-<trace id>.json`` (default: the current
    directory) and return the path. The file is written whole or not at all (a
    temporary file renamed over it), so a viewer never opens half a trace.
    Raises `ExportError`."""
    folder = folder if folder is not None else Path.cwd()
    # The id came over the network in listen mode: only hex digits reach a file name.
    safe_id = "".join(c for c in tree.trace_id if c in "0123456789abcdefABCDEF")[:32] or "unknown"
    path = folder / f"trace-{safe_id}.json"
    partial = folder / f".trace-{safe_id}.json.partial"
    text = json.dumps(trace_document(tree, origin_ns), indent=1)
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except OSError as error:
        try:
            partial.unlink(missing_ok=True)
        except OSError:  # the folder itself is missing or read-only: nothing was left
            pass
        raise ExportError(f"could not write {path}: {error.strerror or error}") from None
    return path


def trace_origin(started: float, clock_now: float, wall_now_ns: int) -> int:
    """The date, in ns since the epoch, of ``started`` on a clock that reads
    ``clock_now`` at wall time ``wall_now_ns``: where an exported trace is anchored (the
    dashboard's trees keep only offsets; a turn's start is on its model's clock)."""
    return wall_now_ns - round((clock_now - started) * 1e9)


def saved(app: App[Any], what: str, write: Callable[[], object]) -> None:
    """Run ``write`` and say in a toast where it wrote ``what``, or in one line why
    it could not (a full disk or a read-only folder is not a crash)."""
    try:
        where = write()
    except OSError as error:
        app.notify(f"{what} not saved: {error}", severity="error", timeout=10)
        return
    app.notify(f"{what} saved to {where}", timeout=10)
