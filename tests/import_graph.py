"""Who imports whom in a package, read from the sources (nothing is imported).

The architecture tests of the core and of the dashboard hold their import rules with
these two readings of a module:

* `at_import` — what importing the module runs: the module level and its ``if`` /
  ``try`` blocks, not functions, not ``TYPE_CHECKING`` blocks. Cycles here fail at run
  time (or hang on the order of imports).
* `every_import` — every import it names anywhere, functions and ``TYPE_CHECKING``
  blocks included, and ``importlib.import_module("...")`` calls: a type-only or a
  late import still ties one layer to another.

Relative imports are resolved; ``from a.b import c`` names ``a.b`` and, as ``c`` may
be a submodule, ``a.b.c``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from pathlib import Path

Reading = Callable[[str, bool, ast.Module], set[str]]


def module_name(path: Path, root: Path) -> str:
    """``root/pygents/_schema/_models.py`` -> ``pygents._schema._models``; a package's
    ``__init__.py`` is the package itself."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _from_names(node: ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    base = node.module or ""
    if node.level:
        anchor = (module if is_package else module.rpartition(".")[0]).split(".")
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def _module_level(module: str, is_package: bool, body: Iterable[ast.stmt]) -> set[str]:
    found: set[str] = set()
    for node in body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.update(_from_names(node, module, is_package))
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            found |= _module_level(module, is_package, [*node.body, *node.orelse])
        elif isinstance(node, ast.Try):
            blocks = [*node.body, *node.orelse, *node.finalbody]
            blocks += [stmt for handler in node.handlers for stmt in handler.body]
            found |= _module_level(module, is_package, blocks)
    return found


def at_import(module: str, is_package: bool, tree: ast.Module) -> set[str]:
    """What importing ``module`` imports (see the module's docstring)."""
    return _module_level(module, is_package, tree.body)


def every_import_with_lines(
    module: str, is_package: bool, tree: ast.Module
) -> list[tuple[int, str]]:
    """Every module ``module`` names in an import, anywhere, with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = _from_names(node, module, is_package)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Name, ast.Attribute))
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr)
            in ("import_module", "__import__", "import_from_extra")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        found.extend((getattr(node, "lineno", 0), name) for name in names)
    return found


def every_import(module: str, is_package: bool, tree: ast.Module) -> set[str]:
    return {name for _, name in every_import_with_lines(module, is_package, tree)}


def modules(package: Path, reading: Reading = at_import) -> dict[str, set[str]]:
    """Every module under ``package`` (subpackages included) and what it imports."""
    return {
        module_name(path, package.parent): reading(
            module_name(path, package.parent),
            path.name == "__init__.py",
            ast.parse(path.read_text()),
        )
        for path in sorted(package.rglob("*.py"))
    }


def import_graph(package: Path, reading: Reading = at_import) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports. The package itself is left out
    as a target: its ``__init__`` is the public face, never a dependency of the
    modules it gathers."""
    found = modules(package, reading)
    return {
        name: {dep for dep in imports if dep in found and dep != package.name}
        for name, imports in found.items()
    }


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for dep in graph.get(stack.pop(), set()):
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return seen


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each module that is on one (each as the path around it)."""
    found: list[list[str]] = []
    on_one: set[str] = set()
    for start in sorted(graph):
        if start in on_one:
            continue
        # a path from start back to start, depth first
        stack: list[tuple[str, list[str]]] = [(dep, [start]) for dep in sorted(graph[start])]
        seen: set[str] = set()
        while stack:
            name, path = stack.pop()
            if name == start:
                found.append([*path, start])
                on_one.update(path)
                break
            if name in seen:
                continue
            seen.add(name)
            stack.extend((dep, [*path, name]) for dep in sorted(graph.get(name, set())))
    return found
