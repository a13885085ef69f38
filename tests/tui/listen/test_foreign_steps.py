"""Other frameworks' runs while they run, and what their steps say: the recorded
telemetry of a pydantic-ai agent and of an OpenAI Agents SDK agent (under
OpenTelemetry's and OpenInference's instrumentation) folded one request at a time.

These senders end a span only when its work ends, children first: a run is known
running from its steps (inferred), its tool calls are tallied per agent, and the
conversation it belongs to is a field the filter reads."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_clock import FakeClock
from test_foreign_runs import EXPECTED, lines

from pygents import StopReason
from pygents_tui.cli.listen import listen_app
from pygents_tui.feeders import FleetModel
from pygents_tui.listen.decode import Limits, decode
from pygents_tui.state import SPANS_ONLY_STALE_AFTER, Store, TurnEntry
from pygents_tui.ui._filter import parse
from pygents_tui.ui.screens import InspectorScreen
from pygents_tui.ui.widgets._agent_cells import agent_fields
from pygents_tui.ui.widgets._rows import agent_names, turn_fields
from pygents_tui.ui.widgets.trace import waterfall

CONVERSATION = "conversation-1"  # the harness's (tests/frameworks/harness.py)


def feed(fleet: FleetModel, line: bytes) -> None:
    fleet.ingest(decode("traces", line, json_body=True, limits=Limits()))
    fleet.store.drain()


def span_names(line: bytes) -> list[str]:
    request = json.loads(line)
    return [
        span["name"]
        for group in request["resourceSpans"]
        for scope in group["scopeSpans"]
        for span in scope["spans"]
    ]


def first_run_line(name: str) -> int:
    """The index of the request that carries the recording's first agent-run span."""
    agents = {agent for agent, _, _ in EXPECTED[name][0]}
    for index, line in enumerate(lines(name)):
        if any(n.removeprefix("invoke_agent ") in agents for n in span_names(line)):
            return index
    raise AssertionError(f"no run in {name}")


def folded(name: str) -> Store:
    fleet = FleetModel(stale_after=1e9)
    for line in lines(name):
        feed(fleet, line)
    return fleet.store


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_run_whose_steps_arrived_is_running_inferred_until_its_own_span_ends(
    name: str,
) -> None:
    fleet = FleetModel(stale_after=1e9)
    requests = lines(name)
    end = first_run_line(name)
    for line in requests[:end]:
        feed(fleet, line)
    (running,) = fleet.store.running_turns()
    assert running.inferred
    assert running.ended is None
    assert running.trace_id is not None
    first = json.loads(requests[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert running.trace_id == first["traceId"]

    feed(fleet, requests[end])  # the run's own span: the inferred run gives way to it
    assert fleet.store.running_turns() == []
    (ended,) = fleet.store.recent_turns()
    assert not ended.inferred
    assert ended.stop_reason is StopReason.COMPLETED
    assert sum(a.completed + a.failed for a in fleet.store.agent_rows()) == 1


def test_a_step_that_names_its_agent_shows_the_agent_running_its_tool() -> None:
    """pydantic-ai's steps carry ``gen_ai.agent.name``: the row is running, and its
    Current column is the tool that just ran."""
    fleet = FleetModel(stale_after=1e9)
    requests = lines("pydantic_ai.jsonl")
    for line in requests[:2]:  # a model call, then the tool call it asked for
        feed(fleet, line)
    (agent,) = fleet.store.agent_rows()
    assert (agent.name, agent.state, agent.current_tool) == (
        "weather_agent",
        "running",
        "get_weather",
    )
    (running,) = fleet.store.running_turns()
    assert running.agent == agent.key
    assert running.tool == "run: get_weather"

    for line in requests[2 : first_run_line("pydantic_ai.jsonl") + 1]:
        feed(fleet, line)
    assert (agent.state, agent.current_tool, agent.current_turn) == ("finished", None, None)


def test_an_inferred_run_of_a_service_that_stops_sending_shows_stale() -> None:
    clock = FakeClock(100.0)
    fleet = FleetModel(clock=clock, stale_after=5.0)
    feed(fleet, lines("openai_agents_otel.jsonl")[0])
    (running,) = fleet.store.running_turns()
    assert not running.stale
    clock.advance(6.0)  # past stale_after: a pygents process would be stale
    fleet.store.drain()
    (running,) = fleet.store.running_turns()
    assert not running.stale  # such a sender is silent between its steps' spans
    clock.advance(SPANS_ONLY_STALE_AFTER)
    fleet.store.drain()
    (running,) = fleet.store.running_turns()
    assert running.stale  # the Running panel says "stale: no news", as for a pygents turn
    assert running.ended is None


def test_a_step_sent_again_after_its_run_ended_starts_no_run() -> None:
    fleet = FleetModel(stale_after=1e9)
    requests = lines("pydantic_ai.jsonl")
    for line in requests:
        feed(fleet, line)
    feed(fleet, requests[0])  # an exporter's retry, late
    assert fleet.store.running_turns() == []


def _orphan_step(index: int) -> dict[str, Any]:
    return {
        "traceId": f"{index + 1:032x}",
        "spanId": f"{index + 1:016x}",
        "parentSpanId": "f" * 16,  # a run that never ends
        "name": "execute_tool spin",
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "spin"}},
        ],
    }


