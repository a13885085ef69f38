"""The Textual app: `Dashboard`, its screens and widgets, acting on a source
(confirmations), exports and the program-output pane.

The app reads the store through its read API (`pygents_tui.state.DashboardView`)
and never knows which feeder writes it.
"""
