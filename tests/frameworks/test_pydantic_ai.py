"""pydantic-ai's own instrumentation, as the foreign-agent feeder will read it: what
one run of `harness.run_pydantic_ai` sends, and where its tokens are."""

from __future__ import annotations

import harness
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode
from shapes import attr, by_trace, children, named, root, status

Run = tuple[list[str], tuple[ReadableSpan, ...]]


def test_the_scripted_pydantic_ai_runs_succeed_retry_and_fail_as_written(
    pydantic_ai_run: Run,
) -> None:
    outcomes, spans = pydantic_ai_run
    assert outcomes == ["done: sunny in Paris", "done: try again later", "error: RuntimeError"]
    assert len(by_trace(spans)) == 3


def test_a_pydantic_ai_run_is_one_invoke_agent_span_over_its_chat_and_tool_spans(
    pydantic_ai_run: Run,
) -> None:
    _, spans = pydantic_ai_run
    first = by_trace(spans)[0]
    top = root(first)
    assert top.name == "invoke_agent weather_agent"
    assert top.kind is SpanKind.INTERNAL
    assert attr(top, "gen_ai.operation.name") == "invoke_agent"
    assert attr(top, "gen_ai.agent.name") == "weather_agent"
    assert len(named(first, "invoke_agent weather_agent")) == 1  # not nested in this version
    assert [(s.name, s.kind) for s in children(top, first)] == [
        ("chat fake-model", SpanKind.CLIENT),
        ("execute_tool get_weather", SpanKind.INTERNAL),
        ("chat fake-model", SpanKind.CLIENT),
    ]
    (tool,) = named(first, "execute_tool get_weather")
    assert attr(tool, "gen_ai.tool.name") == "get_weather"
    assert attr(tool, "gen_ai.tool.call.id") == "call_get_weather"
    assert attr(tool, "gen_ai.tool.call.arguments") == '{"city":"Paris"}'
    assert attr(tool, "gen_ai.tool.call.result") == "sunny in Paris"


def test_the_run_id_is_on_every_span_of_a_pydantic_ai_run_and_new_each_run(
    pydantic_ai_run: Run,
) -> None:
    _, spans = pydantic_ai_run
    ids = [{attr(s, "gen_ai.agent.call.id") for s in run} for run in by_trace(spans)]
    assert ids == [{"run-1"}, {"run-2"}, {"run-3"}]


def test_pydantic_ai_tokens_are_per_call_on_chat_spans_and_summed_by_other_names_on_agent_spans(
    pydantic_ai_run: Run,
) -> None:
    _, spans = pydantic_ai_run
    usage = harness.PYDANTIC_AI_USAGE
    for run in by_trace(spans):
        chats = [s for s in run if attr(s, "gen_ai.operation.name") == "chat"]
        for chat in chats:
            assert attr(chat, "gen_ai.usage.input_tokens") == usage["input_tokens"]
            assert attr(chat, "gen_ai.usage.output_tokens") == usage["output_tokens"]
            assert attr(chat, "gen_ai.usage.cache_read.input_tokens") == usage["cache_read_tokens"]
            assert attr(chat, "gen_ai.provider.name") == "function"
            assert attr(chat, "gen_ai.request.model") == "fake-model"
        top = root(run)
        # The agent span never carries gen_ai.usage.*: its sums are gen_ai.aggregated_usage.*.
        assert not [k for k in top.attributes or {} if k.startswith("gen_ai.usage.")]
        assert attr(top, "gen_ai.aggregated_usage.input_tokens") == usage["input_tokens"] * len(
            chats
        )
        assert attr(top, "gen_ai.aggregated_usage.output_tokens") == usage["output_tokens"] * len(
            chats
        )


def test_a_pydantic_ai_tool_that_asks_for_a_retry_is_an_error_span_in_a_run_that_succeeds(
    pydantic_ai_run: Run,
) -> None:
    _, spans = pydantic_ai_run
    second = by_trace(spans)[1]
    (tool,) = named(second, "execute_tool flaky")
    assert status(tool) is StatusCode.ERROR
    assert [e.name for e in tool.events] == ["exception"]
    assert status(root(second)) is StatusCode.UNSET


def test_a_failed_pydantic_ai_run_is_an_error_agent_span_with_the_exception(
    pydantic_ai_run: Run,
) -> None:
    _, spans = pydantic_ai_run
    third = by_trace(spans)[2]
    top = root(third)
    assert status(top) is StatusCode.ERROR
    assert top.status.description == "RuntimeError: the weather service is down"
    (event,) = top.events
    assert event.name == "exception"
    assert (event.attributes or {})["exception.type"] == "RuntimeError"
    (tool,) = named(third, "execute_tool broken")
    assert status(tool) is StatusCode.ERROR


def test_every_pydantic_ai_span_carries_the_conversation_id(pydantic_ai_run: Run) -> None:
    _, spans = pydantic_ai_run
    assert {attr(s, "gen_ai.conversation.id") for s in spans} == {harness.CONVERSATION}
