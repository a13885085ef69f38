"""Tests for ``@tool``: declaration, registry, locking, arguments, subtools, metadata and
the ``ToolHook`` lifecycle of a single invocation (SPEC §1.2, §1.6, §1.7)."""

import asyncio
import itertools
import textwrap
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Self

import pytest
from core_helpers import spin

from pygents import (
    DecoratedTool,
    FixedKwargOverrideWarning,
    Hook,
    PygentsError,
    StopReason,
    Tool,
    ToolHook,
    ToolRegistry,
    ToolType,
    Turn,
    UnregisteredToolError,
    hook,
    tool,
)
from pygents.testing import collect

# --------------------------------------------------------------------------- helpers


class Overlap:
    """Counts how many tool bodies are inside a ``with`` block at the same time."""

    def __init__(self) -> None:
        self.active = 0
        self.max = 0
        self.entered = 0

    def __enter__(self) -> Self:
        self.active += 1
        self.entered += 1
        self.max = max(self.max, self.active)
        return self

    def __exit__(self, *exc: object) -> None:
        self.active -= 1


def define(source: str, **namespace: Any) -> dict[str, Any]:
    """Execute ``source`` as a module compiled with ``from __future__ import annotations``
    (every annotation is a string) and return its namespace."""
    code = "from __future__ import annotations\n" + textwrap.dedent(source)
    env: dict[str, Any] = {"__name__": "pygents_test_generated", **namespace}
    exec(compile(code, "<generated>", "exec"), env)
    return env


class Ticker:
    """A no-argument callable (an argument *by reference*) counting its calls."""

    def __init__(self, start: int = 0) -> None:
        self.start = start
        self.calls = 0

    def __call__(self) -> int:
        value = self.start + self.calls
        self.calls += 1
        return value


def assert_not_registered(name: str) -> None:
    assert name not in ToolRegistry
    with pytest.raises(UnregisteredToolError):
        ToolRegistry.get(name)


# --------------------------------------------------------------------------- decoration


async def test_bare_decorator_registers_a_coroutine_tool() -> None:
    async def double(x: int) -> int:
        return x * 2

    decorated = tool(double)

    assert isinstance(decorated, DecoratedTool)
    assert decorated.name == "double"
    assert decorated.fn is double
    assert decorated.type is ToolType.ACTION
    assert decorated.tags == frozenset()
    assert decorated.lock is None
    assert ToolRegistry.get("double") is decorated
    assert await decorated(x=4) == 8


async def test_decorator_with_empty_parentheses() -> None:
    @tool()
    async def triple(x: int) -> int:
        return x * 3

    assert ToolRegistry.get("triple") is triple
    assert await triple(x=2) == 6


async def test_decorator_with_options() -> None:
    @tool(lock=True, tags=["io", "storage"])
    async def write(path: str) -> str:
        return path

    assert write.tags == frozenset({"io", "storage"})
    assert isinstance(write.lock, asyncio.Lock)
    assert await write(path="/tmp/x") == "/tmp/x"


async def test_async_generator_tool_is_accepted() -> None:
    @tool
    async def count(n: int) -> AsyncIterator[int]:
        for i in range(n):
            yield i

    assert ToolRegistry.get("count") is count
    assert await collect(count(n=3)) == [0, 1, 2]


def _plain(x: int) -> int:
    return x


def _sync_generator(n: int) -> Any:
    yield n


@pytest.mark.parametrize(
    "fn",
    [_plain, _sync_generator, lambda: None],
    ids=["plain-def", "sync-generator", "lambda"],
)
def test_non_async_function_is_rejected_at_decoration(fn: Callable[..., Any]) -> None:
    with pytest.raises(TypeError):
        tool(fn)
    with pytest.raises(TypeError):
        tool(lock=True)(fn)
    assert_not_registered(fn.__name__)


def test_type_option_must_be_a_tool_type() -> None:
    with pytest.raises(TypeError):
        tool(type="completion_check")  # type: ignore[call-overload]


def test_tags_given_as_a_single_string_are_rejected() -> None:
    async def tagged() -> None:
        return None

    with pytest.raises(TypeError):
        tool(tags="io")(tagged)  # type: ignore[arg-type]
    assert_not_registered("tagged")


def test_fixed_kwargs_not_in_the_signature_are_rejected() -> None:
    async def fetch(url: str) -> str:
        return url

    with pytest.raises(TypeError, match="timeout"):
        tool(timeout=3)(fetch)
    assert_not_registered("fetch")


async def test_fixed_kwargs_not_in_the_signature_are_allowed_with_var_kwargs() -> None:
    @tool(timeout=3, retries=2)
    async def fetch(url: str, **options: Any) -> dict[str, Any]:
        return {"url": url, **options}

    assert await fetch(url="u") == {"url": "u", "timeout": 3, "retries": 2}


