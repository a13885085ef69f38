"""The program's own output (its ``print()``), captured while the dashboard runs."""

from __future__ import annotations

from pygents_tui.ui._output import LINES, ProgramOutput
from pygents_tui.ui.widgets._panel import FollowingLog


class OutputLog(FollowingLog):
    """The last lines the program wrote to stdout and stderr, in order; follows the
    newest until scrolled back, as the Values panel does. All of it is printed again
    when the dashboard exits."""

    def __init__(self, output: ProgramOutput, *, id: str | None = None) -> None:
        super().__init__(max_lines=LINES, highlight=False, id=id)
        self.output = output
        self._written = 0

    def refresh_from(self, agent: str | None) -> None:
        """Write the lines completed since the last call (every agent's: ``agent`` is
        unused, output is the program's)."""
        output = self.output
        fresh = min(output.total_lines - self._written, len(output.lines))
        if fresh > 0:
            self.write_lines(list(output.lines)[-fresh:])
        self._written = output.total_lines
