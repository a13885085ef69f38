"""Using the dashboard or the telemetry package without its extra: one line that names
the extra and the install command, from environments that really lack it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from wheel_envs import Installed

from pygents._extras import MissingExtraError, missing_extra

IMPORT_OTEL = """
try:
    import pygents_otel
except ImportError as error:
    print(type(error).__name__)
    print(error)
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


@pytest.mark.parametrize("extras", ["", "tui"])
def test_importing_pygents_otel_without_the_otel_extra_raises_one_clear_import_error(
    install: Callable[[str], Installed], wheel: Path, extras: str
) -> None:
    result = install(extras).python(IMPORT_OTEL)
    assert result.returncode == 0, result.stderr
    kind, message = result.stdout.splitlines()
    assert kind == "MissingExtraError"
    assert message.startswith("pygents_otel needs the 'otel' extra (opentelemetry")
    assert f'uv pip install "dist/{wheel.name}[otel]"' in message


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
