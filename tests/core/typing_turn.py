"""``Turn``'s type parameter, checked twice.

``mypy --strict`` checks this module (it is listed in ``[tool.mypy] files``), so
every ``assert_type`` below is a static assertion; ``test_turn.py`` runs it, so
the same code must also work at run time. It is a helper, not a test module:
pytest does not collect it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, assert_type

from pygents import Turn, tool


async def typed_turns() -> tuple[int, list[str], list[bytes], str, Turn[int]]:
    """Build and run turns whose types are inferred, annotated or declared."""

    @tool
    async def add(a: int, b: int) -> int:
        return a + b

    @tool
    async def words(text: str) -> AsyncIterator[str]:
        for word in text.split():
            yield word

    @tool
    async def chunks(n: int) -> AsyncGenerator[bytes, None]:
        for i in range(n):
            yield bytes([i])

    @tool
    async def echo(x: str) -> str:
        return x

    def plan(x: str) -> Turn[str]:  # typed code returning the turn it builds
        return Turn(echo, kwargs={"x": x})

    adding = Turn(add, kwargs={"a": 1, "b": 2})
    assert_type(adding, Turn[int])  # inferred from the tool
    total = await adding.returning()
    assert_type(total, int)
    assert_type(adding.copy(), Turn[int])

    streaming = Turn(words, kwargs={"text": "to be"})
    assert_type(streaming, Turn[str])  # a stream's type is the type of each value
    seen = [word async for word in streaming.yielding()]
    assert_type(seen, list[str])
    raw = [chunk async for chunk in Turn(chunks, kwargs={"n": 2}).yielding()]
    assert_type(raw, list[bytes])

    assert_type(Turn("add"), Turn[Any])  # a name says nothing about the result
    declared: Turn[int] = Turn("add", kwargs={"a": 2, "b": 2})
    assert_type(await declared.returning(), int)
    subscripted = Turn[int]("add", kwargs={"a": 3, "b": 3})
    assert_type(subscripted, Turn[int])
    assert_type(await subscripted.returning(), int)

    echoed = await plan("hi").returning()
    assert_type(echoed, str)

    untyped: Turn = subscripted  # a bare Turn is Turn[Any], as before Turn was generic
    assert_type(untyped, Turn[Any])
    return total, seen, raw, echoed, subscripted