def _request(service: str, spans: list[dict[str, Any]]) -> bytes:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    scope = {"scope": {"name": "some-framework"}, "spans": spans}
    return json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}).encode()


def test_steps_of_runs_that_never_end_are_bounded_per_service_and_counted() -> None:
    """A sender of 10,000 steps whose runs never arrive: at most
    ``inferred_runs`` of its runs are shown running, the others counted as dropped,
    and another service's runs still show and end."""
    fleet = FleetModel(stale_after=1e9)
    bound = fleet.store.limits.inferred_runs
    for start in range(0, 10_000, 500):
        steps = [_orphan_step(i) for i in range(start, start + 500)]
        feed(fleet, _request("flood", steps))
    assert len(fleet.store.running_turns()) == bound
    assert fleet.store.counters()["inferred_dropped"] == 10_000 - bound

    requests = lines("pydantic_ai.jsonl")
    feed(fleet, requests[0])
    assert len(fleet.store.running_turns()) == bound + 1
    for line in requests[1:]:
        feed(fleet, line)
    assert len(fleet.store.running_turns()) == bound
    weather = [a for a in fleet.store.agent_rows() if a.name == "weather_agent"]
    assert [(a.completed, a.failed) for a in weather] == [(2, 1)]


@pytest.mark.parametrize(
    ("name", "agent", "tools"),
    [
        (
            "pydantic_ai.jsonl",
            "weather_agent",
            {"get_weather": (1, 0), "flaky": (1, 1), "broken": (1, 1)},
        ),
        # OpenTelemetry's instrumentation does not mark a tool that raised (the SDK shows
        # the model the error): its spans say it succeeded, and so does the tally.
        ("openai_agents_otel.jsonl", "triage", {"get_weather": (1, 0), "flaky": (1, 0)}),
        (
            "openai_agents_openinference.jsonl",
            "triage",
            {"get_weather": (1, 0), "flaky": (1, 1), "handoff to specialist": (1, 0)},
        ),
    ],
)
def test_each_agent_tallies_its_calls_per_tool_with_their_failures_and_time(
    name: str, agent: str, tools: dict[str, tuple[int, int]]
) -> None:
    store = folded(name)
    (row,) = [a for a in store.agent_rows() if a.name == agent]
    assert {tool: (t.calls, t.failed) for tool, t in row.tools.items()} == tools
    assert all(t.seconds > 0 for t in row.tools.values())
    failed = [t for t in row.tools.values() if t.failed]
    assert all(t.last_error for t in failed)


