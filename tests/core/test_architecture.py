"""Structural promises: the core stays standard-library only and acyclic."""

from __future__ import annotations
import __future__

import ast
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import import_graph as import_graph_of
import pygents
import pygents_otel
import pygents_tui
from pygents import _lifecycle as lifecycle
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


def _modules() -> dict[str, set[str]]:
    """Every module under ``pygents/`` (subpackages included) and all it imports at
    import time, by dotted name."""
    return import_graph_of.modules(PACKAGE)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the modules of pygents it imports at import time."""
    return import_graph_of.import_graph(PACKAGE)


# Libraries other than the standard one that a module of pygents may import, and why.
# The core (everything `import pygents` loads) may import none of them.
_OPTIONAL_LIBRARIES = {
    "redis": "the redis extra, loaded by pygents.redis on first use",
    "pytest": "the pytest plugin, loaded by pytest itself",
}
_CORE_ENTRY_POINTS = ("pygents", "pygents.context", "pygents.hooks", "pygents.testing")


def test_the_walker_sees_modules_of_subpackages() -> None:
    graph = _import_graph()
    assert "pygents._schema" in graph
    assert "pygents._schema._models" in graph["pygents._schema._document"]
    assert "pygents._schema" in graph["pygents._tool"]
    assert "pygents._errors" in graph["pygents._hooks"]


def test_private_modules_import_each_other_without_cycles() -> None:
    graph = _import_graph()
    visiting: set[str] = set()
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        assert name not in visiting, f"import cycle: {' -> '.join([*path, name])}"
        if name in done:
            return
        visiting.add(name)
        for dep in sorted(graph.get(name, set())):
            visit(dep, [*path, name])
        visiting.discard(name)
        done.add(name)

    for module in graph:
        visit(module, [])
    assert "pygents._errors" in graph
    assert graph["pygents._errors"] == set()


def test_the_core_imports_only_the_standard_library() -> None:
    """What ``import pygents`` (and its public submodules) loads, through any depth of
    subpackages, names only the standard library and pygents."""
    modules = _modules()
    graph = _import_graph()
    core = {*_CORE_ENTRY_POINTS}
    for start in _CORE_ENTRY_POINTS:
        core |= _reachable(graph, start)
    outside = {
        f"{module} imports {dep}"
        for module in core
        for dep in modules[module]
        if dep.split(".")[0] not in (*sys.stdlib_module_names, "pygents")
    }
    assert sorted(outside) == []
    assert "pygents._schema._docstrings" in core


def test_only_the_optional_layers_import_libraries_outside_the_standard_one() -> None:
    offenders = {
        f"{module} imports {dep}"
        for module, imports in _modules().items()
        for dep in imports
        if dep.split(".")[0] not in (*sys.stdlib_module_names, "pygents", *_OPTIONAL_LIBRARIES)
    }
    assert sorted(offenders) == []


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


_reachable = import_graph_of.reachable


def test_argument_binding_and_the_scope_tree_do_not_depend_on_the_subscriber_bus() -> None:
    graph = _import_graph()
    # injection reads the scope tree ...
    assert "pygents._scope" in _reachable(graph, "pygents._calling")
    # ... and the drivers use the bus,
    assert "pygents._observe" in _reachable(graph, "pygents._turn_run")
    for module in ("pygents._calling", "pygents._scope"):  # but binding and scopes do not
        assert "pygents._observe" not in _reachable(graph, module), module


def _turn_steps_used(path: Path) -> list[str]:
    """The steps of an agent's turn (`_lifecycle`'s functions) that the module at
    ``path`` imports, anywhere in it: a module that imports one orders them itself."""
    steps = set(lifecycle.__all__) - {"ROUTED", "PutTurn"}  # a value and a type
    return sorted(
        alias.name
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module == "pygents._lifecycle"
        for alias in node.names
        if alias.name in steps
    )


def test_the_order_of_a_turns_steps_is_written_once_for_run_and_the_worker() -> None:
    """``Agent.run()`` and a Redis worker drive a turn through the same function, so a
    turn cannot live one life locally and another in a worker: only `drive`'s module
    imports the steps; the worker's driver iterates `drive` instead."""
    users = {
        import_graph_of.module_name(path, PACKAGE.parent): steps
        for path in sorted(PACKAGE.rglob("*.py"))
        if (steps := _turn_steps_used(path))
    }
    assert list(users) == ["pygents._agent_run"]
    assert "pygents._agent_run" in _modules()["pygents.redis._driver"]
    assert "drive" in (PACKAGE / "redis" / "_driver.py").read_text()


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


def _redis_layer_imports(path: Path, module: str) -> list[str]:
    """Where ``path`` (the module named ``module``) imports ``pygents.redis``, as
    ``line: import``: every ``import`` statement, at any depth (functions and
    ``TYPE_CHECKING`` blocks included: a type-only import still ties the core's
    annotations to the layer above it), relative imports resolved, and
    ``importlib.import_module("pygents.redis...")`` calls."""
    tree = ast.parse(path.read_text())
    return [
        f"{line}: {name}"
        for line, name in import_graph_of.every_import_with_lines(
            module, path.name == "__init__.py", tree
        )
        if name == "pygents.redis" or name.startswith("pygents.redis.")
    ]


def test_no_module_outside_the_redis_layer_imports_it() -> None:
    """The runtime knows nothing of Redis: ``pygents.redis`` is a layer on top of it
    (through the routes of ``_routing``), so that the core stays standard-library only
    and can be read, tested and changed without it."""
    layer = PACKAGE / "redis"
    offenders: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if layer in path.parents:
            continue
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(relative.parts).removesuffix(".__init__")
        offenders.extend(f"{module}:{hit}" for hit in _redis_layer_imports(path, module))
    assert offenders == []
    # The walker sees the layer's own imports, so an empty list above means something.
    assert _redis_layer_imports(layer / "_worker" / "worker.py", "pygents.redis._worker.worker")
    assert _redis_layer_imports(layer / "__init__.py", "pygents.redis")
