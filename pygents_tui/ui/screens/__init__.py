"""The dashboard's screens."""

from pygents_tui.ui.screens.help import HelpScreen
from pygents_tui.ui.screens.inspector import DetailScreen, ErrorScreen, InspectorScreen, TextScreen
from pygents_tui.ui.screens.main import MainScreen

__all__ = [
    "DetailScreen",
    "ErrorScreen",
    "HelpScreen",
    "InspectorScreen",
    "MainScreen",
    "TextScreen",
]
