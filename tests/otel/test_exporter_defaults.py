"""What an unset ``OTEL_METRICS_EXPORTER`` / ``OTEL_LOGS_EXPORTER`` means to ``configure()``.

OTLP, as the specification says — unless the traces were sent somewhere other than
OTLP and no OTLP endpoint is set: then nothing would receive the metrics and logs,
so none are exported (rather than failing against ``localhost:4317`` and holding up
the exit). Naming an exporter, or setting an endpoint, always wins.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from child import report_of, run_python
from otlp_receiver import OTLPGrpcReceiver

BUILT = """
from pygents_otel import configure

telemetry = configure(service_name="defaults")
report(exporters=sorted(type(e).__name__ for e in telemetry.exporters))
telemetry.shutdown()
"""


@pytest.fixture
def grpc() -> Iterator[OTLPGrpcReceiver]:
    with OTLPGrpcReceiver() as receiver:
        yield receiver


@pytest.mark.parametrize(
    ("env", "exporters"),
    [
        ({"OTEL_TRACES_EXPORTER": "console"}, ["ConsoleSpanExporter"]),
        ({"OTEL_TRACES_EXPORTER": "none"}, []),
        (
            {"OTEL_TRACES_EXPORTER": "console", "OTEL_INSTRUMENTATION_PYGENTS_LIVE": "true"},
            ["ConsoleSpanExporter"],
        ),
        (
            {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "otlp"},
            ["ConsoleSpanExporter", "OTLPMetricExporter"],
        ),
        (
            {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "console"},
            ["ConsoleMetricExporter", "ConsoleSpanExporter"],
        ),
        ({}, ["OTLPMetricExporter", "OTLPSpanExporter"]),
        (
            {"OTEL_TRACES_EXPORTER": "console,otlp"},
            ["ConsoleSpanExporter", "OTLPMetricExporter", "OTLPSpanExporter"],
        ),
        (
            {
                "OTEL_TRACES_EXPORTER": "console",
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:9",
            },
            ["ConsoleSpanExporter", "OTLPMetricExporter"],
        ),
    ],
)
def test_unset_metrics_and_logs_follow_the_traces_unless_named_or_given_an_endpoint(
    env: dict[str, str], exporters: list[str]
) -> None:
    env.setdefault("OTEL_EXPORTER_OTLP_TIMEOUT", "1")  # nothing listens on 4317 here
    assert report_of(run_python(BUILT, **env))["exporters"] == exporters


def test_console_traces_with_an_endpoint_still_send_metrics_there(grpc: OTLPGrpcReceiver) -> None:
    done = run_python(
        """
        from pygents_otel import configure

        telemetry = configure(service_name="console-and-endpoint")
        result = work()
        report(result=result, flushed=telemetry.shutdown())
        """,
        OTEL_TRACES_EXPORTER="console",
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://{grpc.endpoint}",
    )
    assert report_of(done) == {"result": ["hello ada"], "flushed": True}
    assert '"name": "turn greet"' in done.stdout
    metrics = grpc.wait_for_metrics(
        lambda got: "gen_ai.execute_tool.duration" in {m.name for m in got}
    )
    assert metrics
    assert grpc.spans == []
