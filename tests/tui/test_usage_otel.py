"""The token meter fed what it will be fed: a real OpenAI client, instrumented by the
openai-v2 instrumentation, calling a model server on 127.0.0.1 inside a turn's span;
the SDK's spans encoded as OTLP, decoded by the listener's decoder, and metered."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from fake_clock import FakeClock
from openai import AsyncOpenAI
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from pygents_tui.listen.decode import decode
from pygents_tui.listen.values import Limits
from pygents_tui.state import Price
from pygents_tui.state._texts import usage_line
from pygents_tui.state._usage import UsageMeter

ANSWER: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o-2024-08-06",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500},
}


@pytest.fixture
async def model_server() -> AsyncIterator[str]:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 that always answers ``ANSWER``."""

    async def chat(request: web.Request) -> web.Response:
        await request.read()
        return web.json_response(ANSWER)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    finally:
        await runner.cleanup()


async def test_an_instrumented_model_call_under_a_turn_is_metered_once_its_trace_is_claimed(
    model_server: str,
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        client = AsyncOpenAI(base_url=model_server, api_key="test", max_retries=0)
        with provider.get_tracer("test").start_as_current_span("turn plan") as turn:
            for _ in range(2):
                await client.chat.completions.create(
                    model="gpt-4o", messages=[{"role": "user", "content": "plan"}]
                )
        await client.close()
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    spans = exporter.get_finished_spans()
    assert [span.name for span in spans] == ["chat gpt-4o", "chat gpt-4o", "turn plan"]

    body = encode_spans(spans).SerializeToString()
    batch = decode("traces", body, json_body=False, limits=Limits())
    clock = FakeClock()
    meter = UsageMeter({"gpt-4o": Price(input=2.5, output=10.0)}, clock=clock)
    assert [meter.add(span) for span in batch.spans] == [True, True, False]
    assert [meter.add(span) for span in batch.spans] == [False, False, False]  # sent again
    assert meter.fleet().tokens == 0  # whose trace it is is not known yet

    meter.attribute(format(turn.get_span_context().trace_id, "032x"), "svc/planner", "svc")
    agent = meter.agent("svc/planner")
    assert agent is not None
    assert (agent.input, agent.output, agent.tokens, agent.calls) == (2400, 600, 3000, 2)
    # gpt-4o answered as gpt-4o-2024-08-06: priced as gpt-4o.
    assert agent.cost == pytest.approx((2400 * 2.5 + 600 * 10.0) / 1e6)
    assert usage_line(agent.tokens, agent.per_minute, agent.cost) == (
        "3.0k tok · 3.0k tok/min · $0.01"
    )
