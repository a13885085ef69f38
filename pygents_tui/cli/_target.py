"""Loading the user's entry point for ``pygents-tui run``.

``run`` watches a program by running its coroutine in the dashboard's own event
loop, so it imports the program first and calls the coroutine function after. A
program written as a script starts its own loop while it is imported instead:
``asyncio.run(main())`` on its last line, with no ``if __name__ == "__main__":``
guard (the README's quick start is one). Imported as it is, such a script would run
whole before the dashboard is up, where nothing watches it, and then once more
when the dashboard calls ``main`` (its agents already registered: it fails).

So nothing the program's import starts runs unseen (`_ImportGuard`): while the
target is imported, the first event loop started on the importing thread stops the
import at that call, before the loop runs anything, and

* a file target's own ``asyncio.run(coro)`` (or ``asyncio.Runner().run(coro)``) is
  taken over: that very coroutine, built by the script with the arguments it chose,
  is the workload the dashboard runs, once. ``pygents-tui run app.py`` then watches
  the program ``python app.py`` runs. What follows the call in the file does not run
  (an import cannot be resumed after the program ran), and `Target.note` says so
  in one line, with the line of the call. A target named with ``:callable`` runs that
  callable as asked, the script's coroutine closed unstarted (noted too);
* any other start is refused in one line that names the line and the fix (guard it
  with ``if __name__ == "__main__":``): a loop driven by hand
  (``loop.run_until_complete``, ``run_forever``) may hold callbacks, servers or
  objects bound to that loop that cannot move to the dashboard's; a module target
  (``package.module:callable``) names a callable in a module that importing should
  not run; and a loop started by another module the program imports is not the
  program's own call, whose coroutine could stand for the program.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import importlib.util
import inspect
import linecache
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any, Final

from pygents_tui.text._cut import cut

__all__ = ["Target", "TargetError", "load_target"]

_ASYNCIO: Final = os.path.dirname(asyncio.__file__) + os.sep
_SHOWN_CALL: Final = 60  # characters of the program's line quoted in a message


class TargetError(Exception):
    """The entry point could not be found or is not an async callable."""


@dataclass(frozen=True, slots=True, eq=False)
class Target:
    """The workload ``run`` watches: calling it gives the awaitable the dashboard
    runs. ``note`` is one line on what loading did that the user should know (a
    script's ``asyncio.run`` taken over), or ``None``."""

    start: Callable[[], Awaitable[Any]]
    note: str | None = None

    def __call__(self) -> Awaitable[Any]:
        return self.start()


def load_target(target: str) -> Target:
    """``path/to/app.py[:callable]`` or ``package.module:callable`` (``main`` by default)."""
    location, _, named = target.rpartition(":") if ":" in target else (target, "", "")
    name = named or "main"
    note = None
    if location.endswith(".py") or Path(location).suffix == ".py":
        guard = _ImportGuard(Path(location))
        module = _load_file(Path(location), guard)
    else:
        guard = _ImportGuard(None)
        if not location:
            raise TargetError(f"{target!r}: give PATH.py[:callable] or package.module:callable")
        _importable(os.getcwd())  # as `python -m` does
        try:
            with guard:
                module = importlib.import_module(location)
        except _LoopStarted:
            assert guard.started is not None  # (`_ImportGuard._stop` says where)
            raise TargetError(_refusal(guard.started, name)) from None
        except ImportError as exc:
            raise TargetError(f"cannot import {location!r}: {exc}") from None
    started = guard.started
    if started is not None:
        if started.coroutine is None:
            raise TargetError(_refusal(started, name))
        if not named:  # the script's own coroutine is the program
            return Target(_once(started.coroutine), _taken_over(location, started))
        started.coroutine.close()
        note = _stopped(location, started, name)
    entry = getattr(module, name, None)
    if entry is None:
        why = f" (its import stopped at line {started.line})" if started is not None else ""
        raise TargetError(
            f"{location} has no {name!r}{why}; name the coroutine function: {location}:NAME"
        )
    if not callable(entry):
        raise TargetError(f"{location}:{name} is not callable")
    # Known before the dashboard starts: a plain function that is not ``async def``
    # (other callables are checked when called, below).
    if inspect.isasyncgenfunction(entry):
        raise TargetError(f"{location}:{name} is an async generator; it must return, not yield")
    if (inspect.isfunction(entry) or inspect.ismethod(entry)) and not (
        inspect.iscoroutinefunction(entry)
    ):
        raise TargetError(f"{location}:{name} is not async: define it with 'async def'")
    try:
        inspect.signature(entry).bind()
    except TypeError:
        raise TargetError(f"{location}:{name} must be callable with no arguments") from None
    except ValueError:
        pass

    async def workload() -> Any:
        result = entry()
        if not inspect.isawaitable(result):
            raise TargetError(f"{location}:{name} is not async: define it with 'async def'")
        return await result

    return Target(workload, note)


def _load_file(path: Path, guard: _ImportGuard) -> ModuleType:
    if not path.is_file():
        raise TargetError(f"no such file: {path}")
    module_name = f"_pygents_tui_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot load {path} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    _importable(str(path.resolve().parent))  # as `python PATH.py` does
    try:
        with guard:
            spec.loader.exec_module(module)
    except _LoopStarted:
        pass  # (said below: the program may also have caught it)
    except SyntaxError as exc:
        raise TargetError(f"{path}: syntax error on line {exc.lineno}: {exc.msg}") from None
    except Exception as exc:
        raise TargetError(f"{path} raised while loading: {type(exc).__name__}: {exc}") from None
    return module


def _importable(directory: str) -> None:
    """Put ``directory`` first on ``sys.path``, as Python does for what it runs, so
    that the program imports its own modules and packages without ``PYTHONPATH``.
    The console script's own folder is first otherwise."""
    if not sys.path or sys.path[0] != directory:
        sys.path.insert(0, directory)


# -- an event loop started while the program is imported ------------------------------------


class _LoopStarted(BaseException):
    """Raised into the program where its import starts an event loop, before the loop
    runs anything: it ends the import there. Not an `Exception`, so that the
    program's own ``except Exception`` does not take it for one of its errors."""


@dataclass(slots=True)
class _Start:
    """Where the import started a loop: the file (``shown`` as the user named it)
    and line of the program's import being run (the outermost module frame); where
    in another file the loop was started from, if it was (``inner``); and the
    coroutine to take over, if the start was a file target's own ``asyncio.run``."""

    file: str
    shown: str
    line: int
    inner: str | None
    coroutine: Coroutine[Any, Any, Any] | None

    @property
    def call(self) -> str:
        """The program's line, as written (bounded)."""
        return cut(linecache.getline(self.file, self.line).strip(), _SHOWN_CALL)

    @property
    def runs(self) -> str:
        """The coroutine's function, as ``main()``."""
        return f"{getattr(self.coroutine, '__qualname__', 'the coroutine')}()"

    def more_follows(self) -> bool:
        """Whether the file has statements after the line that made the call."""
        try:
            tree = ast.parse("".join(linecache.getlines(self.file)))
        except (SyntaxError, ValueError):
            return False
        return any(isinstance(n, ast.stmt) and n.lineno > self.line for n in ast.walk(tree))


class _ImportGuard:
    """While entered, on the entering thread, every start of an event loop
    (`asyncio.Runner.run`, which ``asyncio.run`` calls; a loop's
    ``run_until_complete`` or ``run_forever``) raises `_LoopStarted` instead, before
    the loop runs anything, and the first is recorded (`started`); see the module
    docstring. ``own`` is a file target: its own ``asyncio.run`` is taken over.
    Other threads' loops, and loops started once the guard is left, run as they
    would."""

    def __init__(self, own: Path | None) -> None:
        self._own = os.path.realpath(own) if own is not None else None
        self._own_shown = str(own)
        self.started: _Start | None = None
        self._thread = threading.get_ident()
        self._restore: list[tuple[type, str, Any]] = []

    def __enter__(self) -> None:
        self._thread = threading.get_ident()
        for owner, method, wrap in (
            (asyncio.Runner, "run", self._runner_run),
            (asyncio.BaseEventLoop, "run_until_complete", self._loop_run),
            (asyncio.BaseEventLoop, "run_forever", self._loop_run),
        ):
            original = owner.__dict__[method]
            self._restore.append((owner, method, original))
            setattr(owner, method, wrap(original))

    def __exit__(self, *exc_info: object) -> None:
        while self._restore:
            owner, method, original = self._restore.pop()
            setattr(owner, method, original)

    def _mine(self) -> bool:
        return threading.get_ident() == self._thread

    def _runner_run(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def run(runner: asyncio.Runner, coro: Any, **options: Any) -> Any:
            if not self._mine() or not inspect.iscoroutine(coro):
                return original(runner, coro, **options)  # (not a coroutine: refused there)
            raise self._stop(sys._getframe(1), coro, takes=True)

        return run

    def _loop_run(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def run(loop: asyncio.BaseEventLoop, *args: Any) -> Any:
            if not self._mine():
                return original(loop, *args)
            coroutine = next((arg for arg in args if inspect.iscoroutine(arg)), None)
            raise self._stop(sys._getframe(1), coroutine, takes=False)

        return run

    def _stop(
        self, frame: FrameType, coroutine: Coroutine[Any, Any, Any] | None, *, takes: bool
    ) -> _LoopStarted:
        """Record the first start (`_Start`), its coroutine kept if it is taken over
        (``takes``: an ``asyncio.run``, called by the file target's own code), else
        closed unstarted (no "never awaited" warning either); what to raise where the
        loop would have started."""
        caller = frame
        while caller.f_back is not None and caller.f_code.co_filename.startswith(_ASYNCIO):
            caller = caller.f_back  # asyncio.run, on its way to Runner.run
        outermost = caller
        walked: FrameType | None = caller
        while walked is not None and walked.f_code not in _LOADERS:
            if walked.f_code.co_name == "<module>":
                outermost = walked
            walked = walked.f_back
        file = outermost.f_code.co_filename
        own = self._own is not None and os.path.realpath(file) == self._own
        taken = takes and self.started is None and own and caller.f_code.co_filename == file
        if coroutine is not None and not taken:
            coroutine.close()
        if self.started is None:
            inner = caller.f_code.co_filename
            self.started = _Start(
                file,
                self._own_shown if own else file,
                outermost.f_lineno,
                f"{inner} line {caller.f_lineno}" if inner != file else None,
                coroutine if taken else None,
            )
        return _LoopStarted()


_LOADERS: Final = frozenset((_load_file.__code__, load_target.__code__))


def _once(coroutine: Coroutine[Any, Any, Any]) -> Callable[[], Awaitable[Any]]:
    """The taken-over coroutine as a workload: it can be run once."""
    left = [coroutine]

    def start() -> Awaitable[Any]:
        if not left:
            raise TargetError("the script's coroutine has run already: it runs once")
        return left.pop()

    return start


def _taken_over(location: str, started: _Start) -> str:
    rest = f", and the lines after it in {location} do not run" if started.more_follows() else ""
    return (
        f"{location} calls {started.call} on import (line {started.line}): the dashboard "
        f"runs {started.runs} in its own loop instead{rest}"
    )


def _stopped(location: str, started: _Start, name: str) -> str:
    return (
        f"{location} calls {started.call} on import (line {started.line}): its import "
        f"stopped there, {started.runs} unrun; the dashboard runs {name}() as named"
    )


def _refusal(started: _Start, name: str) -> str:
    """One line: where the program's import started a loop, and the fix."""
    inner = f"; the loop starts at {started.inner}" if started.inner is not None else ""
    return (
        f"{started.shown} starts an event loop while it is imported (line {started.line}: "
        f"{started.call}{inner}), which pygents-tui run cannot watch: put the call that "
        f"starts it under 'if __name__ == \"__main__\":' and pygents-tui run calls "
        f"{name}() itself"
    )
