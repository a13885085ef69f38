"""Turns: *what* should happen — one call of one tool, with a timeout and hooks.

The life of a turn is one mechanism, `TurnRun`, driven by ``returning()``,
``yielding()`` and the agent loop alike::

    BEFORE_RUN → tool invocation (→ ON_VALUE per streamed value) →
    AFTER_RUN | ON_TIMEOUT | ON_ERROR → ON_COMPLETE (always, exactly once)
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Coroutine, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Generic, overload

from pygents._enums import StopReason, TurnHook
from pygents._errors import SafeExecutionError, WrongRunMethodError, brief
from pygents._guard import guarded
from pygents._hooklist import HookList
from pygents._hooks import Hook, HookSlot, check_tags
from pygents._ids import new_uuid
from pygents._observe import BUS
from pygents._scope import TURN_SCOPE, Scope, current_scope
from pygents._serial import Reader, from_timestamp, hooks_to_data, json_value, to_iso
from pygents._tool import DecoratedTool, ToolRegistry
from pygents._turn_run import Runner, TurnRun

__all__ = ["Turn"]

if TYPE_CHECKING:
    # For type checkers only (they all know typing_extensions): a bare ``Turn`` means
    # ``Turn[Any]``, so annotations written before Turn was generic stay valid.
    from typing_extensions import TypeVar

    T = TypeVar("T", default=Any)
else:
    from typing import TypeVar

    T = TypeVar("T")

_NO_HOOKS: Final[tuple[Hook[Any], ...]] = ()
_EMPTY_ARGS: Final[tuple[Any, ...]] = ()
_NO_TAGS: Final[frozenset[str]] = frozenset()

MAX_TIMEOUT: Final = 1_000_000_000
"""The longest ``Turn(timeout=...)``, in seconds (about 31.7 years). Longer values
would reach event-loop time arithmetic that overflows (``10**400`` cannot become a
float; uvloop's millisecond timers overflow near ``1.8e13``); a turn always has a
deadline, so pass this when you mean "as long as it takes"."""


def _check_tool(turn: Turn, value: object) -> DecoratedTool[..., Any]:
    if isinstance(value, str):
        return ToolRegistry.get(value)
    if isinstance(value, DecoratedTool):
        return value
    raise TypeError(
        f"Turn(tool=...) takes a registered tool name or a @tool-decorated function, "
        f"got {type(value).__name__}"
    )


def _check_args(turn: Turn, value: object) -> tuple[Any, ...]:
    if value is None:
        return _EMPTY_ARGS
    if isinstance(value, (list, tuple)):
        return tuple(value)
    raise TypeError(f"Turn(args=...) takes a list or tuple, got {type(value).__name__}")


def _check_kwargs(turn: Turn, value: object) -> dict[str, Any]:
    if value is None:
        return {}
    if type(value) is dict or isinstance(value, Mapping):  # a dict skips the ABC check
        for key in value:
            if not isinstance(key, str):
                raise TypeError(f"Turn(kwargs=...) keys must be strings, got {brief(key)}")
        return dict(value)
    raise TypeError(f"Turn(kwargs=...) takes a dict, got {type(value).__name__}")


def _check_timeout(turn: Turn, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"Turn(timeout=...) takes seconds as a number, got {brief(value)}")
    if not (0 < value <= MAX_TIMEOUT):  # NaN fails both comparisons
        raise ValueError(
            f"Turn(timeout=...) must be a positive number of seconds, at most {MAX_TIMEOUT:_} "
            f"(about 31 years), got {brief(value)}; for no practical limit, pass {MAX_TIMEOUT:_}"
        )
    return value


class Turn(Generic[T]):
    """One call of one tool, generic in what the tool produces.

    ``T`` is the result of a coroutine tool (what ``returning()`` returns) or the
    type of each value of a streaming tool (what ``yielding()`` yields); a turn
    built from a tool object infers it, a turn built from a tool name is
    ``Turn[Any]`` unless annotated (``plan: Turn[str] = Turn("plan")``).

    Args:
        tool: a registered tool name (``"search"``, ``"parent.child"``) or the tool.
        args: positional arguments; a value that is a callable needing no arguments
            is called when the turn runs (*by reference*) and its result passed.
        kwargs: keyword arguments, treated the same way.
        timeout: seconds; bounds the call (``returning``) or the whole stream
            (``yielding``, consumer time included).
        tags: strings matched by global hooks declared with ``tags``.
        metadata: your own key/values (correlation ids, trace context); mutable at
            any time, serialized with the turn.
    """

    __slots__ = (
        "__weakref__",
        "_args",
        "_end",
        "_hooks",
        "_kwargs",
        "_metadata",
        "_run",
        "_start",
        "_tags",
        "_timeout",
        "_tool",
        "_uuid",
        "error",
        "output",
        "stop_reason",
    )

    tool = guarded(_check_tool)
    args = guarded(_check_args)
    kwargs = guarded(_check_kwargs)
    timeout = guarded(_check_timeout)
    tags = guarded(check_tags)

    before_run = HookSlot(TurnHook.BEFORE_RUN)
    after_run = HookSlot(TurnHook.AFTER_RUN)
    on_value = HookSlot(TurnHook.ON_VALUE)
    on_timeout = HookSlot(TurnHook.ON_TIMEOUT)
    on_error = HookSlot(TurnHook.ON_ERROR)
    on_complete = HookSlot(TurnHook.ON_COMPLETE)

    @overload
    def __init__(
        self: Turn[T],
        tool: DecoratedTool[..., Coroutine[Any, Any, T]],
        args: Sequence[Any] | None = None,
        kwargs: Mapping[str, Any] | None = None,
        timeout: float = 60,
        tags: Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: Turn[T],
        tool: DecoratedTool[..., AsyncGenerator[T, Any]],
        args: Sequence[Any] | None = None,
        kwargs: Mapping[str, Any] | None = None,
        timeout: float = 60,
        tags: Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: Turn[T],
        tool: DecoratedTool[..., AsyncIterator[T]],
        args: Sequence[Any] | None = None,
        kwargs: Mapping[str, Any] | None = None,
        timeout: float = 60,
        tags: Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: Turn[T],
        tool: str | DecoratedTool[..., Any],
        args: Sequence[Any] | None = None,
        kwargs: Mapping[str, Any] | None = None,
        timeout: float = 60,
        tags: Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None: ...
    def __init__(
        self,
        tool: str | DecoratedTool[..., Any],
        args: Sequence[Any] | None = None,
        kwargs: Mapping[str, Any] | None = None,
        timeout: float = 60,
        tags: Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self._tool = _check_tool(self, tool)
        self._args = _check_args(self, args)
        self._kwargs = _check_kwargs(self, kwargs)
        self._timeout = (
            timeout
            if type(timeout) is int and 0 < timeout <= MAX_TIMEOUT
            else _check_timeout(self, timeout)
        )
        # ``from_dict`` passes [] for a turn without tags: no check needed either.
        no_tags = tags is None or (type(tags) is list and not tags)
        self._tags = _NO_TAGS if no_tags else check_tags(self, tags)
        if (
            metadata is not None
            and type(metadata) is not dict
            and not isinstance(metadata, Mapping)
        ):
            raise TypeError(f"Turn(metadata=...) takes a dict, got {type(metadata).__name__}")
        self._metadata: dict[str, Any] | None = None if metadata is None else dict(metadata)
        self._hooks: HookList | None = None
        self._uuid: str | None = None
        self._run: TurnRun | None = None
        self._start: float | None = None
        self._end: float | None = None
        self.output: Any = None
        self.stop_reason: StopReason | None = None
        self.error: BaseException | None = None
        if BUS.creators:
            BUS.created(self)

    # -- plain attributes -------------------------------------------------------------

    @property
    def uuid(self) -> str:
        """A unique id, created on first use and kept through serialization."""
        if self._uuid is None:
            self._uuid = new_uuid()
        return self._uuid

    @property
    def metadata(self) -> dict[str, Any]:
        """Your own key/values; mutable at any time, even while running."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @metadata.setter
    def metadata(self, value: Mapping[str, Any]) -> None:
        if not isinstance(value, Mapping):
            raise TypeError(f"Turn.metadata takes a dict, got {type(value).__name__}")
        self._metadata = dict(value)

    @property
    def hooks(self) -> list[Hook[Any]]:
        """This turn's own hooks, fired before global ones; only hooks may go in."""
        if self._hooks is None:
            self._hooks = HookList(Turn, "hooks")
        return self._hooks

    @hooks.setter
    def hooks(self, value: Iterable[Hook[Any]]) -> None:
        if self._run is not None:
            raise SafeExecutionError(f"cannot replace the hooks of {self!r} while it is running")
        self._hooks = HookList.coerce(self, "hooks", value)

    @property
    def start_time(self) -> datetime | None:
        return from_timestamp(self._start)

    @property
    def end_time(self) -> datetime | None:
        return from_timestamp(self._end)

    @property
    def is_running(self) -> bool:
        return self._run is not None

    @property
    def scope(self) -> TurnRun | None:
        """The scope of the run in progress, if any."""
        return self._run

    def _busy(self) -> str | None:
        return "running" if self._run is not None else None

    def __repr__(self) -> str:
        state = "running" if self._run is not None else (self.stop_reason or "pending")
        return f"<Turn {self._tool.name!r} {state}>"

    # -- running ----------------------------------------------------------------------

    def _open(
        self,
        parent: Scope | None,
        streaming: bool,
        extra_hooks: list[Hook[Any]] | None = None,
        runner: Runner | None = None,
    ) -> TurnRun:
        tool = self._tool
        if tool.streaming is not streaming:
            right, wrong = (
                ("yielding", "returning") if tool.streaming else ("returning", "yielding")
            )
            raise WrongRunMethodError(
                f"{wrong}() cannot run {self!r}: tool {tool.name!r} "
                f"{'streams values' if tool.streaming else 'returns one value'}; use {right}()"
            )
        if self._run is not None:
            raise SafeExecutionError(
                f"{self!r} is already running; a turn runs once at a time — create a new "
                "Turn (or wait for this one) to run it again"
            )
        run = TurnRun(self, parent, extra_hooks, runner)
        self._begin(run)
        if observers := BUS.scopers_by_kind[TURN_SCOPE]:
            BUS.start(run, observers)
        return run

    # A run changes its turn only through these three methods, so what a turn holds
    # during and after a run (and in which order) reads in one place.

    def _begin(self, run: TurnRun) -> None:
        """A run starts: it owns the turn, and the previous outcome is forgotten."""
        self._run = run
        self._start = time.time()
        self._end = None
        self.output = None
        self.stop_reason = None
        self.error = None

    def _settle(
        self,
        output: Any,
        stop_reason: StopReason,
        error: BaseException | None,
        detach: bool = False,
    ) -> None:
        """The run's outcome. The turn still shows as running until `_detach`
        (or ``detach=True``, when no hook is left to run), because its closing hooks
        see the outcome first; one that raises changes the outcome, which is then
        settled again."""
        self.output = output
        self._end = time.time()
        self.stop_reason = stop_reason
        self.error = error
        if detach:
            self._run = None

    def _detach(self) -> None:
        """The run is over (only ``ON_COMPLETE`` may still be running): the turn can
        run again."""
        self._run = None

    async def returning(self) -> T:
        """Run a coroutine tool and return its result."""
        run = self._open(current_scope(), False)
        try:
            result = await run.call()
        except BaseException as exc:
            await run.finish(exc)
            raise
        if not run.finish_quietly(result):
            await run.finish(None, result)
        value: T = result  # the tool's result, typed by the tool this turn was built from
        return value

    async def yielding(self) -> AsyncGenerator[T, None]:
        """Run a streaming tool, yielding each value as it is produced."""
        run = self._open(current_scope(), True)
        error: BaseException | None = None
        try:
            await run.start_stream()
            run.resume()
            try:
                async for value in run.agen:
                    if run.step_done(value):
                        await run.value_hooks(value)
                    yield value
                    run.resume()
                run.step_failed(None)
            except BaseException as exc:
                run.step_failed(exc)
                raise
        except BaseException as exc:
            error = exc
            raise
        finally:
            await run.finish(error)

    def copy(self) -> Turn[T]:
        """A new, not-yet-run turn with the same tool, arguments, settings and hooks."""
        clone: Turn[T] = Turn(
            self._tool,
            self._args,
            self._kwargs,
            self._timeout,
            self._tags,
            dict(self._metadata) if self._metadata else None,
        )
        clone._hooks = HookList(Turn, "hooks", self._hooks) if self._hooks else None
        return clone

    # -- serialization ----------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``TypeError`` names any value JSON cannot hold."""
        return {
            "uuid": self.uuid,
            "tool_name": self._tool.name,
            "args": json_value(list(self._args), lambda: f"{self._where()} args"),
            "kwargs": json_value(self._kwargs, lambda: f"{self._where()} kwargs"),
            "metadata": json_value(self._metadata or {}, lambda: f"{self._where()} metadata"),
            "timeout": self._timeout,
            "tags": sorted(self._tags) if self._tags else [],
            "hooks": hooks_to_data(self._hooks) if self._hooks else [],
            "start_time": to_iso(self._start),
            "end_time": to_iso(self._end),
            "stop_reason": None if self.stop_reason is None else self.stop_reason.value,
            "output": json_value(self.output, lambda: f"{self._where()} output"),
        }

    def _where(self) -> str:
        """How `to_dict` names this turn in an error (only then: ``repr`` costs)."""
        return f"Turn.to_dict() of {self!r}:"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Turn:
        """Rebuild a turn; tool and hooks are resolved from their registries."""
        return cls._read(Reader(data, "Turn"))

    @classmethod
    def _read(cls, r: Reader) -> Turn:
        """The turn ``r`` holds (an agent reads its queued turns with this too)."""
        turn = r.build(
            cls,
            r.lookup(ToolRegistry, "tool_name", r.text("tool_name")),
            args=r.json("args", "list"),
            kwargs=r.json("kwargs", "object"),
            timeout=r.number("timeout"),
            tags=r.strings("tags"),
            metadata=r.json("metadata", "object"),
        )
        turn._uuid = r.text("uuid")
        hooks = r.hooks()
        turn._hooks = HookList(Turn, "hooks", hooks) if hooks else None
        turn._start = r.time("start_time")
        turn._end = r.time("end_time")
        turn.stop_reason = r.enum(StopReason, "stop_reason")
        turn.output = r.json("output")
        return turn
