"""The ``pygents-tui`` console script.

It imports the command line (and with it Textual) only after checking that the 'tui'
extra is installed, so that without it the command says in one line which extra to
install (exit 2) — even for ``--help`` — instead of failing inside an import.
``--version`` alone is answered here first: what is installed is worth knowing most
when an extra is missing.

Ctrl-C at any point of the start-up (the imports take most of the first second) ends
the command with one line and exit status 130, as it does once the dashboard runs,
never a traceback of whichever import it fell in. So this module imports almost
nothing before `run` starts: importing ``pygents`` alone takes a fifth of a second.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's, without importing typing (see above)
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["run", "version"]


def version() -> str:
    """What ``pygents-tui --version`` prints, here and in the full command line."""
    from pygents_tui import __version__

    return f"pygents-tui {__version__}"


def run() -> NoReturn:
    """Run ``pygents-tui`` with ``sys.argv`` and exit with its status."""
    try:
        status = _run()
    except KeyboardInterrupt:  # in an import, or anywhere the commands do not catch it
        print("pygents-tui: interrupted", file=sys.stderr)
        status = 130  # as `pygents_tui.ui.app.INTERRUPTED`, which needs Textual imported
    sys.exit(status)


def _run() -> int:
    if sys.argv[1:] == ["--version"]:
        print(version())
        return 0
    from pygents._extras import MissingExtraError, import_from_extra
    from pygents_tui import TUI_PROVIDES

    try:
        cli = import_from_extra("pygents_tui.cli._commands", "pygents-tui", "tui", TUI_PROVIDES)
    except MissingExtraError as error:
        print(error, file=sys.stderr)
        return 2
    status: int = cli.main()
    return status
