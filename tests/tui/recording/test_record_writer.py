"""Writing recordings: OTLP/JSON lines from a thread, bounded, and a file that
cannot be written is one line and a count, never an exception."""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from pygents_tui.listen.decode import Limits, decode
from pygents_tui.recording import RecordWriter, to_json_line

TRACE = bytes(range(1, 17))
SPAN = bytes(range(1, 9))


def request() -> trace_service_pb2.ExportTraceServiceRequest:
    message = trace_service_pb2.ExportTraceServiceRequest()
    group = message.resource_spans.add()
    group.resource.attributes.append(
        KeyValue(key="service.name", value=AnyValue(string_value="svc"))
    )
    group.scope_spans.add().spans.append(
        Span(
            trace_id=TRACE,
            span_id=SPAN,
            name="turn work",
            kind=Span.SPAN_KIND_CLIENT,
            start_time_unix_nano=1_000,
            end_time_unix_nano=2_000,
        )
    )
    return message


def test_a_request_is_one_otlp_json_line_with_hex_ids_and_integer_enums() -> None:
    line = to_json_line(request())
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    (span,) = json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert span["traceId"] == TRACE.hex()
    assert span["spanId"] == SPAN.hex()
    assert span["kind"] == 3
    assert span["endTimeUnixNano"] == "2000"
    # The receiver's decoder reads it back as it reads the protobuf request.
    limits = Limits()
    from_json = decode("traces", line, json_body=True, limits=limits)
    from_protobuf = decode("traces", request().SerializeToString(), json_body=False, limits=limits)
    assert from_json == from_protobuf


def test_requests_are_appended_as_received_protobuf_or_json(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    writer = RecordWriter(path)
    writer.record("traces", request().SerializeToString())
    writer.record("traces", b'{\n  "resourceSpans": []\n}', json_body=True)  # made one line
    writer.close()
    lines = path.read_bytes().splitlines()
    assert lines == [to_json_line(request()).rstrip(b"\n"), b'{"resourceSpans":[]}']
    assert writer.written == 2
    assert writer.summary() == f"recorded 2 requests to {path}"


def test_a_full_disk_stops_the_recording_with_one_line_and_counts_the_rest() -> None:
    writer = RecordWriter("/dev/full")  # every write fails with ENOSPC
    for _ in range(5):
        writer.record("traces", request())
    writer.close()
    assert writer.written == 0
    assert sum(writer.dropped.values()) == 5
    assert writer.error is not None
    assert "No space left on device" in writer.error
    summary = writer.summary()
    assert "\n" not in summary
    assert "5 not recorded (the recording stopped: No space left on device)" in summary


def test_what_waits_to_be_written_is_bounded_in_bytes(tmp_path: Path) -> None:
    writer = RecordWriter(tmp_path / "r.jsonl", max_pending=10)
    writer.record("traces", request())  # larger than everything it may hold
    writer.close()
    assert writer.dropped["backlog"] == 1
    assert writer.written == 0


def test_undecodable_bytes_are_counted_not_raised(tmp_path: Path) -> None:
    writer = RecordWriter(tmp_path / "r.jsonl")
    writer.record("traces", b"\xff\xff not protobuf")
    writer.record("logs", b"{not json", json_body=True)
    writer.close()
    assert writer.dropped["unconvertible"] == 2
    assert (tmp_path / "r.jsonl").read_bytes() == b""


def test_a_recording_ended_early_leaves_out_what_comes_later_and_says_how_much(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.jsonl"
    writer = RecordWriter(path)
    writer.record("traces", request())
    writer.end()  # where the dashboard ended
    writer.record("traces", request())
    writer.record("logs", b"{}", json_body=True)
    writer.close()

    assert len(path.read_bytes().splitlines()) == writer.written == 1
    assert writer.after_end == 2
    assert not writer.dropped
    assert writer.summary() == (
        f"recorded 1 request to {path}; it ends where the dashboard did "
        "(2 requests sent after that left out)"
    )
