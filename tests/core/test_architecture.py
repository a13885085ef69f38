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


def _redis_layer_imports(path: Path, module: str) -> list[str]:
    """Where ``path`` (the module named ``module``) imports ``pygents.redis``, as
    ``line: import``: every ``import`` statement, at any depth (functions and
    ``TYPE_CHECKING`` blocks included: a type-only import still ties the core's
    annotations to the layer above it), relative imports resolved, and
    ``importlib.import_module("pygents.redis...")`` calls."""

    def redis(name: str) -> bool:
        return name == "pygents.redis" or name.startswith("pygents.redis.")

    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Name, ast.Attribute))
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr)
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        found.extend(f"{node.lineno}: {name}" for name in names if redis(name))
    return found


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
    assert _redis_layer_imports(layer / "_worker.py", "pygents.redis._worker")
    assert _redis_layer_imports(layer / "__init__.py", "pygents.redis")
