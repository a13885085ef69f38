"""``python -m pygents_tui``: the ``pygents-tui`` command, through this interpreter (how
``--web`` starts the dashboard for each browser, whatever the console script's path)."""

from pygents_tui.cli._entry import run

run()
