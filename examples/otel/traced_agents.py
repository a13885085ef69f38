"""Two traced agents: a planner that hands work to a worker.

The planner's only tool splits a topic into work items and ``send()``s each one to
the worker as a turn. The worker has a streaming tool (``read_source``, 40 pages)
and a tool that fails for input it does not know (``look_up``). Everything is
traced by ``pygents_otel``; the script prints what happened and the trace id.

Against a local Jaeger (or Tempo + Grafana, see README.md beside this file)::

    docker compose -f examples/otel/jaeger/compose.yaml up -d
    uv run python examples/otel/traced_agents.py

With no backend at all, printing the spans as JSON instead of sending them::

    OTEL_TRACES_EXPORTER=console uv run python examples/otel/traced_agents.py

The standard ``OTEL_*`` variables choose the exporter. ``otlp`` is the default and
sends OTLP/gRPC to localhost:4317; ``OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf``
sends to localhost:4318 instead. If nothing listens there the script still runs to
the end: it says so, and at exit ``telemetry.shutdown()`` gives up on the spans after
at most 5 s (``PYGENTS_OTEL_SHUTDOWN_TIMEOUT``).

Neither Jaeger nor Tempo stores metrics, so this script turns metric export off
unless ``OTEL_METRICS_EXPORTER`` is set (``console`` prints them).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import trace

import pygents_otel
from pygents import Agent, StopReason, Turn, tool

GLOSSARY = {
    "span": "one timed operation, with attributes, events and links",
    "trace": "the tree of spans that share one trace id",
    "link": "a reference from a span to a span of another (or the same) trace",
}
PAGES = 40  # more than the default cap of 16 per-value events per span


@dataclass
class Report:
    """What one run of the example did."""

    planned: int = 0
    streamed: int = 0
    answers: dict[str, str] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    linked_turns: int = 0
    trace_id: str = ""


def build_agents() -> tuple[Agent, Agent]:
    """Define the tools and the two agents.

    Done in a function (called once, from ``main``) so that importing this module
    registers nothing.
    """

    @tool()
    async def read_source(name: str, pages: int) -> AsyncIterator[str]:
        """Stream the pages of a document, one value per page."""
        for page in range(1, pages + 1):
            await asyncio.sleep(0)  # a real reader would wait for I/O here
            yield f"{name}, page {page} of {pages}"

    @tool()
    async def look_up(term: str) -> str:
        """Look a term up in a small glossary; unknown terms raise LookupError."""
        # A span opened inside a tool becomes a child of the tool's span.
        with trace.get_tracer(__name__).start_as_current_span("glossary.lookup") as span:
            span.set_attribute("glossary.term", term)
            await asyncio.sleep(0.001)
            if term not in GLOSSARY:
                raise LookupError(f"the glossary has no entry for {term!r}")
            return GLOSSARY[term]

    @tool()
    async def plan(topic: str, terms: list[str]) -> int:
        """Split a topic into work items and send each one to the worker."""
        await planner.send(
            "worker", Turn(read_source, kwargs={"name": topic, "pages": PAGES}, timeout=10)
        )
        for term in terms:
            await planner.send("worker", Turn(look_up, kwargs={"term": term}, timeout=5))
        return 1 + len(terms)

    planner = Agent("planner", "Splits a topic into work for the worker", [plan], tags=["demo"])
    worker = Agent("worker", "Reads sources and looks terms up", [read_source, look_up])
    return planner, worker


async def run_agents(planner: Agent, worker: Agent, report: Report) -> None:
    """Run the planner, then drain the worker's queue."""
    terms = ["span", "baggage", "link"]  # "baggage" is not in the glossary
    await planner.put(Turn("plan", kwargs={"topic": "tracing", "terms": terms}))
    async for _turn, value in planner.run():
        report.planned = value

    # The worker's turns remember where they were sent from: the planner's tool span.
    report.linked_turns = sum("traceparent" in turn.metadata for turn in worker.turns)

    # A failing turn ends the run() that ran it (its error propagates); the turns
    # behind it stay queued, so run() again until the queue is empty.
    sent = worker.turns  # a snapshot
    while worker.turns:
        try:
            async for turn, value in worker.run():
                if turn.tool.name == "read_source":
                    report.streamed += 1
                else:
                    report.answers[turn.kwargs["term"]] = value
        except LookupError:
            pass  # kept on the turn (turn.error) and on its span; go on with the rest
    for turn in sent:
        if turn.stop_reason is StopReason.ERROR:
            what = turn.kwargs.get("term", turn.tool.name)
            report.failures[what] = f"{type(turn.error).__name__}: {turn.error}"


async def traced_session(report: Report) -> None:
    planner, worker = build_agents()
    tracer = trace.get_tracer(__name__)
    # One root span, so that both agents' runs land in a single trace.
    with tracer.start_as_current_span("pygents-example") as root:
        report.trace_id = format(root.get_span_context().trace_id, "032x")
        async with planner, worker:  # unregisters both agents on the way out
            await run_agents(planner, worker, report)


def collector_address() -> tuple[str, int] | None:
    """Where OTLP spans will go, or ``None`` when no traces exporter is an OTLP one."""
    names = {name.strip() for name in os.environ.get("OTEL_TRACES_EXPORTER", "").split(",")}
    names = names - {""} or {"otlp"}  # unset: otlp
    if not names & {"otlp", "otlp_proto_grpc", "otlp_proto_http"}:
        return None
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "").strip()
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "").strip()
        or "grpc"
    )
    grpc = "otlp_proto_grpc" in names or ("otlp" in names and protocol == "grpc")
    default_port = 4317 if grpc else 4318
    endpoint = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or f"http://localhost:{default_port}"
    )
    parts = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    return parts.hostname or "localhost", parts.port or default_port


def listening(address: tuple[str, int]) -> bool:
    try:
        with socket.create_connection(address, timeout=0.5):
            return True
    except OSError:
        return False


def print_report(report: Report, address: tuple[str, int] | None) -> None:
    print(f"planner: sent {report.planned} turns to the worker")
    print(f"worker:  read_source streamed {report.streamed} pages")
    for term, answer in report.answers.items():
        print(f"worker:  look_up({term!r}) -> {answer}")
    for term, error in report.failures.items():
        print(f"worker:  look_up({term!r}) failed with {error}")
    print(f"{report.linked_turns} worker turns carry the planner's traceparent (span links)")
    print(f"trace id: {report.trace_id}")
    if address is not None:
        print(f"  Jaeger:  http://localhost:16686/trace/{report.trace_id}")
        print("  Grafana: http://localhost:3000/explore, data source Tempo, paste the trace id")


def main() -> int:
    address = collector_address()
    if address is not None and not listening(address):
        print(
            f"note: no OTLP collector is listening on {address[0]}:{address[1]}; the agents "
            "run anyway and the spans are dropped when the exporter gives up. Start one "
            "(see examples/otel/README.md) or set OTEL_TRACES_EXPORTER=console.",
            file=sys.stderr,
        )
    options: dict[str, Any] = {}
    if "OTEL_METRICS_EXPORTER" not in os.environ:
        options["metrics_exporter"] = "none"  # Jaeger and Tempo take traces only
    telemetry = pygents_otel.configure(service_name="pygents-example", **options)
    report = Report()
    try:
        asyncio.run(traced_session(report))
    finally:
        telemetry.shutdown()  # flushes the spans still in the batch processor
    print_report(report, address)
    return 0


if __name__ == "__main__":
    sys.exit(main())
