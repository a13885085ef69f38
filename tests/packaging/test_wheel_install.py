"""The built wheel, installed as the README says, with each extra, into clean environments.

The name ``pygents`` on the public package index belongs to another project, so users
install this one from a wheel they build (or a checkout). These tests do exactly that
and then use what was installed: the console script, the telemetry package, the
OpenTelemetry entry point, and the modules each extra promises.
"""

from __future__ import annotations

import email
import json
import re
import tomllib
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from wheel_envs import ROOT, Installed

from pygents import __version__

OTEL = [
    "pygents_otel",
    "opentelemetry.sdk.trace",
    "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.distro",
]
TUI = ["pygents_tui.ui.app"]
LISTEN = [
    *TUI,
    "aiohttp.web",
    "grpc.aio",
    "opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc",
]
REDIS = ["redis.asyncio"]
WEB = [*TUI, "pygents_tui.cli._web", "textual_serve.server"]

# extra: (modules it must make importable, top-level modules it must not bring)
PROMISES: dict[str, tuple[list[str], list[str]]] = {
    "otel": (OTEL, ["textual"]),
    "tui": (TUI, ["opentelemetry", "aiohttp"]),
    "listen": (LISTEN, []),
    "redis": (REDIS, ["textual", "opentelemetry"]),
    "web": (WEB, ["opentelemetry", "grpc"]),
    "all": ([*OTEL, *LISTEN, *REDIS, *WEB], []),
}

CHECK = """
import importlib, importlib.util, json, sys
present, absent = json.loads(sys.argv[1])
failed = {}
for name in present:
    try:
        importlib.import_module(name)
    except Exception as error:
        failed[name] = f"{type(error).__name__}: {error}"
brought = [name for name in absent if importlib.util.find_spec(name) is not None]
print(json.dumps({"failed": failed, "brought": brought}))
"""


def distributions(env: Installed) -> set[str]:
    result = env.python(
        "import importlib.metadata as m; print('\\n'.join(d.metadata['Name'] "
        "for d in m.distributions()))"
    )
    assert result.returncode == 0, result.stderr
    return {name.lower() for name in result.stdout.split()}


def test_a_core_install_holds_pygents_alone_and_imports_without_otel_or_textual(
    install: Callable[[str], Installed],
) -> None:
    core = install("")
    assert distributions(core) == {"pygents"}
    result = core.python(
        "import sys, pygents, pygents.context, pygents.testing\n"
        "print(pygents.__version__)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('opentelemetry', 'textual')))"
    )
    assert result.returncode == 0, result.stderr
    # The wheel's version is the one pygents/_version.py gives (hatchling reads it there).
    assert result.stdout.split("\n")[:2] == [__version__, "[]"]


@pytest.mark.parametrize("extra", sorted(PROMISES))
def test_each_extra_installs_the_modules_it_promises_and_no_others(
    install: Callable[[str], Installed], extra: str
) -> None:
    present, absent = PROMISES[extra]
    env = install(extra)
    result = env.call("python", "-c", CHECK, json.dumps([present, absent]))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"failed": {}, "brought": []}


def test_the_wheel_offers_no_assistant_extra_and_requires_nothing_the_assistant_uses(
    wheel: Path,
) -> None:
    """The example assistant is a project of its own (``examples/assistant``, a workspace
    member): the library's metadata neither offers it as an extra nor names any of its
    dependencies, and the wheel holds none of its code."""
    with zipfile.ZipFile(wheel) as archive:
        files = archive.namelist()
        (metadata_file,) = [name for name in files if name.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(archive.read(metadata_file))
    extras = metadata.get_all("Provides-Extra") or []
    assert "assistant" not in extras
    assert sorted(extras) == ["all", "listen", "otel", "redis", "tui", "web"]
    required = {
        canonicalize_name(Requirement(text).name) for text in metadata.get_all("Requires-Dist", [])
    }
    member = tomllib.loads((ROOT / "examples" / "assistant" / "pyproject.toml").read_text())
    assistant_needs = {
        canonicalize_name(Requirement(text).name) for text in member["project"]["dependencies"]
    } - {"pygents"}
    assert "openai" in assistant_needs  # the member's list was read, not an empty one
    assert required & assistant_needs == set()
    assert [name for name in files if name.startswith("assistant/")] == []


@pytest.mark.parametrize("extra", ["tui", "all"])
def test_pygents_tui_help_runs_from_a_wheel_install_with_the_tui_extra(
    install: Callable[[str], Installed], extra: str
) -> None:
    env = install(extra)
    result = env.call("pygents-tui", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: pygents-tui")
    assert "demo" in result.stdout
    assert "run" in result.stdout
    # The stylesheet ships in the wheel (the app cannot start without it).
    sheet = env.python(
        "import importlib.resources as r; print(r.files('pygents_tui.ui').joinpath("
        "'dashboard.tcss').is_file())"
    )
    assert sheet.stdout.strip() == "True", sheet.stderr


@pytest.mark.parametrize("extra", ["otel", "all"])
def test_pygents_otel_imports_from_a_wheel_install_with_the_otel_extra(
    install: Callable[[str], Installed], extra: str
) -> None:
    env = install(extra)
    result = env.python("import pygents_otel; print(pygents_otel.__version__)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == __version__
    # ``opentelemetry-instrument`` finds the instrumentor through this entry point.
    found = env.python(
        "from importlib.metadata import entry_points\n"
        "(point,) = entry_points(group='opentelemetry_instrumentor', name='pygents')\n"
        "print(point.load().__name__)"
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "PygentsInstrumentor"


INSTALL_PAGES = ["README.md", "docs/getting-started.md", "docs/dashboard.md", "docs/telemetry.md"]


def console_lines(text: str) -> list[str]:
    """The lines inside the page's fenced code blocks (what a reader copies)."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            inside = not inside
        elif inside:
            lines.append(line)
    return lines


@pytest.mark.parametrize("page", INSTALL_PAGES)
def test_the_install_commands_name_the_wheel_the_build_makes_and_never_the_index(
    wheel: Path, page: str
) -> None:
    """``pygents`` on the package index is another project: no command on these pages
    installs it from there, and each installs the wheel ``uv build`` really writes."""
    commands = console_lines((ROOT / page).read_text())
    assert any(f"dist/{wheel.name}[" in line for line in commands)
    wrong = [line for line in commands if re.search(r"(uv add|pip install) \"?pygents\b", line)]
    assert wrong == []
