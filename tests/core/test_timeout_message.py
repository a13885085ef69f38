"""The message of a turn's timeout, as a newcomer reads it: which tool, how long, and
how to give it more time, without wording that reads as Python's ``raise``."""

from __future__ import annotations

import asyncio

import pytest

from pygents import Agent, DecoratedTool, Turn, TurnTimeoutError, tool


@pytest.fixture
def dawdle() -> DecoratedTool[[], None]:
    """A tool that never returns, made per test (the isolation fixture forgets it)."""

    @tool()
    async def dawdle() -> None:
        await asyncio.Event().wait()  # never set: only the turn's deadline ends it

    return dawdle


async def test_a_timeout_names_the_tool_and_the_timeout_and_says_how_to_allow_more_time(
    dawdle: DecoratedTool[[], None],
) -> None:
    turn = Turn(dawdle, timeout=0.05)
    with pytest.raises(TurnTimeoutError) as caught:
        await turn.returning()
    assert str(caught.value) == (
        "turn of tool 'dawdle' timed out after 0.05 s; give it more time with "
        "Turn(timeout=...), or make 'dawdle' (or the turn's hooks) faster"
    )


async def test_a_timeout_out_of_an_agent_run_reads_the_same(
    dawdle: DecoratedTool[[], None],
) -> None:
    async with Agent("dawdler", "waits forever", [dawdle]) as agent:
        await agent.put(Turn(dawdle, timeout=1))
        with pytest.raises(TurnTimeoutError) as caught:
            async for _ in agent.run():
                pass
    message = str(caught.value)
    assert message.startswith("turn of tool 'dawdle' timed out after 1 s; ")
    assert "running" not in message
    assert "raise" not in message
