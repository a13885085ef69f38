"""Other frameworks' spans read by the conventions alone: the recordings of pydantic-ai
and of the OpenAI Agents SDK (under OpenTelemetry's and OpenInference's
instrumentations, `tests/frameworks/record.py`) decoded as the receiver decodes them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pygents_tui.feeders.otlp.genai import PYGENTS_SCOPE, Foreign, Role, read_foreign
from pygents_tui.listen import Limits, ReceivedSpan
from pygents_tui.listen.decode import ResourceInfo, decode
from pygents_tui.recording import Recording

RECORDINGS = Path(__file__).resolve().parents[2] / "frameworks" / "recordings"


def spans_of(name: str) -> list[ReceivedSpan]:
    found: list[ReceivedSpan] = []
    with Recording(RECORDINGS / name) as recording:
        while (line := recording.read()) is not None:
            batch = decode(line.signal, line.data, json_body=True, limits=Limits())
            found.extend(batch.spans)
    assert found
    return found


def read_all(name: str) -> list[tuple[ReceivedSpan, Foreign]]:
    return [(span, f) for span in spans_of(name) if (f := read_foreign(span)) is not None]


def test_pydantic_ai_runs_tools_and_model_calls_are_told_apart() -> None:
    read = read_all("pydantic_ai.jsonl")
    roles = Counter(foreign.role for _, foreign in read)
    assert roles[Role.RUN] == 3  # three runs, one invoke_agent each
    assert roles[Role.TOOL] >= 3
    assert roles[Role.MODEL] >= 3
    runs = [foreign for _, foreign in read if foreign.role is Role.RUN]
    assert {run.agent for run in runs} == {"weather_agent"}
    assert [run.failed for run in runs].count(True) == 1  # the run whose tool raised
    assert all(run.conversation for run in runs)  # pydantic-ai always names one
    failed = next(run for run in runs if run.failed)
    assert failed.error
    tools = {foreign.tool for _, foreign in read if foreign.role is Role.TOOL}
    assert "get_weather" in tools


@pytest.mark.parametrize("name", ["openai_agents_otel.jsonl", "openai_agents_openinference.jsonl"])
def test_the_agents_sdks_agents_and_the_handoff_target_are_runs_and_the_workflow_is_not(
    name: str,
) -> None:
    read = read_all(name)
    runs = [foreign for _, foreign in read if foreign.role is Role.RUN]
    assert {run.agent for run in runs} == {"triage", "specialist"}
    assert any(foreign.role is Role.WORKFLOW for _, foreign in read)
    assert any(foreign.role is Role.MODEL for _, foreign in read)
    assert any(foreign.role is Role.TOOL and foreign.tool == "get_weather" for _, foreign in read)


def test_openinference_sessions_are_conversations() -> None:
    read = read_all("openai_agents_openinference.jsonl")
    assert {foreign.conversation for _, foreign in read} != {None}


def span(scope: str = "x", status: str = "unset", **attributes: object) -> ReceivedSpan:
    return ReceivedSpan(
        resource=ResourceInfo("svc", "i", None, None),
        scope=scope,
        trace_id="1" * 32,
        span_id="2" * 16,
        parent_id=None,
        name="invoke_agent",
        kind="internal",
        start_ns=0,
        end_ns=1,
        status=status,
        status_message="boom" if status == "error" else "",
        attributes=attributes,  # type: ignore[arg-type]  # hostile values on purpose
        dropped_attributes=0,
        size=0,
    )


def test_pygents_own_spans_and_spans_of_no_convention_are_not_foreign() -> None:
    assert read_foreign(span(PYGENTS_SCOPE, **{"gen_ai.operation.name": "invoke_agent"})) is None
    assert read_foreign(span(**{"http.method": "GET"})) is None
    assert read_foreign(span(**{"gen_ai.operation.name": 7})) is None  # not a text


def test_a_hostile_operation_or_kind_reads_as_nothing_and_a_failure_keeps_its_reason() -> None:
    assert read_foreign(span(**{"gen_ai.operation.name": "x" * 10_000})) is None
    assert read_foreign(span(**{"openinference.span.kind": "\x1b[31mAGENT"})) is None
    failed = read_foreign(span(status="error", **{"gen_ai.operation.name": "execute_tool"}))
    assert failed is not None
    assert (failed.role, failed.failed, failed.error) == (Role.TOOL, True, "boom")
