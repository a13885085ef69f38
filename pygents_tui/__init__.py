"""pygents_tui: a live terminal dashboard for pygents agents.

Run ``pygents-tui demo`` to see it on a built-in workload, ``pygents-tui run app.py``
around your own coroutine, or embed it: ``run_dashboard(main)``.

The package imports without Textual: ``Dashboard`` and ``Workload`` load on first use,
so that without the ``tui`` extra both ``pygents-tui`` and ``from pygents_tui import
Dashboard`` say which extra to install instead of failing inside an import.
``DashboardModel`` and ``__version__`` load on first use too (they import ``pygents``),
so that the ``pygents-tui`` command starts by importing next to nothing, and Ctrl-C in
its first second is one line (`pygents_tui.cli._entry`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing (10 ms of the command's start)
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

    from pygents import __version__
    from pygents_tui.feeders.process.model import DashboardModel
    from pygents_tui.ui.app import Dashboard, Workload

# The top-level modules the 'tui' extra installs (Textual brings Rich; google-re2 is re2,
# the filter's regular-expression engine).
TUI_PROVIDES = ("textual", "rich", "re2")


def dashboard_module() -> ModuleType:
    """``pygents_tui.ui.app``, or a one-line ``MissingExtraError`` naming the 'tui' extra."""
    from pygents._extras import import_from_extra

    return import_from_extra("pygents_tui.ui.app", "pygents-tui", "tui", TUI_PROVIDES)


def __getattr__(name: str) -> Any:
    """``Dashboard`` and ``Workload``, loaded from ``pygents_tui.ui.app`` on first use;
    ``DashboardModel`` and ``__version__`` likewise, from where they live."""
    if name in ("Dashboard", "Workload"):
        return getattr(dashboard_module(), name)
    if name == "DashboardModel":
        from pygents_tui.feeders.process.model import DashboardModel

        return DashboardModel
    if name == "__version__":
        from pygents import __version__

        return __version__
    raise AttributeError(f"module 'pygents_tui' has no attribute {name!r}")


def run_dashboard(workload: Workload | None = None, **options: object) -> int:
    """Run the dashboard around ``workload`` (an async function) until the user quits;
    return the exit code (1 if the workload raised).

    What the program printed while the dashboard ran is printed again once it has
    given the terminal back. Without a terminal to draw on (output redirected to a
    file or a pipe) it says so in one line on standard error and returns 2 without
    starting anything."""
    from pygents_tui.cli._terminal import refuse_without_terminal

    if refuse_without_terminal():
        return 2
    app: Dashboard = dashboard_module().Dashboard(workload, **options)
    try:
        app.run()
    finally:
        app.output.replay()  # what the program printed meanwhile, in order
    return app.return_code or 0


__all__ = ["Dashboard", "DashboardModel", "Workload", "__version__", "run_dashboard"]
