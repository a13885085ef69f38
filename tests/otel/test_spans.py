"""Spans (SPEC §2.2, §2.4): names, kinds, parentage, attributes, current span, errors,
timeouts, cancellation, early stops, links, suppression and uninstrumentation.

Everything runs on the real SDK: the ``exporter`` fixture is an in-memory exporter behind
a ``SimpleSpanProcessor``, so a span is in ``get_finished_spans()`` as soon as it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import pygents_otel
from pygents import Agent, Turn, TurnTimeoutError, tool
from pygents.testing import drain
from pygents_otel import PygentsInstrumentor
from stuck_tools import blocking_tool, time_out_in

pytestmark = pytest.mark.usefixtures("instrument")

SpansByName = Callable[[], dict[str, ReadableSpan]]

STOP_REASON = "pygents.turn.stop_reason"
ERROR_TYPE = "error.type"


class SpanTracker(SpanProcessor):
    """A real span processor that remembers which spans started and which ended."""

    def __init__(self) -> None:
        self.started: dict[int, str] = {}
        self.ended: set[int] = set()

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        self.started[span.context.span_id] = span.name

    def on_end(self, span: ReadableSpan) -> None:
        assert span.context is not None
        self.ended.add(span.context.span_id)

    def still_open(self) -> list[str]:
        return sorted(name for sid, name in self.started.items() if sid not in self.ended)


@pytest.fixture
def tracker(tracer_provider: TracerProvider) -> SpanTracker:
    found = SpanTracker()
    tracer_provider.add_span_processor(found)
    return found


@pytest.fixture
def user_tracer(tracer_provider: TracerProvider) -> trace.Tracer:
    """The tracer application code (an HTTP client, a driver...) would use."""
    return tracer_provider.get_tracer("user-code")


def assert_child_of(child: ReadableSpan, parent: ReadableSpan | trace.Span) -> None:
    parent_context = parent.get_span_context() if isinstance(parent, trace.Span) else parent.context
    assert parent_context is not None
    assert child.parent is not None, f"{child.name} has no parent"
    assert child.parent.span_id == parent_context.span_id, f"{child.name} has the wrong parent"
    assert child.context is not None
    assert child.context.trace_id == parent_context.trace_id


def assert_ended_cleanly(spans: dict[str, ReadableSpan], tracker: SpanTracker) -> None:
    """Every started span ended, and none of them reports an error."""
    assert tracker.still_open() == []
    for span in spans.values():
        assert span.end_time is not None, span.name
        assert span.status.status_code is not StatusCode.ERROR, span.name
        assert ERROR_TYPE not in span.attributes, span.name


def assert_failed(span: ReadableSpan, error_type: str) -> None:
    assert span.status.status_code is StatusCode.ERROR, span.name
    assert span.attributes[ERROR_TYPE] == error_type, span.name
    exceptions = [e for e in span.events if e.name == "exception"]
    assert len(exceptions) == 1, span.name
    assert exceptions[0].attributes["exception.type"] == error_type


async def run_bare(turn: Turn) -> Any:
    """Run a turn without an agent, with the right method for its tool."""
    if turn.tool.streaming:
        return [value async for value in turn.yielding()]
    return await turn.returning()


async def run_in_agent(turn: Turn, agent_name: str) -> list[Any]:
    agent = Agent(agent_name, "Runs one turn", [turn.tool])
    await agent.put(turn)
    return await drain(agent)


# -- names, kinds, parentage, attributes --------------------------------------------------


async def test_agent_turn_and_tool_spans_nest_with_their_attributes(
    spans_by_name: SpansByName,
) -> None:
    @tool(tags=["lookups"])
    async def lookup(key: str) -> str:
        """Look a thing up."""
        return key.upper()

    agent = Agent("planner", "Plans things", [lookup], tags=["team-a", "blue"])
    turn = Turn(lookup, args=["k"], timeout=5, tags=["urgent"])
    await agent.put(turn)

    assert await drain(agent) == ["K"]

    spans = spans_by_name()
    assert set(spans) == {"invoke_agent planner", "turn lookup", "execute_tool lookup"}
    run, turn_span, tool_span = (
        spans["invoke_agent planner"],
        spans["turn lookup"],
        spans["execute_tool lookup"],
    )
    assert all(span.kind is SpanKind.INTERNAL for span in spans.values())
    assert run.parent is None
    assert_child_of(turn_span, run)
    assert_child_of(tool_span, turn_span)

    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.agent.name"] == "planner"
    assert run.attributes["gen_ai.agent.description"] == "Plans things"
    assert run.attributes["gen_ai.agent.id"] == agent.uuid
    assert "gen_ai.provider.name" not in run.attributes  # a viewer would show it as the model
    assert set(run.attributes["pygents.tags"]) == {"team-a", "blue"}

    assert turn_span.attributes["pygents.turn.uuid"] == turn.uuid
    assert turn_span.attributes["pygents.turn.timeout"] == 5
    assert turn_span.attributes[STOP_REASON] == "completed"
    assert tuple(turn_span.attributes["pygents.tags"]) == ("urgent",)

    assert tool_span.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_span.attributes["gen_ai.tool.name"] == "lookup"
    assert tool_span.attributes["gen_ai.tool.description"] == "Look a thing up."
    assert tool_span.attributes["gen_ai.tool.type"] == "function"
    assert "gen_ai.tool.call.id" not in tool_span.attributes  # no model call id given

    for span in spans.values():
        assert span.status.status_code is StatusCode.UNSET


async def test_two_agent_runs_are_two_agent_spans_with_distinct_ids(
    exporter: InMemorySpanExporter,
) -> None:
    @tool
    async def noop() -> None:
        return None

    first = Agent("first", "one", [noop])
    second = Agent("second", "two", [noop])
    for agent in (first, second):
        await agent.put(Turn(noop))
        await drain(agent)

    runs = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent ")]
    assert sorted(s.name for s in runs) == ["invoke_agent first", "invoke_agent second"]
    ids = {s.attributes["gen_ai.agent.id"] for s in runs}
    assert len(ids) == 2


async def test_agent_span_is_a_child_of_the_callers_current_span(
    spans_by_name: SpansByName, user_tracer: trace.Tracer
) -> None:
    @tool
    async def ping() -> str:
        return "pong"

    agent = Agent("pinger", "Pings", [ping])
    await agent.put(Turn(ping))
    with user_tracer.start_as_current_span("outer") as outer:
        assert await drain(agent) == ["pong"]

    spans = spans_by_name()
    assert_child_of(spans["invoke_agent pinger"], outer)
    assert_child_of(spans["turn ping"], spans["invoke_agent pinger"])


@pytest.mark.parametrize("streaming", [False, True], ids=["returning", "yielding"])
async def test_bare_turn_span_is_a_child_of_the_callers_current_span(
    spans_by_name: SpansByName, user_tracer: trace.Tracer, streaming: bool
) -> None:
    if streaming:

        @tool
        async def work() -> AsyncIterator[int]:
            yield 1
    else:

        @tool
        async def work() -> int:  # type: ignore[misc]
            return 1

    with user_tracer.start_as_current_span("outer") as outer:
        await run_bare(Turn(work))

    spans = spans_by_name()
    assert set(spans) == {"outer", "turn work", "execute_tool work"}
    assert_child_of(spans["turn work"], outer)
    assert_child_of(spans["execute_tool work"], spans["turn work"])


async def test_bare_turn_without_a_current_span_starts_a_trace(spans_by_name: SpansByName) -> None:
    @tool
    async def alone() -> int:
        return 1

    await Turn(alone).returning()

    spans = spans_by_name()
    assert spans["turn alone"].parent is None
    assert_child_of(spans["execute_tool alone"], spans["turn alone"])


async def test_subtool_spans_use_the_scoped_name(spans_by_name: SpansByName) -> None:
    @tool
    async def files() -> None:
        """File operations."""

    @files.subtool
    async def read(path: str) -> str:
        """Read a file."""
        return f"contents of {path}"

    agent = Agent("librarian", "Reads", [files])
    turn = Turn("files.read", args=["a.txt"])
    await agent.put(turn)
    assert await drain(agent) == ["contents of a.txt"]

    spans = spans_by_name()
    assert set(spans) == {"invoke_agent librarian", "turn files.read", "execute_tool files.read"}
    tool_span = spans["execute_tool files.read"]
    assert tool_span.attributes["gen_ai.tool.name"] == "files.read"
    assert tool_span.attributes["gen_ai.tool.description"] == "Read a file."
    assert "gen_ai.tool.call.id" not in tool_span.attributes  # no model call id given
    assert_child_of(tool_span, spans["turn files.read"])


# -- the tool span is current while the tool body runs ------------------------------------


@pytest.mark.parametrize("via_agent", [False, True], ids=["bare", "agent"])
async def test_spans_created_inside_a_coroutine_tool_are_children_of_the_tool_span(
    spans_by_name: SpansByName, user_tracer: trace.Tracer, via_agent: bool
) -> None:
    seen_inside: list[trace.SpanContext] = []

    @tool
    async def fetch(url: str) -> str:
        seen_inside.append(trace.get_current_span().get_span_context())
        with user_tracer.start_as_current_span("http GET"):
            return f"body of {url}"

    with user_tracer.start_as_current_span("outer") as outer:
        if via_agent:
            agent = Agent("fetcher", "Fetches", [fetch])
            await agent.put(Turn(fetch, args=["u"]))
            async for _, value in agent.run():
                assert value == "body of u"
                assert trace.get_current_span() is outer  # the consumer sees its own span
        else:
            assert await Turn(fetch, args=["u"]).returning() == "body of u"
        assert trace.get_current_span() is outer  # restored after the tool returned

    spans = spans_by_name()
    tool_span = spans["execute_tool fetch"]
    assert_child_of(spans["http GET"], tool_span)
    assert seen_inside == [tool_span.context]


@pytest.mark.parametrize("via_agent", [False, True], ids=["bare", "agent"])
async def test_spans_created_inside_a_streaming_tool_are_children_of_the_tool_span(
    spans_by_name: SpansByName, user_tracer: trace.Tracer, via_agent: bool
) -> None:
    @tool
    async def pages(count: int) -> AsyncIterator[int]:
        for page in range(count):
            with user_tracer.start_as_current_span(f"page {page}"):
                pass
            yield page

    received: list[int] = []
    with user_tracer.start_as_current_span("outer") as outer:
        if via_agent:
            agent = Agent("pager", "Pages", [pages])
            await agent.put(Turn(pages, args=[3]))
            async for _, value in agent.run():
                assert trace.get_current_span() is outer  # restored between steps
                received.append(value)
        else:
            async for value in Turn(pages, args=[3]).yielding():
                assert trace.get_current_span() is outer  # restored between steps
                received.append(value)
        assert trace.get_current_span() is outer

    assert received == [0, 1, 2]
    spans = spans_by_name()
    for page in range(3):
        assert_child_of(spans[f"page {page}"], spans["execute_tool pages"])


async def test_turns_and_agents_run_inside_a_tool_nest_under_its_span(
    spans_by_name: SpansByName,
) -> None:
    @tool
    async def leaf(n: int) -> int:
        return n + 1

    @tool
    async def inner_step(n: int) -> int:
        return n * 10

    helper = Agent("helper", "Helps", [inner_step])

    @tool
    async def orchestrate(n: int) -> int:
        first = await Turn(leaf, args=[n]).returning()
        await helper.put(Turn(inner_step, args=[first]))
        (second,) = [value async for _, value in helper.run()]
        return second

    assert await Turn(orchestrate, args=[1]).returning() == 20

    spans = spans_by_name()
    outer_tool = spans["execute_tool orchestrate"]
    assert_child_of(outer_tool, spans["turn orchestrate"])
    assert_child_of(spans["turn leaf"], outer_tool)
    assert_child_of(spans["execute_tool leaf"], spans["turn leaf"])
    assert_child_of(spans["invoke_agent helper"], outer_tool)
    assert_child_of(spans["turn inner_step"], spans["invoke_agent helper"])


async def test_concurrent_turns_each_make_their_own_tool_span_current(
    exporter: InMemorySpanExporter, user_tracer: trace.Tracer
) -> None:
    gate = asyncio.Event()
    arrived: list[int] = []

    @tool
    async def job(n: int) -> int:
        arrived.append(n)
        if len(arrived) == 3:
            gate.set()
        await gate.wait()  # all three are inside their tool body at the same time
        with user_tracer.start_as_current_span(f"inside {n}"):
            return n

    with user_tracer.start_as_current_span("outer") as outer:
        turns = [Turn(job, args=[n]) for n in range(3)]
        assert await asyncio.gather(*(t.returning() for t in turns)) == [0, 1, 2]
        assert trace.get_current_span() is outer

    spans = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    for n, turn in enumerate(turns):
        inside = next(s for s in spans if s.name == f"inside {n}")
        tool_span = by_id[inside.parent.span_id]
        assert tool_span.name == "execute_tool job"
        assert "gen_ai.tool.call.id" not in tool_span.attributes  # no model call id given
        turn_span = by_id[tool_span.parent.span_id]
        assert turn_span.attributes["pygents.turn.uuid"] == turn.uuid
        assert_child_of(turn_span, outer)


@pytest.mark.parametrize("via_agent", [False, True], ids=["bare", "agent"])
async def test_a_span_a_streaming_tool_opens_around_its_yields_stays_current(
    spans_by_name: SpansByName, user_tracer: trace.Tracer, via_agent: bool
) -> None:
    """User code in a stream (``with span: for row in cursor: yield row``) keeps its own
    current span across yields, so what it creates in later steps nests under it."""
    current_is_session: list[bool] = []

    @tool
    async def rows() -> AsyncIterator[int]:
        with user_tracer.start_as_current_span("session") as session:
            for n in range(3):
                current_is_session.append(trace.get_current_span() is session)
                with user_tracer.start_as_current_span(f"fetch {n}"):
                    pass
                yield n

    if via_agent:
        agent = Agent("reader", "Reads rows", [rows])
        await agent.put(Turn(rows))
        assert await drain(agent) == [0, 1, 2]
    else:
        assert await run_bare(Turn(rows)) == [0, 1, 2]

    spans = spans_by_name()
    assert_child_of(spans["session"], spans["execute_tool rows"])
    assert current_is_session == [True, True, True]
    for n in range(3):
        assert_child_of(spans[f"fetch {n}"], spans["session"])


# -- errors and timeouts ------------------------------------------------------------------


@pytest.mark.parametrize("streaming", [False, True], ids=["coroutine", "stream"])
@pytest.mark.parametrize("via_agent", [False, True], ids=["bare", "agent"])
async def test_an_error_marks_the_turn_and_tool_spans(
    spans_by_name: SpansByName, tracker: SpanTracker, streaming: bool, via_agent: bool
) -> None:
    if streaming:

        @tool
        async def fragile() -> AsyncIterator[int]:
            yield 1
            raise ValueError("broken on purpose")
    else:

        @tool
        async def fragile() -> int:  # type: ignore[misc]
            raise ValueError("broken on purpose")

    run = run_in_agent(Turn(fragile), "careless") if via_agent else run_bare(Turn(fragile))
    with pytest.raises(ValueError, match="broken on purpose"):
        await run

    spans = spans_by_name()
    assert tracker.still_open() == []
    assert_failed(spans["turn fragile"], "ValueError")
    assert_failed(spans["execute_tool fragile"], "ValueError")
    assert spans["turn fragile"].attributes[STOP_REASON] == "error"
    if via_agent:
        assert_failed(spans["invoke_agent careless"], "ValueError")


@pytest.mark.parametrize("streaming", [False, True], ids=["coroutine", "stream"])
async def test_a_timeout_marks_the_turn_span(
    spans_by_name: SpansByName, tracker: SpanTracker, streaming: bool
) -> None:
    never = asyncio.Event()  # never set: the tool waits until the deadline cuts it

    if streaming:

        @tool
        async def slow() -> AsyncIterator[int]:
            yield 1
            await never.wait()
            yield 2
    else:

        @tool
        async def slow() -> int:  # type: ignore[misc]
            await never.wait()
            return 1

    with pytest.raises(TurnTimeoutError):
        await run_bare(Turn(slow, timeout=0.01))

    spans = spans_by_name()
    assert tracker.still_open() == []
    turn_span = spans["turn slow"]
    assert turn_span.attributes[ERROR_TYPE] == "TurnTimeoutError"
    assert turn_span.attributes[STOP_REASON] == "timeout"
    assert turn_span.status.status_code is StatusCode.ERROR
    assert spans["execute_tool slow"].end_time is not None


async def test_a_timeout_inside_an_agent_run_marks_the_turn_and_agent_spans(
    spans_by_name: SpansByName, tracker: SpanTracker
) -> None:
    await time_out_in("waiter")

    spans = spans_by_name()
    assert tracker.still_open() == []
    assert spans["turn stuck"].attributes[STOP_REASON] == "timeout"
    assert spans["turn stuck"].attributes[ERROR_TYPE] == "TurnTimeoutError"
    assert spans["turn stuck"].status.status_code is StatusCode.ERROR
    assert spans["invoke_agent waiter"].status.status_code is StatusCode.ERROR


# -- cancellation and early stops ---------------------------------------------------------


@pytest.mark.parametrize("via_agent", [False, True], ids=["bare", "agent"])
async def test_cancelling_the_task_ends_every_span_as_cancelled(
    spans_by_name: SpansByName, tracker: SpanTracker, via_agent: bool
) -> None:
    started = asyncio.Event()
    blocks = blocking_tool(started)
    turn = Turn(blocks)
    if via_agent:
        agent = Agent("hanger", "Hangs", [blocks])
        await agent.put(turn)
        task = asyncio.create_task(drain(agent))
    else:
        task = asyncio.create_task(turn.returning())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    spans = spans_by_name()
    expected = {"turn blocks", "execute_tool blocks"}
    assert set(spans) == (expected | {"invoke_agent hanger"} if via_agent else expected)
    assert_ended_cleanly(spans, tracker)
    assert spans["turn blocks"].attributes[STOP_REASON] == "cancelled"


async def test_breaking_out_of_an_agent_run_ends_every_span_as_cancelled(
    spans_by_name: SpansByName, tracker: SpanTracker
) -> None:
    @tool
    async def endless() -> AsyncIterator[int]:
        n = 0
        while True:
            yield n
            n += 1

    agent = Agent("talker", "Talks forever", [endless])
    await agent.put(Turn(endless))
    async with contextlib.aclosing(agent.run()) as run:
        async for _, value in run:
            if value == 2:
                break

    spans = spans_by_name()
    assert set(spans) == {"invoke_agent talker", "turn endless", "execute_tool endless"}
    assert_ended_cleanly(spans, tracker)
    assert spans["turn endless"].attributes[STOP_REASON] == "cancelled"
    assert not agent.is_running


async def test_aclose_of_a_yielding_turn_ends_its_spans_as_cancelled(
    spans_by_name: SpansByName, tracker: SpanTracker
) -> None:
    @tool
    async def ticks() -> AsyncIterator[int]:
        for n in range(100):
            yield n

    stream = Turn(ticks).yielding()
    assert await anext(stream) == 0
    assert await anext(stream) == 1
    await stream.aclose()

    spans = spans_by_name()
    assert set(spans) == {"turn ticks", "execute_tool ticks"}
    assert_ended_cleanly(spans, tracker)
    assert spans["turn ticks"].attributes[STOP_REASON] == "cancelled"


# -- links across agents, processes and time ----------------------------------------------


def link_targets(span: ReadableSpan) -> list[tuple[int, int]]:
    return [(link.context.trace_id, link.context.span_id) for link in span.links]


def ids_of(span: trace.Span | ReadableSpan) -> tuple[int, int]:
    ctx = span.get_span_context() if isinstance(span, trace.Span) else span.context
    assert ctx is not None
    return ctx.trace_id, ctx.span_id


async def test_a_turn_put_inside_a_span_links_to_it(
    spans_by_name: SpansByName, user_tracer: trace.Tracer
) -> None:
    @tool
    async def later() -> str:
        return "done"

    agent = Agent("queue", "Runs later", [later])
    turn = Turn(later)
    with user_tracer.start_as_current_span("request") as request:
        await agent.put(turn)

    trace_hex = format(request.get_span_context().trace_id, "032x")
    assert trace_hex in turn.metadata["traceparent"]

    assert await drain(agent) == ["done"]  # outside the request span: a new trace

    spans = spans_by_name()
    turn_span = spans["turn later"]
    assert link_targets(turn_span) == [ids_of(request)]
    assert turn_span.context.trace_id != request.get_span_context().trace_id
    assert spans["invoke_agent queue"].links == ()


async def test_a_turn_created_inside_a_span_links_to_it(
    spans_by_name: SpansByName, user_tracer: trace.Tracer
) -> None:
    """SPEC §2.4: a turn remembers the trace context in which it was *created* or put()."""

    @tool
    async def deferred() -> str:
        return "done"

    with user_tracer.start_as_current_span("request") as request:
        turn = Turn(deferred)

    assert await turn.returning() == "done"  # later, outside the request span

    assert link_targets(spans_by_name()["turn deferred"]) == [ids_of(request)]


async def test_a_turn_put_outside_any_span_has_no_link(spans_by_name: SpansByName) -> None:
    @tool
    async def plain() -> int:
        return 1

    agent = Agent("plain", "No origin", [plain])
    turn = Turn(plain)
    await agent.put(turn)
    await drain(agent)

    assert "traceparent" not in turn.metadata
    assert spans_by_name()["turn plain"].links == ()


async def test_a_turn_sent_from_a_tool_of_another_agent_links_to_that_tool_span(
    spans_by_name: SpansByName,
) -> None:
    @tool
    async def work(item: str) -> str:
        return f"worked on {item}"

    @tool
    async def delegate(item: str) -> str:
        await boss.send("worker", Turn(work, args=[item]))
        return "delegated"

    boss = Agent("boss", "Delegates", [delegate])
    worker = Agent("worker", "Works", [work])
    await boss.put(Turn(delegate, args=["x"]))

    assert await drain(boss) == ["delegated"]
    assert await drain(worker) == ["worked on x"]

    spans = spans_by_name()
    assert link_targets(spans["turn work"]) == [ids_of(spans["execute_tool delegate"])]


async def test_the_link_survives_a_json_round_trip_of_the_turn(
    spans_by_name: SpansByName, user_tracer: trace.Tracer
) -> None:
    @tool
    async def resume_me(n: int) -> int:
        return n * 2

    agent = Agent("origin", "Queues", [resume_me])
    turn = Turn(resume_me, args=[21])
    with user_tracer.start_as_current_span("request") as request:
        await agent.put(turn)

    restored = Turn.from_dict(json.loads(json.dumps(turn.to_dict())))
    assert await restored.returning() == 42

    turn_span = spans_by_name()["turn resume_me"]
    assert turn_span.attributes["pygents.turn.uuid"] == turn.uuid
    assert link_targets(turn_span) == [ids_of(request)]


async def test_a_restored_agent_links_its_queued_turns_to_their_origin(
    spans_by_name: SpansByName, user_tracer: trace.Tracer
) -> None:
    @tool
    async def job() -> str:
        return "ok"

    agent = Agent("before-restart", "Queues work", [job])
    with user_tracer.start_as_current_span("request") as request:
        await agent.put(Turn(job))

    data = json.loads(json.dumps(agent.to_dict()))
    data["name"] = "after-restart"
    restored = Agent.from_dict(data)
    assert await drain(restored) == ["ok"]

    spans = spans_by_name()
    assert link_targets(spans["turn job"]) == [ids_of(request)]


# -- suppression and uninstrumentation ----------------------------------------------------


async def test_suppress_instrumentation_records_no_spans(
    exporter: InMemorySpanExporter, tracker: SpanTracker
) -> None:
    @tool
    async def quiet(n: int) -> int:
        return n + 1

    @tool
    async def murmur() -> AsyncIterator[int]:
        yield 1

    agent = Agent("hushed", "Quiet", [quiet, murmur])
    with suppress_instrumentation():
        assert await Turn(quiet, args=[1]).returning() == 2
        assert [v async for v in Turn(murmur).yielding()] == [1]
        await agent.put(Turn(quiet, args=[2]))
        assert await drain(agent) == [3]

    assert exporter.get_finished_spans() == ()
    assert tracker.started == {}

    await Turn(quiet, args=[1]).returning()  # and tracing resumes after the block
    assert {s.name for s in exporter.get_finished_spans()} == {"turn quiet", "execute_tool quiet"}


async def test_uninstrument_stops_tracing_and_instrument_resumes_it(
    instrument: PygentsInstrumentor,
    exporter: InMemorySpanExporter,
    tracer_provider: TracerProvider,
    meter_provider: Any,
) -> None:
    @tool
    async def echo(text: str) -> str:
        return text

    assert instrument.subscriber is not None
    instrument.uninstrument()
    assert instrument.subscriber is None

    agent = Agent("echoer", "Echoes", [echo])
    await agent.put(Turn(echo, args=["a"]))
    assert await drain(agent) == ["a"]
    assert await Turn(echo, args=["b"]).returning() == "b"
    assert exporter.get_finished_spans() == ()

    instrument.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    assert await Turn(echo, args=["c"]).returning() == "c"
    assert {s.name for s in exporter.get_finished_spans()} == {"turn echo", "execute_tool echo"}


async def test_the_tool_call_id_is_the_models_call_id_the_caller_kept_on_the_turn(
    spans_by_name: SpansByName,
) -> None:
    """``gen_ai.tool.call.id`` joins a tool span to the model's request for it, as GenAI
    viewers expect; the turn's own uuid stays on the turn span."""

    @tool
    async def lookup(key: str) -> str:
        return key

    turn = Turn(lookup, kwargs={"key": "k"}, metadata={"tool_call_id": "call_Xy12"})
    await turn.returning()
    spans = spans_by_name()
    assert spans["execute_tool lookup"].attributes["gen_ai.tool.call.id"] == "call_Xy12"
    assert spans["turn lookup"].attributes["pygents.turn.uuid"] == turn.uuid


