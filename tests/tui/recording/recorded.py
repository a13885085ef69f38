"""Recording lines for the replay's tests, written by hand in the OTLP/JSON file
format (one export request per line, hex ids), as the Collector's file exporter
writes them: ``from recorded import turn_start_line, ...``.

The live records are shaped as ``pygents_otel`` sends them (event names and
attributes from ``pygents_otel._names``), so the fleet model opens agents and turns
from them as it does from a live sender.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pygents_otel import _names as k

__all__ = ["SECOND", "T0", "spans_line", "turn_lines", "write_lines"]

SECOND = 1_000_000_000
T0 = 1_767_225_600 * SECOND  # 2026-01-01T00:00:00Z


def _attributes(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for key, value in attributes.items():
        if isinstance(value, bool):
            out.append({"key": key, "value": {"boolValue": value}})
        elif isinstance(value, int):
            out.append({"key": key, "value": {"intValue": str(value)}})
        elif isinstance(value, float):
            out.append({"key": key, "value": {"doubleValue": value}})
        else:
            out.append({"key": key, "value": {"stringValue": str(value)}})
    return out


def _resource(service: str) -> dict[str, Any]:
    return {
        "attributes": _attributes({k.SERVICE_NAME: service, k.SERVICE_INSTANCE: f"{service}-1"})
    }


def records_line(service: str, records: list[dict[str, Any]]) -> str:
    scope = {"scope": {"name": k.LOGGER_NAME}, "logRecords": records}
    return json.dumps({"resourceLogs": [{"resource": _resource(service), "scopeLogs": [scope]}]})


def record(name: str, time_ns: int, attributes: dict[str, Any], trace: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {
        "timeUnixNano": str(time_ns),
        "eventName": name,
        "attributes": _attributes(attributes),
    }
    if trace:
        found["traceId"], found["spanId"] = trace, trace[:16]
    return found


def turn_lines(
    service: str, agent: str, uuid: str, start_ns: int, end_ns: int | None, tool: str = "work"
) -> list[str]:
    """A turn's live records (start, and end unless ``end_ns`` is None), one line each,
    and its turn span when it ended (in trace ``uuid``)."""
    attributes = {
        k.AGENT_NAME: agent,
        k.AGENT_ID: f"{agent}-id",
        k.TURN_UUID: uuid,
        k.PYGENTS_TOOL: tool,
        k.TURN_TIMEOUT: 60.0,
    }
    lines = [records_line(service, [record(k.TURN_START, start_ns, attributes, uuid)])]
    if end_ns is not None:
        lines.append(records_line(service, [record(k.TURN_END, end_ns, attributes, uuid)]))
        lines.append(spans_line(service, uuid, f"turn {tool}", start_ns, end_ns, attributes))
    return lines


def spans_line(
    service: str, trace: str, name: str, start_ns: int, end_ns: int, attributes: dict[str, Any]
) -> str:
    span = {
        "traceId": trace,
        "spanId": trace[:16],
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start_ns),
        "endTimeUnixNano": str(end_ns),
        "attributes": _attributes(attributes),
        "status": {},
    }
    scope = {"scope": {"name": "pygents"}, "spans": [span]}
    return json.dumps({"resourceSpans": [{"resource": _resource(service), "scopeSpans": [scope]}]})


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path
