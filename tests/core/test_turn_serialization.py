"""Turn.to_dict() / Turn.from_dict() (SPEC §1.3 Serialization, §1.7 Errors)."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from typing import Any

import pytest
from core_helpers import noop_turn

from pygents import (
    HookRegistry,
    StopReason,
    Turn,
    TurnHook,
    UnregisteredHookError,
    UnregisteredToolError,
    hook,
    tool,
)

KEYS = {
    "uuid",
    "tool_name",
    "args",
    "kwargs",
    "metadata",
    "timeout",
    "tags",
    "hooks",
    "start_time",
    "end_time",
    "stop_reason",
    "output",
}


def json_round_trip(data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(json.dumps(data, allow_nan=False))
    return result


def parse_aware(text: Any) -> datetime:
    assert isinstance(text, str)
    parsed = datetime.fromisoformat(text)
    assert parsed.tzinfo is not None
    assert parsed.utcoffset() is not None
    return parsed


def valid_data(tool_name: str, **overrides: Any) -> dict[str, Any]:
    """A well-formed payload, as to_dict() would produce it, with some keys replaced."""
    data: dict[str, Any] = {
        "uuid": "3f2b8a9e-0000-4000-8000-000000000001",
        "tool_name": tool_name,
        "args": [],
        "kwargs": {},
        "metadata": {},
        "timeout": 60,
        "tags": [],
        "hooks": [],
        "start_time": None,
        "end_time": None,
        "stop_reason": None,
        "output": None,
    }
    data.update(overrides)
    return data


# -- to_dict -------------------------------------------------------------------------------


def test_to_dict_keys_of_a_fresh_turn() -> None:
    @tool
    async def fresh(a: int, b: str = "") -> None:
        pass

    turn = Turn(
        fresh, args=[1], kwargs={"b": "x"}, timeout=2.5, tags=["z", "a"], metadata={"m": [1]}
    )
    data = turn.to_dict()
    assert set(data) == KEYS
    assert data["uuid"] == turn.uuid
    assert data["tool_name"] == "fresh"
    assert data["args"] == [1]
    assert data["kwargs"] == {"b": "x"}
    assert data["metadata"] == {"m": [1]}
    assert data["timeout"] == 2.5
    assert sorted(data["tags"]) == ["a", "z"]
    assert data["hooks"] == []
    assert data["start_time"] is None
    assert data["end_time"] is None
    assert data["stop_reason"] is None
    assert data["output"] is None
    json.dumps(data, allow_nan=False)  # JSON-ready as returned


async def test_to_dict_after_a_run_has_iso_times_reason_and_output() -> None:
    @tool
    async def produce() -> dict[str, Any]:
        return {"ok": True, "items": [1, 2.5, None, "s"]}

    turn = Turn(produce)
    await turn.returning()
    data = turn.to_dict()
    start = parse_aware(data["start_time"])
    end = parse_aware(data["end_time"])
    assert start <= end
    assert start == turn.start_time
    assert end == turn.end_time
    assert data["stop_reason"] == "completed"
    assert data["output"] == {"ok": True, "items": [1, 2.5, None, "s"]}
    json.dumps(data, allow_nan=False)


async def test_to_dict_stop_reason_for_each_outcome() -> None:
    @tool
    async def broken() -> None:
        raise RuntimeError("x")

    turn = Turn(broken)
    with pytest.raises(RuntimeError):
        await turn.returning()
    assert turn.to_dict()["stop_reason"] == "error"


def test_to_dict_is_a_copy() -> None:
    @tool
    async def copied(d: dict[str, Any]) -> None:
        pass

    turn = Turn(copied, kwargs={"d": {"inner": [1]}}, metadata={"k": {"v": 1}})
    data = turn.to_dict()
    data["kwargs"]["d"]["inner"].append(2)
    data["metadata"]["k"]["v"] = 99
    assert turn.kwargs == {"d": {"inner": [1]}}
    assert turn.metadata == {"k": {"v": 1}}


def test_hooks_are_stored_by_type_and_name() -> None:
    turn = noop_turn()

    @turn.after_run
    async def note_after(turn: Turn, output: Any) -> None:
        pass

    @turn.on_complete
    async def note_complete(turn: Turn, stop_reason: StopReason) -> None:
        pass

    assert turn.to_dict()["hooks"] == [
        {"type": "TurnHook.AFTER_RUN", "name": "note_after"},
        {"type": "TurnHook.ON_COMPLETE", "name": "note_complete"},
    ]


# -- non-JSON values fail clearly ----------------------------------------------------------


class Opaque:
    pass


@pytest.mark.parametrize(
    ("build", "location"),
    [
        (lambda t: Turn(t, args=[lambda: 1]), "args[0]"),
        (lambda t: Turn(t, kwargs={"fn": lambda: 1}), "kwargs['fn']"),
        (lambda t: Turn(t, args=[1, {2, 3}]), "args[1]"),
        (lambda t: Turn(t, kwargs={"obj": Opaque()}), "kwargs['obj']"),
        (lambda t: Turn(t, kwargs={"x": math.nan}), "kwargs['x']"),
        (lambda t: Turn(t, kwargs={"x": math.inf}), "kwargs['x']"),
        (lambda t: Turn(t, kwargs={"d": {1: "one"}}), "kwargs['d']"),
        (lambda t: Turn(t, metadata={"when": datetime(2024, 1, 1)}), "metadata['when']"),
        (lambda t: Turn(t, metadata={"deep": {"list": [1, b"bytes"]}}), "metadata['deep']"),
        (lambda t: Turn(t, metadata={"nan": [math.nan]}), "metadata['nan']"),
    ],
)
def test_non_json_values_raise_type_error_naming_the_location(build: Any, location: str) -> None:
    @tool
    async def anything(*args: Any, **kwargs: Any) -> None:
        pass

    turn = build(anything)
    with pytest.raises(TypeError, match=re.escape(location)):
        turn.to_dict()


async def test_non_json_output_raises_type_error() -> None:
    @tool
    async def gives_a_set() -> set[int]:
        return {1, 2}

    turn = Turn(gives_a_set)
    await turn.returning()
    with pytest.raises(TypeError, match="output"):
        turn.to_dict()


def test_reference_argument_error_explains_the_fix() -> None:
    @tool
    async def by_ref(x: int) -> None:
        pass

    with pytest.raises(TypeError, match="reference"):
        Turn(by_ref, kwargs={"x": lambda: 1}).to_dict()


def test_self_referencing_values_fail_clearly() -> None:
    @tool
    async def cyclic() -> None:
        pass

    loop: dict[str, Any] = {"name": "loop"}
    loop["self"] = loop
    with pytest.raises((TypeError, ValueError), match="metadata"):
        Turn(cyclic, metadata={"graph": loop}).to_dict()


async def test_to_dict_while_running() -> None:
    snapshots: list[dict[str, Any]] = []

    @tool
    async def snapshotting() -> str:
        snapshots.append(turn.to_dict())
        return "done"

    turn = Turn(snapshotting, metadata={"k": "v"})
    await turn.returning()
    (running,) = snapshots
    assert set(running) == KEYS
    parse_aware(running["start_time"])
    assert running["end_time"] is None
    assert running["stop_reason"] is None
    assert running["output"] is None
    assert running["uuid"] == turn.uuid
    json.dumps(running, allow_nan=False)


# -- round trip ------------------------------------------------------------------------------


async def test_json_round_trip_preserves_everything() -> None:
    @tool
    async def compute(a: int, b: int = 0, *, label: str = "") -> dict[str, Any]:
        return {"sum": a + b, "label": label}

    turn = Turn(
        compute,
        args=[1],
        kwargs={"b": 2, "label": "x"},
        timeout=12.5,
        tags=["alpha", "beta"],
        metadata={"trace": "t-1", "nested": {"n": [1, 2]}},
    )

    @turn.after_run
    async def kept_after(turn: Turn, output: Any) -> None:
        pass

    @hook([TurnHook.BEFORE_RUN, TurnHook.ON_COMPLETE])
    async def kept_global(*args: Any) -> None:
        pass

    turn.hooks.append(kept_global)
    await turn.returning()

    restored = Turn.from_dict(json_round_trip(turn.to_dict()))
    assert restored.uuid == turn.uuid
    assert restored.tool is compute
    assert list(restored.args) == [1]
    assert restored.kwargs == {"b": 2, "label": "x"}
    assert restored.timeout == 12.5
    assert restored.tags == frozenset({"alpha", "beta"})
    assert isinstance(restored.tags, frozenset)
    assert restored.metadata == {"trace": "t-1", "nested": {"n": [1, 2]}}
    assert restored.hooks == [kept_after, kept_global]
    assert restored.hooks[0] is HookRegistry.get("kept_after")
    assert restored.start_time == turn.start_time
    assert restored.end_time == turn.end_time
    assert restored.start_time is not None
    assert restored.start_time.tzinfo is not None
    assert restored.stop_reason is StopReason.COMPLETED
    assert restored.output == {"sum": 3, "label": "x"}
    assert restored.to_dict() == turn.to_dict()
    assert not restored.is_running


def test_round_trip_of_a_fresh_turn() -> None:
    @tool
    async def idle() -> None:
        pass

    turn = Turn(idle)
    restored = Turn.from_dict(json_round_trip(turn.to_dict()))
    assert restored.uuid == turn.uuid
    assert restored.start_time is None
    assert restored.end_time is None
    assert restored.stop_reason is None
    assert restored.output is None
    assert restored.hooks == []
    assert restored.timeout == 60


@pytest.mark.parametrize("reason", list(StopReason))
def test_every_stop_reason_round_trips(reason: StopReason) -> None:
    @tool
    async def reasoned() -> None:
        pass

    data = valid_data("reasoned", stop_reason=reason.value)
    assert Turn.from_dict(data).stop_reason is reason


async def test_streamed_output_round_trips() -> None:
    @tool
    async def streams():
        yield {"i": 0}
        yield {"i": 1}

    turn = Turn(streams)
    assert [v async for v in turn.yielding()] == [{"i": 0}, {"i": 1}]
    restored = Turn.from_dict(json_round_trip(turn.to_dict()))
    assert restored.output == [{"i": 0}, {"i": 1}]
    assert restored.stop_reason is StopReason.COMPLETED


async def test_restored_turn_runs_with_its_hooks() -> None:
    seen: list[Any] = []

    @tool
    async def double(x: int) -> int:
        return 2 * x

    turn = Turn(double, kwargs={"x": 21})

    @turn.after_run
    async def saw_output(turn: Turn, output: int) -> None:
        seen.append(output)

    restored = Turn.from_dict(json_round_trip(turn.to_dict()))
    assert await restored.returning() == 42
    assert restored.stop_reason is StopReason.COMPLETED
    assert seen == [42]
    assert turn.stop_reason is None  # the original was not touched


async def test_restored_streaming_turn_runs() -> None:
    @tool
    async def countdown(n: int):
        for i in range(n, 0, -1):
            yield i

    restored = Turn.from_dict(json_round_trip(Turn(countdown, args=[3]).to_dict()))
    assert [v async for v in restored.yielding()] == [3, 2, 1]


async def test_subtool_scoped_names_round_trip() -> None:
    @tool
    async def parent() -> str:
        return "parent"

    @parent.subtool
    async def child() -> str:
        return "child"

    @child.subtool
    async def grandchild() -> str:
        return "grandchild"

    for sub, name in ((child, "parent.child"), (grandchild, "parent.child.grandchild")):
        data = json_round_trip(Turn(sub).to_dict())
        assert data["tool_name"] == name
        restored = Turn.from_dict(data)
        assert restored.tool is sub
        assert await restored.returning() == name.rsplit(".", 1)[-1]
    assert Turn.from_dict(valid_data("parent.child")).tool is child


# -- from_dict: bad input ----------------------------------------------------------------------


@pytest.mark.parametrize("data", [None, [], "turn", 42, [("tool_name", "x")]])
def test_from_dict_rejects_non_mappings(data: Any) -> None:
    with pytest.raises((TypeError, ValueError), match="Turn"):
        Turn.from_dict(data)


def test_from_dict_missing_tool_name() -> None:
    data = valid_data("unused")
    del data["tool_name"]
    with pytest.raises(ValueError, match="tool_name"):
        Turn.from_dict(data)


def test_from_dict_unknown_tool() -> None:
    with pytest.raises(UnregisteredToolError, match="vanished_tool"):
        Turn.from_dict(valid_data("vanished_tool"))


def test_from_dict_unknown_hook_name() -> None:
    @tool
    async def with_lost_hook() -> None:
        pass

    data = valid_data("with_lost_hook", hooks=[{"type": "TurnHook.AFTER_RUN", "name": "lost_hook"}])
    with pytest.raises(UnregisteredHookError, match="lost_hook"):
        Turn.from_dict(data)


@pytest.fixture
def job_and_after_run_hook() -> None:
    """Registers a tool ``job`` and a global ``TurnHook.AFTER_RUN`` hook ``only_after_run``."""

    @tool
    async def job() -> None:
        pass

    @hook(TurnHook.AFTER_RUN)
    async def only_after_run(turn: Turn, output: Any) -> None:
        pass


@pytest.mark.usefixtures("job_and_after_run_hook")
def test_from_dict_hook_registered_for_another_type() -> None:
    data = valid_data("job", hooks=[{"type": "TurnHook.ON_ERROR", "name": "only_after_run"}])
    with pytest.raises(ValueError, match="only_after_run"):
        Turn.from_dict(data)


@pytest.mark.parametrize(
    "hooks",
    [
        "after_run",
        [{"name": "only_after_run"}],
        [{"type": "TurnHook.AFTER_RUN"}],
        [{"type": "TurnHook.NOT_AN_EVENT", "name": "only_after_run"}],
        [{"type": "NoSuchHook.AFTER_RUN", "name": "only_after_run"}],
        ["TurnHook.AFTER_RUN"],
    ],
)
@pytest.mark.usefixtures("job_and_after_run_hook")
def test_from_dict_malformed_hook_entries(hooks: Any) -> None:
    with pytest.raises(ValueError):
        Turn.from_dict(valid_data("job", hooks=hooks))


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("tool_name", 5),
        ("tool_name", None),
        ("uuid", 5),
        ("args", "abc"),
        ("args", {"a": 1}),
        ("args", 3),
        ("kwargs", [1, 2]),
        ("kwargs", "a=1"),
        ("metadata", ["k"]),
        ("timeout", "60"),
        ("timeout", True),
        ("timeout", None),
        ("timeout", 0),
        ("timeout", -5),
        ("tags", "io"),
        ("tags", [1]),
        ("tags", {"a": 1}),
        ("stop_reason", "exploded"),
        ("stop_reason", "COMPLETED"),
        ("stop_reason", 3),
        ("start_time", "yesterday"),
        ("start_time", "2024-13-45T99:00:00+00:00"),
        ("start_time", 1700000000),
        ("end_time", "not a date"),
        ("start_time", "2024-01-01T00:00:00"),
        ("end_time", "2024-01-01T10:30:00.123456"),
        ("end_time", "9999-12-31T23:59:59-01:00"),
        ("start_time", "0001-01-01T00:00:00+01:00"),
        ("end_time", "9999-12-31T23:59:59.999999+00:00"),
    ],
)
def test_from_dict_rejects_bad_values(key: str, value: Any) -> None:
    @tool
    async def target_tool() -> None:
        pass

    data = valid_data("target_tool")
    data[key] = value
    with pytest.raises(ValueError, match=key):
        Turn.from_dict(data)


def test_from_dict_naive_datetime_message_asks_for_an_offset() -> None:
    @tool
    async def naive_target() -> None:
        pass

    with pytest.raises(ValueError, match=r"offset|timezone|UTC"):
        Turn.from_dict(valid_data("naive_target", start_time="2024-01-01T00:00:00"))


@pytest.mark.parametrize(
    "moment", ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"], ids=["late", "early"]
)
def test_from_dict_refuses_a_datetime_outside_the_years_utc_can_hold(moment: str) -> None:
    @tool
    async def out_of_range() -> None:
        pass

    with pytest.raises(ValueError, match=r"end_time.*between years 1 and 9999 in UTC"):
        Turn.from_dict(valid_data("out_of_range", end_time=moment))


@pytest.mark.parametrize(
    "moment",
    ["9999-12-31T23:59:59+01:00", "0001-01-01T00:00:00-01:00", "9999-12-31T23:59:58+00:00"],
)
def test_a_datetime_near_the_ends_of_the_range_round_trips(moment: str) -> None:
    @tool
    async def near_the_edge() -> None:
        pass

    restored = Turn.from_dict(valid_data("near_the_edge", start_time=moment, end_time=moment))
    data = json_round_trip(restored.to_dict())
    assert parse_aware(data["end_time"]) == datetime.fromisoformat(moment)
    assert restored.end_time == datetime.fromisoformat(moment)
    assert Turn.from_dict(data).to_dict() == data


def test_from_dict_accepts_other_utc_offsets() -> None:
    @tool
    async def offset_target() -> None:
        pass

    restored = Turn.from_dict(
        valid_data(
            "offset_target",
            start_time="2024-01-01T02:00:00+02:00",
            end_time="2024-01-01T00:00:01+00:00",
        )
    )
    assert restored.start_time is not None
    assert restored.end_time is not None
    assert (
        restored.start_time.timestamp()
        == datetime.fromisoformat("2024-01-01T00:00:00+00:00").timestamp()
    )
    assert (restored.end_time - restored.start_time).total_seconds() == 1


def test_from_dict_does_not_mutate_its_input() -> None:
    @tool
    async def untouched() -> None:
        pass

    data = valid_data("untouched", kwargs={"a": 1}, metadata={"m": 1})
    restored = Turn.from_dict(data)
    restored.metadata["new"] = True
    restored.metadata = {"replaced": True}
    assert data["metadata"] == {"m": 1}
    assert data["kwargs"] == {"a": 1}
