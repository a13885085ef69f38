"""W10: replaying a long recording (``pygents-tui replay``), headless.

A synthetic recording of ``services`` services over ``seconds`` seconds is written
straight as OTLP/JSON lines (no SDK: an hour of ten services is written in seconds):
every second each service sends one logs request (the live records of four turns
starting and ending) and one traces request (their four turn spans and two tool
spans): 14 items a request pair, about a million for ten services over an hour.

Measured on the replay view the dashboard reads (`ReplayView`), without the UI:
the first screen (from opening the file to the first drained state with the
services in it), a seek (to the middle of the recording, from the start: a fresh
model warmed up from the nearest index point), and the process's resident memory
after the seek and after playing on at 100×.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pygents_tui.feeders import ReplayView

_PAGE = os.sysconf("SC_PAGE_SIZE")
START_NS = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z
TURNS_PER_SECOND = 8


@dataclass(frozen=True)
class ReplayFigures:
    records: int  # items (spans and log records) in the file
    lines: int
    megabytes: float
    first_screen: float  # seconds
    seek: float  # seconds
    rss_mib: float  # the largest resident size seen
    rss_before_mib: float  # before opening the file (the process's own baseline)


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE / 2**20


def _obj(**fields: str) -> str:
    """A JSON object of already-encoded values: the generator writes JSON directly,
    which is many times faster than building and dumping dictionaries."""
    return "{" + ",".join(f'"{key}":{value}' for key, value in fields.items()) + "}"


def _q(value: object) -> str:
    return f'"{value}"'


def _attr(key: str, value: str) -> str:
    return _obj(key=_q(key), value=_obj(stringValue=_q(value)))


def _resource(service: int) -> str:
    attributes = [
        _attr("service.name", f"svc-{service}"),
        _attr("service.instance.id", f"i-{service}"),
    ]
    return _obj(attributes="[" + ",".join(attributes) + "]")


def _request(
    field: str, resource: str, scopes: str, scope: str, items: str, listed: list[str]
) -> str:
    group = _obj(scope=_obj(name=_q(scope)), **{items: "[" + ",".join(listed) + "]"})
    return _obj(**{field: "[" + _obj(resource=resource, **{scopes: "[" + group + "]"}) + "]"})


def write_recording(path: Path, services: int, seconds: int) -> tuple[int, int]:
    """Write the synthetic recording; (items, lines) written."""
    items = lines = 0
    with open(path, "w") as out:
        for second in range(seconds):
            base = START_NS + second * 10**9
            for service in range(services):
                resource = _resource(service)
                agent = [
                    _attr("gen_ai.agent.name", f"agent-{service}"),
                    _attr("gen_ai.agent.id", f"agent-{service}"),
                ]
                records: list[str] = []
                spans: list[str] = []
                for turn in range(TURNS_PER_SECOND):
                    uuid = f"{service:04x}{second:08x}{turn:04x}".ljust(32, "0")
                    start = base + turn * 100_000_000
                    end = start + 80_000_000
                    shared = (
                        "["
                        + ",".join(
                            [
                                *agent,
                                _attr("pygents.turn.uuid", uuid),
                                _attr("pygents.tool.name", "work"),
                            ]
                        )
                        + "]"
                    )
                    trace = _q(f"{service + 1:08x}{second:016x}{turn:08x}")
                    span_id = _q(f"{turn + 1:016x}")
                    for name, at in (("pygents.turn.start", start), ("pygents.turn.end", end)):
                        records.append(
                            _obj(
                                timeUnixNano=_q(at),
                                eventName=_q(name),
                                traceId=trace,
                                spanId=span_id,
                                attributes=shared,
                            )
                        )
                    spans.append(
                        _obj(
                            traceId=trace,
                            spanId=span_id,
                            name=_q("turn work"),
                            kind="1",
                            startTimeUnixNano=_q(start),
                            endTimeUnixNano=_q(end),
                            attributes=shared,
                        )
                    )
                    if turn % 2 == 0:
                        spans.append(
                            _obj(
                                traceId=trace,
                                spanId=_q(f"{turn + 100:016x}"),
                                parentSpanId=span_id,
                                name=_q("execute_tool work"),
                                kind="1",
                                startTimeUnixNano=_q(start),
                                endTimeUnixNano=_q(end),
                            )
                        )
                logs = _request(
                    "resourceLogs",
                    resource,
                    "scopeLogs",
                    "pygents_otel.live",
                    "logRecords",
                    records,
                )
                traces = _request(
                    "resourceSpans", resource, "scopeSpans", "pygents", "spans", spans
                )
                out.write(logs + "\n" + traces + "\n")
                items += len(records) + len(spans)
                lines += 2
    return items, lines


def w10(services: int = 10, seconds: int = 3600) -> ReplayFigures:
    """Write the recording in a temporary directory, then measure; see the module."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "w10.jsonl"
        items, lines = write_recording(path, services, seconds)
        size = path.stat().st_size / 2**20
        from pygents_tui.cli.replay import open_replay

        rss = before = _rss_mib()
        began = time.perf_counter()

        view: ReplayView = open_replay(str(path), speed=1.0)
        view.store.drain()
        assert view.store.agent_rows(), "the first screen shows no agent"
        first = time.perf_counter() - began
        rss = max(rss, _rss_mib())
        began = time.perf_counter()
        view.replay.seek((view.replay.start_ns + view.replay.end_ns) // 2)
        view.store.drain()
        seek = time.perf_counter() - began
        assert len(view.store.agent_rows()) == services
        rss = max(rss, _rss_mib())
        view.replay.set_speed(100.0)
        for _ in range(20):  # play on a while, as the dashboard's timer would
            view.store.drain()
            rss = max(rss, _rss_mib())
        view.close()
    return ReplayFigures(items, lines, size, first, seek, rss, before)
