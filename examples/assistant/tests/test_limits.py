"""Model-controlled arguments are checked before anything runs, and every message is
bounded: steps, model calls, wall time (an injected clock) and failed calls."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

import pytest

from assistant.agent import (
    MAX_COMMAND_TIMEOUT,
    Event,
    Limits,
)
from assistant.model import Message, Reply, ScriptedModel
from pygents import ScopeKind
from pygents.testing import RecordingSubscriber

from .session_models import Clock, Sessions, answers, assert_well_formed, call, finish


def looping(
    tool: str = "list_files", clock: Clock | None = None, **arguments: Any
) -> ScriptedModel:
    """A model that never calls stop: one call of ``tool`` per reply, each ``clock``
    moving 100 s on."""
    numbers = itertools.count(1)

    def step(messages: Sequence[Message]) -> Reply:
        if clock is not None:
            clock.now += 100
        return Reply("", (call(next(numbers), tool, **arguments),))

    return ScriptedModel(step)


# -- arguments ---------------------------------------------------------------------------

TIMEOUT_TYPE = "timeout: {!r} is not of type 'number'"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("abc", TIMEOUT_TYPE.format("abc")),
        (None, TIMEOUT_TYPE.format(None)),
        ("nan", TIMEOUT_TYPE.format("nan")),
        ("inf", TIMEOUT_TYPE.format("inf")),
        (True, TIMEOUT_TYPE.format(True)),
        (-100, "timeout: -100 is less than or equal to the minimum of 0"),
        (0, "timeout: 0 is less than or equal to the minimum of 0"),
        (1e9, "timeout: 1000000000.0 is greater than the maximum of 600.0"),
        (float("nan"), "timeout: must be a finite number"),
        (float("inf"), "timeout: must be a finite number"),
        (float("-inf"), "timeout: must be a finite number"),
    ],
)
async def test_a_bad_timeout_is_answered_as_an_error_and_the_command_never_runs(
    new_session: Sessions, value: object, problem: str
) -> None:
    model = ScriptedModel(
        [
            Reply("", (call(1, "bash", command="touch ran", timeout=value),)),
            Reply("", (call(2, "stop", summary="gave up"),)),
        ]
    )
    session = new_session(model)
    events = await finish(session, "run something")
    assert answers(session)["c1"] == f"error: invalid arguments for bash: {problem}"
    assert session.summary == "gave up"
    assert events[-1].kind == "done"
    assert await session.runtime.list_files() == []


@pytest.mark.parametrize(
    ("tool", "arguments", "problem"),
    [
        ("write_file", {"path": "x"}, "arguments: 'content' is a required property"),
        (
            "read_file",
            {"path": "x", "mode": "rb"},
            "arguments: Additional properties are not allowed ('mode' was unexpected)",
        ),
        ("read_file", {"path": 7}, "path: 7 is not of type 'string'"),
        ("read_file", {"path": ""}, "path: '' should be non-empty"),
        ("bash", {"command": "ls", "conversation": "x"}, "('conversation' was unexpected)"),
        ("list_files", {"_raw": "{not json"}, "the arguments are not valid JSON: '{not json'"),
        ("list_files", ["a"], "the arguments must be a JSON object, got list"),
    ],
)
async def test_arguments_not_matching_the_schema_are_answered_with_what_is_wrong(
    new_session: Sessions, tool: str, arguments: Any, problem: str
) -> None:
    bad = call(1, tool)
    bad = type(bad)(bad.id, bad.name, arguments)
    model = ScriptedModel([Reply("", (bad,)), Reply("", (call(2, "stop", summary="ok"),))])
    session = new_session(model)
    await finish(session, "try")
    answer = answers(session)["c1"]
    assert answer.startswith(f"error: invalid arguments for {tool}: ")
    assert problem in answer


async def test_an_error_message_never_embeds_a_huge_argument_whole(
    new_session: Sessions,
) -> None:
    model = ScriptedModel(
        [
            Reply("", (call(1, "bash", command="ls", timeout="9" * 100_000),)),
            Reply("", (call(2, "stop"),)),
        ]
    )
    session = new_session(model)
    await finish(session, "try")
    assert len(answers(session)["c1"]) < 300


async def test_the_timeout_cap_is_offered_to_the_model_and_accepted_at_the_cap(
    new_session: Sessions,
) -> None:
    model = ScriptedModel(
        [
            Reply("", (call(1, "bash", command="echo capped", timeout=MAX_COMMAND_TIMEOUT),)),
            Reply("", (call(2, "stop"),)),
        ]
    )
    session = new_session(model)
    await finish(session, "run")
    assert answers(session)["c1"] == "[exit code 0]\ncapped\n"
    bash = next(t for t in model.calls[0][1] if t["function"]["name"] == "bash")
    parameters = bash["function"]["parameters"]
    assert parameters["properties"]["timeout"]["maximum"] == MAX_COMMAND_TIMEOUT == 600
    assert parameters["additionalProperties"] is False
    assert "conversation" not in json.dumps(parameters)


# -- limits ------------------------------------------------------------------------------


async def test_a_model_that_never_stops_is_ended_by_the_step_limit(
    new_session: Sessions,
) -> None:
    model = looping()
    session = new_session(model, limits=Limits(max_steps=5))
    events = await finish(session, "loop")
    text = "the steps limit was reached (5 tool calls per message; Limits.max_steps)"
    assert [e for e in events if e.kind == "limit"] == [Event("limit", text, session.name)]
    assert events[-1] == Event("done", f"stopped: {text}", session.name)
    assert session.outcome is not None
    assert (session.outcome.reason, session.outcome.limit) == ("limit", "steps")
    assert len(model.calls) == 6
    results = answers(session)
    assert [results[f"c{n}"] for n in range(1, 6)] == ["(empty)"] * 5
    assert results["c6"] == f"not run: {text}"
    assert session.agent.turns == []
    assert_well_formed([item.content for item in session.memory.items])


async def test_the_model_call_limit_ends_the_run_after_that_many_calls(
    new_session: Sessions,
) -> None:
    model = looping()
    session = new_session(model, limits=Limits(max_model_calls=3))
    events = await finish(session, "loop")
    assert session.outcome is not None
    assert session.outcome.limit == "model_calls"
    assert len(model.calls) == 3
    assert list(answers(session).values()) == ["(empty)"] * 3
    assert [e.kind for e in events][-2:] == ["limit", "done"]
    assert session.agent.turns == []


async def test_the_wall_time_limit_ends_the_run_by_the_sessions_clock(
    new_session: Sessions,
) -> None:
    clock = Clock()
    model = looping(clock=clock)  # each model call takes "100 s"
    session = new_session(model, limits=Limits(max_seconds=250), clock=clock)
    events = await finish(session, "loop")
    assert session.outcome is not None
    assert session.outcome.limit == "wall_time"
    assert len(model.calls) == 3
    assert answers(session)["c3"].startswith(
        "not run: the wall_time limit was reached (250 seconds"
    )
    assert events[-2].kind == "limit"
    assert session.agent.turns == []
    # the next message has a fresh budget
    clock.now += 10_000
    await finish(session, "again")
    assert len(model.calls) == 6


async def test_each_turns_timeout_is_cut_to_the_time_left(
    new_session: Sessions, recorder: RecordingSubscriber
) -> None:
    clock = Clock()

    def step(messages: Sequence[Message]) -> Reply:
        clock.now += 240  # the model took 240 of the 250 s
        if len(messages) > 2:
            return Reply("", (call(2, "stop"),))
        return Reply("", (call(1, "bash", command="true", timeout=100),))

    session = new_session(ScriptedModel(step), limits=Limits(max_seconds=250), clock=clock)
    await finish(session, "run")
    (bash_turn,) = [
        s.target for s in recorder.started(ScopeKind.TURN) if s.target.tool.name == "bash"
    ]
    assert bash_turn.timeout == pytest.approx(10)


async def test_too_many_failed_calls_end_the_run(new_session: Sessions) -> None:
    model = looping("read_file", path="missing.txt")
    session = new_session(model, limits=Limits(max_errors=2))
    await finish(session, "read")
    assert session.outcome is not None
    assert session.outcome.limit == "errors"
    assert len(model.calls) == 3
    # The runtime reports a missing file as MissingFileError (a FileNotFoundError).
    assert all("MissingFileError" in answer for answer in answers(session).values())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_steps": 0}, "max_steps must be a positive int"),
        ({"max_model_calls": 2.5}, "max_model_calls must be a positive int"),
        ({"max_errors": True}, "max_errors must be a positive int"),
        ({"max_seconds": float("nan")}, "max_seconds must be a positive finite number"),
        ({"max_seconds": -1}, "max_seconds must be a positive finite number"),
    ],
)
def test_limits_with_bad_values_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Limits(**options)
