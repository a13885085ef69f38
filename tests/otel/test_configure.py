"""``configure()`` builds the SDK the way ``opentelemetry-instrument`` would.

* exporters: comma lists, ``none``, any registered name, and the per-signal
  ``OTEL_EXPORTER_OTLP_{TRACES,METRICS}_*`` variables;
* shutdown is bounded: a collector that is down cannot hold up the program's exit;
* the batch processor's ``OTEL_BSP_*`` variables are honoured, and the spans it drops
  are counted and reported.

Every scenario runs in a child interpreter (``configure()`` installs global
providers), against real OTLP receivers on loopback, a port where nothing listens,
or an exporter registered by the test (``exporter_plugin``) that holds its exports
until the test lets them go.
"""

from __future__ import annotations

import re
import socket
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from child import CONFIGURE_AND_WORK, report_of, run_python
from otlp_receiver import OTLPGrpcReceiver, OTLPHttpReceiver, span_names

SPANS = {"execute_tool greet", "invoke_agent greeter", "turn greet"}


@pytest.fixture
def http() -> Iterator[OTLPHttpReceiver]:
    with OTLPHttpReceiver() as receiver:
        yield receiver


@pytest.fixture
def grpc() -> Iterator[OTLPGrpcReceiver]:
    with OTLPGrpcReceiver() as receiver:
        yield receiver


# An exporter plugin, found through the same entry points as the SDK's own exporters.
GATE_MODULE = """
import threading
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


class GateExporter(SpanExporter):
    \"\"\"Holds each export until its gate opens: ``gate.set()`` or ``shutdown()``.\"\"\"

    last = None

    def __init__(self):
        self.entered = threading.Event()  # an export is waiting at the gate
        self.gate = threading.Event()
        self.closed = threading.Event()
        self.received = 0
        self.batches = []
        self.stopped_by_shutdown = False
        GateExporter.last = self

    def export(self, spans):
        self.entered.set()
        self.gate.wait(60)
        self.received += len(spans)
        self.batches.append(len(spans))
        self.stopped_by_shutdown = self.closed.is_set()
        return SpanExportResult.FAILURE if self.closed.is_set() else SpanExportResult.SUCCESS

    def shutdown(self):
        self.closed.set()
        self.gate.set()
"""


@pytest.fixture
def exporter_plugin(tmp_path: Path) -> str:
    """A directory to put on ``PYTHONPATH``: it registers ``GateExporter`` as the traces
    exporter ``gate`` (a module and its distribution metadata)."""
    (tmp_path / "pygents_test_exporters.py").write_text(textwrap.dedent(GATE_MODULE))
    info = tmp_path / "pygents_test_exporters-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pygents-test-exporters\n")
    (info / "entry_points.txt").write_text(
        "[opentelemetry_traces_exporter]\ngate = pygents_test_exporters:GateExporter\n"
    )
    return str(tmp_path)


