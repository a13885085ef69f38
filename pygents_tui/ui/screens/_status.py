"""The main screen's status line: the fleet in a few figures, then what needs a look,
fitted to the screen's width."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.cells import cell_len

from pygents_tui.state import AgentRow, DashboardView
from pygents_tui.text._plural import counted
from pygents_tui.ui.widgets._agent_cells import unseen_turns
from pygents_tui.ui.widgets._attention import attention_parts

__all__ = ["GIVE_UP", "SHOWN_COUNTERS", "arrived", "status_line"]

# The counters the status line shows when they are not zero, in this order: data lost
# before it was shown, and (listen mode) what the bounds evicted or refused.
SHOWN_COUNTERS: tuple[tuple[str, str], ...] = (
    ("dropped", "dropped"),
    ("spans_dropped", "span(s) dropped"),
    ("trace_spans_dropped", "span(s) over a trace's bound"),
    ("services_evicted", "service(s) evicted"),
    ("agents_evicted", "agent(s) evicted"),
    ("running_evicted", "running turn(s) evicted"),
    ("inferred_dropped", "inferred run(s) past a service's bound"),
    ("refused", "refused (receiver busy or sender too slow)"),
    ("rejected", "rejected"),
    ("malformed", "malformed"),
    ("too_large", "too large"),
    ("unsupported", "refused (content type or encoding)"),
    ("misdirected", "refused (HTTP sent to the gRPC port)"),
    ("replaced_dropped", "from a replaced process run"),
    ("redis_errors", "Redis survey(s) failed"),
)


def arrived(counts: Mapping[str, int]) -> int:
    """How many records the view took in: seam records in-process, spans and log
    records in listen mode."""
    return counts.get("received", 0) + counts.get("spans", 0) + counts.get("records", 0)


# What the status line gives up when the screen is too narrow for it, first to last:
# the figures another panel shows too (events, turns done and running, the fleet's
# tokens), before those that say something needs a look. Stuck and orphaned turns,
# entries awaiting takeover, data lost, the budget mark and a failed workload stay.
GIVE_UP: tuple[str, ...] = ("events", "done", "tokens", "running", "finished", "services")


def status_line(
    view: DashboardView,
    rows: Sequence[AgentRow],
    counts: Mapping[str, int],
    workload_failed: bool,
    width: int | None = None,
) -> str:
    """The status line, fitted to ``width`` characters by leaving out parts in the
    order of `GIVE_UP` (what still does not fit is cut by the screen)."""
    parts: list[tuple[str, str]] = []  # (kind, text)
    if counts.get("services"):  # listen mode
        parts.append(("services", _fleet(counts)))
    live = sum(1 for row in rows if not row.gone)
    parts.append(("agents", f"{live} agent(s)"))
    if live < len(rows):
        parts.append(("finished", f"{len(rows) - live} finished"))
    if counts.get("finished_dropped"):
        kind, text = parts[-1]
        parts[-1] = (kind, f"{text} ({counts['finished_dropped']} older dropped)")
    events, _ = view.event_log()
    done = counts.get("completed") or sum(row.completed for row in rows)
    running = f"{len(view.running_turns())} turn(s) running"
    mailboxes = view.mailboxes()
    # Agents heard of only in Redis report no turn: what their workers hold is said apart.
    held = sum(
        mailboxes[row.key].pending for row in rows if unseen_turns(row) and row.key in mailboxes
    )
    if held:
        running += f" (+{held} delivered from Redis mailboxes)"
    parts += [
        ("running", running),
        ("done", f"{done} done"),
        ("events", f"{events} event(s)"),
    ]
    parts += [
        ("lost", f"{counts[key]} {label}") for key, label in SHOWN_COUNTERS if counts.get(key)
    ]
    parts += attention_parts(view)
    if workload_failed:
        parts.append(("failed", "workload failed"))
    given_up: set[str] = set()

    def line() -> str:
        return " · ".join(text for kind, text in parts if kind not in given_up)

    for kind in GIVE_UP:
        if width is None or cell_len(line()) <= width:
            break
        given_up.add(kind)
    return line()


def _fleet(counts: Mapping[str, int]) -> str:
    """The processes heard from, and the services they run when some run more than one
    (``3 processes of 2 services``), with how many of the processes went stale."""
    processes = counts.get("services", 0)
    services = counts.get("service_names", processes)
    text = counted(services, "service")
    if processes != services:
        text = f"{counted(processes, 'process', 'processes')} of {text}"
    stale = counts.get("stale", 0)
    return f"{text} ({stale} stale)" if stale else text