def test_duplicate_tool_name_raises_value_error_and_keeps_the_first() -> None:
    @tool
    async def search(q: str) -> str:
        return "first"

    async def search(q: str) -> str:  # noqa: F811  (a second function, same name)
        return "second"

    before = ToolRegistry.all()
    with pytest.raises(ValueError, match="search"):
        tool(lock=True)(search)
    assert ToolRegistry.all() == before
    assert ToolRegistry.get("search").fn is not search


def test_redecorating_the_same_function_is_also_a_duplicate() -> None:
    async def ping() -> str:
        return "pong"

    first = tool(ping)
    with pytest.raises(ValueError, match="ping"):
        tool(ping)
    assert ToolRegistry.get("ping") is first


def test_tool_satisfies_the_tool_protocol() -> None:
    @tool
    async def ok() -> bool:
        return True

    assert isinstance(ok, Tool)


# --------------------------------------------------------------------------- registry


def test_registry_get_all_and_clear() -> None:
    @tool
    async def alpha() -> None:
        return None

    @tool
    async def beta() -> None:
        return None

    @alpha.subtool()
    async def child() -> None:
        return None

    assert ToolRegistry.get("alpha") is alpha
    assert ToolRegistry.get("alpha.child") is child
    everything = ToolRegistry.all()
    assert alpha in everything
    assert beta in everything
    assert child in everything

    ToolRegistry.clear()
    assert ToolRegistry.all() == []
    for name in ("alpha", "beta", "alpha.child"):
        assert_not_registered(name)

    # after clear() the name is free again
    async def alpha() -> int:
        return 1

    again = tool(alpha)
    assert ToolRegistry.get("alpha") is again


def test_unknown_name_raises_unregistered_tool_error() -> None:
    with pytest.raises(UnregisteredToolError, match="no_such_tool"):
        ToolRegistry.get("no_such_tool")
    assert issubclass(UnregisteredToolError, LookupError)
    assert issubclass(UnregisteredToolError, PygentsError)
    with pytest.raises(LookupError):
        ToolRegistry.get("no_such_tool")


def test_definitions_lists_a_doc_tree_per_root_tool() -> None:
    ToolRegistry.clear()

    @tool
    async def manage_users() -> None:
        """Manage users."""

    @manage_users.subtool()
    async def create_user(username: str) -> None:
        """Create a user."""

    @tool
    async def standalone() -> None:
        return None

    assert ToolRegistry.definitions() == [
        {
            "name": "manage_users",
            "description": "Manage users.",
            "subtools": [{"name": "create_user", "description": "Create a user.", "subtools": []}],
        },
        {"name": "standalone", "description": None, "subtools": []},
    ]


# --------------------------------------------------------------------------- locking


@pytest.mark.parametrize(("lock", "expected"), [(True, 1), (False, 3)])
async def test_lock_serializes_concurrent_coroutine_invocations(lock: bool, expected: int) -> None:
    gate = asyncio.Event()
    overlap = Overlap()

    @tool(lock=lock)
    async def work(i: int) -> int:
        with overlap:
            await gate.wait()
        return i

    tasks = [asyncio.create_task(work(i=i)) for i in range(3)]
    await spin()
    assert overlap.active == expected
    gate.set()
    assert await asyncio.gather(*tasks) == [0, 1, 2]
    assert overlap.max == expected
    assert overlap.entered == 3


def open_stream(
    target: DecoratedTool[..., Any], via_turn: bool, **kwargs: Any
) -> AsyncIterator[Any]:
    """Iterate a streaming tool directly or through ``Turn.yielding()``."""
    return Turn(target, kwargs=kwargs).yielding() if via_turn else target(**kwargs)


@pytest.mark.parametrize("via_turn", [False, True], ids=["direct", "turn"])
@pytest.mark.parametrize("lock", [True, False])
async def test_lock_covers_the_whole_generator_iteration(lock: bool, via_turn: bool) -> None:
    overlap = Overlap()

    @tool(lock=lock)
    async def stream(n: int) -> AsyncIterator[int]:
        with overlap:
            for i in range(n):
                yield i

    first = open_stream(stream, via_turn, n=2)
    assert await anext(first) == 0  # paused between values: still "inside" the tool
    second = asyncio.create_task(collect(open_stream(stream, via_turn, n=2)))
    await spin()

    assert second.done() is (not lock)
    assert overlap.max == (1 if lock else 2)
    assert await collect(first) == [1]
    assert await second == [0, 1]
    assert overlap.max == (1 if lock else 2)


@pytest.mark.parametrize("via_turn", [False, True], ids=["direct", "turn"])
async def test_on_yield_runs_under_the_lock_other_lifecycle_hooks_do_not(via_turn: bool) -> None:
    @tool(lock=True)
    async def stream(prefix: str) -> AsyncIterator[str]:
        yield prefix + "1"
        yield prefix + "2"

    seen: list[tuple[str, Any, bool]] = []

    @stream.before_invoke
    async def before(prefix: str) -> None:
        seen.append(("before", prefix, stream.lock.locked()))

    @stream.on_yield
    async def each(value: str) -> None:
        seen.append(("yield", value, stream.lock.locked()))

    @stream.after_invoke
    async def after(result: list[str]) -> None:
        seen.append(("after", list(result), stream.lock.locked()))

    assert await collect(open_stream(stream, via_turn, prefix="a")) == ["a1", "a2"]
    assert seen == [
        ("before", "a", False),
        ("yield", "a1", True),
        ("yield", "a2", True),
        ("after", ["a1", "a2"], False),
    ]


