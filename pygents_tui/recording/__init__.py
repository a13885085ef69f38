"""Recording what the dashboard receives (``--record FILE``), in a file that
``pygents-tui replay FILE`` plays back (`pygents_tui.feeders.replay`).

A recording is a file in the standard OTLP/JSON file format: one export request
per line (`pygents_tui.recording._format`), as the OpenTelemetry Collector's
``file`` exporter writes it, so a Collector's output replays too.

* `RecordWriter` appends requests from a thread, bounded; ``listen`` records what
  its receiver accepted, ``demo`` and ``run`` what their process exports
  (`record_in_process`).
* `Recording` reads a file streamed and bounded, with a sparse time index.

Needs the ``listen`` extra (the OTLP messages); no UI library.
"""

from __future__ import annotations

from pygents_tui.recording._format import TOP_FIELDS, signal_of, time_of
from pygents_tui.recording._reader import Line, Recording, RecordingError
from pygents_tui.recording._writer import RecordWriter, to_json_line

__all__ = [
    "TOP_FIELDS",
    "Line",
    "RecordWriter",
    "Recording",
    "RecordingError",
    "signal_of",
    "time_of",
    "to_json_line",
]
