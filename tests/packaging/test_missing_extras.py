"""Using the dashboard or the telemetry package without its extra: one line that names
the extra and the install command, from environments that really lack it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from wheel_envs import ROOT, Installed, run, uv_command

from pygents import __version__
from pygents._extras import MissingExtraError, install_hint, missing_extra
from pygents_tui import TUI_PROVIDES

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
from pygents_tui.feeders import FleetModel
from pygents_tui.listen import Receiver
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
fleet.store.drain()
print([turn.tool for turn in fleet.store.running_turns()])
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
    assert f'reinstall the wheel with the extra: uv pip install "{wheel}[tui]"' in line
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
    assert f'reinstall the wheel with the extra: uv pip install "{wheel}[listen]"' in line
    assert "Traceback" not in result.stderr


def test_pygents_tui_web_without_the_web_extra_prints_one_line_naming_it_and_exits_2(
    install: Callable[[str], Installed], wheel: Path
) -> None:
    result = install("tui").call("pygents-tui", "demo", "--web")
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        "pygents-tui --web needs the 'web' extra (textual_serve is not installed): "
    )
    assert f'reinstall the wheel with the extra: uv pip install "{wheel}[web]"' in line


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
    assert f'reinstall the wheel with the extra: uv pip install "{wheel}[otel]"' in message


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
    assert f'reinstall the wheel with the extra: uv pip install "{wheel}[redis]"' in message
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


@pytest.mark.parametrize("extras", ["", "otel", "tui"])
def test_pygents_tui_version_answers_with_or_without_the_tui_extra(
    install: Callable[[str], Installed], extras: str
) -> None:
    result = install(extras).call("pygents-tui", "--version")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"pygents-tui {__version__}\n"


def test_a_wheel_that_is_gone_is_not_named_and_both_ways_to_add_the_extra_are_given(
    wheel: Path, tmp_path: Path
) -> None:
    """Installed from a wheel that was deleted since: naming it would send the user
    to a file that does not exist."""
    copy = tmp_path / wheel.name
    copy.write_bytes(wheel.read_bytes())
    run([uv_command(), "venv", "--quiet", "--python", sys.executable, tmp_path / "venv"], tmp_path)
    python = tmp_path / "venv" / "bin" / "python"
    run([uv_command(), "pip", "install", "--quiet", "--python", python, copy], tmp_path)
    copy.unlink()
    result = Installed(tmp_path / "venv").call("pygents-tui", "demo")
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert str(tmp_path) not in line
    assert "dist/" not in line
    assert line.endswith(install_hint("tui", None))


def test_in_a_checkout_the_message_says_to_reinstall_from_the_checkout() -> None:
    """This suite runs from a checkout, installed editable by uv sync."""
    error = ModuleNotFoundError("No module named 'textual'", name="textual")
    replacement = missing_extra(error, "pygents-tui", "tui", TUI_PROVIDES)
    assert replacement is not None
    assert str(replacement).endswith(
        f'reinstall it from its checkout with the extra: uv pip install -e "{ROOT}[tui]" '
        "(or uv sync there, for the environment of that checkout)"
    )


def test_with_no_known_origin_the_hint_gives_both_ways_and_names_no_path() -> None:
    hint = install_hint("otel", None)
    assert hint == (
        'in a checkout, run uv sync (or uv pip install -e ".[otel]"); from a wheel, '
        f'reinstall it with the extra: uv pip install "pygents-{__version__}-py3-none-any'
        '.whl[otel]", with the path of your wheel'
    )
    assert "/" not in hint
