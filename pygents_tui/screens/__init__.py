"""The dashboard's screens."""

from pygents_tui.screens.help import HelpScreen
from pygents_tui.screens.inspector import InspectorScreen
from pygents_tui.screens.main import MainScreen

__all__ = ["HelpScreen", "InspectorScreen", "MainScreen"]
