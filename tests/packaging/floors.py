"""The version floors of the workspace's ``pyproject.toml`` files, and whether an
environment holds them exactly.

``.ci/run`` resolves a second environment with ``uv sync --resolution lowest-direct``
and runs the otel, tui and extras' tests there, and the tests of the assistant's
libraries. That proves a floor only if the environment really holds it: when another
requirement lifts a package above its floor (an instrumentation that needs a newer
OpenTelemetry, an exporter that needs a newer grpcio), the tests ran against the lifted
version and the floor was never tried. Run as a script inside that environment, this
module lists every such floor and exits 1.

The floors live in the library's extras and dev group and in the dependencies of each
workspace member (the example assistant, ``examples/assistant``, is one): uv resolves
them together, and ``lowest-direct`` lowers every one of them.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
# The development tools the lowest run itself uses; the others (linters, docs) are
# not run there, so the run proves nothing about their floors.
TEST_TOOLS = ("pytest", "pytest-asyncio", "pytest-textual-snapshot")


def workspace(root: Path = ROOT) -> list[dict[str, Any]]:
    """The parsed ``pyproject.toml`` of the root project, then of each workspace member."""
    project = tomllib.loads((root / "pyproject.toml").read_text())
    members = project.get("tool", {}).get("uv", {}).get("workspace", {}).get("members", [])
    found = [project]
    for pattern in members:  # uv allows globs here
        for folder in sorted(root.glob(pattern)):
            found.append(tomllib.loads((folder / "pyproject.toml").read_text()))
    return found


def _own_names(projects: Sequence[dict[str, Any]]) -> set[str]:
    return {canonicalize_name(p["project"]["name"]) for p in projects}


def _runtime(project: dict[str, Any]) -> list[Requirement]:
    """What installing the project can bring: its dependencies and its extras'."""
    table = project["project"]
    texts = list(table.get("dependencies", []))
    texts += [text for extra in table.get("optional-dependencies", {}).values() for text in extra]
    return [Requirement(text) for text in texts]


def requirements(projects: Sequence[dict[str, Any]]) -> list[Requirement]:
    """Every third-party requirement of the projects (dependencies, extras) and of the
    root's dev group; the workspace's own projects are not third-party."""
    found = [r for project in projects for r in _runtime(project)]
    dev = projects[0].get("dependency-groups", {}).get("dev", [])
    found += [Requirement(text) for text in dev]
    own = _own_names(projects)
    return [r for r in found if canonicalize_name(r.name) not in own]


def floor_of(requirement: Requirement) -> Version | None:
    """The version of the requirement's ``>=`` bound, if it has one."""
    floors = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
    return max(floors) if floors else None


def checked_floors(projects: Sequence[dict[str, Any]]) -> dict[str, Version]:
    """The floors the lowest run proves: what the projects install, and the test tools.
    The other development tools (linters, docs) are not run there."""
    installed = {
        canonicalize_name(r.name) for project in projects for r in _runtime(project)
    } - _own_names(projects)
    floors: dict[str, Version] = {}
    for requirement in requirements(projects):
        name = canonicalize_name(requirement.name)
        floor = floor_of(requirement)
        if floor is not None and (name in installed or name in TEST_TOOLS):
            floors[name] = max(floor, floors.get(name, floor))
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
    floors = checked_floors(workspace())
    problems = unproven(floors, installed_version)
    for line in problems:
        print(f"floors: {line}", file=sys.stderr)
    if not problems:
        print(f"floors: all {len(floors)} floors installed exactly")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
