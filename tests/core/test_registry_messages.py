"""What a registry says when a name is taken: its kind, with the right article."""

from __future__ import annotations

import pytest
from core_helpers import make_echo

from pygents import Agent
from pygents._errors import UnregisteredError
from pygents._registry import Registry


def test_a_second_agent_of_the_same_name_is_refused_as_an_agent() -> None:
    echo = make_echo()
    Agent("greeter", "the first", [echo])
    with pytest.raises(ValueError) as refused:
        Agent("greeter", "the second", [echo])
    message = str(refused.value)
    assert message.startswith("an agent named 'greeter' is already registered ("), message
    assert "give the new agent another name, or unregister the old one first" in message


@pytest.mark.parametrize(
    ("kind", "named"),
    [("agent", "an agent"), ("hook", "a hook"), ("tool", "a tool"), ("item", "an item")],
)
def test_every_kind_of_registry_names_itself_with_its_article(kind: str, named: str) -> None:
    registry = Registry[object](kind, UnregisteredError)
    registry.add("taken", object())
    with pytest.raises(ValueError, match=f"^{named} named 'taken' is already registered"):
        registry.add("taken", object())
