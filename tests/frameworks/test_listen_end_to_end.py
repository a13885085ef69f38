"""Other frameworks' agents in ``pygents-tui listen``, end to end (issue 32 §3): each
framework runs for real (`harness`), its OpenTelemetry SDK exporting over OTLP/HTTP to
a real ``listen`` receiver on 127.0.0.1, and the tests read what the console knows
through the store's public reading API, the way its panels do: the agent rows of each
service, the runs counted and why one failed, the tokens, each run's trace.

What is expected comes from what the framework did, not from the feeder: the run
outcomes the harness returns, and the spans its ``InMemorySpanExporter`` captured
beside the OTLP exporter (the tokens are the sum of the model-call spans' usage, read
by the conventions' names).

The three frameworks send to ONE receiver, each as its own service, as a user's mixed
fleet would: a service's figures must be its own. They run once per session (a second
or two each); the exporter is synchronous and the receiver answers only after handing
a batch to the model, so when a run returns everything it sent is in the model, and
one ``drain()`` folds it (no polling, no sleeping).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

import harness
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from shapes import attr, by_trace

from pygents import StopReason
from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver
from pygents_tui.state import Store
from pygents_tui.ui._filter import FIELDS

Script = Callable[[harness.Telemetry], Coroutine[Any, Any, list[str]]]


@dataclass(frozen=True)
class Framework:
    """One framework as the test drives it: the service it sends as, its script of
    runs, the agent each run enters by, the agent a handoff goes to (if any), and what
    the failed run's reason must name (words of the failure, whatever the version of
    the instrumentation spells around them)."""

    service: str
    script: Script
    entry: str
    handoff: str | None
    failure: str


FRAMEWORKS = {
    "pydantic-ai": Framework(
        "e2e-pydantic-ai",
        harness.run_pydantic_ai,
        "weather_agent",
        None,
        "the weather service is down",
    ),
    "agents-sdk-otel": Framework(
        "e2e-openai-agents-otel",
        lambda sink: harness.run_openai_agents(sink, "otel"),
        "triage",
        "specialist",
        "BadRequestError",
    ),
    "agents-sdk-openinference": Framework(
        "e2e-openai-agents-openinference",
        lambda sink: harness.run_openai_agents(sink, "openinference"),
        "triage",
        "specialist",
        "the model refused",
    ),
}


@dataclass(frozen=True)
class Sent:
    """What one framework did: its runs' outcomes and every span it made."""

    outcomes: list[str]
    spans: tuple[ReadableSpan, ...]


@dataclass(frozen=True)
class Listened:
    """The console's store after all three frameworks sent to it, and what each sent."""

    store: Store
    sent: dict[str, Sent]


def _run_script(script: Script, sink: harness.Telemetry) -> list[str]:
    """In a thread of its own: the exporter blocks on each export until the receiver
    answers, and the receiver answers from the test's event loop."""
    return asyncio.run(script(sink))


async def _listen() -> Listened:
    fleet = FleetModel(stale_after=3600.0)
    sent: dict[str, Sent] = {}
    async with Receiver(fleet, grpc_port=None, http_port=0) as receiver:
        for name, framework in FRAMEWORKS.items():
            endpoint = f"{receiver.http_endpoint}/v1/traces"
            sink = harness.telemetry(framework.service, endpoint=endpoint)
            try:
                outcomes = await asyncio.to_thread(_run_script, framework.script, sink)
                spans = await asyncio.to_thread(sink.spans)
            finally:
                await asyncio.to_thread(sink.shutdown)
            sent[name] = Sent(outcomes, spans)
        fleet.store.drain()
    return Listened(fleet.store, sent)


@pytest.fixture(scope="session")
def listened() -> Listened:
    return asyncio.run(_listen())


# -- what the framework did, read from its own spans ---------------------------------------

INPUT = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
OUTPUT = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
)
CACHE_READ = (
    "gen_ai.usage.cache_read.input_tokens",
    "llm.token_count.prompt_details.cache_read",
)


def model_calls(spans: Sequence[ReadableSpan]) -> list[ReadableSpan]:
    """The model-call spans: GenAI ``chat`` spans, OpenInference LLM spans."""
    return [
        s
        for s in spans
        if attr(s, "gen_ai.operation.name") == "chat" or attr(s, "openinference.span.kind") == "LLM"
    ]


