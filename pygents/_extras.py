"""What to say when a part of pygents is used without the extra that installs it.

``pygents_otel`` and ``pygents_tui`` live in this distribution but need third-party
packages that only their extras bring. Without them, Python's own error names a
module the user never asked for (``No module named 'textual'``); these helpers turn
it into one line that names the extra and the command that adds it to this
installation (which depends on how pygents was installed: see `install_hint`).
Standard library only, like the rest of the core.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from pygents._version import __version__


class MissingExtraError(ModuleNotFoundError):
    """A part of pygents was imported without the extra that installs its dependencies."""


@dataclass(frozen=True)
class Origin:
    """Where the installed ``pygents`` came from: a checkout installed editable, or a
    wheel file (``path``); read from the ``direct_url.json`` the installer wrote."""

    editable: bool
    path: Path


def installed_from() -> Origin | None:
    """The checkout or wheel this ``pygents`` was installed from, if the installer said
    so and it still exists; ``None`` otherwise (from an index, or the file was moved)."""
    # Only on this error path: both import much of the standard library.
    import importlib.metadata
    import urllib.parse
    import urllib.request

    try:
        recorded = importlib.metadata.distribution("pygents").read_text("direct_url.json")
        data = json.loads(recorded or "null")
        parsed = urllib.parse.urlsplit(data["url"])
        editable = bool(data.get("dir_info", {}).get("editable"))
    except (OSError, ValueError, LookupError, TypeError, AttributeError):
        # Not installed as a distribution (PackageNotFoundError is a LookupError), or
        # a record in a shape other than the standard's: say nothing rather than guess.
        return None
    if parsed.scheme != "file":
        return None
    path = Path(urllib.request.url2pathname(parsed.path))
    # A wheel installs a copy, so the file may be gone by now: never name it then.
    if not (path.is_dir() if editable else path.is_file()):
        return None
    return Origin(editable, path)


def install_hint(extra: str, origin: Origin | None) -> str:
    """What to run to add ``extra`` to an installation from ``origin`` (what
    `installed_from` found; ``None`` when it found nothing).

    The command depends on how pygents was installed: an editable checkout is
    reinstalled from its directory, a wheel from its file. When neither is known,
    both ways are given, naming no path that may not exist on this machine.
    """
    if origin is not None and origin.editable:
        return (
            f'reinstall it from its checkout with the extra: uv pip install -e "{origin.path}'
            f'[{extra}]" (or uv sync there, for the environment of that checkout)'
        )
    if origin is not None:
        return f'reinstall the wheel with the extra: uv pip install "{origin.path}[{extra}]"'
    return (
        f'in a checkout, run uv sync (or uv pip install -e ".[{extra}]"); from a wheel, '
        f'reinstall it with the extra: uv pip install "pygents-{__version__}-py3-none-any'
        f'.whl[{extra}]", with the path of your wheel'
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
        f"{part} needs the {extra!r} extra ({provides[0]} is not installed): "
        + install_hint(extra, installed_from()),
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
