"""The dashboard's screens."""

from pygents_tui.screens.help import HelpScreen
from pygents_tui.screens.inspector import DetailScreen, ErrorScreen, InspectorScreen, TextScreen
from pygents_tui.screens.main import MainScreen

__all__ = [
    "DetailScreen",
    "ErrorScreen",
    "HelpScreen",
    "InspectorScreen",
    "MainScreen",
    "TextScreen",
]
