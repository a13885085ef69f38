"""The dashboard's folders by role, and who may import whom.

``state/`` is the store and its read API: it knows no feeder, no UI, no command line.
Feeders write into a store they are given; the receiver (``listen/``) and the file
format (``recording/``) know no store; the app (``ui/``) reads the store and knows no
feeder; only the command line (``cli/``) and the package's face put them together.
"""

from __future__ import annotations

from pathlib import Path

import import_graph
import pygents_tui

PACKAGE = Path(pygents_tui.__file__).parent

# folder -> the folders of pygents_tui its modules may import (every import: type-only
# and late ones included, since they tie the layers just the same).
MAY_IMPORT: dict[str, set[str]] = {
    "text": set(),
    "state": {"text"},
    "listen": {"text"},
    "recording": {"text", "listen"},
    "feeders": {"text", "state", "listen", "recording"},
    "ui": {"text", "state"},
    "cli": {"text", "state", "listen", "recording", "feeders", "ui"},
}
# The one import against the order, and why (docs/reference/architecture.md says so too).
EXCEPTIONS = {
    ("pygents_tui.ui.app", "pygents_tui.feeders.process.model"): (
        "Dashboard() given no view watches this process: it builds that default feeder"
    ),
}
# What the UI library and the wire formats are, for the folders that must not load them.
LIBRARIES = {
    "state": ("textual", "rich", "opentelemetry", "pygents_otel", "grpc", "aiohttp", "google"),
    "text": ("textual", "opentelemetry", "grpc", "aiohttp", "google"),
    "listen": ("textual", "rich"),
    "recording": ("textual", "rich"),
    "feeders": ("textual",),
}


def _folder(module: str) -> str:
    """``pygents_tui.feeders.otlp.fleet`` -> ``feeders``; the package's own modules
    (``__init__``, ``__main__``) -> ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (PACKAGE / parts[-1]).is_dir() else ""


def test_the_top_level_holds_the_public_names_only() -> None:
    modules = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert modules == ["__init__.py", "__main__.py"]
    folders = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert folders == sorted(MAY_IMPORT)


def test_each_folder_imports_only_the_folders_below_it() -> None:
    graph = import_graph.import_graph(PACKAGE, import_graph.every_import)
    offenders = sorted(
        f"{module} imports {dep}"
        for module, deps in graph.items()
        for dep in deps
        if _folder(module)
        and _folder(dep)
        and _folder(dep) != _folder(module)
        and _folder(dep) not in MAY_IMPORT[_folder(module)]
        and (module, dep) not in EXCEPTIONS
    )
    assert offenders == []
    # The walk saw the layers it rules on.
    assert any(_folder(dep) == "state" for dep in graph["pygents_tui.ui.app"])
    assert any(_folder(dep) == "feeders" for dep in graph["pygents_tui.cli.listen"])


def test_no_folder_names_a_library_its_role_does_not_need() -> None:
    found = import_graph.modules(PACKAGE, import_graph.every_import)
    offenders = sorted(
        f"{module} imports {dep}"
        for module, deps in found.items()
        for dep in deps
        if dep.split(".")[0] in LIBRARIES.get(_folder(module), ())
    )
    assert offenders == []
    assert any(dep.startswith("textual") for dep in found["pygents_tui.ui.app"])


def test_there_is_no_import_cycle_at_run_time() -> None:
    assert import_graph.cycles(import_graph.import_graph(PACKAGE)) == []


def test_a_type_only_cycle_stays_inside_one_folder() -> None:
    graph = import_graph.import_graph(PACKAGE, import_graph.every_import)
    across = [
        " -> ".join(cycle)
        for cycle in import_graph.cycles(graph)
        if len({_folder(module) for module in cycle}) > 1
    ]
    assert across == []


def test_each_feeder_holds_the_store_it_writes_and_is_none() -> None:
    """The fleet's feeder and this process's each make their store (``.store``, what
    the app reads) and are asked by it to fold (`Feeder`); neither is a store."""
    from pygents_tui.feeders import DashboardModel, FleetModel
    from pygents_tui.state import Store

    for feeder in (FleetModel(), DashboardModel()):
        assert not isinstance(feeder, Store)
        assert isinstance(feeder.store, Store)
        assert feeder.store.feeder is feeder


def test_no_feeder_is_a_store() -> None:
    """Every class of every module under ``pygents_tui.feeders`` holds the store it
    writes (``self.store``) instead of subclassing it."""
    import importlib
    import inspect
    import pkgutil

    import pygents_tui.feeders
    from pygents_tui.state import Store
    from pygents_tui.state._tables import Tables

    stores: set[str] = set()
    for module in pkgutil.walk_packages(
        pygents_tui.feeders.__path__, prefix="pygents_tui.feeders."
    ):
        found = importlib.import_module(module.name)
        for cls in vars(found).values():
            mine = inspect.isclass(cls) and cls.__module__ == module.name
            if mine and issubclass(cls, (Store, Tables)):
                stores.add(f"{cls.__module__}.{cls.__qualname__}")
    assert stores == set()


def test_a_replay_reads_one_store_across_seeks(tmp_path: Path) -> None:
    """A seek starts a fresh fleet feeder on the same store (emptied), so the app
    keeps reading one object: no view forwards reads to a model that changes."""
    from pygents_tui.feeders import ReplayView
    from pygents_tui.recording import Recording

    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": '
        '[{"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", '
        '"name": "s", "startTimeUnixNano": "1000000000", "endTimeUnixNano": "2000000000"}]}]}]}\n'
    )
    view = ReplayView(Recording(path), clock=lambda: 0.0)
    store, first = view.store, view.model
    view.replay.seek(view.replay.end_ns)
    view.replay.seek(view.replay.start_ns)
    assert view.model is not first
    assert view.store is store
    assert view.model.store is store
    assert store.feeder is view
    assert not hasattr(view, "agent_rows")
    view.close()


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert import_graph.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        ["a", "b", "c", "a"]
    ]
    assert import_graph.cycles({"a": {"b"}, "b": set()}) == []


def test_the_compatibility_leftovers_and_the_modules_called_records_are_gone() -> None:
    # ``LocalView`` returned its argument and ``Dashboard.local`` was ``model`` again;
    # "records" named three things: the store's entries are ``state._entries``, the
    # in-process feeder's ``feeders.process._turn_entries``, recordings ``recording``.
    from pygents_tui.feeders.process import local
    from pygents_tui.ui.app import Dashboard

    assert not hasattr(local, "LocalView")
    assert not hasattr(Dashboard, "local")
    assert not (PACKAGE / "state" / "_records.py").exists()
    assert not (PACKAGE / "feeders" / "process" / "_records.py").exists()
    assert (PACKAGE / "state" / "_entries.py").exists()
    assert (PACKAGE / "feeders" / "process" / "_turn_entries.py").exists()
