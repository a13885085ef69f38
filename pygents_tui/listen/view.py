"""The panels' read API, under the name it had before it moved to `pygents_tui.state`
(where the state every source shares lives): kept for code that imports it from here."""

from __future__ import annotations

from pygents_tui.state._view import *  # noqa: F403  (every name of its __all__)
from pygents_tui.state._view import __all__ as __all__
