"""The Collector fan-out example (examples/otel/collector) is valid YAML and routes
what the docs say: traces to Jaeger and to the dashboard, logs to the dashboard, at
the ports the docs' ``pygents-tui listen`` command uses. Offline: the files are read,
no collector runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
FANOUT = ROOT / "examples" / "otel" / "collector"
DOCS = ROOT / "docs" / "dashboard.md"


def load(name: str) -> dict[str, Any]:
    document = yaml.safe_load((FANOUT / name).read_text())
    assert isinstance(document, dict), name
    return document


def test_the_collector_sends_traces_to_jaeger_and_the_dashboard_and_logs_to_the_dashboard() -> None:
    config = load("collector.yaml")
    exporters = config["exporters"]
    assert set(exporters) == {"otlp/jaeger", "otlp/dashboard"}
    pipelines = config["service"]["pipelines"]
    assert pipelines["traces"]["exporters"] == ["otlp/jaeger", "otlp/dashboard"]
    assert pipelines["logs"]["exporters"] == ["otlp/dashboard"]
    for pipeline in pipelines.values():
        assert pipeline["receivers"] == ["otlp"]
        assert set(pipeline["processors"]) <= set(config["processors"])
    protocols = config["receivers"]["otlp"]["protocols"]
    assert protocols["grpc"]["endpoint"].endswith(":4317")
    assert protocols["http"]["endpoint"].endswith(":4318")
    assert exporters["otlp/dashboard"]["endpoint"].endswith(":-127.0.0.1:4327}")
    assert exporters["otlp/dashboard"]["tls"] == {"insecure": True}


def test_the_compose_file_runs_that_config_and_the_docs_use_its_ports() -> None:
    compose = load("compose.yaml")
    collector = compose["services"]["collector"]
    assert "./collector.yaml:/etc/pygents/collector.yaml:ro" in collector["volumes"]
    assert collector["command"] == ["--config=/etc/pygents/collector.yaml"]
    assert "127.0.0.1:14317:4317" in compose["services"]["jaeger"]["ports"]
    docs = DOCS.read_text()
    assert "pygents-tui listen --grpc-port 4327 --http-port 0" in docs
    assert "examples/otel/collector/collector.yaml" in docs
