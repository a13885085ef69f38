"""Agents built with other frameworks, run for real and offline, for the foreign-agent
feeder of issue 32 (``pygents-tui listen`` as the console for any GenAI sender).

Each ``run_*`` function drives a real framework with its real OpenTelemetry
instrumentation through a fixed script of runs (a success with a tool call, a tool
that fails, a run that fails) and leaves the spans in the given `Telemetry`: an
``InMemorySpanExporter`` always, and OTLP/HTTP to an endpoint when one is given (for
end-to-end tests against a real ``listen`` receiver).

Why a script and not random prompts: the feeder will be built from these shapes, so
the same runs must give the same spans every time. The model is never a network
service: pydantic-ai gets a `FunctionModel`; the OpenAI Agents SDK talks to the fake
Chat Completions server the other-frameworks guide ships
(examples/frameworks/fake_chat_completions.py) on 127.0.0.1 through its real
``OpenAIChatCompletionsModel`` (so the SDK's own model-call spans and usage handling
are the real ones).

`recordings` turns a run's spans into OTLP/JSON lines with fixed ids and times, see
``python -m tests.frameworks.record`` (``tests/frameworks/record.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

# The fake Chat Completions server is the one the other-frameworks guide ships for its
# readers (examples/frameworks/fake_chat_completions.py), found through this line.
_EXAMPLES = str(Path(__file__).resolve().parents[2] / "examples" / "frameworks")
if _EXAMPLES not in sys.path:
    sys.path.append(_EXAMPLES)

import fake_chat_completions  # noqa: E402 - found through the lines above

__all__ = [
    "CONVERSATION",
    "OPENAI_AGENTS_USAGE",
    "PYDANTIC_AI_USAGE",
    "Telemetry",
    "run_openai_agents",
    "run_pydantic_ai",
    "telemetry",
]

CONVERSATION = "conversation-1"
"""The conversation (session) id every scripted run belongs to, where the framework
or instrumentation can carry one."""

# What the fake models report per call, so a test can sum the model-call spans and
# compare with what was sent.
PYDANTIC_AI_USAGE = {"input_tokens": 20, "output_tokens": 7, "cache_read_tokens": 4}
OPENAI_AGENTS_USAGE = fake_chat_completions.USAGE

Instrumentation = Literal["otel", "openinference"]


@dataclass
class Telemetry:
    """A real OTel SDK pipeline: a provider whose spans land in ``exporter`` (and at
    ``endpoint`` over OTLP/HTTP when one is given)."""

    provider: TracerProvider
    exporter: InMemorySpanExporter
    endpoint: str | None = None
    _processors: list[Any] = field(default_factory=list)

    def spans(self) -> tuple[ReadableSpan, ...]:
        self.provider.force_flush()
        return self.exporter.get_finished_spans()

    def shutdown(self) -> None:
        self.provider.shutdown()


def telemetry(service: str, endpoint: str | None = None) -> Telemetry:
    """A provider for one service. ``endpoint``: an OTLP/HTTP traces URL
    (``http://127.0.0.1:4318/v1/traces``) that also gets every span, synchronously."""
    provider = TracerProvider(
        resource=Resource.create({"service.name": service, "service.instance.id": service + "-1"})
    )
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    if endpoint is not None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    return Telemetry(provider, exporter, endpoint)


# -- pydantic-ai ---------------------------------------------------------------------------


async def run_pydantic_ai(sink: Telemetry) -> list[str]:
    """Three runs of a pydantic-ai agent ``weather_agent`` on a `FunctionModel`, with
    pydantic-ai's own instrumentation (the ``Instrumentation`` capability, GenAI
    conventions, content included), all in conversation `CONVERSATION`:

    1. ``weather in Paris?``: a ``get_weather`` tool call, then an answer;
    2. ``flaky``: the ``flaky`` tool raises `ModelRetry` (its text goes back to the
       model), then an answer;
    3. ``broken``: the ``broken`` tool raises, and the run fails with it.

    Every model call reports `PYDANTIC_AI_USAGE`. Returns each run's outcome
    (the output, or ``error: <type>``)."""
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.usage import RequestUsage

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(
            input_tokens=PYDANTIC_AI_USAGE["input_tokens"],
            output_tokens=PYDANTIC_AI_USAGE["output_tokens"],
            cache_read_tokens=PYDANTIC_AI_USAGE["cache_read_tokens"],
        )
        last = messages[-1].parts[-1]
        # (pydantic-ai 2.68 hands a tool's ModelRetry back as a tool return with its text.)
        if isinstance(last, ToolReturnPart) or last.part_kind == "retry-prompt":
            return ModelResponse(parts=[TextPart(f"done: {last.content}")], usage=usage)
        prompt = str(getattr(last, "content", ""))
        tool = "flaky" if "flaky" in prompt else "broken" if "broken" in prompt else "get_weather"
        return ModelResponse(
            parts=[ToolCallPart(tool, {"city": "Paris"}, tool_call_id=f"call_{tool}")], usage=usage
        )

    settings = InstrumentationSettings(tracer_provider=sink.provider, include_content=True)
    agent = Agent(
        FunctionModel(model, model_name="fake-model"),
        name="weather_agent",
        capabilities=[Instrumentation(settings=settings)],
    )

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    @agent.tool_plain
    def flaky(city: str) -> str:
        raise ModelRetry("try again later")

    @agent.tool_plain
    def broken(city: str) -> str:
        raise RuntimeError("the weather service is down")

    outcomes: list[str] = []
    for number, prompt in enumerate(("weather in Paris?", "flaky", "broken"), 1):
        try:
            result = await agent.run(prompt, conversation_id=CONVERSATION, run_id=f"run-{number}")
            outcomes.append(str(result.output))
        except Exception as exc:  # the third run fails by design
            outcomes.append(f"error: {type(exc).__name__}")
    return outcomes


# -- OpenAI Agents SDK -----------------------------------------------------------------------


@contextmanager
def _instrumented(sink: Telemetry, instrumentation: Instrumentation) -> Iterator[None]:
    """The Agents SDK instrumented for the block only. The SDK's trace processors are
    process-wide, and its default one uploads to OpenAI: it is replaced by nothing
    first (offline), and left empty after (the SDK offers no reading of them to
    restore), as the instrumentors are uninstrumented.

    ``otel``: OpenTelemetry's own ``opentelemetry-instrumentation-genai-openai-agents``
    (workflow, agent and tool spans) with ``opentelemetry-instrumentation-openai-v2``
    for the model calls (``chat`` spans with usage), as its README pairs them."""
    import agents

    agents.set_trace_processors([])
    instrumentors: list[Any] = []
    if instrumentation == "openinference":
        from openinference.instrumentation.openai_agents import (
            OpenAIAgentsInstrumentor as OpenInference,
        )

        instrumentors.append(OpenInference())
    else:
        from opentelemetry.instrumentation.genai.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        instrumentors += [OpenAIAgentsInstrumentor(), OpenAIInstrumentor()]  # type: ignore[no-untyped-call]
        _forget_genai_handler()
    for instrumentor in instrumentors:
        # Instrumentors are process-wide singletons: one left instrumented by another
        # test would send the spans elsewhere, and uninstrumenting it here would undo
        # that test's.
        if instrumentor.is_instrumented_by_opentelemetry:
            raise RuntimeError(f"{type(instrumentor).__name__} is already instrumented")
        instrumentor.instrument(tracer_provider=sink.provider)
    try:
        yield
    finally:
        for instrumentor in reversed(instrumentors):
            instrumentor.uninstrument()
        agents.set_trace_processors([])
        _forget_genai_handler()


def _forget_genai_handler() -> None:
    """OpenTelemetry's Agents SDK instrumentation makes its spans through
    ``opentelemetry.util.genai``'s ``get_telemetry_handler``, a process-wide singleton
    that keeps the tracer provider of its FIRST call and ignores the one given after
    (uninstrumenting does not drop it). A second instrumented block in the same process
    (the framework tests' run and the end-to-end run against ``listen``) would send its
    workflow, agent and tool spans to the first block's provider, shut down by then: the
    singleton is forgotten around each block, so each block's spans go to its own."""
    from opentelemetry.util.genai.handler import get_telemetry_handler

    if hasattr(get_telemetry_handler, "_default_handler"):
        delattr(get_telemetry_handler, "_default_handler")


@contextmanager
def _session(instrumentation: Instrumentation) -> Iterator[None]:
    """OpenInference's way to a conversation: ``using_session`` puts ``session.id`` on
    every span made in the block (the SDK's ``group_id`` reaches neither instrumentation's
    spans; OpenTelemetry's has no such context)."""
    if instrumentation != "openinference":
        yield
        return
    from openinference.instrumentation import using_session

    with using_session(CONVERSATION):
        yield


async def run_openai_agents(sink: Telemetry, instrumentation: Instrumentation) -> list[str]:
    """Three runs of an OpenAI Agents SDK workflow ``weather``: agent ``triage`` with
    the tools ``get_weather`` and ``flaky`` and a handoff to agent ``specialist``, on
    the fake Chat Completions server, under ``instrumentation``; each run's trace has
    ``group_id`` `CONVERSATION` (the SDK's conversation grouping), and under OpenInference
    its ``using_session(CONVERSATION)``:

    1. ``weather in Paris?``: ``get_weather``, a handoff, the specialist's answer;
    2. ``flaky``: the ``flaky`` tool raises (the SDK hands the model an error text),
       then an answer;
    3. ``fail``: the model call gets HTTP 400, and the run fails.

    Returns each run's outcome (the final output, or ``error: <type>``)."""
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
    from openai import AsyncOpenAI

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @function_tool
    def flaky(city: str) -> str:
        """A weather tool that always breaks."""
        raise RuntimeError("the weather service is down")

    outcomes: list[str] = []
    with (
        fake_chat_completions.serving() as base_url,
        _instrumented(sink, instrumentation),
        _session(instrumentation),
    ):
        client = AsyncOpenAI(base_url=base_url, api_key="offline", max_retries=0)
        model = OpenAIChatCompletionsModel(model="fake-model", openai_client=client)
        specialist = Agent(name="specialist", instructions="You are the specialist.", model=model)
        triage = Agent(
            name="triage",
            instructions="You triage.",
            model=model,
            tools=[get_weather, flaky],
            handoffs=[specialist],
        )
        config = RunConfig(
            workflow_name="weather", group_id=CONVERSATION, trace_include_sensitive_data=True
        )
        try:
            for prompt in ("weather in Paris?", "flaky", "fail"):
                try:
                    result = await Runner.run(triage, prompt, run_config=config)
                    outcomes.append(str(result.final_output))
                except Exception as exc:  # the third run fails by design
                    outcomes.append(f"error: {type(exc).__name__}")
        finally:
            await client.close()
    return outcomes


def spans_by_trace(spans: Sequence[ReadableSpan]) -> dict[int, list[ReadableSpan]]:
    """The spans of each trace (one trace per run), in the order they ended."""
    traces: dict[int, list[ReadableSpan]] = {}
    for span in spans:
        assert span.context is not None
        traces.setdefault(span.context.trace_id, []).append(span)
    return traces
