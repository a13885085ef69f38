"""Public names report the module users import them from.

pygents keeps its code in private modules (``pygents._errors``, ``pygents_otel._setup``)
and curates the public API in each package's ``__init__``. Left alone, every class and
function would name its private module in tracebacks, reprs and error reports
(``pygents._errors.TurnTimeoutError``), inviting users to import from a path that may
move. `publish` renames them once, at import, to the package's own name.

Pickle and ``copy`` find a class by ``__module__`` and ``__qualname__``, so they keep
working: ``pygents.TurnTimeoutError`` is an attribute of ``pygents``. Functions'
annotations still resolve, as ``typing.get_type_hints`` reads a function's own globals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import FunctionType


def publish(package: str, names: Iterable[str], namespace: Mapping[str, object]) -> None:
    """Set ``__module__`` to ``package`` on each class or function among ``names`` that
    one of its private modules defines (``pygents.redis._worker`` for ``pygents.redis``).

    Names from public modules (``pygents_tui.app``) keep theirs, and so do objects that
    are not classes or functions (a registry instance, a constant): their type, not
    they, says where they come from.
    """
    prefix = f"{package}."
    for name in names:
        value = namespace[name]
        if not isinstance(value, (type, FunctionType)):
            continue
        module = value.__module__
        if module.startswith(prefix) and any(
            part.startswith("_") for part in module[len(prefix) :].split(".")
        ):
            value.__module__ = package
