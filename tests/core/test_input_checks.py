"""Messages that quote a user value quote only a bounded part of it."""

from __future__ import annotations

from typing import Any

from pygents import Agent, tool
from pygents._errors import brief

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
