"""The dashboard's screens."""

from pygents_tui.screens.help import HelpScreen
from pygents_tui.screens.inspector import ErrorScreen, InspectorScreen, TextScreen
from pygents_tui.screens.main import MainScreen

__all__ = ["ErrorScreen", "HelpScreen", "InspectorScreen", "MainScreen", "TextScreen"]
