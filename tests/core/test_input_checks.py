"""Bad values are refused where they come in, with short messages.

A value that would only fail later (a timeout the event loop cannot schedule, a
pool id that cannot be serialized) is refused by the constructor; a message that
quotes a user value quotes only a bounded part of it.
"""

from __future__ import annotations

from typing import Any

import pytest

from pygents import Agent, ContextItem, ContextPool, Turn, tool
from pygents._enums import parse_hook_type
from pygents._errors import brief
from pygents._turn import MAX_TIMEOUT

# -- bounded reprs -------------------------------------------------------------------------


def test_brief_keeps_a_megabyte_string_to_its_limit_with_both_ends() -> None:
    text = brief("a" + "x" * 1_000_000 + "z", 60)
    assert len(text) <= 60
    assert text.startswith("'ax")
    assert text.endswith("xz'")


def test_brief_describes_an_int_too_long_to_print_instead_of_failing() -> None:
    assert brief(10**5000) == "<int of about 5001 digits>"
    assert brief(12345) == "12345"


def test_brief_shows_the_first_keys_of_a_dict_in_insertion_order_without_sorting() -> None:
    unsortable: dict[Any, int] = {"b": 1, 3: 2, "a": 3}
    assert brief(unsortable) == "{'b': 1, 3: 2, 'a': 3}"
    big = {f"key{i}": "v" * 1000 for i in range(200_000)}
    text = brief(big)
    assert len(text) <= 80
    assert text.startswith("{'key0': ")


def test_brief_bounds_subclasses_of_built_in_types_too() -> None:
    class Name(str):
        pass

    class Table(dict[str, int]):
        pass

    assert len(brief(Name("n" * 1_000_000))) <= 80
    assert len(brief(Table({str(i): i for i in range(100_000)}))) <= 80


def test_brief_survives_a_broken_repr() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    assert "Broken" in brief(Broken())
    assert "Broken" in brief([Broken()])


def test_an_agent_with_a_huge_name_has_a_short_repr() -> None:
    @tool()
    async def noop() -> None:
        return None

    agent = Agent("n" * 1_000_000, "", [noop])
    assert len(repr(agent)) < 120


async def test_putting_a_foreign_turn_names_a_bounded_agent_and_at_most_ten_tools() -> None:
    made = []
    for i in range(30):

        async def fn() -> None:
            return None

        fn.__name__ = fn.__qualname__ = f"t{i:02}"
        made.append(tool()(fn))

    @tool()
    async def stranger() -> None:
        return None

    agent = Agent("n" * 1_000_000, "", made)
    with pytest.raises(ValueError, match=r"'t00', 't01', .*'t09', \.\.\. \(20 more\)") as info:
        await agent.put(Turn(stranger))
    assert len(str(info.value)) < 400
    assert "stranger" in str(info.value)


def test_an_unknown_hook_type_is_quoted_briefly() -> None:
    with pytest.raises(ValueError, match=r"unknown hook type 'TurnHook\.x") as info:
        parse_hook_type("TurnHook." + "x" * 1_000_000)
    assert len(str(info.value)) < 300


def test_a_plain_function_with_a_huge_name_is_quoted_briefly_by_tool() -> None:
    def plain() -> None:
        return None

    plain.__name__ = plain.__qualname__ = "p" * 1_000_000
    with pytest.raises(TypeError, match="is a plain function") as info:
        tool()(plain)
    assert len(str(info.value)) < 300


# -- timeouts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "timeout",
    [10**400, 1e300, MAX_TIMEOUT + 1, float(MAX_TIMEOUT) * 2],
    ids=["int-10**400", "1e300", "max+1", "2*max"],
)
def test_a_timeout_above_the_maximum_is_refused_when_the_turn_is_built(timeout: float) -> None:
    @tool()
    async def patient() -> int:
        return 1

    with pytest.raises(ValueError, match="at most 1_000_000_000") as info:
        Turn(patient, timeout=timeout)
    assert len(str(info.value)) < 300

    turn = Turn(patient)
    with pytest.raises(ValueError, match="at most"):
        turn.timeout = timeout
    assert turn.timeout == 60


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), float("-inf")])
def test_a_timeout_that_is_not_positive_and_finite_is_refused(timeout: float) -> None:
    @tool()
    async def patient() -> int:
        return 1

    with pytest.raises(ValueError, match="positive"):
        Turn(patient, timeout=timeout)


@pytest.mark.parametrize("seconds", [MAX_TIMEOUT, float(MAX_TIMEOUT)], ids=["int", "float"])
async def test_the_maximum_timeout_runs_in_every_driver(seconds: float) -> None:
    @tool()
    async def answer() -> int:
        return 42

    @tool()
    async def stream() -> Any:
        yield 1
        yield 2

    assert await Turn(answer, timeout=seconds).returning() == 42
    assert [v async for v in Turn(stream, timeout=seconds).yielding()] == [1, 2]
    agent = Agent("patient", "", [answer, stream])
    await agent.put(Turn(answer, timeout=seconds))
    await agent.put(Turn(stream, timeout=seconds))
    assert [value async for _, value in agent.run()] == [42, 1, 2]


def test_a_timeout_above_the_maximum_is_refused_by_from_dict() -> None:
    @tool()
    async def restored() -> int:
        return 1

    data = Turn(restored).to_dict()
    data["timeout"] = 10**400
    with pytest.raises(ValueError, match=r"^Turn\.from_dict\(\): .*at most") as info:
        Turn.from_dict(data)
    assert len(str(info.value)) < 300


# -- context item ids ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", [5, 1.5, b"id", ("a",), object()], ids=["int", "float", "bytes", "tuple", "object"]
)
def test_a_context_item_id_that_is_not_a_string_is_refused_when_the_item_is_made(
    bad: object,
) -> None:
    with pytest.raises(TypeError, match=r"ContextItem\(id=\.\.\.\) must be a string or None"):
        ContextItem(content="c", description="d", id=bad)  # type: ignore[arg-type]  # the point


def test_a_context_item_description_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(TypeError, match="description"):
        ContextItem(content="c", description=["not", "text"], id="x")  # type: ignore[arg-type]  # the point


async def test_a_pool_therefore_holds_only_ids_it_can_serialize_and_restore() -> None:
    pool: ContextPool[str] = ContextPool()
    await pool.add(ContextItem(content="c", description="d", id="5"))
    restored = ContextPool.from_dict(pool.to_dict())
    assert restored.get("5").content == "c"
    with pytest.raises(TypeError):
        await pool.add(ContextItem(content="c", description="d", id=5))  # type: ignore[arg-type]  # the point
    assert len(pool) == 1


def test_the_id_error_quotes_a_huge_value_briefly() -> None:
    with pytest.raises(TypeError) as info:
        ContextItem(content="c", id=["x" * 1_000_000])  # type: ignore[arg-type]  # the point
    assert len(str(info.value)) < 300