@pytest.mark.parametrize("name", ["openai_agents_otel.jsonl", "openai_agents_openinference.jsonl"])
def test_a_handoff_s_trace_credits_each_agent_its_own_model_calls(name: str) -> None:
    """The first run's trace also holds the handoff target's run: each agent gets the
    tokens of its own model calls (12 in and 3 out a call, from the harness's fake
    model), none stays unclaimed, and the fleet's are their sum."""
    store = folded(name)
    spent = {}
    for agent in store.agent_rows():
        usage = store.usage(agent.key)
        assert usage is not None
        spent[agent.name] = (usage.calls, usage.input, usage.output)
    # triage: two calls in each of its first two runs; the failed third got no answer
    assert spent == {"specialist": (1, 12, 3), "triage": (4, 48, 12)}
    fleet = store.usage()
    assert fleet is not None
    assert (fleet.input, fleet.output) == (60, 15)
    assert store.attention.meter.unattributed() == 0


def test_a_run_lists_its_tools_model_calls_and_tokens_for_the_inspector() -> None:
    store = folded("pydantic_ai.jsonl")
    first = store.recent_turns()[0]
    details = dict(first.details())
    assert details["tools"] == "get_weather ×1"
    assert details["model"] == "2 call(s)"
    # the harness's model reports 20 in (4 from cache) and 7 out per call
    assert details["tokens"] == "40 in, 8 from cache, 14 out"
    assert details["trace"] == first.trace_id


@pytest.mark.parametrize(
    ("name", "conversation"),
    [
        ("pydantic_ai.jsonl", CONVERSATION),  # gen_ai.conversation.id
        ("openai_agents_openinference.jsonl", CONVERSATION),  # session.id
        ("openai_agents_otel.jsonl", None),  # this instrumentation sends none
    ],
)
def test_a_run_s_conversation_is_a_field_the_filter_reads(
    name: str, conversation: str | None
) -> None:
    store = folded(name)
    turns: list[TurnEntry] = list(store.recent_turns())
    assert {t.conversation for t in turns} == {conversation}
    names = agent_names(store)
    query = parse(f"conversation:{CONVERSATION}")
    kept = [t for t in turns if query.matches(turn_fields(t, names))]
    assert len(kept) == (len(turns) if conversation else 0)
    agents = [a for a in store.agent_rows() if query.matches(agent_fields(a))]
    assert len(agents) == (len(store.agent_rows()) if conversation else 0)
    if conversation:
        assert ("conversation", conversation) in turns[0].details()
    assert not [
        t for t in turns if parse("conversation:someone-else").matches(turn_fields(t, names))
    ]


def test_what_another_framework_s_agent_cannot_offer_is_one_line_per_panel() -> None:
    store = folded("openai_agents_openinference.jsonl")
    (triage,) = [a for a in store.agent_rows() if a.name == "triage"]
    offered = store.sources.of(triage.key)
    for need in ("pause", "queue_contents", "context_items"):
        assert not offered.offers(need)
        line = offered.why_not(need)
        assert line is not None
        assert "another framework's agent" in line
        assert "\n" not in line
    for panel in ("queue", "context", "values"):
        note = store.unavailable(panel, triage.key)
        assert note is not None
        assert "another framework's agent" in note


async def test_enter_on_another_framework_s_agent_opens_its_latest_run_and_trace(
    until: Any, text_of: Any
) -> None:
    fleet = FleetModel(stale_after=1e9)
    for line in lines("openai_agents_openinference.jsonl"):
        feed(fleet, line)
    app = listen_app(fleet, "127.0.0.1", 4317, 4318)
    async with app.run_test(size=(130, 50)) as pilot:
        table = app._main.query_one("#agents")
        await until(pilot, lambda: getattr(table, "row_count", 0) == 2)
        table.focus()
        await pilot.press("down")  # specialist, then triage: by name
        await until(
            pilot, lambda: app._main.selected is not None and "triage" in app._main.selected
        )
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        screen = text_of(app)
        last = fleet.store.latest_turn(app._main.selected or "")
        assert last is not None
        assert last.stop_reason is StopReason.ERROR
        assert "Error in agent run" in screen  # its latest run failed
        assert "trace spans" in screen
        assert "generation" in screen  # the model call, in the run's span tree
        assert "agent's tools" in screen
        assert "flaky: 1 call(s)" in screen