@pytest.mark.parametrize("streaming", [False, True], ids=["coroutine", "generator"])
async def test_on_error_runs_outside_the_lock(streaming: bool) -> None:
    if streaming:

        @tool(lock=True)
        async def job() -> AsyncIterator[int]:
            yield 1
            raise RuntimeError("boom")

        def run() -> Any:
            return collect(job())
    else:

        @tool(lock=True)
        async def job() -> int:
            raise RuntimeError("boom")

        run = job

    seen: list[bool] = []

    @job.on_error
    async def failed(exc: BaseException) -> None:
        seen.append(job.lock.locked())

    with pytest.raises(RuntimeError, match="boom"):
        await run()
    assert seen == [False]
    assert not job.lock.locked()


@pytest.mark.parametrize("streaming", [False, True], ids=["coroutine", "generator"])
@pytest.mark.parametrize("slot", ["before_invoke", "after_invoke", "on_error"])
async def test_a_blocked_lifecycle_hook_does_not_hold_the_tool_lock(
    slot: str, streaming: bool
) -> None:
    """While call A sits in one of its lifecycle hooks, call B runs its whole body."""
    gate = asyncio.Event()
    calls = itertools.count()

    if streaming:

        @tool(lock=True)
        async def job(i: int, fail: bool = False) -> AsyncIterator[int]:
            if fail:
                raise RuntimeError("boom")
            yield i

        def run(**kwargs: Any) -> Any:
            return collect(job(**kwargs))
    else:

        @tool(lock=True)
        async def job(i: int, fail: bool = False) -> int:
            if fail:
                raise RuntimeError("boom")
            return i

        run = job

    async def block_first_call(*args: Any, **kwargs: Any) -> None:
        if next(calls) == 0:
            await gate.wait()

    getattr(job, slot)(block_first_call)

    a = asyncio.create_task(run(i=1, fail=slot == "on_error"))
    await spin()
    assert not a.done()  # parked inside its hook
    b = asyncio.create_task(run(i=2))
    await spin()
    assert b.done(), f"{slot} hook of another call held the tool's lock"
    assert b.result() == ([2] if streaming else 2)
    assert not a.done()

    gate.set()
    if slot == "on_error":
        with pytest.raises(RuntimeError, match="boom"):
            await a
    else:
        assert await a == ([1] if streaming else 1)


async def test_before_invoke_of_a_waiting_call_runs_while_another_holds_the_lock() -> None:
    gate = asyncio.Event()
    before: list[int] = []

    @tool(lock=True)
    async def slow(i: int) -> int:
        await gate.wait()
        return i

    @slow.before_invoke
    async def note(i: int) -> None:
        before.append(i)

    a = asyncio.create_task(slow(i=1))
    await spin()
    assert slow.lock.locked()
    b = asyncio.create_task(slow(i=2))
    await spin()
    assert before == [1, 2]
    gate.set()
    assert await asyncio.gather(a, b) == [1, 2]


@pytest.mark.parametrize("streaming", [False, True], ids=["coroutine", "generator"])
async def test_missing_argument_does_not_leave_the_lock_held(streaming: bool) -> None:
    if streaming:

        @tool(lock=True)
        async def job(a: int) -> AsyncIterator[int]:
            yield a

        def run(**kwargs: Any) -> Any:
            return collect(job(**kwargs))
    else:

        @tool(lock=True)
        async def job(a: int) -> int:
            return a

        run = job

    with pytest.raises(TypeError):
        await run()
    assert not job.lock.locked(), "a failed invocation left the tool's lock acquired"
    assert await run(a=5) == ([5] if streaming else 5)


# --------------------------------------------------------------------------- fixed kwargs


async def test_fixed_kwargs_are_merged_into_every_invocation() -> None:
    @tool(unit="cm")
    async def measure(x: int, unit: str) -> str:
        return f"{x}{unit}"

    assert await measure(x=3) == "3cm"
    assert await measure(4) == "4cm"
    assert await Turn(measure, kwargs={"x": 5}).returning() == "5cm"
    assert measure.fixed_kwargs == {"unit": "cm"}


async def test_call_time_kwargs_override_fixed_ones_with_a_warning() -> None:
    @tool(unit="cm")
    async def measure(x: int, unit: str) -> str:
        return f"{x}{unit}"

    with pytest.warns(FixedKwargOverrideWarning, match="unit"):
        assert await measure(x=3, unit="mm") == "3mm"
    with pytest.warns(FixedKwargOverrideWarning):
        assert await Turn(measure, kwargs={"x": 1, "unit": "km"}).returning() == "1km"
    # the override did not stick
    assert await measure(x=2) == "2cm"


