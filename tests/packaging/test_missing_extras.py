"""Using the dashboard or the telemetry package without its extra: one line that names
the extra and the install command, from environments that really lack it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from wheel_envs import Installed

from pygents._extras import MissingExtraError, missing_extra

# The package imports without the extra (``pygents-tui listen`` reads its telemetry
# names); its API is what says which extra to install.
IMPORT_OTEL = """
import sys
import pygents_otel
print(sorted(m for m in sys.modules if m.startswith("opentelemetry.")))
try:
    from pygents_otel import configure
except ImportError as error:
    print(type(error).__name__)
    print(error)
"""

# The listener with the 'listen' extra alone: no OpenTelemetry SDK installed, yet it
# folds a live record, named by the module the sender writes names from, into a turn.
LISTEN_WITHOUT_OTEL = """
import importlib.util, sys
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from pygents_otel import _names as k
from pygents_tui.listen import FleetModel, Receiver
from pygents_tui.listen.decode import Limits, decode

request = ExportLogsServiceRequest()
group = request.resource_logs.add()
group.resource.attributes.append(KeyValue(key=k.SERVICE_NAME, value=AnyValue(string_value="s")))
sent = {k.TURN_UUID: "t1", k.TOOL_NAME: "fetch", k.AGENT_NAME: "planner"}
attributes = [KeyValue(key=key, value=AnyValue(string_value=v)) for key, v in sent.items()]
record = LogRecord(time_unix_nano=1, event_name=k.TURN_START, attributes=attributes)
group.scope_logs.add().log_records.append(record)
fleet = FleetModel()
fleet.ingest(decode("logs", request.SerializeToString(), json_body=False, limits=Limits()))
fleet.drain()
print([turn.tool for turn in fleet.running_turns()])
print(Receiver.__name__)
print(importlib.util.find_spec("opentelemetry.sdk") is None)
print(sorted(m for m in sys.modules if m.startswith("opentelemetry.sdk")))
"""

IMPORT_REDIS = """
import sys
import pygents
try:
    import pygents.redis
except ImportError as error:
    print(type(error).__name__)
    print(error)
print("redis" in sys.modules)
"""

IMPORT_DASHBOARD = """
import pygents_tui
print(pygents_tui.DashboardModel.__name__)
try:
    from pygents_tui import Dashboard
except ImportError as error:
    print(type(error).__name__)
    print(error)
"""


@pytest.mark.parametrize("extras", ["", "otel"])
@pytest.mark.parametrize("args", [["--help"], ["demo"], []])
def test_pygents_tui_without_the_tui_extra_prints_one_line_naming_it_and_exits_2(
    install: Callable[[str], Installed], wheel: Path, extras: str, args: list[str]
) -> None:
    result = install(extras).call("pygents-tui", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("pygents-tui needs the 'tui' extra (textual is not installed): ")
    assert f'uv pip install "dist/{wheel.name}[tui]"' in line
    assert "Traceback" not in result.stderr


def test_pygents_tui_listen_without_the_listen_extra_prints_one_line_naming_it_and_exits_2(
    install: Callable[[str], Installed], wheel: Path
) -> None:
    result = install("tui").call("pygents-tui", "listen")
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        "pygents-tui listen needs the 'listen' extra (aiohttp is not installed): "
    )
    assert f'uv pip install "dist/{wheel.name}[listen]"' in line
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("extras", ["", "tui", "listen"])
def test_importing_pygents_otel_without_the_otel_extra_raises_one_clear_import_error(
    install: Callable[[str], Installed], wheel: Path, extras: str
) -> None:
    result = install(extras).python(IMPORT_OTEL)
    assert result.returncode == 0, result.stderr
    imported, kind, message = result.stdout.splitlines()
    assert imported == "[]"
    assert kind == "MissingExtraError"
    assert message.startswith("pygents_otel needs the 'otel' extra (opentelemetry")
    assert f'uv pip install "dist/{wheel.name}[otel]"' in message


def test_the_listen_extra_without_the_otel_extra_folds_live_records_without_the_sdk(
    install: Callable[[str], Installed],
) -> None:
    env = install("listen")
    result = env.python(LISTEN_WITHOUT_OTEL)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["['fetch']", "Receiver", "True", "[]"]
    usage = env.call("pygents-tui", "listen", "--help")
    assert usage.returncode == 0, usage.stderr
    assert usage.stdout.startswith("usage: pygents-tui listen")


def test_importing_pygents_redis_without_the_redis_extra_raises_one_clear_import_error(
    install: Callable[[str], Installed], wheel: Path
) -> None:
    result = install("").python(IMPORT_REDIS)
    assert result.returncode == 0, result.stderr
    kind, message, imported = result.stdout.splitlines()
    assert kind == "MissingExtraError"
    assert message.startswith("pygents.redis needs the 'redis' extra (redis is not installed): ")
    assert f'uv pip install "dist/{wheel.name}[redis]"' in message
    assert imported == "False"


def test_without_textual_pygents_tui_imports_and_its_dashboard_names_the_extra(
    install: Callable[[str], Installed],
) -> None:
    result = install("").python(IMPORT_DASHBOARD)
    assert result.returncode == 0, result.stderr
    model, kind, message = result.stdout.splitlines()
    assert (model, kind) == ("DashboardModel", "MissingExtraError")
    assert message.startswith("pygents-tui needs the 'tui' extra (textual is not installed)")


def test_a_missing_module_no_extra_provides_keeps_its_own_error() -> None:
    """A broken install or a typo must not be reported as a missing extra."""
    unrelated = ModuleNotFoundError("No module named 'yaml'", name="yaml")
    assert missing_extra(unrelated, "pygents_otel", "otel", ("opentelemetry",)) is None
    nameless = ModuleNotFoundError("something odd")
    assert missing_extra(nameless, "pygents_otel", "otel", ("opentelemetry",)) is None


def test_the_missing_extra_error_is_a_bounded_module_not_found_error() -> None:
    error = ModuleNotFoundError("No module named 'opentelemetry.sdk'", name="opentelemetry.sdk")
    replacement = missing_extra(error, "pygents_otel", "otel", ("opentelemetry",))
    assert isinstance(replacement, MissingExtraError)
    assert isinstance(replacement, ModuleNotFoundError)  # existing handlers still catch it
    assert replacement.name == "opentelemetry.sdk"
    assert "\n" not in str(replacement)
    assert len(str(replacement)) < 300
