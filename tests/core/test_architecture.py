"""Structural promises: the core stays standard-library only and acyclic."""

from __future__ import annotations
import __future__

import ast
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pygents
import pygents_otel
import pygents_tui
from pygents._agent_run import AgentRun
from pygents._invocation import Invocation
from pygents._turn_run import TurnRun

PACKAGE = Path(pygents.__file__).parent


def test_importing_pygents_loads_neither_opentelemetry_nor_textual() -> None:
    code = (
        "import sys, pygents, pygents.context, pygents.testing\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('opentelemetry', 'textual'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""


def _runtime_imports(path: Path) -> set[str]:
    """Modules of pygents imported at module level (``TYPE_CHECKING`` blocks excluded)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pygents."):
            found.add(node.module.split(".")[1])
    return found


def test_private_modules_import_each_other_without_cycles() -> None:
    graph = {p.stem: _runtime_imports(p) for p in PACKAGE.glob("*.py")}
    visiting: set[str] = set()
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        assert name not in visiting, f"import cycle: {' -> '.join([*path, name])}"
        if name in done:
            return
        visiting.add(name)
        for dep in graph.get(name, set()):
            visit(dep, [*path, name])
        visiting.discard(name)
        done.add(name)

    for module in graph:
        visit(module, [])
    assert "_errors" in graph
    assert graph["_errors"] == set()


def test_the_public_namespace_is_exactly_what_all_lists() -> None:
    """Every name ``pygents`` binds publicly is in ``__all__`` and every listed name is bound,
    so a helper imported into ``__init__`` cannot leak out unlisted and a removed name
    cannot linger in ``__all__`` (``from pygents import *`` would then fail)."""
    bound = {
        name
        for name, value in vars(pygents).items()
        if not name.startswith("_")
        and not isinstance(value, ModuleType)  # submodules such as pygents.testing
        and value is not __future__.annotations
    }
    listed = set(pygents.__all__)
    assert len(pygents.__all__) == len(listed), "a name is listed twice"
    assert sorted(bound - listed) == []  # public but not listed
    assert sorted(name for name in listed if name not in vars(pygents)) == []  # listed, unbound


def test_the_tests_import_the_packages_of_this_checkout() -> None:
    """The packages sit at the repository root; an editable install must point here,
    never at a stale copy in site-packages."""
    root = Path(__file__).resolve().parents[2]
    for module in (pygents, pygents_otel, pygents_tui):
        assert Path(module.__file__ or "").resolve().parent == root / module.__name__


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for dep in graph.get(stack.pop(), set()):
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return seen


def test_argument_binding_and_the_scope_tree_do_not_depend_on_the_subscriber_bus() -> None:
    graph = {p.stem: _runtime_imports(p) for p in PACKAGE.glob("*.py")}
    assert "_scope" in _reachable(graph, "_calling")  # injection reads the scope tree ...
    assert "_observe" in _reachable(graph, "_turn_run")  # ... and the drivers use the bus,
    for module in ("_calling", "_scope"):  # but binding and scopes know nothing of it
        assert "_observe" not in _reachable(graph, module), module


def test_scopes_show_subscribers_only_their_documented_attributes() -> None:
    documented = {"kind", "target", "parent", "agent", "turn", "stop_reason", "error"}
    for cls in (pygents.Scope, AgentRun, TurnRun, Invocation):
        slots = {name for klass in cls.__mro__ for name in getattr(klass, "__slots__", ())}
        public = {name for name in slots if not name.startswith("_")}
        assert public == documented, cls.__name__


def test_docstrings_use_cross_references_the_docs_site_renders() -> None:
    """Sphinx roles (``:class:`X```) show up literally on the MkDocs API pages; the
    docstrings use Markdown cross-references (``[`X`][pygents.X]``) instead."""
    role = re.compile(r":(class|func|meth|attr|data|mod|exc|obj):`")
    root = Path(__file__).resolve().parents[2]
    offenders = [
        f"{path.relative_to(root)}:{number}"
        for package in ("pygents", "pygents_otel", "pygents_tui")
        for path in sorted((root / package).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if role.search(line)
    ]
    assert offenders == []
