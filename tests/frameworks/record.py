"""Regenerates the recordings in ``tests/frameworks/recordings/``: each framework and
instrumentation of `harness` run for real (offline), written as OTLP/JSON, one export
request per span in the order the spans ended (as a ``SimpleSpanProcessor`` sends
them, so a child always arrives before its parent, as it does from these senders).

    uv run python tests/frameworks/record.py

What is fixed, so that a rerun writes the same bytes with the same library versions:
trace and span ids (numbered in order of appearance), times (every distinct
timestamp, in order, becomes one millisecond after 2026-01-01T00:00:00Z: order and
nesting are kept, durations are not), pydantic-ai's run ids (``run_id``), the fake
server's port (``127.0.0.1:0``), and ``exception.stacktrace`` (replaced by
`STACKTRACE`: it holds this machine's paths). What still varies with the installed
versions: ``telemetry.sdk.version`` and the instrumentation scopes' versions, and
whatever the frameworks change in their spans (which is what a rerun shows).
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.trace import SpanContext, TraceFlags

sys.path.insert(0, str(Path(__file__).parent))

import harness

from pygents_tui.recording import to_json_line

__all__ = ["RECORDINGS", "STACKTRACE", "normalized", "record", "record_all"]

RECORDINGS = Path(__file__).parent / "recordings"
STACKTRACE = "(stacktrace removed from the recording)"
BASE_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
_PORT = re.compile(r"127\.0\.0\.1:\d+")

FILES = {
    "pydantic_ai.jsonl": ("pydantic-ai-weather", None),
    "openai_agents_otel.jsonl": ("openai-agents-otel", "otel"),
    "openai_agents_openinference.jsonl": ("openai-agents-openinference", "openinference"),
}
"""Recording file → (service name, OpenAI Agents instrumentation or None for pydantic-ai)."""


def _value(value: Any) -> Any:
    if isinstance(value, str):
        return _PORT.sub("127.0.0.1:0", value)
    if isinstance(value, tuple):
        return tuple(_value(v) for v in value)
    return value


def _attributes(attributes: Any) -> dict[str, Any]:
    return {
        k: (STACKTRACE if k == "exception.stacktrace" else _value(v))
        for k, v in (attributes or {}).items()
    }


def normalized(spans: Sequence[ReadableSpan]) -> list[ReadableSpan]:
    """The spans with fixed ids and times (see the module docstring)."""
    traces: dict[int, int] = {}
    ids: dict[int, int] = {}
    stamps = sorted(
        {
            t
            for s in spans
            for t in (s.start_time, s.end_time, *(e.timestamp for e in s.events))
            if t
        }
    )
    at = {t: BASE_NS + i * 1_000_000 for i, t in enumerate(stamps)}

    def context(original: SpanContext | None) -> SpanContext | None:
        if original is None:
            return None
        trace = traces.setdefault(original.trace_id, len(traces) + 1)
        span = ids.setdefault(original.span_id, len(ids) + 1)
        return SpanContext(
            trace, span, is_remote=original.is_remote, trace_flags=TraceFlags(TraceFlags.SAMPLED)
        )

    out: list[ReadableSpan] = []
    for span in spans:
        events = [Event(e.name, _attributes(e.attributes), at[e.timestamp]) for e in span.events]
        out.append(
            ReadableSpan(
                name=span.name,
                context=context(span.context),
                parent=context(span.parent),
                resource=span.resource,
                attributes=_attributes(span.attributes),
                events=events,
                links=(),
                kind=span.kind,
                status=span.status,
                start_time=at[span.start_time] if span.start_time else None,
                end_time=at[span.end_time] if span.end_time else None,
                instrumentation_scope=span.instrumentation_scope,
            )
        )
    return out


def lines(spans: Sequence[ReadableSpan]) -> bytes:
    """One OTLP/JSON export request per span, in the given order."""
    return b"".join(to_json_line(encode_spans([span])) for span in spans)


async def record(name: str) -> bytes:
    """The recording ``name`` (a key of `FILES`), made afresh."""
    service, instrumentation = FILES[name]
    sink = harness.telemetry(service)
    try:
        if instrumentation is None:
            await harness.run_pydantic_ai(sink)
        else:
            await harness.run_openai_agents(sink, instrumentation)  # type: ignore[arg-type]
        return lines(normalized(sink.spans()))
    finally:
        sink.shutdown()


def record_all(directory: Path = RECORDINGS) -> list[Path]:
    written = []
    for name in FILES:
        path = directory / name
        path.write_bytes(asyncio.run(record(name)))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in record_all():
        print(f"{path}: {path.stat().st_size} bytes")
