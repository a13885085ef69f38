"""Loading the user's entry point for ``pygents-tui run``."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

__all__ = ["TargetError", "load_target"]


class TargetError(Exception):
    """The entry point could not be found or is not an async callable."""


def load_target(target: str) -> Callable[[], Awaitable[Any]]:
    """``path/to/app.py[:callable]`` or ``package.module:callable`` (``main`` by default)."""
    location, _, name = target.rpartition(":") if ":" in target else (target, "", "")
    name = name or "main"
    if location.endswith(".py") or Path(location).suffix == ".py":
        module = _load_file(Path(location))
    else:
        if not location:
            raise TargetError(f"{target!r}: give PATH.py[:callable] or package.module:callable")
        _importable(os.getcwd())  # as `python -m` does
        try:
            module = importlib.import_module(location)
        except ImportError as exc:
            raise TargetError(f"cannot import {location!r}: {exc}") from None
    entry = getattr(module, name, None)
    if entry is None:
        raise TargetError(
            f"{location} has no {name!r}; name the coroutine function: {location}:NAME"
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

    return workload


def _load_file(path: Path) -> Any:
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
        spec.loader.exec_module(module)
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