def spent(spans: Sequence[ReadableSpan], keys: Sequence[str]) -> int:
    """The tokens the model-call spans report under the first of ``keys`` each has."""
    total = 0
    for span in model_calls(spans):
        found = [attr(span, key) for key in keys if attr(span, key) is not None]
        total += int(found[0]) if found else 0
    return total


def reported(spans: Sequence[ReadableSpan]) -> list[ReadableSpan]:
    """The model calls that reported usage (a call the server refused reports none)."""
    keys = (*INPUT, *OUTPUT)
    return [s for s in model_calls(spans) if any(attr(s, key) is not None for key in keys)]


def failed_runs(outcomes: Sequence[str]) -> int:
    return sum(1 for o in outcomes if o.startswith("error: "))


def handed_off(outcomes: Sequence[str], framework: Framework) -> int:
    """The runs whose answer came from the handoff target (it signs its answers)."""
    target = framework.handoff
    return 0 if target is None else sum(1 for o in outcomes if o.endswith(f"the {target}"))


def service_of(listened: Listened, framework: Framework) -> str:
    (found,) = [s for s in listened.store.service_rows() if s.name == framework.service]
    return found.name


def agent_name(listened: Listened, key: str | None) -> str | None:
    row = listened.store.agent_row(key) if key is not None else None
    return row.name if row is not None else None


# -- the tests ----------------------------------------------------------------------------

PARAMS = pytest.mark.parametrize("name", sorted(FRAMEWORKS))


@PARAMS
def test_every_span_the_framework_made_reaches_the_console(listened: Listened, name: str) -> None:
    framework = FRAMEWORKS[name]
    (service,) = [s for s in listened.store.service_rows() if s.name == framework.service]
    assert service.spans == len(listened.sent[name].spans) > 0


@PARAMS
def test_the_agents_show_as_rows_of_their_service_keyed_by_name_and_a_handoff_target_too(
    listened: Listened, name: str
) -> None:
    framework = FRAMEWORKS[name]
    rows = [a for a in listened.store.agent_rows() if a.service.name == framework.service]
    expected = {framework.entry} | ({framework.handoff} if framework.handoff else set())
    assert {a.name for a in rows} == expected
    assert all(a.key.endswith(f"/name:{a.name}") for a in rows)  # never a per-run id


@PARAMS
def test_the_runs_are_counted_as_the_framework_ended_them(listened: Listened, name: str) -> None:
    framework, outcomes = FRAMEWORKS[name], listened.sent[name].outcomes
    assert failed_runs(outcomes) == 1
    counted = {
        a.name: (a.completed, a.failed)
        for a in listened.store.agent_rows()
        if a.service.name == framework.service
    }
    expected = {framework.entry: (len(outcomes) - failed_runs(outcomes), failed_runs(outcomes))}
    if framework.handoff is not None:
        assert handed_off(outcomes, framework) == 1
        expected[framework.handoff] = (handed_off(outcomes, framework), 0)
    assert counted == expected
    service = service_of(listened, framework)
    assert [t for t in listened.store.running_turns() if t.service.name == service] == []


@PARAMS
def test_the_failed_run_says_why(listened: Listened, name: str) -> None:
    framework = FRAMEWORKS[name]
    failed = [
        t
        for t in listened.store.recent_turns()
        if t.service.name == framework.service and t.stop_reason is StopReason.ERROR
    ]
    assert [agent_name(listened, t.agent) for t in failed] == [framework.entry]
    (turn,) = failed
    assert turn.error is not None
    assert framework.failure in turn.error


@PARAMS
def test_a_service_s_tokens_are_the_sum_of_its_model_call_spans(
    listened: Listened, name: str
) -> None:
    """Input, output and cache-read tokens, each as its model calls reported them
    (pydantic-ai also puts run sums on its agent span: never added)."""
    framework, spans = FRAMEWORKS[name], listened.sent[name].spans
    usage = listened.store.service_usage(service_of(listened, framework))
    assert usage is not None
    expected = (spent(spans, INPUT), spent(spans, OUTPUT), spent(spans, CACHE_READ))
    assert (usage.input, usage.output, usage.cache_read) == expected
    assert usage.calls == len(reported(spans))
    assert usage.input > 0
    assert usage.output > 0