async def test_callable_fixed_kwarg_is_evaluated_per_invocation() -> None:
    ticker = Ticker()

    @tool(token=ticker)
    async def call_api(path: str, token: int) -> str:
        return f"{path}?{token}"

    assert ticker.calls == 0  # not evaluated at decoration time
    assert await call_api(path="/a") == "/a?0"
    assert await call_api(path="/b") == "/b?1"
    assert await Turn(call_api, kwargs={"path": "/c"}).returning() == "/c?2"
    assert ticker.calls == 3


async def test_callable_fixed_kwarg_evaluated_for_generator_tools() -> None:
    @tool(step=Ticker(start=1))
    async def ticks(n: int, step: int) -> AsyncIterator[int]:
        for i in range(n):
            yield i * step

    assert await collect(ticks(n=3)) == [0, 1, 2]
    assert await collect(ticks(n=3)) == [0, 2, 4]


# --------------------------------------------------------------------------- extra / missing


async def test_extra_positional_and_keyword_arguments_are_dropped() -> None:
    @tool
    async def greet(name: str) -> str:
        return f"hi {name}"

    assert await greet("ann", "extra", 3, unused=True, other=None) == "hi ann"
    turn = Turn(greet, args=["bob", "x"], kwargs={"junk": 1})
    assert await turn.returning() == "hi bob"


async def test_extra_arguments_dropped_for_generator_tools() -> None:
    @tool
    async def repeat(word: str, times: int = 2) -> AsyncIterator[str]:
        for _ in range(times):
            yield word

    assert await collect(repeat("a", 1, "too many", colour="red")) == ["a"]


async def test_var_args_and_var_kwargs_receive_everything() -> None:
    @tool
    async def spread(*args: Any, **kwargs: Any) -> tuple[Any, ...]:
        return args, kwargs

    assert await spread(1, 2, k=3) == ((1, 2), {"k": 3})


async def test_missing_required_argument_raises_type_error_when_it_runs() -> None:
    @tool
    async def needs(a: int, b: int) -> int:
        return a + b

    pending = needs(a=1)  # decoration and the call itself do not check
    with pytest.raises(TypeError):
        await pending

    turn = Turn(needs, kwargs={"b": 2})
    with pytest.raises(TypeError):
        await turn.returning()
    assert turn.stop_reason is StopReason.ERROR


async def test_missing_required_argument_of_a_generator_raises_type_error() -> None:
    @tool
    async def stream(n: int) -> AsyncIterator[int]:
        yield n

    with pytest.raises(TypeError):
        await collect(stream())
    with pytest.raises(TypeError):
        await collect(Turn(stream).yielding())


# --------------------------------------------------------------------------- by reference


class Config:
    pass


def _needs_an_argument(x: int) -> int:
    return x


async def test_no_argument_callables_are_called_at_invocation() -> None:
    fresh = Ticker()

    @tool
    async def echo(a: Any, b: Any = None) -> tuple[Any, Any]:
        return a, b

    turn = Turn(echo, args=[fresh], kwargs={"b": lambda: "lazy"})
    assert fresh.calls == 0  # nothing evaluated at construction
    assert await turn.returning() == (0, "lazy")
    assert sorted(await echo(fresh, b=fresh)) == [1, 2]
    assert await echo(a=lambda: [1, 2]) == ([1, 2], None)
    assert fresh.calls == 3


async def test_callables_with_defaults_only_count_as_no_argument() -> None:
    @tool
    async def echo(a: Any) -> Any:
        return a

    def with_default(x: int = 7) -> int:
        return x

    assert await echo(a=with_default) == 7


async def test_other_callables_classes_and_tools_pass_unchanged() -> None:
    @tool
    async def other() -> None:
        return None

    @hook(ToolHook.AFTER_INVOKE)
    async def some_hook() -> None:
        return None

    @tool
    async def echo(a: Any, b: Any = None, c: Any = None, d: Any = None) -> tuple[Any, ...]:
        return a, b, c, d

    result = await echo(_needs_an_argument, b=Config, c=other, d=some_hook)
    assert result[0] is _needs_an_argument
    assert result[1] is Config
    assert result[2] is other
    assert result[3] is some_hook
    assert isinstance(some_hook, Hook)


# --------------------------------------------------------------------------- completion check


def test_completion_check_accepts_a_bool_coroutine() -> None:
    @tool(type=ToolType.COMPLETION_CHECK)
    async def done(count: int) -> bool:
        return count > 3

    assert done.type is ToolType.COMPLETION_CHECK
    assert ToolRegistry.get("done") is done


async def _returns_int() -> int:
    return 1


async def _unannotated():  # type: ignore[no-untyped-def]
    return True


async def _bool_generator() -> AsyncIterator[bool]:
    yield True


async def _optional_bool() -> bool | None:
    return None


@pytest.mark.parametrize(
    "fn",
    [_returns_int, _unannotated, _bool_generator, _optional_bool],
    ids=["int", "no-annotation", "async-generator", "optional-bool"],
)
def test_completion_check_rejects_anything_but_a_bool_coroutine(fn: Callable[..., Any]) -> None:
    with pytest.raises(TypeError):
        tool(type=ToolType.COMPLETION_CHECK)(fn)
    assert_not_registered(fn.__name__)


