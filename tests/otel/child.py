"""Scenarios that need a fresh interpreter, and what they report.

``configure()`` installs global providers, which OpenTelemetry allows once per process,
and the dormant mode needs an interpreter where no SDK was ever installed: such
scenarios run ``PRELUDE + code`` in a child interpreter (``run_python``), which prints
what it saw as one ``REPORT {json}`` line (``report_of`` reads it back).

Import it from a test module in this directory as ``from child import ...``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

SUBPROCESS_TIMEOUT = 120  # seconds: only bounds a child that would hang if broken

# Defines a tool and an agent run that each scenario uses, and the helpers they share.
PRELUDE = """
import asyncio, json, sys
from pygents import Agent, Turn, tool

@tool
async def greet(name: str) -> str:
    return f"hello {name}"

def work(turns=1):
    async def run():
        agent = Agent("greeter", "Greets people", [greet])
        for _ in range(turns):
            await agent.put(Turn(greet, args=["ada"]))
        return [value async for _, value in agent.run()]
    return asyncio.run(run())

def report(**seen):
    print("REPORT " + json.dumps(seen), flush=True)

# A global SDK tracer provider exporting to memory, as an application installs one
# (imported here, not above: the dormant scenarios must run with no SDK loaded).
def install_tracing_to_memory():
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return exporter, provider
"""

# The commonest scenario: ``configure()`` from the environment, one run, a shutdown.
CONFIGURE_AND_WORK = """
from pygents_otel import configure
telemetry = configure()
result = work()
telemetry.shutdown()
report(result=result)
"""


def run_python(
    code: str, *, pythonpath: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run ``PRELUDE + code`` in a fresh interpreter, without inherited ``OTEL_*`` or
    ``PYGENTS_OTEL_*`` settings; ``pythonpath`` is put in front of ``sys.path``."""
    clean = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OTEL_", "PYGENTS_OTEL_"))
    }
    clean.update(env)
    if pythonpath is not None:
        clean["PYTHONPATH"] = os.pathsep.join(
            part for part in (pythonpath, clean.get("PYTHONPATH")) if part
        )
    return subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
        env=clean,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
        check=False,
    )


def report_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("REPORT ")]
    assert len(lines) == 1, done.stdout
    found: dict[str, Any] = json.loads(lines[0].removeprefix("REPORT "))
    return found
