"""What to say when a part of pygents is used without the extra that installs it.

``pygents_otel`` and ``pygents_tui`` live in this distribution but need third-party
packages that only their extras bring. Without them, Python's own error names a
module the user never asked for (``No module named 'textual'``); these helpers turn
it into one line that names the extra and the install command of the install guide.
Standard library only, like the rest of the core.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from pygents._version import __version__


class MissingExtraError(ModuleNotFoundError):
    """A part of pygents was imported without the extra that installs its dependencies."""


def install_hint(extra: str) -> str:
    """The command that adds ``extra``, as the install guide gives it."""
    return (
        f'uv pip install "dist/pygents-{__version__}-py3-none-any.whl[{extra}]" '
        f'(or uv pip install -e ".[{extra}]" in a checkout)'
    )


def missing_extra(
    error: ModuleNotFoundError, part: str, extra: str, provides: tuple[str, ...]
) -> MissingExtraError | None:
    """The error to raise instead of ``error`` when the missing module is one that
    ``extra`` installs (its top-level name is in ``provides``); ``None`` otherwise,
    so that any other missing module keeps its own error. The message names the
    extra's main package (``provides[0]``), whichever of its modules was imported first."""
    missing = error.name or ""
    if missing.split(".")[0] not in provides:
        return None
    return MissingExtraError(
        f"{part} needs the {extra!r} extra ({provides[0]} is not installed): {install_hint(extra)}",
        name=missing,
    )


def import_from_extra(module: str, part: str, extra: str, provides: tuple[str, ...]) -> ModuleType:
    """Import ``module``; if a module that ``extra`` provides is missing, raise
    `MissingExtraError` naming the extra instead."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        replacement = missing_extra(error, part, extra, provides)
        if replacement is None:
            raise
        raise replacement from None