def test_completion_check_rejects_a_plain_function() -> None:
    def sync_check() -> bool:
        return True

    with pytest.raises(TypeError):
        tool(type=ToolType.COMPLETION_CHECK)(sync_check)
    assert_not_registered("sync_check")


def test_completion_check_with_string_annotations() -> None:
    env = define(
        """
        async def finished(n: int) -> bool:
            return n > 1

        async def not_a_check(n: int) -> int:
            return n
        """
    )
    assert env["finished"].__annotations__["return"] == "bool"

    checked = tool(type=ToolType.COMPLETION_CHECK)(env["finished"])
    assert checked.type is ToolType.COMPLETION_CHECK
    with pytest.raises(TypeError):
        tool(type=ToolType.COMPLETION_CHECK)(env["not_a_check"])
    assert_not_registered("not_a_check")


def test_completion_check_with_string_annotations_and_a_forward_reference() -> None:
    """``-> bool`` is enough even when another annotation names a class that is
    defined later in the module (common with ``from __future__ import annotations``)."""
    env = define(
        """
        @tool(type=ToolType.COMPLETION_CHECK)
        async def state_done(state: State) -> bool:
            return state.done

        class State:
            done = True
        """,
        tool=tool,
        ToolType=ToolType,
    )
    assert env["state_done"].type is ToolType.COMPLETION_CHECK


# --------------------------------------------------------------------------- subtools


async def test_subtool_is_registered_under_a_scoped_name() -> None:
    @tool
    async def manage_users() -> None:
        """Manage users."""

    @manage_users.subtool()
    async def create_user(username: str) -> str:
        """Create a user."""
        return f"created {username}"

    assert create_user.name == "manage_users.create_user"
    assert create_user.metadata.name == "create_user"
    assert ToolRegistry.get("manage_users.create_user") is create_user
    assert_not_registered("create_user")
    assert manage_users.subtools == [create_user]
    assert create_user.parent is manage_users
    assert isinstance(create_user, DecoratedTool)

    turn = Turn("manage_users.create_user", kwargs={"username": "ann"})
    assert turn.tool is create_user
    assert await turn.returning() == "created ann"
    assert await create_user(username="bob") == "created bob"


async def test_nested_subtools_use_dotted_paths() -> None:
    @tool
    async def a() -> None:
        return None

    @a.subtool()
    async def b() -> None:
        return None

    @b.subtool()
    async def c() -> str:
        return "deep"

    assert c.name == "a.b.c"
    assert ToolRegistry.get("a.b.c") is c
    assert await Turn("a.b.c").returning() == "deep"
    assert a.doc_tree() == {
        "name": "a",
        "description": None,
        "subtools": [
            {
                "name": "b",
                "description": None,
                "subtools": [{"name": "c", "description": None, "subtools": []}],
            }
        ],
    }


async def test_same_child_name_under_two_parents_coexists() -> None:
    @tool
    async def users() -> None:
        return None

    @tool
    async def posts() -> None:
        return None

    @users.subtool()
    async def create(title: str) -> str:
        return f"user {title}"

    user_create = create

    @posts.subtool()
    async def create(title: str) -> str:
        return f"post {title}"

    assert ToolRegistry.get("users.create") is user_create
    assert ToolRegistry.get("posts.create") is create
    assert user_create is not create
    assert await Turn("users.create", kwargs={"title": "x"}).returning() == "user x"
    assert await Turn("posts.create", kwargs={"title": "x"}).returning() == "post x"


def test_duplicate_subtool_name_under_one_parent_raises() -> None:
    @tool
    async def parent() -> None:
        return None

    @parent.subtool()
    async def child() -> None:
        return None

    async def child() -> int:  # noqa: F811
        return 2

    with pytest.raises(ValueError, match=r"parent\.child"):
        parent.subtool()(child)
    assert len(parent.subtools) == 1
    assert ToolRegistry.get("parent.child").fn is not child


def test_rejected_subtool_is_not_half_registered() -> None:
    @tool
    async def parent() -> None:
        return None

    async def child(x: int) -> None:
        return None

    with pytest.raises(TypeError):
        parent.subtool(unknown=1)(child)

    def sync_child() -> None:
        return None

    with pytest.raises(TypeError):
        parent.subtool()(sync_child)

    assert parent.subtools == []
    assert_not_registered("parent.child")
    assert_not_registered("parent.sync_child")
    assert parent.doc_tree()["subtools"] == []


async def test_subtool_options_lock_tags_and_fixed_kwargs() -> None:
    @tool
    async def db() -> None:
        return None

    @db.subtool(lock=True, tags=["write"], table="users")
    async def insert(row: str, table: str) -> str:
        return f"{table}:{row}"

    @db.subtool()
    async def select(q: str) -> str:
        return q

    assert isinstance(insert.lock, asyncio.Lock)
    assert select.lock is None
    assert db.lock is None
    assert insert.tags == frozenset({"write"})
    assert select.tags == frozenset()
    assert await insert(row="r1") == "users:r1"
    assert insert.type is ToolType.ACTION


