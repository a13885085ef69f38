"""The version floors of ``pyproject.toml``, and whether an environment holds them exactly.

``.ci/run`` resolves a second environment with ``uv sync --resolution lowest-direct``
and runs the otel, tui and extras' tests there. That proves a floor only if the
environment really holds it: when another requirement lifts a package above its floor
(an instrumentation that needs a newer OpenTelemetry, an exporter that needs a newer
grpcio), the tests ran against the lifted version and the floor was never tried. Run
as a script inside that environment, this module lists every such floor and exits 1.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
# The development tools the lowest run itself uses; the others (linters, docs) are
# not run there, so the run proves nothing about their floors.
TEST_TOOLS = ("pytest", "pytest-asyncio", "pytest-textual-snapshot")


def requirements(pyproject: dict[str, Any]) -> list[Requirement]:
    """Every third-party requirement of the extras and the dev group."""
    project = pyproject["project"]
    found = [
        Requirement(text)
        for extra in project.get("optional-dependencies", {}).values()
        for text in extra
    ]
    found += [Requirement(text) for text in pyproject.get("dependency-groups", {}).get("dev", [])]
    own = canonicalize_name(project["name"])
    return [r for r in found if canonicalize_name(r.name) != own]


def floor_of(requirement: Requirement) -> Version | None:
    """The version of the requirement's ``>=`` bound, if it has one."""
    floors = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
    return max(floors) if floors else None


def checked_floors(pyproject: dict[str, Any]) -> dict[str, Version]:
    """The floors the lowest run proves: the extras' dependencies and the test tools."""
    project = pyproject["project"]
    extras = {
        canonicalize_name(Requirement(text).name)
        for extra in project.get("optional-dependencies", {}).values()
        for text in extra
    }
    floors: dict[str, Version] = {}
    for requirement in requirements(pyproject):
        name = canonicalize_name(requirement.name)
        floor = floor_of(requirement)
        if floor is not None and (name in extras or name in TEST_TOOLS):
            floors[name] = floor
    return floors


def unproven(floors: dict[str, Version], installed: Callable[[str], str | None]) -> list[str]:
    """One line per floor the environment does not hold exactly."""
    problems = []
    for name, floor in sorted(floors.items()):
        found = installed(name)
        if found is None:
            problems.append(f"{name}: not installed (floor {floor})")
        elif Version(found) != floor:
            problems.append(
                f"{name}: resolved to {found}, not its floor {floor}; another requirement "
                "lifts it, so raise the floor to what the tests really ran with"
            )
    return problems


def installed_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def main() -> int:
    floors = checked_floors(tomllib.loads(PYPROJECT.read_text()))
    problems = unproven(floors, installed_version)
    for line in problems:
        print(f"floors: {line}", file=sys.stderr)
    if not problems:
        print(f"floors: all {len(floors)} floors installed exactly")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
