"""Other frameworks' agents in ``listen``: the recorded telemetry of a pydantic-ai
agent and of an OpenAI Agents SDK agent (under OpenTelemetry's instrumentation and
under OpenInference's), folded through the receiver's decoder into the fleet feeder.
Each run is a turn of its agent, counted once, failed with its reason; tokens come
from the model-call spans only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pygents import StopReason
from pygents_tui.feeders import FleetModel
from pygents_tui.feeders.otlp.foreign import RUN
from pygents_tui.listen.decode import Limits, decode
from pygents_tui.state import Store

RECORDINGS = Path(__file__).parents[2] / "frameworks" / "recordings"

# (agent name, completed, failed) for each recording, and the reason of its failed run.
EXPECTED = {
    "pydantic_ai.jsonl": (
        [("weather_agent", 2, 1)],
        "RuntimeError: the weather service is down",
    ),
    "openai_agents_otel.jsonl": (
        [("specialist", 1, 0), ("triage", 2, 1)],
        "<class 'openai.BadRequestError'>",
    ),
    "openai_agents_openinference.jsonl": (
        [("specialist", 1, 0), ("triage", 2, 1)],
        "Error in agent run: {'error': 'Error code: 400 - the model refused'}",
    ),
}


def lines(name: str) -> list[bytes]:
    return (RECORDINGS / name).read_bytes().splitlines()


def folded(name: str, *, times: int = 1) -> Store:
    """The store after every request of recording ``name`` was received ``times`` times."""
    fleet = FleetModel(stale_after=1e9)
    for _ in range(times):
        for line in lines(name):
            fleet.ingest(decode("traces", line, json_body=True, limits=Limits()))
    fleet.store.drain()
    return fleet.store


def runs(store: Store) -> list[tuple[str, int, int]]:
    return [(a.name, a.completed, a.failed) for a in store.agent_rows()]


def model_call_tokens(name: str) -> tuple[int, int]:
    """The input and output tokens the recording's model-call spans report."""
    spent = [0, 0]
    for line in lines(name):
        for group in json.loads(line)["resourceSpans"]:
            for scope in group["scopeSpans"]:
                for span in scope["spans"]:
                    attributes: dict[str, Any] = {
                        a["key"]: next(iter(a["value"].values())) for a in span["attributes"]
                    }
                    model = attributes.get("gen_ai.operation.name") == "chat"
                    if model or attributes.get("openinference.span.kind") == "LLM":
                        for i, keys in enumerate(
                            (
                                ("gen_ai.usage.input_tokens", "llm.token_count.prompt"),
                                ("gen_ai.usage.output_tokens", "llm.token_count.completion"),
                            )
                        ):
                            spent[i] += sum(int(attributes.get(key, 0)) for key in keys)
    return spent[0], spent[1]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_framework_s_agents_show_with_their_runs_counted_and_failures_said(
    name: str,
) -> None:
    store = folded(name)
    expected, reason = EXPECTED[name]
    assert runs(store) == expected
    turns = store.recent_turns()
    assert {t.tool for t in turns} == {RUN}
    assert all(t.trace_id for t in turns)
    failed = [t for t in turns if t.stop_reason is StopReason.ERROR]
    assert [t.error for t in failed] == [reason]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_tokens_are_the_sum_of_the_model_call_spans_only(name: str) -> None:
    """pydantic-ai also puts the run's sums on its agent span (``aggregated_usage``):
    counting those too would double every figure."""
    usage = folded(name).usage()
    assert usage is not None
    assert (usage.input, usage.output) == model_call_tokens(name)
    assert usage.input > 0


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_recording_received_twice_counts_each_run_once(name: str) -> None:
    store = folded(name, times=2)
    assert runs(store) == EXPECTED[name][0]


def test_a_step_that_failed_before_others_does_not_fail_the_run() -> None:
    """pydantic-ai's second run: a tool raised ModelRetry (its span ERROR), the model
    was shown the error and answered; the run's own status is unset."""
    store = folded("pydantic_ai.jsonl")
    ((_, completed, failed),) = runs(store)
    assert (completed, failed) == (2, 1)


def test_an_agent_is_keyed_by_its_name_never_by_a_per_run_id() -> None:
    store = folded("openai_agents_openinference.jsonl")
    assert sorted(a.key.split("/", 1)[1] for a in store.agent_rows()) == [
        "name:specialist",
        "name:triage",
    ]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_foreign_sender_is_not_told_to_turn_pygents_live_mode_on(name: str) -> None:
    store = folded(name)
    for panel in ("agents", "running"):
        note = store.unavailable(panel)
        assert note is not None
        assert "live mode" not in note
        assert "another framework's agents" in note


def _request(*spans: dict[str, Any]) -> bytes:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "hostile"}}]}
    scope = {"scope": {"name": "some-framework"}, "spans": list(spans)}
    return json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}).encode()


def _run(span_id: str, parent: str, agent: str, end: int) -> dict[str, Any]:
    return {
        "traceId": "ab" * 16,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": f"invoke_agent {agent[:20]}",
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": str(end),
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
            {"key": "gen_ai.agent.name", "value": {"stringValue": agent}},
            {"key": "gen_ai.agent.id", "value": {"stringValue": f"per-run-{span_id}"}},
        ],
    }


def test_runs_whose_parents_form_a_cycle_end_and_count_once() -> None:
    """A hostile sender's two runs, each the other's parent: folding ends, one run."""
    fleet = FleetModel(stale_after=1e9)
    a, b = "0a" * 8, "0b" * 8
    for span in (_run(a, b, "looped", 2000), _run(b, a, "looped", 3000)):
        fleet.ingest(decode("traces", _request(span), json_body=True, limits=Limits()))
    fleet.store.drain()
    assert runs(fleet.store) == [("looped", 1, 0)]


def test_a_huge_agent_name_is_cut_to_the_receiver_s_bound() -> None:
    fleet = FleetModel(stale_after=1e9)
    limits = Limits()
    span = _run("0c" * 8, "", "x" * 100_000, 2000)
    fleet.ingest(decode("traces", _request(span), json_body=True, limits=limits))
    fleet.store.drain()
    (agent,) = fleet.store.agent_rows()
    assert len(agent.name) <= limits.max_value
    assert agent.completed == 1
