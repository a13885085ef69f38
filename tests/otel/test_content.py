"""What captured content costs and how far it goes.

* ``content_max_length`` is at least 1, from the argument or the variable;
* serializing stops at that length, whatever the size of the value: arguments,
  results, streamed values and context item contents go through one budgeted dumper;
* exception messages, recorded by default as OpenTelemetry does, can be left out:
  ``capture_exception_message=False`` records the exception type only.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from awkward_values import ReprRaises, cycle
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from pygents import Agent, ContextItem, ContextQueue, Turn, tool
from pygents_otel import PygentsInstrumentor
from pygents_otel._dump import MAX_DEPTH, dump

SpansByName = Callable[[], dict[str, ReadableSpan]]
Instrument = Callable[..., PygentsInstrumentor]

MAX_LENGTH_ENV = "PYGENTS_OTEL_CONTENT_MAX_LENGTH"
EXCEPTION_MESSAGE_ENV = "OTEL_INSTRUMENTATION_PYGENTS_CAPTURE_EXCEPTION_MESSAGE"
SECRET = "hunter2-top-secret"
ARGUMENTS = "gen_ai.tool.call.arguments"
RESULT = "gen_ai.tool.call.result"
VALUE = "pygents.value"
CONTEXT_CONTENT = "pygents.context.content"


# -- content_max_length ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "variable", "error", "named"),
    [
        (-1, None, ValueError, "content_max_length=-1"),
        (0, None, ValueError, "content_max_length=0"),
        (None, "-1", ValueError, f"{MAX_LENGTH_ENV}=-1"),
        (None, "0", ValueError, f"{MAX_LENGTH_ENV}=0"),
        (None, "lots", ValueError, f"{MAX_LENGTH_ENV}='lots'"),
        (True, None, TypeError, "content_max_length must be an int, got bool"),
        ("100", None, TypeError, "content_max_length must be an int, got str"),
    ],
)
async def test_a_content_max_length_below_one_is_refused(
    instrument_with: Instrument,
    monkeypatch: pytest.MonkeyPatch,
    exporter: InMemorySpanExporter,
    argument: Any,
    variable: str | None,
    error: type[Exception],
    named: str,
) -> None:
    if variable is not None:
        monkeypatch.setenv(MAX_LENGTH_ENV, variable)
    options = {} if argument is None else {"content_max_length": argument}
    with pytest.raises(error) as raised:
        instrument_with(capture_content=True, **options)
    assert named in str(raised.value)
    assert "at least 1" in str(raised.value)
    instrumentor = PygentsInstrumentor()
    assert not instrumentor.is_instrumented_by_opentelemetry  # nothing half-done
    assert instrumentor.subscriber is None

    monkeypatch.delenv(MAX_LENGTH_ENV, raising=False)
    instrument_with(capture_content=True, content_max_length=10)

    @tool
    async def echo(text: str) -> str:
        return text

    await Turn(echo, args=["x" * 100_009]).returning()
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "execute_tool echo"]
    assert span.attributes[ARGUMENTS] == '{"args": …'  # ten characters, the ellipsis one
    assert span.attributes[RESULT] == '"xxxxxxxx…'


# -- the budgeted dumper ---------------------------------------------------------------------


class Counted:
    """Counts how often it was written out."""

    calls = 0

    def __repr__(self) -> str:
        Counted.calls += 1
        return "counted"


async def test_capture_stops_serializing_at_the_length_limit(
    instrument_with: Instrument,
    spans_by_name: SpansByName,
    pass_through: Callable[[Any], Awaitable[None]],
) -> None:
    instrument_with(capture_content=True)
    Counted.calls = 0
    huge = {f"key {i}": Counted() for i in range(200_000)}

    await pass_through(huge)

    # Eight dumps (two arguments, two results, four value events) of 2,048 characters
    # each write about a hundred entries; serializing everything would call repr()
    # 200,000 times per dump.
    assert 0 < Counted.calls < 2_000
    spans = spans_by_name()
    result = spans["execute_tool identity"].attributes[RESULT]
    assert isinstance(result, str)
    assert result.startswith('{"key 0": "counted", "key 1": "counted"')
    assert len(result) == 2048
    assert result.endswith("…")
    values = [
        e.attributes[VALUE] for e in spans["execute_tool relay"].events if VALUE in e.attributes
    ]
    assert len(values) == 2
    assert all(isinstance(v, str) and len(v) == 2048 for v in values)


async def test_context_item_contents_are_captured_through_the_same_limit(
    instrument_with: Instrument, spans_by_name: SpansByName
) -> None:
    instrument_with(capture_content=True, content_max_length=40)

    @tool
    async def note(text: str) -> AsyncIterator[ContextItem[str]]:
        yield ContextItem(text)

    agent = Agent("notes", "Keeps notes", [note], context_queue=ContextQueue(limit=5))
    await agent.put(Turn(note, args=["n" * 200_000]))
    assert [value async for _, value in agent.run()] == []

    events = spans_by_name()["invoke_agent notes"].events
    contents = {
        e.name: e.attributes[CONTEXT_CONTENT] for e in events if CONTEXT_CONTENT in e.attributes
    }
    appended = [{"content": "n" * 200_000, "description": None, "id": None}]
    expected = json.dumps(appended)[:39] + "…"
    assert contents == {
        "pygents.context_queue.before_append": expected,
        "pygents.context_queue.after_append": expected,
    }


@dataclass
class Point:
    x: int
    label: str


class BrokenMapping(Mapping[str, int]):
    def __getitem__(self, key: str) -> int:
        raise RuntimeError("no items")

    def __iter__(self) -> Any:
        raise RuntimeError("no keys")

    def __len__(self) -> int:
        return 1


def nested(depth: int) -> list[Any]:
    outer: list[Any] = []
    inner = outer
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return outer


JSON_VALUES = {
    "dict": {"a": 1, "b": [True, None, 2.5], "c": {"d": "é\n"}},
    "int keys": {1: "one", 2: "two"},
    "long string": "abc" * 10_000,
    "long list": list(range(100_000)),
    "tuple": (1, "two", 3.0),
}


@pytest.mark.parametrize("value", JSON_VALUES.values(), ids=JSON_VALUES.keys())
@pytest.mark.parametrize("budget", [1, 7, 50, 2048])
def test_the_dump_of_a_json_value_is_a_prefix_of_its_json(value: Any, budget: int) -> None:
    full = json.dumps(value, ensure_ascii=False)
    text = dump(value, budget)
    if len(full) <= budget:
        assert text == full
    else:
        assert text.endswith("…")
        assert len(text) == budget
        assert full.startswith(text[:-1])


ODD_VALUES: dict[str, tuple[Any, str]] = {
    "cycle": (cycle(), '[1, "<list (circular reference)>"]'),
    "set": ({3}, "[3]"),
    "deque": (deque([1, 2]), "[1, 2]"),
    "dataclass": (Point(1, "p"), '{"x": 1, "label": "p"}'),
    "bytes": (b"\x00a", "\"b'\\\\x00a'\""),
    "huge int": (10**5000, '"<int of 16610 bits>"'),
    "nan": (float("nan"), "NaN"),
    "repr raises": ({"r": ReprRaises()}, '{"r": "<ReprRaises (repr failed)>"}'),
    "odd key": ({(1, 2): 3}, '{"(1, 2)": 3}'),
    "broken mapping": (BrokenMapping(), '"<BrokenMapping (could not be serialized)>"'),
    "object": (object, "\"<class 'object'>\""),
}


@pytest.mark.parametrize(("value", "expected"), ODD_VALUES.values(), ids=ODD_VALUES.keys())
def test_odd_values_dump_to_short_placeholders(value: Any, expected: str) -> None:
    assert dump(value, 2048) == expected


def test_deep_nesting_stops_at_the_depth_limit() -> None:
    text = dump(nested(10_000), 100_000)
    assert text.count("[") == MAX_DEPTH
    assert '"<list nested too deep>"' in text


HOSTILE: dict[str, Any] = {
    "huge string": "x" * 1_000_000,
    "huge list": list(range(200_000)),
    "deep": nested(10_000),
    "wide dict": {f"key {i}": i for i in range(100_000)},
    "broken mapping": BrokenMapping(),
}


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("budget", [1, 2, 5, 32])
def test_a_cut_dump_fits_its_budget_ellipsis_included(value: Any, budget: int) -> None:
    text = dump(value, budget)
    assert len(text) <= budget
    assert text.endswith("…")


def test_a_huge_string_or_bytes_is_encoded_only_up_to_the_budget() -> None:
    assert dump("x" * 10_000_000, 5) == '"xxx…'
    assert dump(b"y" * 10_000_000, 5) == "\"b'y…"


# -- exception messages ---------------------------------------------------------------------


async def fail_with_the_secret_in_the_message() -> None:
    """An agent run whose tool fails with a message (and a chained one) quoting its
    argument, and with a note."""

    @tool
    async def login(password: str) -> str:
        try:
            raise KeyError(f"no user with password {password}")
        except KeyError as exc:
            error = ValueError(f"bad password {password}")
            error.add_note(f"note: {password}")
            raise error from exc

    agent = Agent("gate", "Checks passwords", [login])
    await agent.put(Turn(login, args=[SECRET]))
    with pytest.raises(ValueError, match="bad password"):
        async for _ in agent.run():
            pass


FAILED_SPANS = ("execute_tool login", "turn login", "invoke_agent gate")


def exception_event(span: ReadableSpan) -> dict[str, Any]:
    (event,) = [e for e in span.events if e.name == "exception"]
    return dict(event.attributes or {})


async def test_exception_messages_are_recorded_by_default(
    instrument_with: Instrument, spans_by_name: SpansByName
) -> None:
    instrument_with()
    await fail_with_the_secret_in_the_message()

    spans = spans_by_name()
    for name in FAILED_SPANS:
        span = spans[name]
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == f"ValueError: bad password {SECRET}"
        event = exception_event(span)
        assert event["exception.type"] == "ValueError"
        assert event["exception.message"] == f"bad password {SECRET}"
        stack = event["exception.stacktrace"]
        assert f"KeyError: 'no user with password {SECRET}'" in stack
        assert f"ValueError: bad password {SECRET}" in stack
        assert f"note: {SECRET}" in stack
        assert "direct cause" in stack


def capture_off_by_argument(instrument: Instrument, _: pytest.MonkeyPatch) -> None:
    instrument(capture_exception_message=False)


def capture_off_by_variable(instrument: Instrument, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EXCEPTION_MESSAGE_ENV, " False ")
    instrument()


@pytest.mark.parametrize("turn_off", [capture_off_by_argument, capture_off_by_variable])
async def test_exception_messages_can_be_left_out(
    instrument_with: Instrument,
    monkeypatch: pytest.MonkeyPatch,
    spans_by_name: SpansByName,
    turn_off: Callable[[Instrument, pytest.MonkeyPatch], None],
) -> None:
    turn_off(instrument_with, monkeypatch)
    await fail_with_the_secret_in_the_message()

    spans = spans_by_name()
    for name in FAILED_SPANS:
        span = spans[name]
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "ValueError"
        event = exception_event(span)
        assert event["exception.type"] == "ValueError"
        assert "exception.message" not in event
        stack = event["exception.stacktrace"]
        # The same frames and chain, every exception reduced to its type.
        assert "Traceback (most recent call last):" in stack
        assert "in login" in stack
        assert "\nKeyError\n" in stack
        assert "direct cause" in stack
        assert stack.endswith("\nValueError\n")
    everything = [str(v) for span in spans.values() for v in span.attributes.values()]
    everything += [span.status.description or "" for span in spans.values()]
    everything += [
        str(v) for span in spans.values() for e in span.events for v in e.attributes.values()
    ]
    assert everything
    assert [text for text in everything if SECRET in text] == []


async def test_a_capture_exception_message_variable_that_is_not_a_boolean_is_refused(
    instrument_with: Instrument, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(EXCEPTION_MESSAGE_ENV, "sometimes")
    with pytest.raises(ValueError, match=f"{EXCEPTION_MESSAGE_ENV}='sometimes'"):
        instrument_with()
    assert PygentsInstrumentor().subscriber is None


async def test_a_huge_exception_message_is_bounded(
    instrument_with: Instrument, spans_by_name: SpansByName
) -> None:
    instrument_with()

    @tool
    async def shout() -> None:
        raise RuntimeError("A" * 1_000_000)

    with pytest.raises(RuntimeError):
        await Turn(shout).returning()

    span = spans_by_name()["execute_tool shout"]
    event = exception_event(span)
    # Each cut to its limit, the ellipsis included (the rule of pygents._errors.cut).
    assert len(event["exception.message"]) == 1024
    assert event["exception.message"].endswith("…")
    assert len(event["exception.stacktrace"]) == 8192
    assert event["exception.stacktrace"].startswith("…")
    assert len(span.status.description or "") == 256
