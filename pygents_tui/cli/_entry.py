"""The ``pygents-tui`` console script.

It imports the command line (and with it Textual) only after checking that the 'tui'
extra is installed, so that without it the command says in one line which extra to
install (exit 2) — even for ``--help`` — instead of failing inside an import.
``--version`` alone is answered here first: what is installed is worth knowing most
when an extra is missing.
"""

from __future__ import annotations

import sys
from typing import NoReturn

from pygents._extras import MissingExtraError, import_from_extra
from pygents_tui import TUI_PROVIDES, __version__

__all__ = ["VERSION", "run"]

VERSION = f"pygents-tui {__version__}"
"""What ``pygents-tui --version`` prints, here and in the full command line."""


def run() -> NoReturn:
    """Run ``pygents-tui`` with ``sys.argv`` and exit with its status."""
    if sys.argv[1:] == ["--version"]:
        print(VERSION)
        sys.exit(0)
    try:
        cli = import_from_extra("pygents_tui.cli._commands", "pygents-tui", "tui", TUI_PROVIDES)
    except MissingExtraError as error:
        print(error, file=sys.stderr)
        sys.exit(2)
    sys.exit(cli.main())
