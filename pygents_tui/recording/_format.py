"""The recording file format: OTLP/JSON, one export request per line.

This is what the OpenTelemetry Collector's ``file`` exporter writes (with its
default JSON format, uncompressed) and what the OTLP JSON file exporters of the
SDKs write: each line is one ``ExportTraceServiceRequest``,
``ExportLogsServiceRequest`` or ``ExportMetricsServiceRequest`` in the OTLP/JSON
encoding, told apart by their one top-level field (``resourceSpans``,
``resourceLogs``, ``resourceMetrics``). OTLP/JSON differs from protobuf's own JSON
mapping in one way that matters here: trace and span ids are hex strings, not
base64.

Only what a replay needs before decoding is read here, from the raw bytes and
without parsing the JSON: which signal a line carries and its time. Full decoding
is the receiver's own `decode`, so a replayed request is read exactly as a
received one was.
"""

from __future__ import annotations

import re
from typing import Final, Literal

__all__ = ["TOP_FIELDS", "Signal", "signal_of", "time_of"]

Signal = Literal["traces", "logs", "metrics"]

TOP_FIELDS: Final[dict[Signal, str]] = {
    "traces": "resourceSpans",
    "logs": "resourceLogs",
    "metrics": "resourceMetrics",
}
_SIGNALS: Final[dict[bytes, Signal]] = {
    b"resourceSpans": "traces",
    b"resource_spans": "traces",
    b"resourceLogs": "logs",
    b"resource_logs": "logs",
    b"resourceMetrics": "metrics",
    b"resource_metrics": "metrics",
}
# The first key of the object: writers put the one field first (the Collector's and
# the SDKs' do), and looking only at the head keeps this cheap on a 4 MB line.
_HEAD: Final = re.compile(rb'\A\s*\{\s*"(resource_?[A-Za-z_]+)"\s*:')

# The times that say when a request was sent: a span's end, a log record's time, a
# data point's time; a record's observed time only when it has no time of its own
# (as the decoder reads it). A key escaped inside a string value
# (``\"timeUnixNano\"``) cannot match: the closing quote must follow the name.
_TIMES: Final = re.compile(
    rb'"(?:endTimeUnixNano|timeUnixNano|end_time_unix_nano|time_unix_nano)"\s*:\s*"?(\d{1,19})\b'
)
_OBSERVED: Final = re.compile(
    rb'"(?:observedTimeUnixNano|observed_time_unix_nano)"\s*:\s*"?(\d{1,19})\b'
)
_INT64: Final = 2**63


def signal_of(line: bytes) -> Signal | None:
    """The signal a line carries, from its first field; ``None`` if it is not an
    OTLP export request."""
    match = _HEAD.match(line, 0, 256)
    if match is None:
        return None
    return _SIGNALS.get(match.group(1))


def time_of(line: bytes) -> int:
    """When the request was sent, in Unix nanoseconds (0: it says no time): its
    NEWEST time, a span's end or a record's.

    The newest, not the earliest, because that is the closest a request says to
    when it was exported, and so to when a receiver got it: a batch of spans is
    sent after its last span ended, and a span that ran for an hour starts an hour
    before the batch was sent. The fleet model reads a request the same way (it
    estimates each sender's clock from a batch's newest times), so replayed
    requests arrive when their own times say they were sent, as they did live."""
    newest = _newest(_TIMES, line)
    return newest or _newest(_OBSERVED, line)


def _newest(pattern: re.Pattern[bytes], line: bytes) -> int:
    newest = 0
    for match in pattern.finditer(line):
        value = int(match.group(1))
        if newest < value < _INT64:
            newest = value
    return newest