def test_a_running_run_s_tokens_show_once_a_step_named_its_agent_and_count_once() -> None:
    """pydantic-ai's model calls name their agent: each is credited as it arrives,
    and the run's span, which lists them again, adds nothing."""
    fleet = FleetModel(stale_after=1e9)
    requests = lines("pydantic_ai.jsonl")
    feed(fleet, requests[0])  # one model call of the first run, which goes on
    (agent,) = fleet.store.agent_rows()
    usage = fleet.store.usage(agent.key)
    assert usage is not None
    assert (usage.calls, usage.input, usage.output) == (1, 20, 7)
    for line in requests[1 : first_run_line("pydantic_ai.jsonl") + 1]:
        feed(fleet, line)
    usage = fleet.store.usage(agent.key)
    assert usage is not None
    assert (usage.calls, usage.input, usage.output) == (2, 40, 14)


def test_a_run_is_timed_against_its_own_agent_s_runs_not_every_agent_s() -> None:
    """Every foreign run's tool is ``run``: a slow agent's runs must not make a
    quick agent's look normal, nor the reverse."""
    store = folded("openai_agents_otel.jsonl")
    paces = {t.agent: t.paced_as for t in store.recent_turns()}
    assert len(paces) == 2
    assert len(set(paces.values())) == 2
    assert all(p is not None and p.startswith("run of ") for p in paces.values())


def _failed_step(events: list[dict[str, Any]], message: str = "") -> bytes:
    step = _orphan_step(1)
    step["status"] = {"code": 2, "message": message}
    step["events"] = events
    return _request("failing", [step])


def _exception(kind: str, text: str) -> dict[str, Any]:
    return {
        "timeUnixNano": "1500",
        "name": "exception",
        "attributes": [
            {"key": "exception.type", "value": {"stringValue": kind}},
            {"key": "exception.message", "value": {"stringValue": text}},
            {"key": "exception.stacktrace", "value": {"stringValue": "Traceback ..."}},
        ],
    }


def test_a_failed_step_that_says_why_only_in_its_exception_event_is_read_from_it() -> None:
    """pydantic-ai's failed tool calls: status ERROR with no message, the exception
    in an ``exception`` event; a status message, when sent, is kept over it."""
    store = folded("pydantic_ai.jsonl")
    (agent,) = store.agent_rows()
    assert agent.tools["broken"].last_error == "RuntimeError: the weather service is down"
    (span,) = decode(
        "traces", _failed_step([_exception("E", "m")]), json_body=True, limits=Limits()
    ).spans
    assert span.status_message == "E: m"
    (span,) = decode(
        "traces", _failed_step([_exception("E", "m")], "said"), json_body=True, limits=Limits()
    ).spans
    assert span.status_message == "said"


def test_a_failed_span_s_hostile_events_are_bounded() -> None:
    """Thousands of events before the exception, or a huge exception text: the
    reason is cut to the receiver's bound, and events past the first few are not read."""
    limits = Limits()
    noise = [{"timeUnixNano": "1", "name": "tick", "attributes": []}] * 5000
    late = decode(
        "traces", _failed_step([*noise, _exception("E", "m")]), json_body=True, limits=limits
    )
    assert late.spans[0].status_message == ""
    huge = _failed_step([_exception("E" * 100_000, "m" * 100_000)])
    (span,) = decode("traces", huge, json_body=True, limits=limits).spans
    assert 0 < len(span.status_message) <= limits.max_value


