"""One declaration of every telemetry name (``pygents_otel._names``), shared by the
sender (``pygents_otel``) and the reader (``pygents-tui listen``), and a package whose
import does not pull in the OpenTelemetry SDK, so that the reader can use the names
with only the ``listen`` extra installed."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import pygents_otel
from pygents_otel import _names as n

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 60  # seconds: a hang guard for a child interpreter that only imports


def shared_names() -> set[str]:
    """Every string the names module declares, including the ones held in its tables
    (event names by hook, start and end records by scope, stop reasons by scope)."""
    found: set[str] = set()
    for name in n.__all__:
        value = getattr(n, name)
        values = value.values() if isinstance(value, dict) else [value]
        found.update(v for v in values if isinstance(v, str))
    return found


def string_literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def run_child(code: str) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter of this environment; it prints one JSON line."""
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    loaded: dict[str, object] = json.loads(result.stdout)
    return loaded


def test_the_names_module_lists_every_name_it_declares_and_each_once() -> None:
    declared = sorted(name for name in vars(n) if name.isupper() and not name.startswith("_"))
    assert sorted(n.__all__) == declared
    strings = [getattr(n, name) for name in declared if isinstance(getattr(n, name), str)]
    repeated = {value for value in strings if strings.count(value) > 1}
    assert repeated == set(), "two constants for one name"


@pytest.mark.parametrize("package", ["pygents_otel", "pygents_tui"])
def test_no_telemetry_name_is_spelled_out_outside_the_names_module(package: str) -> None:
    """The names module is the only place a name is written: every other module of the
    sender and of the reader (the listener, the in-process trace view) refers to it."""
    shared = shared_names()
    names_module = ROOT / "pygents_otel" / "_names.py"
    spelled = [
        f"{path.relative_to(ROOT)}:{line}: {value!r}"
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != names_module
        for line, value in string_literals(path)
        if value in shared
    ]
    assert spelled == []


def test_the_check_finds_a_name_spelled_out(tmp_path: Path) -> None:
    """The check above can fail: a module that writes a name itself is caught."""
    module = tmp_path / "mirror.py"
    module.write_text(f"TURN_UUID = {n.TURN_UUID!r}\nOTHER = 'pygents.not_a_name'\n")
    assert [value for _, value in string_literals(module) if value in shared_names()] == [
        n.TURN_UUID
    ]


IMPORT_ALONE = """
import json, sys
import pygents_otel, pygents_otel._names
before = sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry")
configure = pygents_otel.configure
print(json.dumps({
    "before": before,
    "sdk_after": "opentelemetry.sdk.trace" in sys.modules,
    "module": configure.__module__,
}))
"""


def test_importing_pygents_otel_and_its_names_imports_no_opentelemetry_until_the_api_is_used() -> (
    None
):
    found = run_child(IMPORT_ALONE)
    assert found["before"] == [], "import pygents_otel loaded OpenTelemetry"
    # The first use of the API loads it (the SDK is installed here, with the otel extra).
    assert found["sdk_after"] is True
    assert found["module"] == "pygents_otel"


@pytest.mark.parametrize("name", pygents_otel.__all__)
def test_every_public_name_resolves_from_the_package(name: str) -> None:
    value = getattr(pygents_otel, name)
    assert value is not None
    assert name in dir(pygents_otel)
    module = getattr(value, "__module__", "pygents_otel")
    assert module == "pygents_otel", "published under the package, not its private module"


def test_an_unknown_attribute_of_the_package_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = pygents_otel.Nope  # type: ignore[attr-defined]


def test_the_opentelemetry_instrument_entry_point_resolves_to_the_instrumentor() -> None:
    found = run_child(
        "import json\n"
        "from importlib.metadata import entry_points\n"
        "(point,) = entry_points(group='opentelemetry_instrumentor', name='pygents')\n"
        "cls = point.load()\n"
        "print(json.dumps({'value': point.value, 'name': f'{cls.__module__}.{cls.__name__}'}))"
    )
    assert found == {
        "value": "pygents_otel:PygentsInstrumentor",
        "name": "pygents_otel.PygentsInstrumentor",
    }
