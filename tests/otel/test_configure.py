"""``configure()`` builds the SDK the way ``opentelemetry-instrument`` would.

* exporters: comma lists, ``none``, any registered name, and the per-signal
  ``OTEL_EXPORTER_OTLP_{TRACES,METRICS}_*`` variables;

Every scenario runs in a child interpreter (``configure()`` installs global
providers), against real OTLP receivers on loopback.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from child import report_of, run_python
from otlp_receiver import OTLPGrpcReceiver, OTLPHttpReceiver, span_names

SPANS = {"execute_tool greet", "invoke_agent greeter", "turn greet"}


@pytest.fixture
def receivers() -> Iterator[tuple[OTLPHttpReceiver, OTLPGrpcReceiver]]:
    with OTLPHttpReceiver() as http, OTLPGrpcReceiver() as grpc:
        yield http, grpc


def closed_port_url() -> str:
    """An address where nothing listens (bound, never listening, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


# -- exporters, as opentelemetry-instrument reads them ------------------------------------


def test_a_comma_list_and_per_signal_variables_choose_every_exporter(
    receivers: tuple[OTLPHttpReceiver, OTLPGrpcReceiver],
) -> None:
    http, grpc = receivers
    done = run_python(
        """
        from pygents_otel import configure
        telemetry = configure()
        result = work()
        telemetry.shutdown()
        report(result=result)
        """,
        OTEL_TRACES_EXPORTER="console, otlp",
        OTEL_METRICS_EXPORTER="otlp",
        # The general settings point nowhere useful: the per-signal ones must win.
        OTEL_EXPORTER_OTLP_PROTOCOL="grpc",
        OTEL_EXPORTER_OTLP_ENDPOINT=closed_port_url(),
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/protobuf",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http.traces_url,
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL="grpc",
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=f"http://{grpc.endpoint}",
        OTEL_SERVICE_NAME="comma-list",
    )
    assert report_of(done) == {"result": ["hello ada"]}
    # console: printed ...
    for name in SPANS:
        assert f'"name": "{name}"' in done.stdout
    # ... and otlp: over HTTP to the traces endpoint, with metrics over gRPC.
    spans = http.wait_for_spans(lambda got: span_names(got) >= SPANS)
    assert {span.resource["service.name"] for span in spans} == {"comma-list"}
    metrics = grpc.wait_for_metrics(
        lambda got: "gen_ai.execute_tool.duration" in {m.name for m in got}
    )
    assert metrics
    assert grpc.spans == []
    assert http.metrics == []


def test_none_and_explicit_exporter_names_are_honoured(
    receivers: tuple[OTLPHttpReceiver, OTLPGrpcReceiver],
) -> None:
    http, _ = receivers
    done = run_python(
        """
        from pygents_otel import configure
        telemetry = configure()
        result = work()
        telemetry.shutdown()
        report(result=result)
        """,
        OTEL_TRACES_EXPORTER="otlp_proto_http",  # named outright: no protocol needed
        OTEL_METRICS_EXPORTER=" NONE ",
        OTEL_EXPORTER_OTLP_ENDPOINT=http.endpoint,  # the HTTP exporter appends /v1/traces
    )
    assert report_of(done) == {"result": ["hello ada"]}
    assert span_names(http.wait_for_spans(lambda got: span_names(got) >= SPANS)) >= SPANS
    assert http.metrics == []
    assert '"name"' not in done.stdout


def test_bad_exporter_settings_name_the_variable_and_install_nothing() -> None:
    done = run_python(
        """
        import os
        from opentelemetry import metrics, trace
        from pygents_otel import configure

        errors = {}
        for variable, value in [
            ("OTEL_TRACES_EXPORTER", "console,carrier-pigeon"),
            ("OTEL_METRICS_EXPORTER", "console,"),
            ("OTEL_TRACES_EXPORTER", "x" * 100_000),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
        ]:
            os.environ[variable] = value
            try:
                configure()
            except ValueError as exc:
                errors[variable + "=" + value[:20]] = str(exc)
            del os.environ[variable]
        report(
            errors=errors,
            tracer_provider=type(trace.get_tracer_provider()).__name__,
            meter_provider=type(metrics.get_meter_provider()).__name__,
        )
        """,
        OTEL_METRICS_EXPORTER="none",
    )
    seen = report_of(done)
    errors = seen["errors"]
    assert len(errors) == 4
    pigeon = errors["OTEL_TRACES_EXPORTER=console,carrier-pige"]
    assert "OTEL_TRACES_EXPORTER" in pigeon
    assert "'carrier-pigeon'" in pigeon
    assert "console" in pigeon  # the names that would work
    assert "empty" in errors["OTEL_METRICS_EXPORTER=console,"]
    assert "OTEL_METRICS_EXPORTER" in errors["OTEL_METRICS_EXPORTER=console,"]
    assert len(errors["OTEL_TRACES_EXPORTER=" + "x" * 20]) < 600
    protocol = errors["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json"]
    assert "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" in protocol
    assert "http/protobuf" in protocol
    assert seen["tracer_provider"] == "ProxyTracerProvider"
    assert seen["meter_provider"] == "_ProxyMeterProvider"
