"""A function's signature and type hints are inspected once per code object, not once
per hook: a hook made per request (a closure attached to each request's turn) would
otherwise pay for ``inspect.signature`` and ``typing.get_type_hints`` every time.
Closures of one definition may still differ in what the inspection depends on, and
each must be bound by its own."""

from __future__ import annotations

import types
from typing import Any

from pygents import ContextQueue, Hook, Turn, TurnHook, tool
from pygents._signature import _LAYOUTS, _LAYOUTS_MAX

AFTER_RUN = frozenset((TurnHook.AFTER_RUN,))

# Compiled without ``from __future__ import annotations``: each closure's annotation
# is evaluated when it is made, so closures of one code object can disagree on it.
_PER_REQUEST = """
def make(kind):
    async def on_done(turn, queue: kind = None):
        return queue
    return on_done
"""


def _maker() -> Any:
    namespace: dict[str, Any] = {}
    # dont_inherit: this module's own ``from __future__ import annotations`` stays out.
    exec(compile(_PER_REQUEST, "<per-request>", "exec", dont_inherit=True), namespace)
    return namespace["make"]


def _injected(fn: Any) -> tuple[tuple[str, type, bool], ...]:
    return Hook(fn, AFTER_RUN)._shape.injectables


def test_hooks_made_per_request_from_one_definition_share_one_inspection() -> None:
    @tool()
    async def inspection_probe() -> None:
        return None

    def per_request(request: int) -> Hook[Any]:
        turn = Turn(inspection_probe)

        @turn.after_run
        async def on_done(turn: Turn, queue: ContextQueue | None = None) -> None:
            _ = request

        return on_done

    first, second = per_request(1), per_request(2)
    assert first.fn is not second.fn
    assert first._shape.hints is second._shape.hints
    assert [name for name, _, _ in first._shape.injectables] == ["queue"]


def test_closures_of_one_code_with_different_annotations_are_bound_by_their_own() -> None:
    make = _maker()
    as_queue, as_int = make(ContextQueue), make(int)
    assert as_queue.__code__ is as_int.__code__
    assert _injected(as_queue) == (("queue", ContextQueue, False),)
    assert _injected(as_int) == ()
    assert _injected(make(ContextQueue)) == (("queue", ContextQueue, False),)


def test_a_closure_whose_default_was_removed_needs_its_argument() -> None:
    make = _maker()
    optional, required = make(ContextQueue), make(ContextQueue)
    required.__defaults__ = None
    assert _injected(optional) == (("queue", ContextQueue, False),)
    assert _injected(required) == (("queue", ContextQueue, True),)


def test_one_code_under_other_globals_resolves_its_hints_there() -> None:
    async def on_done(turn: Turn, queue: Kind = None) -> None:  # type: ignore[name-defined]  # noqa: F821
        return None

    def rebuilt(kind: type) -> types.FunctionType:
        namespace = {**on_done.__globals__, "Kind": kind}
        fn = types.FunctionType(on_done.__code__, namespace, "on_done", on_done.__defaults__)
        fn.__annotations__ = dict(on_done.__annotations__)  # the same strings, other globals
        return fn

    assert _injected(rebuilt(ContextQueue)) == (("queue", ContextQueue, False),)
    assert _injected(rebuilt(int)) == ()


def test_the_cache_holds_at_most_its_bound_of_code_objects() -> None:
    for n in range(_LAYOUTS_MAX + 50):
        namespace: dict[str, Any] = {}
        exec(compile(f"async def hook_{n}(turn): return {n}", "<generated>", "exec"), namespace)
        Hook(namespace[f"hook_{n}"], AFTER_RUN)
        assert len(_LAYOUTS) <= _LAYOUTS_MAX
    assert len(_LAYOUTS) == _LAYOUTS_MAX
