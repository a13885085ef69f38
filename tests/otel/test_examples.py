"""The OpenTelemetry example, its compose files and the telemetry guide do what they say.

Everything here is offline: the example runs in a subprocess with the console
exporter, against a loopback port where nothing listens, or against a small OTLP/HTTP
receiver on loopback that this module starts.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from pygents import AgentRegistry, ToolRegistry

ROOT = Path(__file__).resolve().parents[2]
OTEL_EXAMPLES = ROOT / "examples" / "otel"
EXAMPLE = OTEL_EXAMPLES / "traced_agents.py"
GUIDE = ROOT / "docs" / "telemetry.md"
TIMEOUT = 120  # seconds; a run takes well under one

try:
    import yaml
except ImportError:  # not a dependency: fall back to reading the text
    yaml = None


# -- helpers -----------------------------------------------------------------------------


def _env(**overrides: str) -> dict[str, str]:
    """The current environment without any OTEL_* / PYGENTS_OTEL_* setting, plus ours."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OTEL_", "PYGENTS_OTEL_"))
    }
    env.update(overrides)
    return env


def _run(script: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _console_spans(stdout: str) -> list[dict[str, Any]]:
    """The JSON objects that the console span exporter printed, in order."""
    decoder = json.JSONDecoder()
    spans = []
    for match in re.finditer(r"^\{", stdout, flags=re.MULTILINE):
        try:
            found, _ = decoder.raw_decode(stdout, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(found, dict) and "context" in found:
            spans.append(found)
    return spans


def _one(spans: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (span,) = [s for s in spans if s["name"] == name]
    return span


# -- the example -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def console_run() -> subprocess.CompletedProcess[str]:
    return _run(EXAMPLE, OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="none")


def test_example_runs_and_prints_its_spans(console_run: subprocess.CompletedProcess[str]) -> None:
    assert console_run.returncode == 0, console_run.stderr
    names = {span["name"] for span in _console_spans(console_run.stdout)}
    assert {
        "pygents-example",
        "invoke_agent planner",
        "invoke_agent worker",
        "turn plan",
        "turn read_source",
        "turn look_up",
        "execute_tool plan",
        "execute_tool read_source",
        "execute_tool look_up",
        "glossary.lookup",
    } <= names


def test_example_summary_matches_its_trace(console_run: subprocess.CompletedProcess[str]) -> None:
    out = console_run.stdout
    spans = _console_spans(out)
    assert "planner: sent 4 turns to the worker" in out
    assert "worker:  read_source streamed 40 pages" in out
    assert "worker:  look_up('baggage') failed with LookupError" in out
    assert "4 worker turns carry the planner's traceparent" in out
    (trace_id,) = re.findall(r"^trace id: ([0-9a-f]{32})$", out, flags=re.MULTILINE)
    assert {span["context"]["trace_id"] for span in spans} == {f"0x{trace_id}"}
    # The console exporter is not an OTLP collector: no links to Jaeger or Grafana.
    # (A bare "16686" can appear inside a span's timestamp: look for the link's shape.)
    assert ":16686/" not in out
    assert "/explore" not in out


def test_example_trace_shows_what_the_readme_describes(
    console_run: subprocess.CompletedProcess[str],
) -> None:
    spans = _console_spans(console_run.stdout)
    by_id = {span["context"]["span_id"]: span for span in spans}

    def parent(span: dict[str, Any]) -> str | None:
        return by_id[span["parent_id"]]["name"] if span["parent_id"] else None

    # One trace: a root, the planner's run and two runs of the worker (the first failed).
    workers = [s for s in spans if s["name"] == "invoke_agent worker"]
    assert sorted(s["status"]["status_code"] for s in workers) == ["ERROR", "UNSET"]
    assert {parent(s) for s in workers} == {"pygents-example"}
    assert parent(_one(spans, "invoke_agent planner")) == "pygents-example"

    # Every worker turn links back to the tool span of the planner that sent it.
    plan_tool = _one(spans, "execute_tool plan")["context"]["span_id"]
    worker_turns = [s for s in spans if s["name"] in ("turn read_source", "turn look_up")]
    assert len(worker_turns) == 4
    for turn in worker_turns:
        assert [link["context"]["span_id"] for link in turn["links"]] == [plan_tool]
        assert turn["links"][0]["attributes"] == {"pygents.link.type": "queued_from"}

    # The stream: 40 values counted exactly, 16 per-value events kept.
    reader = _one(spans, "execute_tool read_source")
    assert reader["attributes"]["pygents.values"] == 40
    yields = [e for e in reader["events"] if e["name"] == "pygents.tool.on_yield"]
    assert [e["attributes"]["pygents.value.index"] for e in yields] == list(range(16))

    # The failure is on the tool span, its turn and the run; the user span nests.
    failed = [s for s in spans if s["status"]["status_code"] == "ERROR"]
    assert sorted(parent(s) or "" for s in failed) == sorted(
        ["pygents-example", "invoke_agent worker", "turn look_up", "execute_tool look_up"]
    )
    for span in failed:
        if span["name"] != "glossary.lookup":
            assert span["attributes"]["error.type"] == "LookupError"
    assert {parent(s) for s in spans if s["name"] == "glossary.lookup"} == {"execute_tool look_up"}
    # No content is recorded by default.
    assert not any(
        key.startswith("gen_ai.tool.call.") and key != "gen_ai.tool.call.id"
        for span in spans
        for key in span["attributes"]
    )


def test_example_finishes_when_no_collector_listens() -> None:
    # A bound socket that does not listen: connections to it are refused at once.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        result = _run(
            EXAMPLE,
            OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}",
            OTEL_EXPORTER_OTLP_TIMEOUT="1",
        )
    assert result.returncode == 0, result.stderr
    assert f"no OTLP collector is listening on 127.0.0.1:{port}" in result.stderr
    assert "worker:  read_source streamed 40 pages" in result.stdout
    assert "http://localhost:16686/trace/" in result.stdout


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP trace receiver: decodes each request into ``server.requests``."""

    server: Any

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append((self.path, request))
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Any]:
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def test_example_exports_over_otlp(receiver: Any) -> None:
    port = receiver.server_address[1]
    result = _run(
        EXAMPLE,
        OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}",
    )
    assert result.returncode == 0, result.stderr
    assert "no OTLP collector" not in result.stderr
    assert {path for path, _ in receiver.requests} == {"/v1/traces"}  # metrics are off
    names: set[str] = set()
    services: set[str] = set()
    for _, request in receiver.requests:
        for resource_spans in request.resource_spans:
            for attribute in resource_spans.resource.attributes:
                if attribute.key == "service.name":
                    services.add(attribute.value.string_value)
            for scope_spans in resource_spans.scope_spans:
                names.update(span.name for span in scope_spans.spans)
    assert services == {"pygents-example"}
    assert {"invoke_agent planner", "turn look_up", "execute_tool read_source"} <= names


def test_example_imports_without_side_effects(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location("_traced_agents_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # removed again afterwards
    spec.loader.exec_module(module)
    assert callable(module.main)
    assert "plan" not in ToolRegistry
    assert "planner" not in AgentRegistry
    assert capsys.readouterr() == ("", "")


# -- compose files -----------------------------------------------------------------------

_PORT = re.compile(r"""^\s*-\s*["']?(?:[\d.]+:)?(\d+):(\d+)(?:/(?:tcp|udp))?["']?\s*(?:#.*)?$""")


def _published_ports(path: Path) -> dict[str, set[int]]:
    """Service name → ports published on the host under the same number."""
    found: dict[str, set[int]] = {}
    if yaml is not None:
        services = yaml.safe_load(path.read_text())["services"]
        for name, service in services.items():
            for mapping in service.get("ports", []):
                host, container = str(mapping).split("/")[0].rsplit(":", 2)[-2:]
                assert host == container, f"{path.name}: {name} maps {mapping}"
                found.setdefault(name, set()).add(int(host))
        return found
    service = None
    in_services = False
    for line in path.read_text().splitlines():
        if re.match(r"^services:\s*$", line):
            in_services = True
        elif re.match(r"^\S", line):
            in_services = False
        elif in_services and (header := re.match(r"^  ([\w.-]+):\s*$", line)):
            service = header.group(1)
        elif in_services and service and (port := _PORT.match(line)):
            assert port.group(1) == port.group(2), f"{path.name}: {service} maps {line!r}"
            found.setdefault(service, set()).add(int(port.group(1)))
    return found


def _image(path: Path, service: str) -> str:
    if yaml is not None:
        return str(yaml.safe_load(path.read_text())["services"][service]["image"])
    text = path.read_text()
    block = text[text.index(f"\n  {service}:") :]
    match = re.search(r"^\s+image:\s*(\S+)", block, flags=re.MULTILINE)
    assert match is not None
    return match.group(1)


def test_jaeger_compose_publishes_otlp_and_the_ui() -> None:
    path = OTEL_EXAMPLES / "jaeger" / "compose.yaml"
    assert _published_ports(path) == {"jaeger": {4317, 4318, 16686}}
    assert _image(path, "jaeger").startswith(("jaegertracing/jaeger:", "jaegertracing/all-in-one:"))


def test_tempo_compose_publishes_otlp_and_grafana() -> None:
    path = OTEL_EXAMPLES / "tempo" / "compose.yaml"
    ports = _published_ports(path)
    assert {4317, 4318} <= ports["tempo"]
    assert ports["grafana"] == {3000}
    assert _image(path, "tempo").startswith("grafana/tempo:")
    assert _image(path, "grafana").startswith("grafana/grafana:")
    text = path.read_text()
    for mounted in ("./tempo.yaml:", "./grafana-datasources.yaml:"):
        assert mounted in text
        assert (path.parent / mounted[2:-1]).is_file()
    assert re.search(r"GF_AUTH_ANONYMOUS_ENABLED:\s*\"true\"", text)
    assert re.search(r"GF_AUTH_ANONYMOUS_ORG_ROLE:\s*\"Admin\"", text)


def test_tempo_config_receives_otlp_on_all_interfaces_and_stores_locally() -> None:
    path = OTEL_EXAMPLES / "tempo" / "tempo.yaml"
    if yaml is not None:
        config = yaml.safe_load(path.read_text())
        protocols = config["distributor"]["receivers"]["otlp"]["protocols"]
        assert protocols["grpc"]["endpoint"] == "0.0.0.0:4317"
        assert protocols["http"]["endpoint"] == "0.0.0.0:4318"
        assert config["storage"]["trace"]["backend"] == "local"
        assert config["server"]["http_listen_port"] == 3200
    text = path.read_text()
    assert re.search(r"grpc:\s*\n\s*endpoint:\s*\"0\.0\.0\.0:4317\"", text)
    assert re.search(r"http:\s*\n\s*endpoint:\s*\"0\.0\.0\.0:4318\"", text)
    assert re.search(r"backend:\s*local", text)
    assert re.search(r"http_listen_port:\s*3200", text)


def test_grafana_datasource_points_at_tempo() -> None:
    path = OTEL_EXAMPLES / "tempo" / "grafana-datasources.yaml"
    if yaml is not None:
        (source,) = yaml.safe_load(path.read_text())["datasources"]
        assert source["type"] == "tempo"
        assert source["url"] == "http://tempo:3200"
        assert source["isDefault"] is True
    text = path.read_text()
    assert re.search(r"type:\s*tempo\b", text)
    assert "url: http://tempo:3200" in text


# -- the guide ---------------------------------------------------------------------------

_COMPLETE = "<!-- example: complete -->\n```python\n"


def _complete_examples() -> list[str]:
    text = GUIDE.read_text()
    return re.findall(re.escape(_COMPLETE) + r"(.*?)```", text, flags=re.DOTALL)


def test_guide_marks_its_complete_examples() -> None:
    assert len(_complete_examples()) == 3


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (0, '"name": "invoke_agent splitter"'),
        (1, "spans ok"),
        (2, '"name": "chat my-model"'),  # the tool's span, made the model call's
    ],
)
def test_guide_complete_examples_run(tmp_path: Path, index: int, expected: str) -> None:
    script = tmp_path / f"telemetry_example_{index}.py"
    script.write_text(_complete_examples()[index])
    result = _run(script, OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="none")
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout


def test_docs_name_files_that_exist() -> None:
    readme = OTEL_EXAMPLES / "README.md"
    for doc in (GUIDE, readme, EXAMPLE):
        for named in re.findall(r"(?:-f|python) (examples/otel/\S+)", doc.read_text()):
            assert (ROOT / named).is_file(), f"{doc.name} names {named}"
    assert "(telemetry.md)" in (ROOT / "docs" / "index.md").read_text()
