"""Telemetry across processes (SPEC §2.4, §2.1, §2.6), with real interpreters:

* an agent serialized in one process and restored in another runs turns whose spans
  link back to the trace in which they were queued;
* ``opentelemetry-instrument python app.py`` traces a pygents app that never imports
  ``pygents_otel`` (the ``opentelemetry_instrumentor`` entry point).

Spans leave the child processes through the real OTLP exporters and arrive at the
receiver in ``otlp_receiver.py`` on loopback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanProto
from otlp_receiver import OTLPGrpcReceiver, OTLPHttpReceiver, ReceivedSpan, span_names

PROTOCOLS = {"grpc": "grpc", "http": "http/protobuf"}
Receiver = OTLPGrpcReceiver | OTLPHttpReceiver

TOOLS = '''
"""Tools both processes define (a restored agent finds its tools by name)."""

from collections.abc import AsyncIterator

from pygents import tool


@tool()
async def greet(name: str) -> str:
    """Greets someone."""
    return f"hello, {name}"


@tool()
async def spell(word: str) -> AsyncIterator[str]:
    """Spells a word."""
    for letter in word:
        yield letter
'''

PRODUCER = '''
"""Process 1: queue two turns inside a span, then print the agent and that span's ids."""

import asyncio
import json

import courier_tools
import pygents_otel
from opentelemetry import trace
from pygents import Agent, Turn


async def main() -> None:
    telemetry = pygents_otel.configure(
        service_name="producer", traces_exporter="none", metrics_exporter="none"
    )
    try:
        tools = [courier_tools.greet, courier_tools.spell]
        agent = Agent("courier", "Carries work between processes", tools)
        with trace.get_tracer("producer").start_as_current_span("enqueue") as span:
            await agent.put(Turn(courier_tools.greet, kwargs={"name": "world"}))
            await agent.put(Turn("spell", args=["otel"]))
        context = span.get_span_context()
        print(json.dumps({
            "agent": agent.to_dict(),
            "trace_id": format(context.trace_id, "032x"),
            "span_id": format(context.span_id, "016x"),
        }))
    finally:
        telemetry.shutdown()


asyncio.run(main())
'''

CONSUMER = '''
"""Process 2: restore the agent from stdin, run it, export spans over OTLP."""

import asyncio
import json
import sys

import courier_tools  # noqa: F401  (registers the tools the agent names)
import pygents_otel
from pygents import Agent


async def main() -> None:
    endpoint, protocol = sys.argv[1], sys.argv[2]
    telemetry = pygents_otel.configure(
        service_name="consumer",
        endpoint=endpoint,
        protocol=protocol,
        traces_exporter="otlp",
        metrics_exporter="none",
    )
    try:
        agent = Agent.from_dict(json.loads(sys.stdin.read()))
        print(json.dumps([[turn.uuid, value] async for turn, value in agent.run()]))
    finally:
        telemetry.shutdown()  # flushes the batch processor before the process exits


asyncio.run(main())
'''

APP = '''
"""A pygents app with no telemetry code at all."""

import asyncio
import json
from collections.abc import AsyncIterator

from pygents import Agent, Turn, tool


@tool()
async def shout(text: str) -> str:
    """Shouts."""
    return text.upper()


@tool()
async def letters(text: str) -> AsyncIterator[str]:
    """Streams letters."""
    for letter in text:
        yield letter


async def main() -> None:
    agent = Agent("auto", "Traced with no code change", [shout, letters])
    await agent.put(Turn(shout, args=["hi"]))
    await agent.put(Turn(letters, args=["ok"]))
    print(json.dumps([value async for _, value in agent.run()]))