@PARAMS
def test_a_service_s_agents_share_its_tokens_none_counted_twice_or_lost(
    listened: Listened, name: str
) -> None:
    framework = FRAMEWORKS[name]
    store = listened.store
    service = store.service_usage(service_of(listened, framework))
    assert service is not None
    agents = [store.usage(a.key) for a in store.agent_rows() if a.service.name == framework.service]
    assert sum(u.input for u in agents if u is not None) == service.input
    assert sum(u.output for u in agents if u is not None) == service.output


def test_the_fleet_s_tokens_are_its_services_sums(listened: Listened) -> None:
    fleet = listened.store.usage()
    assert fleet is not None
    sent = listened.sent.values()
    assert fleet.input == sum(spent(s.spans, INPUT) for s in sent)
    assert fleet.output == sum(spent(s.spans, OUTPUT) for s in sent)


@PARAMS
def test_every_run_has_its_whole_trace_to_show(listened: Listened, name: str) -> None:
    framework, spans = FRAMEWORKS[name], listened.sent[name].spans
    made = {
        format(trace[0].context.trace_id, "032x"): len(trace)
        for trace in by_trace(spans)
        if trace[0].context is not None
    }
    turns = [t for t in listened.store.recent_turns() if t.service.name == framework.service]
    assert {t.trace_id for t in turns} == set(made)
    for turn in turns:
        assert turn.trace_id is not None
        tree = listened.store.trace_tree(turn.trace_id)
        assert tree is not None
        assert (tree.spans, tree.dropped) == (made[turn.trace_id], 0)


# -- what each run's own steps say: tokens per agent, conversations, tools ----------------


def _agent_above(span: ReadableSpan, spans: Sequence[ReadableSpan]) -> str | None:
    """The agent whose run ``span`` is in: its nearest ancestor naming an agent."""
    by_id = {s.context.span_id: s for s in spans if s.context is not None}
    seen = 0
    current: ReadableSpan | None = span
    while current is not None and seen < 64:
        if attr(current, "gen_ai.operation.name") == "invoke_agent":
            return str(attr(current, "gen_ai.agent.name"))
        if attr(current, "openinference.span.kind") == "AGENT" and attr(current, "agent.name"):
            return str(attr(current, "agent.name"))
        current = by_id.get(current.parent.span_id) if current.parent is not None else None
        seen += 1
    return None


@PARAMS
def test_each_agent_s_tokens_are_its_own_model_calls(listened: Listened, name: str) -> None:
    framework, spans = FRAMEWORKS[name], listened.sent[name].spans
    expected: dict[str, int] = {}
    for call in model_calls(spans):
        agent = _agent_above(call, spans)
        assert agent is not None
        found = [attr(call, k) for k in INPUT if attr(call, k) is not None]
        expected[agent] = expected.get(agent, 0) + (int(found[0]) if found else 0)
    got = {}
    for row in listened.store.agent_rows():
        if row.service.name == framework.service:
            usage = listened.store.usage(row.key)
            got[row.name] = usage.input if usage is not None else 0
    assert got == expected


CONVERSATIONS = {"pydantic-ai": True, "agents-sdk-openinference": True, "agents-sdk-otel": False}


@PARAMS
def test_a_run_shows_its_conversation_where_the_sender_sends_one(
    listened: Listened, name: str
) -> None:
    assert "conversation" in FIELDS
    framework = FRAMEWORKS[name]
    turns = [t for t in listened.store.recent_turns() if t.service.name == framework.service]
    for turn in turns:
        shown = [v for label, v in turn.details() if "conversation" in label.casefold()]
        assert shown == ([harness.CONVERSATION] if CONVERSATIONS[name] else [])


TOOLS = {
    "pydantic-ai": ["get_weather", "flaky", "broken"],
    "agents-sdk-otel": ["get_weather", "flaky"],
    "agents-sdk-openinference": ["get_weather", "flaky"],
}


@PARAMS
def test_a_run_lists_the_tools_it_called(listened: Listened, name: str) -> None:
    framework = FRAMEWORKS[name]
    entry = [
        t
        for t in listened.store.recent_turns()
        if t.service.name == framework.service and agent_name(listened, t.agent) == framework.entry
    ]
    text = [" ".join(v for _, v in t.details()) for t in entry]
    called = [tool for tool in TOOLS[name] if any(tool in line for line in text)]
    assert called == TOOLS[name]