async def test_a_turn_of_a_conversation_puts_its_run_turn_and_tool_spans_in_it(
    exporter: InMemorySpanExporter,
) -> None:
    """``gen_ai.conversation.id`` lets a viewer follow one user's session across runs."""

    @tool
    async def reply(text: str) -> str:
        return text

    agent = Agent("chat", "Chats.", [reply])
    await agent.put(Turn(reply, args=["hi"], metadata={"conversation_id": "session-7"}))
    assert await drain(agent) == ["hi"]
    spans = {span.name: span for span in exporter.get_finished_spans()}
    for name in ("invoke_agent chat", "turn reply", "execute_tool reply"):
        assert spans[name].attributes["gen_ai.conversation.id"] == "session-7", name


async def test_a_turn_of_no_conversation_says_none(spans_by_name: SpansByName) -> None:
    @tool
    async def reply(text: str) -> str:
        return text

    await Turn(reply, args=["hi"], metadata={"conversation_id": 7}).returning()  # not a string
    for span in spans_by_name().values():
        assert "gen_ai.conversation.id" not in span.attributes, span.name


async def test_a_tool_that_calls_a_model_makes_its_span_the_chat_span_with_its_tokens(
    exporter: InMemorySpanExporter,
) -> None:
    """A GenAI viewer shows a model step as ``chat {model}`` with its usage: the tool's own
    span becomes it (one span, so its tokens count once)."""
    said: list[bool] = []

    @tool
    async def respond(prompt: str) -> str:
        said.append(
            pygents_otel.model_call(
                model="gpt-test",
                provider="openai",
                input_tokens=120,
                output_tokens=30,
                cache_read_tokens=100,
                finish_reasons=["tool_calls"],
            )
        )
        return "ok"

    agent = Agent("talker", "Talks.", [respond])
    await agent.put(Turn(respond, args=["hi"]))
    assert await drain(agent) == ["ok"]
    assert said == [True]
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert "execute_tool respond" not in spans
    chat = spans["chat gpt-test"]
    assert chat.parent is not None
    assert chat.parent.span_id == spans["turn respond"].context.span_id
    attributes = chat.attributes
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.request.model"] == attributes["gen_ai.response.model"] == "gpt-test"
    assert attributes["gen_ai.provider.name"] == "openai"
    assert attributes["gen_ai.usage.input_tokens"] == 120
    assert attributes["gen_ai.usage.output_tokens"] == 30
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == 100
    assert "gen_ai.usage.reasoning.output_tokens" not in attributes  # not given
    assert tuple(attributes["gen_ai.response.finish_reasons"]) == ("tool_calls",)
    assert attributes["openinference.span.kind"] == "LLM"
    assert attributes["llm.token_count.total"] == 150
    assert spans["turn respond"].attributes["openinference.span.kind"] == "CHAIN"


async def test_a_model_call_outside_a_tool_changes_no_span(
    exporter: InMemorySpanExporter, tracer_provider: TracerProvider
) -> None:
    tracer = tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("mine"):
        assert pygents_otel.model_call(model="m", provider="p", input_tokens=-5) is False
    assert pygents_otel.model_call(model="m", provider="p") is False  # nothing current
    (mine,) = [span for span in exporter.get_finished_spans() if span.name == "mine"]
    assert "gen_ai.operation.name" not in (mine.attributes or {})
