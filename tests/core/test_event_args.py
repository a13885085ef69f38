"""Every hook event declares its argument names once, and subscribers read them by name."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from event_scenario import ALL_EVENTS, ENUMS, scenario

from pygents import (
    AgentHook,
    ContextPoolHook,
    ContextQueueHook,
    Event,
    HookType,
    StopReason,
    ToolHook,
    Turn,
    TurnHook,
)
from pygents.testing import RecordingSubscriber

HOOKS_PAGE = Path(__file__).parents[2] / "docs" / "concepts" / "hooks.md"


@pytest.fixture
async def every_event() -> RecordingSubscriber:
    """Everything a subscriber sees of the scenario that fires every event."""
    recorder = RecordingSubscriber()
    with recorder.subscribed():
        await scenario()
    return recorder


def test_the_scenario_fires_every_hook_event(every_event: RecordingSubscriber) -> None:
    assert set(every_event.types()) == set(ALL_EVENTS)


@pytest.mark.parametrize("member", ALL_EVENTS, ids=str)
def test_each_event_passes_exactly_the_arguments_it_declares(
    every_event: RecordingSubscriber, member: HookType
) -> None:
    fired = every_event.of(member)
    assert fired
    for event in fired:
        if member.arg_names is None:  # BEFORE_INVOKE: the tool's own arguments
            assert member is ToolHook.BEFORE_INVOKE
            assert (event.args, dict(event.kwargs)) == (tuple(event.turn.args), event.turn.kwargs)
            continue
        positional = len(member.arg_names) - len(member.keyword_names)
        assert len(event.args) == positional
        assert tuple(event.kwargs) == member.keyword_names
        for index, name in enumerate(member.arg_names):
            expected = event.args[index] if index < positional else event.kwargs[name]
            assert event[name] is expected
            assert event.get(name, "default") is expected


def test_named_arguments_are_the_objects_the_names_say(
    every_event: RecordingSubscriber,
) -> None:
    (complete, *_) = every_event.of(TurnHook.ON_COMPLETE)
    assert isinstance(complete["turn"], Turn)
    assert complete["stop_reason"] is StopReason.COMPLETED
    tool_error = every_event.of(ToolHook.ON_ERROR)[0]  # the next is the timed-out tool's
    turn_error = every_event.of(TurnHook.ON_ERROR)[0]
    assert isinstance(tool_error["exc"], RuntimeError)
    assert turn_error["exception"] is tool_error["exc"]
    (_, appended) = every_event.of(ContextQueueHook.AFTER_APPEND)  # two appended, one kept
    assert [item.content for item in appended["appended_items"]] == ["b", "c"]
    assert [item.content for item in appended["current"]] == ["c"]
    (evicted,) = every_event.of(ContextPoolHook.ON_EVICT)
    assert evicted["item"].id == "x"
    (*_, before_invoke) = every_event.of(ToolHook.BEFORE_INVOKE)  # the turn given kwargs
    assert before_invoke["x"] == 2  # the tool's own argument, by its parameter name


def test_the_declared_names_are_public_on_each_member() -> None:
    assert TurnHook.AFTER_RUN.arg_names == ("turn", "output")
    assert AgentHook.ON_TURN_VALUE.arg_names == ("agent", "turn", "value")
    assert ToolHook.BEFORE_INVOKE.arg_names is None
    assert ToolHook.ON_ERROR.arg_names == ("exc",)
    assert ToolHook.ON_ERROR.keyword_names == ("exc",)
    assert TurnHook.ON_ERROR.keyword_names == ()


def test_declaring_names_keeps_the_values_and_identity_hashing() -> None:
    assert TurnHook.AFTER_RUN.value == "after_run"
    assert TurnHook("after_run") is TurnHook.AFTER_RUN
    assert TurnHook.ON_ERROR != ToolHook.ON_ERROR
    for member in ALL_EVENTS:
        assert hash(member) == object.__hash__(member)
        assert member.value == member.name.lower()


def test_get_returns_the_default_for_an_argument_the_event_does_not_have() -> None:
    before_turn = Event(AgentHook.BEFORE_TURN, None, ("agent",))
    assert before_turn.get("turn") is None
    assert before_turn.get("turn", "none yet") == "none yet"


def test_an_unknown_name_is_a_key_error_naming_the_event_and_its_arguments() -> None:
    event = Event(TurnHook.AFTER_RUN, None, ("turn", "output"))
    with pytest.raises(KeyError) as caught:
        event["outptu"]
    message = str(caught.value)
    assert "TurnHook.AFTER_RUN has no argument 'outptu'" in message
    assert "(turn, output)" in message
    assert "event['turn']" in message


def test_an_unknown_tool_argument_names_the_keyword_arguments_there_are() -> None:
    event = Event(ToolHook.BEFORE_INVOKE, None, (1,), {"query": "q"})
    assert event["query"] == "q"
    with pytest.raises(KeyError) as caught:
        event["x" * 10_000]
    message = str(caught.value)
    assert "ToolHook.BEFORE_INVOKE has no keyword argument" in message
    assert "the tool's own arguments" in message
    assert "['query']" in message
    assert len(message) < 300  # the unknown name is shown bounded


# -- the hook tables in the docs ---------------------------------------------------------


def documented_arguments() -> dict[HookType, tuple[str, ...] | None]:
    """The argument column of docs/concepts/hooks.md's tables, per member.

    ``(turn, output)`` gives names; ``(exc=exception)`` is a keyword argument named
    ``exc``; a row without a parenthesised list of names is the tool's own arguments.
    """
    by_enum = {enum.__name__: enum for enum in ENUMS}
    found: dict[HookType, tuple[str, ...] | None] = {}
    enum: Any = None
    for line in HOOKS_PAGE.read_text(encoding="utf-8").splitlines():
        heading = re.fullmatch(r"### `(\w+)`", line)
        if heading:
            enum = by_enum.get(heading.group(1))
            continue
        if enum is None or not line.startswith("| `"):
            continue
        members, _when, arguments = line.strip("|").split(" | ")
        names = re.fullmatch(r"`\(([\w=, ]+)\)`.*", arguments.strip())
        parsed = None if names is None else tuple(n.strip() for n in names.group(1).split(","))
        for name in re.findall(r"`(\w+)`", members):
            assert enum[name] not in found, f"{enum.__name__}.{name} is in the tables twice"
            found[enum[name]] = parsed
    return found


def test_the_hook_tables_in_the_docs_list_each_events_declared_arguments() -> None:
    documented = documented_arguments()
    assert set(documented) == set(ALL_EVENTS)
    for member, names in documented.items():
        if member.arg_names is None:
            assert names is None, f"{member}: document it as the tool's own arguments"
            continue
        assert names is not None, f"{member}: document its arguments as ({', '.join(names or ())})"
        keyword = tuple(n.partition("=")[0] for n in names if "=" in n)
        assert tuple(n.partition("=")[0] for n in names) == member.arg_names, member
        assert keyword == member.keyword_names, member
