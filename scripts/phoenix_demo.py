"""Send pygents' traces and a pydantic-ai agent's to a local viewer, offline.

What the "Viewing pygents in Phoenix or Langfuse" docs section shows was taken from
this: the example assistant (two messages of one conversation, against the fake
chat-completions server its tests use, so no model and no network), the OTel example
(``examples/otel/traced_agents.py``) and a pydantic-ai agent (the one the framework
tests run, on its ``FunctionModel``), all to the OTLP endpoint the standard variables
name. Run it from the checkout's root with the variables the docs give::

    OTEL_SERVICE_NAME=pygents-assistant \\
    OTEL_RESOURCE_ATTRIBUTES=openinference.project.name=pygents \\
    OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:6006 \\
    OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf \\
    OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \\
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY \\
    uv run python scripts/phoenix_demo.py

Not a test: it checks nothing, and the viewer is the user's to look at.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
# The assistant's fake model server and the framework harness live with their tests.
sys.path[:0] = [str(CHECKOUT / "examples" / "assistant"), str(CHECKOUT)]

__all__: list[str] = []


async def assistant() -> str:
    """Two messages of one conversation: a tool call, then answers with usage."""
    from tests.chat_server import chat_stream, serve_chat  # type: ignore[import-untyped]

    from assistant.agent import build_session, close_session
    from assistant.openai_model import OpenAIModel
    from assistant.tracing import start_tracing

    tracing = start_tracing()
    if tracing is None:
        raise SystemExit("set OTEL_EXPORTER_OTLP_ENDPOINT: tracing is off")
    try:
        async with serve_chat() as server:
            server.answer(
                chat_stream(
                    "Looking.", tool_calls=[("call_ls1", "list_files", {})], usage=(120, 9)
                ),
                chat_stream("The folder is empty.", usage=(161, 6)),
                chat_stream("Nothing to read, then: done.", usage=(190, 8)),
            )
            model = OpenAIModel(
                "gpt-test", base_url=server.base_url, api_key="sk-test", max_retries=0
            )
            session = build_session(model, name="assistant")
            try:
                for message in ("what is in this folder?", "then we are done"):
                    async for _ in session.run(message):
                        pass
            finally:
                await close_session(session)
                await model.aclose()
            return session.conversation_id
    finally:
        tracing.shutdown()


async def pydantic_ai() -> list[str]:
    """The framework tests' pydantic-ai agent, exported to the same endpoint."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    # Loaded by path: ``tests`` is the assistant's test package on this sys.path.
    spec = importlib.util.spec_from_file_location(
        "harness", CHECKOUT / "tests" / "frameworks" / "harness.py"
    )
    assert spec is not None
    assert spec.loader is not None
    harness = importlib.util.module_from_spec(spec)
    sys.modules["harness"] = harness
    spec.loader.exec_module(harness)

    endpoint = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/") + "/v1/traces"
    # Resource.create reads OTEL_RESOURCE_ATTRIBUTES (the project) and takes this name.
    provider = TracerProvider(resource=Resource.create({"service.name": "pydantic-ai-agent"}))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    sink = harness.Telemetry(provider, exporter, endpoint)
    try:
        outcomes: list[str] = await harness.run_pydantic_ai(sink)
        return outcomes
    finally:
        sink.shutdown()


def main(parts: list[str]) -> None:
    """Each of ``example``, ``assistant``, ``pydantic-ai`` named (all when none is)."""
    parts = parts or ["example", "assistant", "pydantic-ai"]
    if "example" in parts:
        env = dict(os.environ, OTEL_SERVICE_NAME="pygents-otel-example")
        example = CHECKOUT / "examples" / "otel" / "traced_agents.py"
        subprocess.run([sys.executable, str(example)], env=env, check=True)
    if "assistant" in parts:
        print("assistant conversation:", asyncio.run(assistant()))
    if "pydantic-ai" in parts:
        print("pydantic-ai runs:", asyncio.run(pydantic_ai()))


if __name__ == "__main__":
    main(sys.argv[1:])
