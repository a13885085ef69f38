"""``pygents-tui replay FILE``: the listen dashboard, fed from a recording.

The same dashboard as ``listen`` (read-only), whose refresh timer drives the
replay (`pygents_tui.feeders.ReplayView`); the subtitle says it is a replay,
where it is, at what speed, and "end of recording" once it is there. Its own keys:

* ``space`` pauses and resumes the replay (live, it freezes the screen; here
  pausing the replay is what holds the screen still);
* ``+`` / ``-`` change the speed, 1× to 100×;
* ``[`` / ``]`` seek 10 s back or forward, ``<`` / ``>`` to the start or the end.
  Not the arrows, ``home`` and ``end``: the tables and logs use those to move
  their own cursor.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import ClassVar

from textual.binding import Binding, BindingType

from pygents_tui.cli._terminal import refuse_without_terminal
from pygents_tui.feeders import ReplayView
from pygents_tui.recording import Recording, RecordingError
from pygents_tui.ui.app import Dashboard

__all__ = ["ReplayDashboard", "open_replay", "run"]

SEEK_SECONDS = 10.0


class ReplayDashboard(Dashboard):
    """The dashboard showing the store a `ReplayView` feeds, with the replay's keys."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "replay_pause", "Pause replay", tooltip="pause or resume the replay"),
        Binding("plus", "replay_speed(1)", "Faster", tooltip="play faster (up to 100×)"),
        Binding("minus", "replay_speed(-1)", "Slower", tooltip="play slower (down to 1×)"),
        Binding(
            "left_square_bracket",
            f"replay_seek({-SEEK_SECONDS})",
            "Back 10 s",
            tooltip="seek 10 s back",
        ),
        Binding(
            "right_square_bracket",
            f"replay_seek({SEEK_SECONDS})",
            "On 10 s",
            tooltip="seek 10 s forward",
        ),
        Binding("less_than_sign", "replay_start", "Start", show=False, tooltip="seek to the start"),
        Binding("greater_than_sign", "replay_end", "End", show=False, tooltip="seek to the end"),
    ]

    def __init__(self, view: ReplayView, name: str, trace_url: str | None = None) -> None:
        super().__init__(view=view.store, title=f"replay · {name}", trace_url=trace_url)
        self.replay_view = view
        self._name = name

    def refresh_view(self) -> None:
        """Play and fold what is due (the store asks the replay), then say where it is."""
        super().refresh_view()
        self.sub_title = f"replay · {self._name} · {self.replay_view.status()}"

    def action_replay_pause(self) -> None:
        self.replay_view.replay.toggle_pause()
        self.refresh_view()

    def action_replay_speed(self, step: int) -> None:
        replay = self.replay_view.replay
        if step > 0:
            replay.faster()
        else:
            replay.slower()
        self.refresh_view()

    def action_replay_seek(self, seconds: float) -> None:
        self.replay_view.replay.seek_by(seconds)
        self.refresh_view()

    def action_replay_start(self) -> None:
        replay = self.replay_view.replay
        replay.seek(replay.start_ns)
        self.refresh_view()

    def action_replay_end(self) -> None:
        replay = self.replay_view.replay
        replay.seek(replay.end_ns)
        self.refresh_view()


def open_replay(
    path: str, *, speed: float = 1.0, clock: Callable[[], float] | None = None
) -> ReplayView:
    """The replay of ``path``; `RecordingError` (one line) if it is not a recording."""
    recording = Recording(path)
    if not recording.first_ns:
        recording.close()
        raise RecordingError(
            f"{path} is not a recording: no OTLP/JSON export request with a time in its"
            " first lines (one request per line, as --record or a Collector's file"
            " exporter writes them)"
        )
    if clock is None:
        return ReplayView(recording, speed=speed)
    return ReplayView(recording, speed=speed, clock=clock)


def run(
    path: str,
    *,
    speed: float,
    trace_url: str | None,
    interrupts: Callable[[Dashboard], AbstractContextManager[None]],
    configure: Callable[[Dashboard], None] | None = None,
) -> int:
    """Replay ``path`` until the user quits; the exit status (2: not a recording).
    ``configure`` applies the configuration file's settings to the app."""
    try:
        view = open_replay(path, speed=speed)
    except RecordingError as error:
        print(f"pygents-tui replay: error: {error}", flush=True, file=sys.stderr)
        return 2
    if refuse_without_terminal():
        view.close()
        return 2
    app = ReplayDashboard(view, Path(path).name, trace_url)
    if configure is not None:
        configure(app)
    with interrupts(app):
        app.run()
    app.output.replay()
    if app.exit_reason is not None:
        print(f"pygents-tui: {app.exit_reason}", file=sys.stderr)
    return app.return_code or 0
