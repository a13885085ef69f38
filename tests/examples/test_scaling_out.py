"""examples/scaling_out.py and examples/redis/compose.yaml do what the guide says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from system_programs import needs

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "scaling_out.py"
COMPOSE = ROOT / "examples" / "redis" / "compose.yaml"
GUIDE = ROOT / "docs" / "guides" / "scaling-out.md"

EXPECTED = [
    r"^workers ready: 2$",
    r"^shout: hello -> HELLO$",
    r"^shout: process -> PROCESS$",
    r"^spell: p-y-g-e-n-t-s$",
    r"^charge: order A-1 charged 12\.50$",
    r"^refuse: ValueError: no such account$",
    r"^mailbox: depth 0, pending 0, dead letters 0, workers 2$",
    r"^workers stopped: \[0, 0\]$",
]


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLE)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "REDIS_URL"))}
    env.update(extra)
    return env


@needs("redis-server")
def test_the_demo_serves_turns_from_two_worker_processes() -> None:
    result = _run(_env())
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    lines = result.stdout.splitlines()
    missing = [p for p in EXPECTED if not any(re.search(p, line) for line in lines)]
    assert not missing, f"no line matching {missing}:\n{result.stdout}"
    assert "Traceback" not in result.stderr, result.stderr


def test_without_redis_the_demo_says_why_and_skips(tmp_path: Path) -> None:
    result = _run(_env(PATH=str(tmp_path)))  # an empty PATH: no redis-server
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "skipped: redis-server is not on PATH (apt-get install redis-server), "
        "and REDIS_URL is not set"
    )


def test_the_compose_file_runs_redis_two_workers_and_jaeger() -> None:
    yaml = pytest.importorskip("yaml")
    compose = yaml.safe_load(COMPOSE.read_text())
    services = compose["services"]
    assert set(services) == {"redis", "worker-1", "worker-2", "jaeger"}
    for name in ("worker-1", "worker-2"):
        worker = services[name]
        assert worker["environment"]["REDIS_URL"] == "redis://redis:6379/0"
        assert worker["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://jaeger:4317"
        assert "examples/scaling_out.py worker" in worker["command"]
        assert worker["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "--appendonly" in services["redis"]["command"]
    assert services["jaeger"]["image"].startswith("jaegertracing/jaeger:")


def test_the_guide_shows_the_compose_commands_of_the_compose_file() -> None:
    guide = GUIDE.read_text()
    assert "docker compose -f examples/redis/compose.yaml up -d" in guide
    assert "docker compose -f examples/redis/compose.yaml up -d" in COMPOSE.read_text()
    assert "examples/scaling_out.py produce" in guide


def test_the_guide_runs_the_demo_with_the_command_this_module_runs() -> None:
    """The guide marks its ``uv run python examples/scaling_out.py`` block as run here:
    `_run` is that command, with this environment's interpreter for ``uv run python``."""
    assert "<!-- example: run by tests/examples/test_scaling_out.py -->\n```console\n" in (
        GUIDE.read_text()
    )
    assert "\nuv run python examples/scaling_out.py\n" in GUIDE.read_text()