asyncio.run(main())
'''


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without any OpenTelemetry or pygents settings, plus ``extra``."""
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("OTEL_", "PYGENTS_"))
    }
    env.update(extra)
    return env


def run(
    args: list[str], cwd: Path, env: dict[str, str], stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    return done


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


@pytest.fixture(params=list(PROTOCOLS))
def receiver(request: pytest.FixtureRequest) -> Iterator[tuple[str, Receiver]]:
    """A running OTLP receiver on loopback and the ``OTEL_EXPORTER_OTLP_PROTOCOL`` for it."""
    found: Receiver = OTLPGrpcReceiver() if request.param == "grpc" else OTLPHttpReceiver()
    with found:
        yield PROTOCOLS[request.param], found


def base_url(found: Receiver) -> str:
    """``OTEL_EXPORTER_OTLP_ENDPOINT`` for the receiver (plain-text gRPC via ``http://``)."""
    return f"http://127.0.0.1:{found.port}"


def by_name(spans: list[ReceivedSpan]) -> dict[str, ReceivedSpan]:
    found = {span.name: span for span in spans}
    assert len(found) == len(spans), sorted(span.name for span in spans)
    return found


def assert_child(child: ReceivedSpan, parent: ReceivedSpan) -> None:
    assert child.trace_id == parent.trace_id, (child.name, parent.name)
    assert child.parent_span_id == parent.span_id, (child.name, parent.name)


# -- to_dict in one process, from_dict in another ------------------------------------------


def test_restored_agent_links_its_turn_spans_to_the_original_trace(
    tmp_path: Path, receiver: tuple[str, Receiver]
) -> None:
    protocol, found = receiver
    write(tmp_path, "courier_tools.py", TOOLS)
    producer = write(tmp_path, "producer.py", PRODUCER)
    consumer = write(tmp_path, "consumer.py", CONSUMER)
    env = clean_env()

    made = json.loads(run([sys.executable, str(producer)], tmp_path, env).stdout)
    origin_trace, origin_span = made["trace_id"], made["span_id"]
    queue: list[dict[str, Any]] = made["agent"]["queue"]
    assert [turn["tool_name"] for turn in queue] == ["greet", "spell"]
    # The W3C trace context of the span the turns were put in, kept in turn.metadata.
    for turn in queue:
        version, trace_id, parent_id, flags = turn["metadata"]["traceparent"].split("-")
        assert (version, trace_id, parent_id) == ("00", origin_trace, origin_span)
        assert int(flags, 16) & 0x01, flags  # sampled
    uuids = {turn["tool_name"]: turn["uuid"] for turn in queue}

    done = run(
        [sys.executable, str(consumer), base_url(found), protocol],
        tmp_path,
        env,
        stdin=json.dumps(made["agent"]),
    )
    assert json.loads(done.stdout) == [
        [uuids["greet"], "hello, world"],
        *([uuids["spell"], letter] for letter in "otel"),
    ]

    expected = {
        "invoke_agent courier",
        "turn greet",
        "execute_tool greet",
        "turn spell",
        "execute_tool spell",
    }
    spans = by_name(found.wait_for_spans(lambda got: expected <= span_names(got)))
    assert set(spans) == expected  # the producer exported nothing ("none")
    run_span = spans["invoke_agent courier"]
    assert run_span.parent_span_id == ""
    for name in ("greet", "spell"):
        turn_span, tool_span = spans[f"turn {name}"], spans[f"execute_tool {name}"]
        assert_child(turn_span, run_span)
        assert_child(tool_span, turn_span)
        assert turn_span.resource["service.name"] == "consumer"
        assert turn_span.attributes["pygents.turn.uuid"] == uuids[name]
        assert "gen_ai.tool.call.id" not in tool_span.attributes  # no model call id given
        # The link back to where the turn was queued, in the other process.
        assert [(link.trace_id, link.span_id) for link in turn_span.links] == [
            (origin_trace, origin_span)
        ]
        assert turn_span.links[0].attributes == {"pygents.link.type": "queued_from"}


# -- opentelemetry-instrument --------------------------------------------------------------


def test_opentelemetry_instrument_traces_an_app_with_no_code_change(
    tmp_path: Path, receiver: tuple[str, Receiver]
) -> None:
    protocol, found = receiver
    app = write(tmp_path, "app.py", APP)
    assert "pygents_otel" not in app.read_text()
    instrument = Path(sys.executable).parent / "opentelemetry-instrument"
    assert instrument.is_file(), instrument
    env = clean_env(
        OTEL_SERVICE_NAME="auto-instrumented",
        OTEL_TRACES_EXPORTER="otlp",
        OTEL_EXPORTER_OTLP_PROTOCOL=protocol,
        OTEL_EXPORTER_OTLP_ENDPOINT=base_url(found),
        OTEL_METRICS_EXPORTER="none",
        OTEL_LOGS_EXPORTER="none",
    )

    done = run([str(instrument), sys.executable, str(app)], tmp_path, env)
    assert json.loads(done.stdout) == ["HI", "o", "k"]

    expected = {
        "invoke_agent auto",
        "turn shout",
        "execute_tool shout",
        "turn letters",
        "execute_tool letters",
    }
    spans = by_name(found.wait_for_spans(lambda got: expected <= span_names(got)))
    run_span = spans["invoke_agent auto"]
    for name in ("shout", "letters"):
        turn_span, tool_span = spans[f"turn {name}"], spans[f"execute_tool {name}"]
        assert_child(turn_span, run_span)
        assert_child(tool_span, turn_span)
        assert tool_span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert tool_span.attributes["gen_ai.tool.name"] == name
        assert turn_span.attributes["pygents.turn.stop_reason"] == "completed"
    for span in spans.values():
        assert span.resource["service.name"] == "auto-instrumented"
        assert span.scope_name.startswith("pygents_otel"), span.scope_name
        assert span.kind == SpanProto.SPAN_KIND_INTERNAL
    if isinstance(found, OTLPHttpReceiver):
        assert {(path, kind) for path, kind, _ in found.http_requests} == {
            ("/v1/traces", "application/x-protobuf")
        }