# A completion-check subtool's registration and signature: tests/typing/test_public_api.py.


@pytest.mark.parametrize(
    "fn",
    [_returns_int, _unannotated, _bool_generator, _optional_bool],
    ids=["int", "no-annotation", "async-generator", "optional-bool"],
)
def test_a_completion_check_subtool_is_checked_like_a_completion_check_tool(
    fn: Callable[..., Any],
) -> None:
    @tool
    async def jobs() -> None:
        return None

    with pytest.raises(TypeError, match="completion") as raised:
        jobs.subtool(type=ToolType.COMPLETION_CHECK)(fn)
    assert f"'jobs.{fn.__name__}'" in str(raised.value)  # the same check as @tool's
    assert jobs.subtools == []
    assert_not_registered(f"jobs.{fn.__name__}")


@pytest.mark.parametrize("decorator", ["tool", "subtool"])
def test_a_type_that_is_not_a_tool_type_is_refused_naming_the_choices(decorator: str) -> None:
    @tool
    async def jobs() -> None:
        return None

    async def finished() -> bool:
        return True

    make = tool if decorator == "tool" else jobs.subtool
    with pytest.raises(TypeError, match=r"ToolType\.COMPLETION_CHECK, got 'completion_check'"):
        make(type="completion_check")(finished)  # type: ignore[call-overload]  # wrong on purpose
    assert jobs.subtools == []
    assert_not_registered("finished")
    assert_not_registered("jobs.finished")


async def test_subtool_lock_serializes() -> None:
    gate = asyncio.Event()
    overlap = Overlap()

    @tool
    async def db() -> None:
        return None

    @db.subtool(lock=True)
    async def write(i: int) -> int:
        with overlap:
            await gate.wait()
        return i

    tasks = [asyncio.create_task(write(i=i)) for i in range(3)]
    await spin()
    assert overlap.active == 1
    gate.set()
    assert await asyncio.gather(*tasks) == [0, 1, 2]
    assert overlap.max == 1


def test_doc_tree_shape_uses_short_names_and_docstrings() -> None:
    @tool
    async def manage_users() -> None:
        """Top-level user management tool."""

    @manage_users.subtool()
    async def create_user(username: str) -> None:
        """Create a new user."""

    @manage_users.subtool(lock=True)
    async def delete_user(username: str) -> None:
        """Delete an existing user."""

    tree = manage_users.doc_tree()
    assert tree == {
        "name": "manage_users",
        "description": "Top-level user management tool.",
        "subtools": [
            {"name": "create_user", "description": "Create a new user.", "subtools": []},
            {"name": "delete_user", "description": "Delete an existing user.", "subtools": []},
        ],
    }
    assert set(tree) == {"name", "description", "subtools"}
    assert create_user.doc_tree() == tree["subtools"][0]


# --------------------------------------------------------------------------- metadata


def test_metadata_name_and_description() -> None:
    @tool
    async def fetch(url: str) -> str:
        """Fetch a URL.

        Returns the body.
        """
        return url

    @tool
    async def undocumented() -> None:
        return None

    assert fetch.metadata.name == "fetch"
    assert fetch.metadata.description == "Fetch a URL.\n\nReturns the body."
    assert undocumented.metadata.description is None


def _assert_aware(value: datetime | None) -> datetime:
    assert isinstance(value, datetime)
    assert value.tzinfo is not None
    assert value.utcoffset() is not None
    return value


async def test_metadata_times_are_set_on_invocation() -> None:
    gate = asyncio.Event()

    @tool
    async def job() -> int:
        await gate.wait()
        return 1

    assert job.metadata.start_time is None
    assert job.metadata.end_time is None

    before = datetime.now(UTC) - timedelta(milliseconds=5)
    task = asyncio.create_task(job())
    await spin()
    start = _assert_aware(job.metadata.start_time)
    assert job.metadata.end_time is None  # still running
    gate.set()
    assert await task == 1
    after = datetime.now(UTC) + timedelta(milliseconds=5)
    end = _assert_aware(job.metadata.end_time)
    assert before <= start <= end <= after


async def test_metadata_times_for_generators_and_errors() -> None:
    @tool
    async def stream() -> AsyncIterator[int]:
        yield 1
        yield 2

    @tool
    async def broken() -> None:
        raise ValueError("nope")

    agen = stream()
    assert await anext(agen) == 1
    _assert_aware(stream.metadata.start_time)
    assert stream.metadata.end_time is None
    assert await collect(agen) == [2]
    _assert_aware(stream.metadata.end_time)

    with pytest.raises(ValueError, match="nope"):
        await broken()
    end = _assert_aware(broken.metadata.end_time)
    assert end >= _assert_aware(broken.metadata.start_time)


