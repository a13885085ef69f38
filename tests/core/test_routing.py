"""``agent.send()`` asks the process's routes first (the seam ``pygents.redis`` uses)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pygents import Agent, DecoratedTool, Turn, UnregisteredAgentError, tool
from pygents._routing import ROUTES


class Recorder:
    def __init__(self) -> None:
        self.delivered: list[tuple[str, Turn]] = []

    async def deliver(self, agent_name: str, turn: Turn) -> None:
        self.delivered.append((agent_name, turn))


@pytest.fixture
def router() -> Iterator[Recorder]:
    found = Recorder()
    try:
        yield found
    finally:
        for name in list(ROUTES.by_name):
            ROUTES.discard(name, ROUTES.by_name[name])
        ROUTES.fallback = None


@pytest.fixture
def jot() -> DecoratedTool[..., None]:
    """A tool defined per test (the registries are restored after each test)."""

    @tool()
    async def jot(note: str) -> None:
        """Writes a note down."""

    return jot


async def test_a_routed_name_goes_to_its_router_even_if_an_agent_of_that_name_is_here(
    router: Recorder, jot: DecoratedTool[..., None]
) -> None:
    sender = Agent("sender", "Sends", [jot])
    here = Agent("served", "Served from a mailbox", [jot])
    ROUTES.add("served", router)
    turn = Turn(jot, args=["hi"])

    await sender.send("served", turn)

    assert router.delivered == [("served", turn)]
    assert here.queue_depth == 0


async def test_the_fallback_takes_only_names_not_registered_here(
    router: Recorder, jot: DecoratedTool[..., None]
) -> None:
    sender = Agent("sender", "Sends", [jot])
    local = Agent("local", "Here", [jot])
    ROUTES.fallback = router
    away = Turn(jot, args=["away"])

    await sender.send("remote", away)
    await sender.send("local", Turn(jot, args=["here"]))

    assert router.delivered == [("remote", away)]
    assert local.queue_depth == 1


async def test_without_routes_an_unknown_name_is_still_an_error(
    jot: DecoratedTool[..., None],
) -> None:
    assert not ROUTES
    sender = Agent("sender", "Sends", [jot])
    with pytest.raises(UnregisteredAgentError, match="nobody"):
        await sender.send("nobody", Turn(jot, args=["x"]))


def test_discard_removes_a_route_only_if_it_is_still_the_same_router(router: Recorder) -> None:
    other = Recorder()
    ROUTES.add("a", router)
    ROUTES.discard("a", other)
    assert ROUTES.router_for("a", registered_here=False) is router
    ROUTES.discard("a", router)
    assert ROUTES.router_for("a", registered_here=False) is None
