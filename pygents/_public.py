"""Public names report the module users import them from.

pygents keeps its code in private modules (``pygents._errors``, ``pygents_otel._setup``)
and curates the public API in each package's ``__init__``. Left alone, every class and
function would name its private module in tracebacks, reprs and error reports
(``pygents._errors.TurnTimeoutError``), inviting users to import from a path that may
move. `publish` renames them once, at import, to the package's own name.

Pickle and ``copy`` find a class by ``__module__`` and ``__qualname__``, so they keep
working: ``pygents.TurnTimeoutError`` is an attribute of ``pygents``. Functions'
annotations still resolve, as ``typing.get_type_hints`` reads a function's own globals.
A class's do not by themselves: ``typing.get_type_hints`` evaluates them in the module
``__module__`` names, where ``Any`` or a private helper is not defined. So each string
annotation of a renamed class becomes a ``typing.ForwardRef`` that carries the module
it was written in, which ``get_type_hints`` then evaluates it in.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from types import FunctionType
from typing import ForwardRef


def publish(package: str, names: Iterable[str], namespace: Mapping[str, object]) -> None:
    """Set ``__module__`` to ``package`` on each class or function among ``names`` that
    one of its private modules defines (``pygents.redis._worker.worker`` for ``pygents.redis``).

    Names from public modules (``pygents_tui.ui.app``) keep theirs, and so do objects that
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
            if isinstance(value, type):
                _pin_annotations(value, module)
            value.__module__ = package


def _pin_annotations(cls: type, module: str) -> None:
    """Tie ``cls``'s own string annotations to ``module``, where they were written.

    Lazy still (nothing is evaluated here, so a forward reference to a class defined
    later keeps working), and ``dataclasses.fields`` is unaffected: it copied the
    strings when the class was made.
    """
    annotations = inspect.get_annotations(cls)  # its own, not its bases', and a copy
    if any(isinstance(value, str) for value in annotations.values()):
        cls.__annotations__ = {
            name: ForwardRef(value, is_argument=False, module=module, is_class=True)
            if isinstance(value, str)
            else value
            for name, value in annotations.items()
        }