async def test_metadata_start_time_moves_with_each_invocation() -> None:
    @tool
    async def job() -> None:
        return None

    await job()
    first = _assert_aware(job.metadata.start_time)
    await job()
    second = _assert_aware(job.metadata.start_time)
    assert second >= first
    assert _assert_aware(job.metadata.end_time) >= second


async def test_metadata_dict_uses_iso_strings() -> None:
    @tool
    async def job(x: int) -> int:
        """Doubles."""
        return 2 * x

    fresh = job.metadata.dict()
    assert fresh["start_time"] is None
    assert fresh["end_time"] is None

    await job(x=1)
    data = job.metadata.dict()
    assert set(data) == {
        "name",
        "description",
        "start_time",
        "end_time",
        "input_schema",
        "output_schema",
    }
    assert data["name"] == "job"
    assert data["description"] == "Doubles."
    assert isinstance(data["start_time"], str)
    assert isinstance(data["end_time"], str)
    assert datetime.fromisoformat(data["start_time"]) == job.metadata.start_time
    assert datetime.fromisoformat(data["end_time"]) == job.metadata.end_time
    assert datetime.fromisoformat(data["start_time"]).tzinfo is not None
    assert data["input_schema"] == job.metadata.input_schema
    assert data["output_schema"] == {"type": "integer"}


# --------------------------------------------------------------------------- hook decorators


SLOTS = ["before_invoke", "on_yield", "after_invoke", "on_error"]


def _stream_tool() -> DecoratedTool[..., Any]:
    @tool
    async def stream(n: int) -> AsyncIterator[int]:
        for i in range(n):
            yield i

    return stream


@pytest.mark.parametrize("slot", SLOTS)
def test_instance_hook_decorator_bare(slot: str) -> None:
    target = _stream_tool()

    @getattr(target, slot)
    async def my_hook(*args: Any, **kwargs: Any) -> None:
        return None

    assert isinstance(my_hook, Hook)
    assert target.hooks == [my_hook]
    assert not my_hook.lock


@pytest.mark.parametrize("slot", SLOTS)
def test_instance_hook_decorator_with_options(slot: str) -> None:
    target = _stream_tool()

    @getattr(target, slot)(lock=True, env="x")
    async def my_hook(*args: Any, env: str, **kwargs: Any) -> None:
        return None

    assert isinstance(my_hook, Hook)
    assert target.hooks == [my_hook]
    assert my_hook.lock
    assert my_hook.fixed_kwargs == {"env": "x"}


@pytest.mark.parametrize("slot", SLOTS)
def test_instance_hook_attached_by_calling_with_a_function(slot: str) -> None:
    target = _stream_tool()

    async def my_hook(*args: Any, **kwargs: Any) -> None:
        return None

    attached = getattr(target, slot)(my_hook)
    assert isinstance(attached, Hook)
    assert attached.fn is my_hook
    assert target.hooks == [attached]


async def test_instance_hook_options_pass_fixed_kwargs_to_the_hook() -> None:
    @tool
    async def job(x: int) -> int:
        return x + 1

    seen: list[tuple[str, Any, str]] = []

    @job.before_invoke(lock=True, env="x")
    async def audit(x: int, env: str) -> None:
        seen.append(("before", x, env))

    @job.after_invoke(env=lambda: "lazy")
    async def done(result: int, env: str) -> None:
        seen.append(("after", result, env))

    assert await job(x=1) == 2
    assert seen == [("before", 1, "x"), ("after", 2, "lazy")]


def test_on_yield_is_refused_for_coroutine_tools() -> None:
    @tool
    async def single() -> int:
        return 1

    async def each(value: Any) -> None:
        return None

    with pytest.raises(TypeError):
        single.on_yield(each)
    with pytest.raises(TypeError):
        single.on_yield(lock=True)(each)
    assert single.hooks == []


def test_instance_hook_must_be_async() -> None:
    @tool
    async def job() -> None:
        return None

    def not_async(result: Any) -> None:
        return None

    async def async_gen(result: Any) -> AsyncIterator[None]:
        yield None

    with pytest.raises(TypeError):
        job.after_invoke(not_async)
    with pytest.raises(TypeError):
        job.after_invoke(async_gen)
    assert job.hooks == []


# --------------------------------------------------------------------------- hook arguments


async def test_before_invoke_receives_the_bound_arguments() -> None:
    ticker = Ticker(start=10)

    @tool(scale=2)
    async def add(a: int, b: int = 5, *, scale: int, token: Any = None) -> int:
        return (a + b) * scale

    seen: list[dict[str, Any]] = []

    @add.before_invoke
    async def before(a: Any = "-", scale: Any = "-", token: Any = "-", extra: Any = "-") -> None:
        seen.append({"a": a, "scale": scale, "token": token, "extra": extra})

    assert await add(1, extra="dropped", token=ticker) == 12
    # fixed kwargs merged, the thunk resolved (once), extras dropped
    assert seen == [{"a": 1, "scale": 2, "token": 10, "extra": "-"}]
    assert ticker.calls == 1


