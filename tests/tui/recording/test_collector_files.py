"""Files in the standard OTLP/JSON file format that pygents-tui did not write
replay too.

* ``fixtures/collector_file.jsonl`` is written by hand after the OpenTelemetry
  Collector's ``file`` exporter (JSON format, no compression): one
  ``ExportTraceServiceRequest`` or ``ExportLogsServiceRequest`` per line, hex trace
  and span ids, integer enums, 64-bit times as strings, and the fields the
  Collector adds (``schemaUrl``, ``flags``, ``droppedAttributesCount``, ``status``).
* ``fixtures/otlp_json_file.jsonl`` was written by the official Python exporters
  of ``opentelemetry-exporter-otlp-json-file`` 0.66b1 (``FileLogExporter`` then
  ``FileSpanExporter``, the SDK 1.45.2, their two files concatenated): a turn with
  its live records and its span, and an HTTP call inside it. The package is on PyPI
  but would pin ``opentelemetry-exporter-otlp-common`` one release back, so it is
  not a test dependency: the file was generated once with
  ``uv run --no-project --with opentelemetry-exporter-otlp-json-file==0.66b1``.
"""

from __future__ import annotations

from pathlib import Path

from fake_clock import FakeClock

from pygents_tui.cli.replay import open_replay
from pygents_tui.feeders import ReplayView

FIXTURES = Path(__file__).with_name("fixtures")


def test_a_collector_file_replays_its_services_agents_and_traces() -> None:
    with open_replay(str(FIXTURES / "collector_file.jsonl"), clock=FakeClock(0.0)) as view:
        check_collector_file(view)


def check_collector_file(view: ReplayView) -> None:
    view.replay.seek(view.replay.end_ns)
    view.store.drain()
    assert [row.label for row in view.store.agent_rows()] == [
        "billing@pod-b/payer",
        "checkout@pod-a/planner",
    ]
    assert sorted(turn.tool for turn in view.store.recent_turns()) == ["charge", "plan"]
    turn = view.store.find_turn("01" * 16)
    assert turn is not None
    assert turn.trace_id == "01" * 16
    tree = view.store.trace_tree(turn.trace_id)
    assert tree is not None
    assert [(depth, node.name) for depth, node in tree.rows()] == [
        (0, "turn plan"),
        (1, "POST /plan"),
    ]
    assert not view.store.counters().get("malformed")


def test_a_file_the_official_otlp_json_file_exporter_wrote_replays() -> None:
    with open_replay(str(FIXTURES / "otlp_json_file.jsonl"), clock=FakeClock(0.0)) as view:
        check_exporter_file(view)


def check_exporter_file(view: ReplayView) -> None:
    view.replay.seek(view.replay.end_ns)
    view.store.drain()
    assert [row.label for row in view.store.agent_rows()] == ["weather@w-1/forecaster"]
    (turn,) = view.store.recent_turns()
    assert (turn.tool, turn.stop_reason) == ("forecast", "completed")
    assert turn.trace_id is not None
    tree = view.store.trace_tree(turn.trace_id)
    assert tree is not None
    assert [node.name for _, node in tree.rows()] == ["turn forecast", "GET /v1/forecast"]
    assert not view.store.counters().get("malformed")