@pytest.mark.parametrize(
    ("name", "arguments", "result"),
    [
        ("pydantic_ai.jsonl", "gen_ai.tool.call.arguments=", "gen_ai.tool.call.result="),
        ("openai_agents_openinference.jsonl", "input.value=", "output.value="),
    ],
)
def test_a_tool_call_s_arguments_and_result_show_in_its_trace_when_sent(
    name: str, arguments: str, result: str
) -> None:
    store = folded(name)
    run = next(
        t for t in store.recent_turns() if "get_weather" in dict(t.details()).get("tools", "")
    )
    assert run.trace_id is not None
    tree = store.trace_tree(run.trace_id)
    assert tree is not None
    lines = waterfall(tree).plain.splitlines()
    at = next(i for i, line in enumerate(lines) if "get_weather" in line and "█" in line)
    assert lines[at + 1].strip().startswith(arguments)
    assert "Paris" in lines[at + 1]
    assert lines[at + 2].strip().startswith(result)


def test_a_tool_call_s_hostile_arguments_are_cut_and_made_visible() -> None:
    step = _orphan_step(7)
    step["attributes"].append(
        {
            "key": "gen_ai.tool.call.arguments",
            "value": {"stringValue": "\x1b[31m\u202e" + "x" * 10_000},
        }
    )
    fleet = FleetModel(stale_after=1e9)
    feed(fleet, _request("hostile", [step]))
    tree = fleet.store.trace_tree(step["traceId"])
    assert tree is not None
    (_, under) = waterfall(tree).plain.splitlines()[:2]
    assert "\x1b" not in under
    assert "\u202e" not in under
    assert len(under) < 200


def one_request(requests: list[bytes], leave_out: str | None = None) -> bytes:
    """The requests' spans, in their order, as one request (as a sender that batches
    a whole run sends it); ``leave_out``: the spans of that name are not sent."""
    groups = [group for line in requests for group in json.loads(line)["resourceSpans"]]
    for group in groups:
        for scope in group["scopeSpans"]:
            scope["spans"] = [s for s in scope["spans"] if s["name"] != leave_out]
    return json.dumps({"resourceSpans": groups}).encode()


def folded_item_by_item(line: bytes) -> tuple[FleetModel, list[TurnEntry]]:
    """``line`` folded an item a fold; every inferred run seen running meanwhile."""
    fleet = FleetModel(stale_after=1e9)
    fleet.ingest(decode("traces", line, json_body=True, limits=Limits()))
    inferred: list[TurnEntry] = []
    while fleet.backlog:
        fleet.store.fold(0)
        inferred += [turn for turn in fleet.store.running_turns() if turn.inferred]
    fleet.store.drain()
    return fleet, inferred


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_run_sent_whole_in_one_request_starts_no_inferred_run_and_ends_the_same(
    name: str,
) -> None:
    """Its steps come before it in the request (children end first): each would start
    an inferred run that the run's span, a few items on, takes back. They are folded
    as the steps of a run known to end, and what it leaves is what it left when the
    same spans came request by request."""
    requests = lines(name)
    fleet, inferred = folded_item_by_item(one_request(requests))
    by_request = folded(name)

    assert inferred == []
    assert fleet.store.running_turns() == []

    def rows(store: Store) -> list[tuple[object, ...]]:
        return sorted(
            (row.name, row.completed, row.failed, row.phase, tuple(sorted(row.tools)))
            for row in store.agent_rows()
        )

    assert rows(fleet.store) == rows(by_request)
    for row in by_request.agent_rows():
        assert fleet.store.usage(row.key) == by_request.usage(row.key)


def test_a_request_of_steps_whose_run_is_not_in_it_still_shows_the_run_running() -> None:
    """The same request without the run's own span (the run is still going): its
    steps are the sign of it, as before."""
    requests = lines("pydantic_ai.jsonl")
    run = next(n for n in span_names(requests[first_run_line("pydantic_ai.jsonl")]) if "agent" in n)
    fleet, inferred = folded_item_by_item(one_request(requests, leave_out=run))

    runs = sum(span_names(line).count(run) for line in requests)
    running = fleet.store.running_turns()
    assert inferred
    assert len(running) == runs  # each in a trace of its own
    assert all(turn.inferred for turn in running)
