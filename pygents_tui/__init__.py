"""pygents_tui: a live terminal dashboard for pygents agents.

Run ``pygents-tui demo`` to see it on a built-in workload, ``pygents-tui run app.py``
around your own coroutine, or embed it: ``run_dashboard(main)``.
"""

from __future__ import annotations

__version__ = "0.1.0"

from pygents_tui.app import Dashboard, Workload
from pygents_tui.model import DashboardModel


def run_dashboard(workload: Workload | None = None, **options: object) -> int:
    """Run the dashboard around ``workload`` (an async function) until the user quits;
    return the exit code (1 if the workload raised)."""
    app = Dashboard(workload, **options)  # type: ignore[arg-type]
    app.run()
    return app.return_code or 0


__all__ = ["Dashboard", "DashboardModel", "Workload", "__version__", "run_dashboard"]
