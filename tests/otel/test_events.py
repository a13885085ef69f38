"""Hook events as span events (SPEC §2.3) and content capture (SPEC §2.2).

Every hook event of every object lands on the span of the object that fired it, named
``pygents.<object>.<event>``, with small non-sensitive attributes; per-value events are
capped while an exact count is kept; content is recorded only when asked for.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from awkward_values import ReprRaises, cycle
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from pygents import (
    Agent,
    AgentHook,
    ContextItem,
    ContextPool,
    ContextPoolHook,
    ContextQueue,
    ContextQueueHook,
    ToolHook,
    Turn,
    TurnHook,
    tool,
)
from pygents.testing import drain
from pygents_otel import PygentsInstrumentor
from stuck_tools import time_out_in

SpansByName = Callable[[], dict[str, ReadableSpan]]

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
ARGUMENTS = "gen_ai.tool.call.arguments"
RESULT = "gen_ai.tool.call.result"
VALUES = "pygents.values"
INDEX = "pygents.value.index"
SECRET = "hunter2-top-secret"

OBJECT_NAMES = {
    TurnHook: "turn",
    AgentHook: "agent",
    ToolHook: "tool",
    ContextQueueHook: "context_queue",
    ContextPoolHook: "context_pool",
}
# The span kind (by name prefix) that each object's events belong on.
SPAN_FOR_OBJECT = {
    "turn": "turn ",
    "tool": "execute_tool ",
    "agent": "invoke_agent ",
    "context_queue": "invoke_agent ",
    "context_pool": "invoke_agent ",
}


def event_name(member: Any) -> str:
    return f"pygents.{OBJECT_NAMES[type(member)]}.{member.value}"


def names_of_events(span: ReadableSpan) -> list[str]:
    return [e.name for e in span.events if e.name != "exception"]


def events_named(span: ReadableSpan, name: str) -> list[dict[str, Any]]:
    return [dict(e.attributes or {}) for e in span.events if e.name == name]


def all_attribute_values(spans: Iterator[ReadableSpan] | tuple[ReadableSpan, ...]) -> list[str]:
    """Every attribute value of every span, event and link, as text."""
    found: list[str] = []
    for span in spans:
        found.extend(str(v) for v in span.attributes.values())
        for event in span.events:
            found.extend(str(v) for v in (event.attributes or {}).values())
        for link in span.links:
            found.extend(str(v) for v in (link.attributes or {}).values())
    return found


# -- every hook event, on the span of the object that fired it ----------------------------


async def stream_scenario() -> None:
    @tool
    async def count() -> AsyncIterator[int]:
        yield 1
        yield 2

    agent = Agent("streamer", "Streams", [count])
    await agent.put(Turn(count))
    assert await drain(agent) == [1, 2]


async def failure_scenario() -> None:
    @tool
    async def explode() -> None:
        raise ValueError("boom")

    agent = Agent("exploder", "Fails", [explode])
    await agent.put(Turn(explode))
    with pytest.raises(ValueError, match="boom"):
        await drain(agent)


async def timeout_scenario() -> None:
    await time_out_in("staller")


async def pause_scenario() -> None:
    @tool
    async def nap() -> str:
        return "rested"

    agent = Agent("sleeper", "Pauses", [nap])

    @agent.on_pause
    async def wake_up(agent: Agent) -> None:
        agent.resume()

    await agent.put(Turn(nap))
    agent.pause()
    assert await drain(agent) == ["rested"]


async def routing_scenario() -> None:
    @tool
    async def tidy(memory: ContextQueue[Any], pool: ContextPool[Any]) -> str:
        await pool.remove("b")
        await pool.add(ContextItem("again", description="d", id="c"))
        await pool.clear()
        await memory.clear()
        return "tidied"

    @tool
    async def plan() -> AsyncIterator[Any]:
        yield Turn(tidy)
        yield ContextItem("first note")
        yield ContextItem("second note")  # the queue holds one: evicts the first
        yield ContextItem("fact a", description="a", id="a")
        yield ContextItem("fact b", description="b", id="b")  # the pool holds one: evicts a

    agent = Agent(
        "router",
        "Routes",
        [plan, tidy],
        context_queue=ContextQueue(limit=1),
        context_pool=ContextPool(limit=1),
    )
    await agent.put(Turn(plan))
    assert await drain(agent) == ["tidied"]


@dataclass(frozen=True)
class Scenario:
    run: Callable[[], Awaitable[None]]
    expected: dict[str, set[Any]]  # span name -> hook events that must be on it


SCENARIOS = {
    "stream": Scenario(
        stream_scenario,
        {
            "turn count": {
                TurnHook.BEFORE_RUN,
                TurnHook.ON_VALUE,
                TurnHook.AFTER_RUN,
                TurnHook.ON_COMPLETE,
            },
            "execute_tool count": {
                ToolHook.BEFORE_INVOKE,
                ToolHook.ON_YIELD,
                ToolHook.AFTER_INVOKE,
            },
            "invoke_agent streamer": {
                AgentHook.BEFORE_TURN,
                AgentHook.AFTER_TURN,
                AgentHook.ON_TURN_VALUE,
            },
        },
    ),
    "failure": Scenario(
        failure_scenario,
        {
            "turn explode": {TurnHook.BEFORE_RUN, TurnHook.ON_ERROR, TurnHook.ON_COMPLETE},
            "execute_tool explode": {ToolHook.BEFORE_INVOKE, ToolHook.ON_ERROR},
            "invoke_agent exploder": {AgentHook.BEFORE_TURN, AgentHook.ON_TURN_ERROR},
        },
    ),
    "timeout": Scenario(
        timeout_scenario,
        {
            "turn stuck": {TurnHook.ON_TIMEOUT, TurnHook.ON_COMPLETE},
            "invoke_agent staller": {AgentHook.ON_TURN_TIMEOUT},
        },
    ),
    "pause": Scenario(
        pause_scenario,
        {"invoke_agent sleeper": {AgentHook.ON_PAUSE, AgentHook.ON_RESUME}},
    ),
    "routing": Scenario(
        routing_scenario,
        {
            "invoke_agent router": {
                AgentHook.BEFORE_PUT,
                AgentHook.AFTER_PUT,
                *ContextQueueHook,
                *ContextPoolHook,
            },
        },
    ),
}


def test_the_scenarios_cover_every_hook_event() -> None:
    covered = {
        event for s in SCENARIOS.values() for events in s.expected.values() for event in events
    }
    every = {m for enum in OBJECT_NAMES for m in enum}
    assert every - covered == set()


@pytest.mark.usefixtures("instrument")
@pytest.mark.parametrize("scenario", SCENARIOS.values(), ids=SCENARIOS.keys())
async def test_every_hook_event_is_a_span_event_on_the_right_span(
    spans_by_name: SpansByName, scenario: Scenario
) -> None:
    await scenario.run()

    spans = spans_by_name()
    for span_name, events in scenario.expected.items():
        recorded = set(names_of_events(spans[span_name]))
        missing = {event_name(e) for e in events} - recorded
        assert missing == set(), f"{span_name} lacks {sorted(missing)}"
    for span in spans.values():  # and no event is on a span of another kind
        for name in names_of_events(span):
            obj = name.split(".")[1]
            assert span.name.startswith(SPAN_FOR_OBJECT[obj]), f"{name} is on {span.name}"


@pytest.mark.usefixtures("instrument")
async def test_events_come_in_lifecycle_order_with_small_attributes(
    spans_by_name: SpansByName,
) -> None:
    await stream_scenario()

    spans = spans_by_name()
    assert names_of_events(spans["turn count"]) == [
        "pygents.turn.before_run",
        "pygents.turn.on_value",
        "pygents.turn.on_value",
        "pygents.turn.after_run",
        "pygents.turn.on_complete",
    ]
    assert names_of_events(spans["execute_tool count"]) == [
        "pygents.tool.before_invoke",
        "pygents.tool.on_yield",
        "pygents.tool.on_yield",
        "pygents.tool.after_invoke",
    ]
    assert names_of_events(spans["invoke_agent streamer"]) == [
        "pygents.agent.before_turn",
        "pygents.agent.on_turn_value",
        "pygents.agent.on_turn_value",
        "pygents.agent.after_turn",
    ]
    yields = events_named(spans["execute_tool count"], "pygents.tool.on_yield")
    assert [e[INDEX] for e in yields] == [0, 1]
    (complete,) = events_named(spans["turn count"], "pygents.turn.on_complete")
    assert complete["pygents.turn.stop_reason"] == "completed"
    depths = events_named(spans["invoke_agent streamer"], "pygents.agent.before_turn")
    assert [e["pygents.agent.queue.depth"] for e in depths] == [1]  # once per turn taken


@pytest.mark.usefixtures("instrument")
async def test_failure_events_name_the_error_type(spans_by_name: SpansByName) -> None:
    await failure_scenario()

    spans = spans_by_name()
    (turn_error,) = events_named(spans["turn explode"], "pygents.turn.on_error")
    assert turn_error["error.type"] == "ValueError"
    (complete,) = events_named(spans["turn explode"], "pygents.turn.on_complete")
    assert complete["pygents.turn.stop_reason"] == "error"
    (tool_error,) = events_named(spans["execute_tool explode"], "pygents.tool.on_error")
    assert tool_error["error.type"] == "ValueError"


@pytest.mark.usefixtures("instrument")
async def test_routed_context_items_and_evictions_are_agent_span_events(
    spans_by_name: SpansByName,
) -> None:
    await routing_scenario()

    agent_span = spans_by_name()["invoke_agent router"]
    names = names_of_events(agent_span)
    assert names.count("pygents.context_queue.before_append") == 2
    assert names.count("pygents.context_queue.after_append") == 2
    assert names.count("pygents.context_queue.on_evict") == 1
    pool_evictions = events_named(agent_span, "pygents.context_pool.on_evict")
    assert [e["pygents.context.item.id"] for e in pool_evictions] == ["a"]
    removed = events_named(agent_span, "pygents.context_pool.after_remove")
    assert [e["pygents.context.item.id"] for e in removed] == ["b"]
    put = events_named(agent_span, "pygents.agent.after_put")
    assert len(put) == 1
    assert put[0]["pygents.agent.queue.depth"] == 1


@pytest.mark.usefixtures("instrument")
async def test_a_cancelled_turn_still_records_on_complete(spans_by_name: SpansByName) -> None:
    started, never = asyncio.Event(), asyncio.Event()

    @tool
    async def linger() -> None:
        started.set()
        await never.wait()

    task = asyncio.create_task(Turn(linger).returning())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    spans = spans_by_name()
    (complete,) = events_named(spans["turn linger"], "pygents.turn.on_complete")
    assert complete["pygents.turn.stop_reason"] == "cancelled"
    assert "pygents.turn.on_error" not in names_of_events(spans["turn linger"])


# -- nothing sensitive by default ---------------------------------------------------------


@pytest.mark.usefixtures("instrument")
async def test_no_argument_result_value_or_context_content_is_recorded_by_default(
    exporter: InMemorySpanExporter,
) -> None:
    @tool
    async def login(user: str, password: str) -> str:
        return f"token for {user}: {password}"

    @tool
    async def leak(password: str) -> AsyncIterator[Any]:
        yield f"streamed {password}"
        yield ContextItem(f"remember {password}")
        yield ContextItem(f"fact {password}", description="a fact", id="f1")

    agent = Agent("vault", "Keeps secrets", [login, leak])
    await agent.put(Turn(login, args=["ada"], kwargs={"password": SECRET}))
    await agent.put(Turn(leak, kwargs={"password": SECRET}))
    values = await drain(agent)
    assert any(SECRET in str(v) for v in values)
    assert await Turn(login, args=["bob", SECRET]).returning() == f"token for bob: {SECRET}"

    spans = exporter.get_finished_spans()
    assert len(spans) == 7
    texts = all_attribute_values(spans)
    assert texts  # there is something to look at
    assert [t for t in texts if SECRET in t] == []
    for span in spans:
        assert ARGUMENTS not in span.attributes
        assert RESULT not in span.attributes


# -- per-value events: capped, counted exactly --------------------------------------------


async def run_thousand_values() -> None:
    @tool
    async def firehose(n: int) -> AsyncIterator[int]:
        for i in range(n):
            yield i

    agent = Agent("hose", "Streams a lot", [firehose])
    await agent.put(Turn(firehose, args=[1000]))
    assert len(await drain(agent)) == 1000


@pytest.mark.parametrize(("options", "cap"), [({}, 16), ({"max_value_events": 3}, 3)])
async def test_per_value_events_are_capped_and_counted_exactly(
    instrument_with: Callable[..., PygentsInstrumentor],
    spans_by_name: SpansByName,
    options: dict[str, Any],
    cap: int,
) -> None:
    instrument_with(**options)
    await run_thousand_values()

    spans = spans_by_name()
    per_value = {
        "execute_tool firehose": "pygents.tool.on_yield",
        "turn firehose": "pygents.turn.on_value",
        "invoke_agent hose": "pygents.agent.on_turn_value",
    }
    for span_name, event in per_value.items():
        span = spans[span_name]
        recorded = events_named(span, event)
        assert [e[INDEX] for e in recorded] == list(range(cap)), span_name
        assert span.attributes[VALUES] == 1000, span_name
        assert span.dropped_events == 0, span_name
    tool_events = names_of_events(spans["execute_tool firehose"])
    assert tool_events[0] == "pygents.tool.before_invoke"
    assert tool_events[-1] == "pygents.tool.after_invoke"


@pytest.mark.usefixtures("instrument")
async def test_a_stream_of_routed_context_items_does_not_blow_the_event_limit(
    spans_by_name: SpansByName,
) -> None:
    """Each routed item fires context events on the agent span: they are per-value too."""

    @tool
    async def notes(n: int) -> AsyncIterator[ContextItem[str]]:
        for i in range(n):
            yield ContextItem(f"note {i}")

    agent = Agent("note-taker", "Takes notes", [notes], context_queue=ContextQueue(limit=10))
    await agent.put(Turn(notes, args=[1000]))
    assert await drain(agent) == []
    assert len(agent.context_queue) == 10

    agent_span = spans_by_name()["invoke_agent note-taker"]
    assert agent_span.dropped_events == 0
    names = names_of_events(agent_span)
    assert "pygents.context_queue.after_append" in names
    assert names[-1] == "pygents.agent.after_turn"  # the run's last event is still there


# -- content capture, opt-in --------------------------------------------------------------


def capture_by_argument(instrument: Callable[..., PygentsInstrumentor], _: Any) -> None:
    instrument(capture_content=True)


def capture_by_environment(
    instrument: Callable[..., PygentsInstrumentor], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE_ENV, "true")
    instrument()


@pytest.mark.parametrize("enable", [capture_by_argument, capture_by_environment])
async def test_content_capture_records_arguments_and_results_as_json(
    instrument_with: Callable[..., PygentsInstrumentor],
    monkeypatch: pytest.MonkeyPatch,
    spans_by_name: SpansByName,
    enable: Callable[..., None],
) -> None:
    enable(instrument_with, monkeypatch)

    @tool
    async def weather(city: str, unit: str = "C") -> dict[str, Any]:
        return {"city": city, "temperature": 21, "unit": unit}

    @tool
    async def forecast(days: int) -> AsyncIterator[str]:
        for day in range(days):
            yield f"day {day}: sunny"

    assert (await Turn(weather, kwargs={"city": "Paris"}).returning())["temperature"] == 21
    assert [v async for v in Turn(forecast, kwargs={"days": 2}).yielding()] == [
        "day 0: sunny",
        "day 1: sunny",
    ]

    spans = spans_by_name()
    call = spans["execute_tool weather"]
    assert "Paris" in json.dumps(json.loads(call.attributes[ARGUMENTS]))
    assert json.loads(call.attributes[RESULT]) == {"city": "Paris", "temperature": 21, "unit": "C"}
    stream = spans["execute_tool forecast"]
    assert "2" in json.dumps(json.loads(stream.attributes[ARGUMENTS]))
    assert json.loads(stream.attributes[RESULT]) == ["day 0: sunny", "day 1: sunny"]


@pytest.mark.parametrize(
    ("mode", "captured"),
    [
        ("SPAN_ONLY", True),
        ("span_and_event", True),
        ("EVENT_ONLY", True),
        ("NO_CONTENT", False),
        ("false", False),
    ],
)
async def test_the_genai_instrumentations_content_modes_turn_capture_on_or_off(
    instrument_with: Callable[..., PygentsInstrumentor],
    monkeypatch: pytest.MonkeyPatch,
    exporter: InMemorySpanExporter,
    mode: str,
    captured: bool,
) -> None:
    """One setting for pygents and the openai-v2 instrumentation, which reads the same
    variable as a content mode."""
    monkeypatch.setenv(CAPTURE_ENV, mode)
    instrument_with()

    @tool
    async def whisper(text: str) -> str:
        return text

    await Turn(whisper, args=[SECRET]).returning()

    spans = exporter.get_finished_spans()
    assert {span.name for span in spans} >= {"execute_tool whisper"}
    assert any(SECRET in text for text in all_attribute_values(spans)) is captured


def test_a_content_mode_that_is_no_mode_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CAPTURE_ENV, "SPAN_ONLY_PLEASE")
    with pytest.raises(ValueError, match="SPAN_ONLY, SPAN_AND_EVENT, EVENT_ONLY or NO_CONTENT"):
        PygentsInstrumentor().instrument()


async def test_an_explicit_capture_content_false_beats_the_environment(
    instrument_with: Callable[..., PygentsInstrumentor],
    monkeypatch: pytest.MonkeyPatch,
    exporter: InMemorySpanExporter,
) -> None:
    monkeypatch.setenv(CAPTURE_ENV, "true")
    instrumentor = instrument_with(capture_content=False)

    @tool
    async def whisper(text: str) -> str:
        return text

    await Turn(whisper, args=[SECRET]).returning()

    quiet = exporter.get_finished_spans()
    assert {span.name for span in quiet} >= {"execute_tool whisper"}  # there was a span to read
    assert [t for t in all_attribute_values(quiet) if SECRET in t] == []

    # Positive control: the same environment without the explicit False does record the
    # secret, so the check above would have caught it had the argument lost.
    instrumentor.uninstrument()
    exporter.clear()
    instrument_with()
    await Turn(whisper, args=[SECRET]).returning()
    assert [t for t in all_attribute_values(exporter.get_finished_spans()) if SECRET in t] != []


async def test_captured_content_is_truncated_with_an_ellipsis(
    instrument_with: Callable[..., PygentsInstrumentor], spans_by_name: SpansByName
) -> None:
    instrument_with(capture_content=True, content_max_length=50)

    @tool
    async def essay(topic: str) -> str:
        return topic * 40

    await Turn(essay, args=["abcdefghij" * 20]).returning()

    span = spans_by_name()["execute_tool essay"]
    full_result = json.dumps("abcdefghij" * 800)
    result = span.attributes[RESULT]
    assert isinstance(result, str)
    assert result.endswith("…")
    assert len(result) <= 51
    assert full_result.startswith(result[:-1])
    arguments = span.attributes[ARGUMENTS]
    assert isinstance(arguments, str)
    assert arguments.endswith("…")
    assert len(arguments) <= 51


AWKWARD_VALUES = {
    "repr raises": ReprRaises(),
    "repr raises inside a dict": {"inner": ReprRaises()},
    "bytes": bytes(range(256)),
    "huge string": "x" * 2_000_000,
    "huge list": list(range(200_000)),
    "circular list": cycle(),
}


@pytest.mark.parametrize("value", AWKWARD_VALUES.values(), ids=AWKWARD_VALUES.keys())
async def test_awkward_values_never_break_the_run(
    instrument_with: Callable[..., PygentsInstrumentor],
    spans_by_name: SpansByName,
    pass_through: Callable[[Any], Awaitable[None]],
    value: Any,
) -> None:
    instrument_with(capture_content=True, content_max_length=200)

    await pass_through(value)

    spans = spans_by_name()
    for name in ("execute_tool identity", "execute_tool relay"):
        span = spans[name]
        assert span.status.status_code is StatusCode.UNSET
        for key in (ARGUMENTS, RESULT):
            assert isinstance(span.attributes[key], str)
            assert len(span.attributes[key]) <= 201
    for event in events_named(spans["execute_tool relay"], "pygents.tool.on_yield"):
        assert len(str(event.get("pygents.value", ""))) <= 201


async def test_injected_parameters_stay_out_of_the_recorded_arguments(
    instrument_with: Callable[..., PygentsInstrumentor], spans_by_name: SpansByName
) -> None:
    """A context queue given to the tool is the agent's, not the call's argument."""
    instrument_with(capture_content=True)

    @tool
    async def note(text: str, queue: ContextQueue) -> int:
        await queue.append(ContextItem(text))
        return len(queue)

    agent = Agent("scribe", "Takes notes.", [note], context_queue=ContextQueue(limit=4))
    await agent.put(Turn(note, kwargs={"text": "remember"}))
    assert await drain(agent) == [1]
    call = spans_by_name()["execute_tool note"]
    assert json.loads(call.attributes[ARGUMENTS]) == {"text": "remember"}


async def test_a_genai_viewer_reads_each_span_kind_and_under_capture_the_inputs_and_outputs(
    instrument_with: Callable[..., PygentsInstrumentor], exporter: InMemorySpanExporter
) -> None:
    """Phoenix shows a span with no OpenInference kind as UNKNOWN, and shows input and
    output only from ``input.value`` / ``output.value``."""
    instrument_with(capture_content=True)

    @tool
    async def double(n: int) -> int:
        return 2 * n

    agent = Agent("doubler", "Doubles.", [double])
    await agent.put(Turn(double, kwargs={"n": 2}))
    await agent.put(Turn(double, kwargs={"n": 5}))
    assert await drain(agent) == [4, 10]
    spans = exporter.get_finished_spans()
    (run,) = [span for span in spans if span.name == "invoke_agent doubler"]
    tools = [span for span in spans if span.name == "execute_tool double"]
    turns = [span for span in spans if span.name == "turn double"]
    assert run.attributes["openinference.span.kind"] == "AGENT"
    assert json.loads(run.attributes["input.value"]) == {"tool": "double", "arguments": {"n": 2}}
    assert json.loads(run.attributes["output.value"]) == 10  # the last value it routed
    assert run.attributes["input.mime_type"] == "application/json"
    assert run.attributes["output.mime_type"] == "application/json"
    assert [t.attributes["openinference.span.kind"] for t in turns] == ["CHAIN", "CHAIN"]
    assert [t.attributes["openinference.span.kind"] for t in tools] == ["TOOL", "TOOL"]
    assert [json.loads(t.attributes["input.value"]) for t in tools] == [{"n": 2}, {"n": 5}]
    assert [json.loads(t.attributes["output.value"]) for t in tools] == [4, 10]


async def test_a_run_input_the_first_turn_names_is_the_runs_input_as_plain_text_cut_to_the_limit(
    instrument_with: Callable[..., PygentsInstrumentor], exporter: InMemorySpanExporter
) -> None:
    """A program whose first turn is a step of its own (the assistant's model call, with
    no arguments) names what started the run: the user's message, shown as the input."""
    instrument_with(capture_content=True, content_max_length=40)

    @tool
    async def respond() -> str:
        return "ok"

    message = "what is in this folder? " * 10
    first = Agent("asked", "Answers.", [respond])
    await first.put(Turn(respond, metadata={"run_input": message}))
    await first.put(Turn(respond, metadata={"run_input": "a later turn's, not the run's"}))
    assert await drain(first) == ["ok", "ok"]
    other = Agent("unnamed", "Answers.", [respond])
    await other.put(Turn(respond, metadata={"run_input": ["not", "a", "string"]}))
    assert await drain(other) == ["ok"]
    runs = {
        span.name: span
        for span in exporter.get_finished_spans()
        if span.name.startswith("invoke_agent ")
    }
    asked = runs["invoke_agent asked"].attributes
    assert asked["input.value"] == message[:39] + "…"
    assert asked["input.mime_type"] == "text/plain"
    unnamed = runs["invoke_agent unnamed"].attributes  # only a string counts
    assert json.loads(unnamed["input.value"]) == {"tool": "respond", "arguments": {}}
    assert unnamed["input.mime_type"] == "application/json"


async def test_without_capture_the_spans_say_their_kind_and_carry_no_input_or_output(
    instrument_with: Callable[..., PygentsInstrumentor], exporter: InMemorySpanExporter
) -> None:
    instrument_with()

    @tool
    async def echo(text: str) -> str:
        return text

    agent = Agent("echoer", "Echoes.", [echo])
    await agent.put(Turn(echo, args=[SECRET]))
    assert await drain(agent) == [SECRET]
    spans = exporter.get_finished_spans()
    kinds = {span.name: span.attributes["openinference.span.kind"] for span in spans}
    assert kinds == {
        "invoke_agent echoer": "AGENT",
        "turn echo": "CHAIN",
        "execute_tool echo": "TOOL",
    }
    for span in spans:
        assert not {"input.value", "output.value"} & set(span.attributes), span.name
    assert [t for t in all_attribute_values(spans) if SECRET in t] == []