def closed_port_url() -> str:
    """An address where nothing listens (bound, never listening, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


# -- exporters, as opentelemetry-instrument reads them ------------------------------------


def test_a_comma_list_and_per_signal_variables_choose_every_exporter(
    http: OTLPHttpReceiver, grpc: OTLPGrpcReceiver
) -> None:
    done = run_python(
        CONFIGURE_AND_WORK,
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


def test_none_and_explicit_exporter_names_are_honoured(http: OTLPHttpReceiver) -> None:
    done = run_python(
        CONFIGURE_AND_WORK,
        OTEL_TRACES_EXPORTER="otlp_proto_http",  # named outright: no protocol needed
        OTEL_METRICS_EXPORTER=" NONE ",
        OTEL_EXPORTER_OTLP_ENDPOINT=http.endpoint,  # the HTTP exporter appends /v1/traces
    )
    assert report_of(done) == {"result": ["hello ada"]}
    assert span_names(http.wait_for_spans(lambda got: span_names(got) >= SPANS)) >= SPANS
    assert http.metrics == []
    assert '"name"' not in done.stdout


def test_bad_settings_name_the_variable_and_install_nothing() -> None:
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
            ("PYGENTS_OTEL_CONTENT_MAX_LENGTH", "-1"),
            ("OTEL_INSTRUMENTATION_PYGENTS_CAPTURE_EXCEPTION_MESSAGE", "sometimes"),
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
    assert len(errors) == 6
    assert "PYGENTS_OTEL_CONTENT_MAX_LENGTH=-1" in errors["PYGENTS_OTEL_CONTENT_MAX_LENGTH=-1"]
    exception = errors["OTEL_INSTRUMENTATION_PYGENTS_CAPTURE_EXCEPTION_MESSAGE=sometimes"]
    assert "'false' to record the exception type only" in exception
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


# -- a bounded shutdown ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "shutdown"),
    [("grpc", "telemetry.shutdown()"), ("http/protobuf", "pass  # left to the exit handler")],
    ids=["grpc-shutdown", "http-at-exit"],
)
def test_with_the_collector_down_the_program_exits_within_the_shutdown_timeout(
    protocol: str, shutdown: str
) -> None:
    done = run_python(
        f"""
        import time
        from pygents_otel import configure
        telemetry = configure()
        work(turns=1500)  # 3,001 spans: a full export queue, four batches to send
        print("SHUTDOWN AT", time.time(), flush=True)
        {shutdown}
        """,
        OTEL_EXPORTER_OTLP_PROTOCOL=protocol,
        OTEL_EXPORTER_OTLP_ENDPOINT=closed_port_url(),
    )
    exited = time.time()
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r"^SHUTDOWN AT (\S+)$", done.stdout, flags=re.MULTILINE)
    assert found is not None, done.stdout[-2000:]
    # The exporters retry each batch for up to 10 s, and the SDK's own shutdown waits
    # 30 s for its batches before it gives up (then the metrics): 30 s or more. The
    # default budget is 5 s; 15 s leaves room for a slow interpreter exit.
    assert exited - float(found[1]) < 15
    assert "spans were not exported" in done.stderr  # and the loss was reported


def test_shutdown_stops_an_export_that_would_not_end_in_time(exporter_plugin: str) -> None:
    done = run_python(
        """
        from pygents_otel import configure
        from pygents_test_exporters import GateExporter

        telemetry = configure(traces_exporter="gate", metrics_exporter="none",
                              shutdown_timeout=0.2)
        result = work()
        finished = telemetry.shutdown()
        gate = GateExporter.last
        report(
            result=result,
            finished=finished,
            waited_at_the_gate=gate.entered.is_set(),
            received=gate.received,
            stopped_by_shutdown=gate.stopped_by_shutdown,
            again=telemetry.shutdown(),
        )
        """,
        pythonpath=exporter_plugin,
    )
    seen = report_of(done)
    assert seen["result"] == ["hello ada"]
    assert seen["waited_at_the_gate"] is True
    assert seen["received"] == 3  # the batch that was in flight ...
    assert seen["stopped_by_shutdown"] is True  # ... ended by shutdown, not after 60 s
    assert seen["finished"] is False
    assert seen["again"] is True  # a second call has nothing left to do
    assert "not exported within 0.2 s" in done.stderr


def test_the_shutdown_budget_comes_from_the_argument_or_the_variable() -> None:
    done = run_python(
        """
        import os
        from pygents_otel import configure

        def budget(**kwargs):
            try:
                return configure(traces_exporter="none", metrics_exporter="none",
                                 **kwargs).shutdown_timeout
            except (TypeError, ValueError) as exc:
                return f"{type(exc).__name__}: {exc}"

        seen = {"default": budget()}
        os.environ["PYGENTS_OTEL_SHUTDOWN_TIMEOUT"] = "0.5"
        seen["variable"] = budget()
        seen["argument beats variable"] = budget(shutdown_timeout=2.5)
        os.environ["PYGENTS_OTEL_SHUTDOWN_TIMEOUT"] = "soon"
        seen["bad variable"] = budget()
        del os.environ["PYGENTS_OTEL_SHUTDOWN_TIMEOUT"]
        seen["negative"] = budget(shutdown_timeout=-1)
        seen["infinite"] = budget(shutdown_timeout=float("inf"))
        seen["text"] = budget(shutdown_timeout="5")
        report(**seen)
        """
    )
    seen = report_of(done)
    assert seen["default"] == 5.0
    assert seen["variable"] == 0.5
    assert seen["argument beats variable"] == 2.5
    assert seen["bad variable"].startswith("ValueError: PYGENTS_OTEL_SHUTDOWN_TIMEOUT='soon'")
    assert seen["negative"].startswith("ValueError: shutdown_timeout")
    assert seen["infinite"].startswith("ValueError: shutdown_timeout")
    assert seen["text"].startswith("TypeError: shutdown_timeout")


# -- the export queue: its size, and the spans it drops ------------------------------------


def test_spans_dropped_by_a_full_export_queue_are_counted_and_reported(
    exporter_plugin: str,
) -> None:
    done = run_python(
        """
        from opentelemetry import trace
        from pygents_otel import configure
        from pygents_test_exporters import GateExporter

        telemetry = configure(traces_exporter="gate", metrics_exporter="none")
        gate = GateExporter.last
        tracer = trace.get_tracer("burst")
        for i in range(5):  # a full batch wakes the processor's thread ...
            tracer.start_span(f"first {i}").end()
        assert gate.entered.wait(30)  # ... which takes it and waits at the gate
        for i in range(100):  # the queue holds 10 of these, 90 are dropped
            tracer.start_span(f"burst {i}").end()
        before = telemetry.span_counts()["gate"]
        gate.gate.set()
        finished = telemetry.shutdown()
        after = telemetry.span_counts()["gate"]
        report(
            finished=finished,
            batches=gate.batches,
            before=[before.ended, before.exported, before.failed, before.dropped],
            after=[after.ended, after.exported, after.failed, after.dropped],
        )
        """,
        pythonpath=exporter_plugin,
        OTEL_BSP_MAX_QUEUE_SIZE="10",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE="5",
        OTEL_BSP_SCHEDULE_DELAY="60000",
    )
    seen = report_of(done)
    assert seen["finished"] is True
    assert seen["batches"] == [5, 5, 5]  # the first batch, then the 10 the queue kept
    # ended, exported, failed, dropped: while the gate was shut nothing was exported,
    # and 100 spans were waiting or dropped ...
    assert seen["before"] == [105, 0, 0, 105]
    # ... after shutdown, the queue is empty: exactly 90 were dropped.
    assert seen["after"] == [105, 15, 0, 90]
    assert (
        "gate exporter: 90 of 105 spans were not exported: 90 dropped because the export "
        "queue was full (raise OTEL_BSP_MAX_QUEUE_SIZE), 0 failed to send"
    ) in done.stderr