@pytest.mark.parametrize("via_turn", [False, True], ids=["called directly", "through a turn"])
async def test_coroutine_lifecycle_hooks_get_their_arguments(via_turn: bool) -> None:
    events: list[tuple[str, Any]] = []

    @tool
    async def double(x: int) -> int:
        return 2 * x

    @double.before_invoke
    async def before(x: int) -> None:
        events.append(("before", x))

    @double.after_invoke
    async def after(result: int) -> None:
        events.append(("after", result))

    @double.on_error
    async def error(exc: BaseException) -> None:
        events.append(("error", exc))

    if via_turn:
        turn = Turn(double, kwargs={"x": 21})
        assert await turn.returning() == 42
        assert turn.stop_reason is StopReason.COMPLETED
    else:
        assert await double(x=21) == 42
    assert events == [("before", 21), ("after", 42)]


async def test_generator_lifecycle_arguments_and_order() -> None:
    log: list[tuple[str, Any]] = []

    @tool
    async def stream(n: int) -> AsyncIterator[int]:
        for i in range(n):
            log.append(("produce", i))
            yield i

    @stream.before_invoke
    async def before(n: int) -> None:
        log.append(("before", n))

    @stream.on_yield
    async def each(value: int) -> None:
        log.append(("yield", value))

    @stream.after_invoke
    async def after(result: list[int]) -> None:
        log.append(("after", list(result)))

    async for value in stream(n=2):
        log.append(("consume", value))

    assert log == [
        ("before", 2),
        ("produce", 0),
        ("yield", 0),
        ("consume", 0),
        ("produce", 1),
        ("yield", 1),
        ("consume", 1),
        ("after", [0, 1]),
    ]


async def test_after_invoke_gets_a_partial_list_when_the_consumer_stops_early() -> None:
    results: list[list[int]] = []
    produced: list[int] = []

    @tool
    async def stream() -> AsyncIterator[int]:
        for i in range(100):
            produced.append(i)
            yield i

    @stream.after_invoke
    async def after(result: list[int]) -> None:
        results.append(list(result))

    agen = stream()
    assert await anext(agen) == 0
    assert await anext(agen) == 1
    await agen.aclose()
    assert results == [[0, 1]]
    assert produced == [0, 1]
    assert stream.metadata.end_time is not None

    run = Turn(stream).yielding()
    assert await anext(run) == 0
    await run.aclose()
    assert results == [[0, 1], [0]]


async def test_on_error_receives_the_exception_and_after_invoke_does_not_fire() -> None:
    problem = RuntimeError("boom")
    events: list[tuple[str, Any]] = []

    @tool
    async def broken() -> int:
        raise problem

    @broken.after_invoke
    async def after(result: Any) -> None:
        events.append(("after", result))

    @broken.on_error
    async def error(exc: BaseException) -> None:
        events.append(("error", exc))

    with pytest.raises(RuntimeError) as info:
        await broken()
    assert info.value is problem
    assert events == [("error", problem)]


async def test_on_error_is_passed_as_the_exc_keyword() -> None:
    seen: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    @tool
    async def broken() -> None:
        raise KeyError("k")

    @broken.on_error
    async def error(*args: Any, **kwargs: Any) -> None:
        seen.append((args, kwargs))

    with pytest.raises(KeyError):
        await broken()
    assert len(seen) == 1
    args, kwargs = seen[0]
    assert args == ()
    assert set(kwargs) == {"exc"}
    assert isinstance(kwargs["exc"], KeyError)


async def test_generator_error_fires_on_error_not_after_invoke() -> None:
    events: list[tuple[str, Any]] = []

    @tool
    async def stream() -> AsyncIterator[int]:
        yield 1
        raise ValueError("half way")

    @stream.on_yield
    async def each(value: int) -> None:
        events.append(("yield", value))

    @stream.after_invoke
    async def after(result: Any) -> None:
        events.append(("after", result))

    @stream.on_error
    async def error(exc: BaseException) -> None:
        events.append(("error", str(exc)))

    received: list[int] = []

    async def consume() -> None:
        async for value in stream():
            received.append(value)

    with pytest.raises(ValueError, match="half way"):
        await consume()
    assert received == [1]
    assert events == [("yield", 1), ("error", "half way")]


async def test_hook_event_arguments_are_passed_as_is_not_called() -> None:
    """A result or streamed value that happens to be a no-argument callable is the
    event argument itself; hooks must not call it as if it were an argument by
    reference."""
    calls: list[str] = []

    def callback() -> str:
        calls.append("called")
        return "result of calling"

    @tool
    async def returns_callback() -> Callable[[], str]:
        return callback

    @tool
    async def yields_callback() -> AsyncIterator[Callable[[], str]]:
        yield callback

    seen: list[Any] = []

    @returns_callback.after_invoke
    async def after(result: Any) -> None:
        seen.append(result)

    @yields_callback.on_yield
    async def each(value: Any) -> None:
        seen.append(value)

    assert await returns_callback() is callback
    assert await collect(yields_callback()) == [callback]
    assert seen == [callback, callback]
    assert calls == []
