"""The listener reads the telemetry names from ``pygents_otel._names``, the module the
sender writes them from, without importing the OpenTelemetry SDK (which the ``listen``
extra does not install; tests/packaging checks that install for real)."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pygents_tui.feeders.otlp
import pygents_tui.listen

ROOT = Path(__file__).resolve().parents[3]
LIMIT = 60  # seconds: a hang guard for a child interpreter that only imports

# ``serve`` is left out: it starts the dashboard app, whose in-process trace view
# (``pygents_tui.feeders.process.spans``) loads the SDK when it happens to be installed.
# The receiver and the OTLP feeder: what ``listen`` runs besides the app.
RECEIVER_MODULES = sorted(
    f"{package.__name__}.{module.name}"
    for package in (pygents_tui.listen, pygents_tui.feeders.otlp)
    for module in pkgutil.iter_modules(package.__path__)
)

IMPORT_RECEIVER = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps({
    "sdk": sorted(m for m in sys.modules if m.startswith("opentelemetry.sdk")),
    "names": "pygents_otel._names" in sys.modules,
    "builders": sorted(m for m in ("pygents_otel._spans", "pygents_otel._records")
                       if m in sys.modules),
}))
"""


def test_the_receiver_and_fleet_model_read_the_shared_names_without_the_sdk() -> None:
    assert {"pygents_tui.listen.receiver", "pygents_tui.feeders.otlp.fleet"} <= set(
        RECEIVER_MODULES
    )
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_RECEIVER, *RECEIVER_MODULES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"sdk": [], "names": True, "builders": []}
