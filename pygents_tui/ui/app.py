"""The dashboard application.

The workload (the demo, or your coroutine) runs in the app's own event loop. A
`DashboardModel` (the feeder of this process's runtime) collects what happens at
almost no cost to the agents into the dashboard's one store (``model.store``); a
timer drains the store ten times a second and repaints only what changed.

The panels read one state through the `DashboardView` protocol, whichever feeders
write into it, so the same app shows the fleet of ``pygents-tui listen`` (``view=``).
The app never asks which source it shows: keys and panels follow what the sources
serving the selected agent say they offer (``view.sources.of(agent)``), actions go
through them (``view.sources.act``), and a key for something none offers answers with
the one line the main source gives for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from rich.console import RenderableType
from textual import events, on
from textual.actions import SkipAction
from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import DataTable, Input
from textual.worker import Worker, WorkerState

from pygents import Scope
from pygents_tui.feeders.process.model import DashboardModel
from pygents_tui.state import DashboardView
from pygents_tui.text._errors import summary
from pygents_tui.text._preview import preview
from pygents_tui.text._visible import visible
from pygents_tui.ui._acting import Acting
from pygents_tui.ui._export import saved
from pygents_tui.ui._output import ProgramOutput
from pygents_tui.ui.screens import (
    DetailScreen,
    ErrorScreen,
    HelpScreen,
    InspectorScreen,
    MainScreen,
    TextScreen,
)
from pygents_tui.ui.screens.main import TABS
from pygents_tui.ui.widgets import AgentsTable, TimelineTable
from pygents_tui.ui.widgets.mailbox import MailboxPanel

__all__ = ["Dashboard", "Workload", "exit_status"]

Workload = Callable[[], Awaitable[Any]]
INTERRUPTED = 130  # the shell's status for a program ended by Ctrl-C (128 + SIGINT)
FOLD_SLICE = 0.008
"""Seconds of folding at a time. A key travels from the focused widget up to the app
one message queue at a time, a turn of the event loop each; folding what a whole
refresh interval brought in one go (85 ms at 12,000 spans/s, W13) held every one of
those turns, so the keys that bubble furthest waited longest."""


def exit_status(exc: SystemExit | KeyboardInterrupt) -> tuple[int, str]:
    """The process exit status ``exc`` asks for, and what happened in a few words.

    ``SystemExit`` follows Python's own rules: no code is 0, an int is passed through,
    anything else is a message, shown, with status 1. ``KeyboardInterrupt`` is 130.
    """
    if isinstance(exc, KeyboardInterrupt):
        return INTERRUPTED, "interrupted"
    code = exc.code
    if code is None or isinstance(code, int):
        return code or 0, f"exited with status {code or 0}"
    return 1, f"exited: {preview(str(code), 200)}"


class Dashboard(Acting):
    """Watch agents live. ``workload`` is started in the app's loop on mount.

    By default its source is this process: a `DashboardModel` (``model``) subscribed
    to the runtime, with the spans of ``tracer_provider`` (default: the global one,
    once an OpenTelemetry SDK is set) for the turn inspector; ``p`` pauses the
    selected agent. ``view`` is another store (the one the fleet feeder of
    ``pygents-tui listen`` writes); what it does not offer, ``p`` and the help say in its own words.
    ``read_only`` takes pausing away from any source, with that line instead."""

    CSS_PATH = Path(__file__).with_name("dashboard.tcss")
    TITLE = "pygents"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", tooltip="exit status 1 if the workload failed"),
        Binding(
            "ctrl+c", "interrupt", "Interrupt", show=False, tooltip="stop it all, exit status 130"
        ),
        Binding("question_mark", "help", "Help", tooltip="this key map"),
        Binding("p", "toggle_pause", "Pause", tooltip="pause or resume the selected agent"),
        # ``p`` where no source pauses agents (listen mode, --read-only): out of the
        # footer, yet the key still answers with the line saying why (`check_action`).
        Binding("p", "pause_not_offered", show=False),
        Binding("space", "freeze", "Freeze", tooltip="hold the screen; data keeps coming"),
        Binding(
            "slash",
            "filter_key",
            "Filter",
            tooltip="filter the visible panel (else agents)",
            priority=True,  # (see the panels' keys below)
        ),
        Binding("escape", "back", "Back", tooltip="back to the agents table"),
        Binding("c", "clear_finished", "Clear finished", tooltip="forget the finished agents"),
        Binding("e", "show_error", "Error", tooltip="why the workload failed, and where"),
        Binding(
            "ctrl+s", "save_screen", "Screenshot", show=False, tooltip="save the screen as SVG"
        ),
        # Taken by the app before the focused widget sees them (`_main_keys`): a key
        # the focused widget does not take travels up to the app one widget a turn of
        # the event loop, and with a fleet's spans folded between turns, a dozen such
        # turns kept these keys waiting over 200 ms (W13).
        *(
            Binding(str(i), f"tab_key('tab-{key}')", label, show=False, priority=True)
            for i, (key, label) in enumerate(TABS, 1)
        ),
    ]

    def __init__(
        self,
        workload: Workload | None = None,
        *,
        model: DashboardModel | None = None,
        refresh_hz: float = 20.0,
        title: str | None = None,
        trace_url: str | None = None,
        trace_id: Callable[[Scope], str | None] | None = None,
        view: DashboardView | None = None,
        tracer_provider: object | None = None,
        read_only: str | None = None,
    ) -> None:
        super().__init__()
        if view is None:  # this process, fed by its runtime (a fleet of one)
            if model is None:
                model = DashboardModel(trace_id=trace_id, tracer_provider=tracer_provider)
            elif tracer_provider is not None:
                model.trace_with(tracer_provider)
            view = model.store
        self._model = model
        self.view: DashboardView = view
        self.read_only = read_only
        self.workload = workload
        self.refresh_hz = refresh_hz
        self.trace_url = trace_url
        if title:
            self.sub_title = title
        self.workload_error: BaseException | None = None
        self.exit_reason: str | None = None  # why the app ended itself, for the CLI
        self.view_error: Exception | None = None
        self.workload_done = asyncio.Event()
        self.output = ProgramOutput()  # what the program prints; replayed on exit
        self._main = MainScreen(view, self.output, agent_width=view.label_width)
        # The turns of Redis-served agents that were running when the dashboard ended,
        # by agent: they stay pending in their mailbox (the CLI says so on exit).
        self.left_pending: dict[str, int] = {}
        self._had_finished = False
        self.export_dir: Path | None = None  # where screenshots and traces go (default: cwd)
        self._fold_rest: asyncio.Handle | None = None  # the next slice of a backlog
        # Called once as the dashboard ends (`exit`), before the workload is stopped
        # (``--record`` ends its recording there: `end_in_process`).
        self.on_end: list[Callable[[], object]] = []
        self._ending = False

    @property
    def model(self) -> DashboardModel | None:
        """The in-process feeder, when the app shows this process (for programs that
        read it; the app itself only reads `view`, its store)."""
        return self._model

    # -- life cycle -------------------------------------------------------------------

    def on_mount(self) -> None:
        self.begin_capture_print(self, stdout=True, stderr=True)
        self.view.start()
        self.push_screen(self._main)
        self.refresh_timer = self.set_interval(1 / self.refresh_hz, self.refresh_view)
        if self.workload is not None:
            self.run_worker(self._run_workload(), name="workload", exit_on_error=False)
        else:
            self.workload_done.set()

    def on_print(self, event: events.Print) -> None:
        """The program printed: keep it for the Output panel and for the exit."""
        self.output.write(event.text, event.stderr)

    def on_unmount(self) -> None:
        if self._fold_rest is not None:
            self._fold_rest.cancel()
        self.view.close()

    async def _run_workload(self) -> None:
        assert self.workload is not None
        try:
            await self.workload()
        except asyncio.CancelledError:
            raise
        except (SystemExit, KeyboardInterrupt) as exc:
            # The program asked to end (sys.exit(), or Ctrl-C reached it): end the
            # dashboard with its status. Raised on, they would burst out of the event
            # loop past the app's own shutdown.
            status, what = exit_status(exc)
            self._end(status, what if status == INTERRUPTED else f"the workload {what}")
        except BaseException as exc:
            self.workload_error = exc
            self.refresh_bindings()  # shows the `e` key
            self._alert("the workload failed", f"{summary(exc, 300)}\n(e: the traceback)")
            if isinstance(exc, Exception):
                raise  # the worker records it; other BaseExceptions would end the loop
        finally:
            self.workload_done.set()
            self.refresh_view()

    @on(Worker.StateChanged)
    def _workload_state(self, event: Worker.StateChanged) -> None:
        ended_well = self.workload_error is None and self.exit_reason is None
        if event.worker.name == "workload" and event.state is WorkerState.SUCCESS and ended_well:
            self.notify("the workload finished; press q to quit", timeout=10, markup=False)

    def exit(
        self, result: int | None = None, return_code: int = 0, message: RenderableType | None = None
    ) -> None:
        """End the app. What the dashboard shows ends here, before Textual stops the
        workload (cancelling its running turns) as it shuts down: this process's feeder
        folds what it received and stops, and `on_end` runs; so the turns quitting
        cancels are neither shown nor recorded."""
        if not self._ending:
            self._ending = True
            model = self._model
            steps: list[Callable[[], object]] = []
            if model is not None:  # what it shows ends here
                steps += [model.store.drain, model.close]
            for step in [*steps, *self.on_end]:
                try:
                    step()
                except Exception as exc:  # a dashboard bug, as in a refresh: contained,
                    self.view_error = self.view_error or exc  # never keeping the app up
        super().exit(result, return_code, message)

    def action_quit(self) -> None:  # type: ignore[override]
        self._note_left_pending()
        self.exit(return_code=1 if self.workload_error is not None else 0)

    def _note_left_pending(self) -> None:
        """Count the running turns of agents served by ``pygents.redis`` workers in this
        process (`left_pending`): ending the dashboard ends the workload, and with it
        the workers, whose running turns no public call hands back. They stay pending in
        their mailbox until another worker takes them over."""
        mailboxes = self.view.mailboxes()
        if not mailboxes:
            return
        for turn in self.view.running_turns():
            if turn.agent is not None and turn.agent in mailboxes:
                name = mailboxes[turn.agent].agent
                self.left_pending[name] = self.left_pending.get(name, 0) + 1

    def action_interrupt(self) -> None:
        """Ctrl-C: end the dashboard (and the workload) as an interrupted program."""
        self._end(INTERRUPTED, "interrupted")

    def _end(self, status: int, reason: str) -> None:
        """Exit with ``status`` once the screen is up: a workload may end before the
        first paint, and exiting while the screen still mounts breaks Textual's header."""
        self._note_left_pending()
        self.exit_reason = reason
        self.call_after_refresh(self.exit, return_code=status)

    # -- text the app shows itself: the header and the toasts --------------------------

    def validate_title(self, title: Any) -> str:
        """The header's title, with its control characters made visible (`visible`),
        whoever sets it."""
        return visible(super().validate_title(title))

    def validate_sub_title(self, sub_title: Any) -> str:
        """The header's subtitle (``run``'s target, ``listen``'s address), likewise."""
        return visible(super().validate_sub_title(sub_title))

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast: ``message`` and ``title`` are plain text, never markup, with
        their control characters made visible. They name agents and quote exceptions,
        and Textual's toasts drop only a few control codes (not ESC)."""
        super().notify(
            visible(message, lines=True),
            title=visible(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def _alert(self, title: str, message: str) -> None:
        """An error toast that stays a while; ``message`` is plain text, never markup."""
        self.notify(message, title=title, severity="error", timeout=30, markup=False)

    # -- refreshing -------------------------------------------------------------------

    def refresh_view(self) -> None:
        """Drain the model; repaint (unless frozen) only the panels that can change.

        A failure here is a dashboard bug: it is shown once and contained, so that it
        neither closes the app nor cancels the workload (and with it the agents)."""
        try:
            self._refresh_view()
        except Exception as exc:
            if self.view_error is None:
                self.view_error = exc
                self._alert("the dashboard failed to refresh", f"{type(exc).__name__}: {exc}")

    def _refresh_view(self) -> None:
        self.view.drain(FOLD_SLICE)
        self._fold_later()
        if self._has_finished() != self._had_finished:
            self._had_finished = not self._had_finished
            self.refresh_bindings()  # `c` is offered only while there are some
        if not self._main.is_mounted:
            return  # its panels (and their columns) are not there yet
        if isinstance(self.screen, InspectorScreen):
            self.screen.refresh_view()
        elif self.screen is not self._main and not isinstance(
            self.screen, (HelpScreen, TextScreen)
        ):
            return
        self._main.refresh_view(workload_failed=self.workload_error is not None)

    def _fold_later(self) -> None:
        """What a refresh's slice left is folded a slice at a time, one per turn of the
        event loop (what the loop has ready runs between two), until none is left;
        the next refresh shows it."""
        if self._fold_rest is None and self.view.backlog:
            self._fold_rest = asyncio.get_running_loop().call_soon(self._fold_slice)

    def _fold_slice(self) -> None:
        self._fold_rest = None
        try:
            self.view.fold(FOLD_SLICE)
        except Exception as exc:  # contained as a refresh's failure is
            if self.view_error is None:
                self.view_error = exc
                self._alert("the dashboard failed to refresh", f"{type(exc).__name__}: {exc}")
        # Even after a failure: the request that raised was dropped (`FleetModel.fold`
        # folds at least an item a call), so the rest goes on and this ends.
        self._fold_later()

    # -- actions ----------------------------------------------------------------------

    @property
    def selected_agent(self) -> str | None:
        """The agent the main screen shows (its key: the name in-process)."""
        return self._main.selected

    @property
    def frozen(self) -> bool:
        """Whether the view is frozen (``space``): data keeps arriving, unshown."""
        return self._main.frozen

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen, note=self.capabilities.why_not("pause")))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys that have nothing to act on are left out of the footer."""
        if action in ("toggle_pause", "pause_not_offered"):
            return self.key_applies("toggle_pause") == (action == "toggle_pause")
        if action == "show_error":
            return self.workload_error is not None
        if action == "clear_finished":
            return self._has_finished()
        return True

    def key_applies(self, action: str) -> bool:
        """Also: ``e`` (the workload's error) only where there is a workload."""
        if action == "show_error":
            return self.workload is not None
        return super().key_applies(action)

    def key_tooltip(self, action: str, tooltip: str) -> str:
        """What the help says of a key: without a workload, ``q`` has no failure to
        report in its exit status."""
        if action == "quit" and self.workload is None:
            return "exit status 0"
        return tooltip

    def action_pause_not_offered(self) -> None:
        """``p`` where no source pauses agents: the line saying why."""
        self._act("pause")

    def _has_finished(self) -> bool:
        """Whether agents that are gone are listed (a source without such agents
        never has any: `c` stays out of the footer)."""
        return self.view.finished_count() > 0

    def action_clear_finished(self) -> None:
        count = self.view.clear_finished()
        self.notify(f"cleared {count} finished agent(s)", markup=False)
        self.refresh_view()

    def action_show_error(self) -> None:
        if self.workload_error is not None and not isinstance(self.screen, TextScreen):
            self.push_screen(ErrorScreen(self.workload_error))

    @on(MailboxPanel.Act)
    def _act_on_row(self, event: MailboxPanel.Act) -> None:
        self._act(event.action, event.target, event.hint)

    @on(MailboxPanel.Read)
    def _read_row(self, event: MailboxPanel.Read) -> None:
        if not isinstance(self.screen, TextScreen):
            self.push_screen(DetailScreen(event.title, event.lines))

    def action_save_screen(self) -> None:
        folder = str(self.export_dir or Path.cwd())
        saved(self, "screenshot", lambda: self.save_screenshot(path=folder))

    def action_freeze(self) -> None:
        self._main.toggle_freeze()
        self.refresh_view()

    def _main_keys(self) -> None:
        """The main screen's keys taken first (``/`` and the panels' digits) are left
        to the focused widget where they would not have reached the app: typed into
        the filter, or on a screen over the main one."""
        if self.screen is not self._main or isinstance(self.focused, Input):
            raise SkipAction

    def action_filter_key(self) -> None:
        self._main_keys()
        self.action_filter()

    def action_tab_key(self, tab: str) -> None:
        self._main_keys()
        self.action_show_tab(tab)

    def action_filter(self) -> None:
        self._main.start_filter()

    def action_filter_events(self) -> None:
        self._main.start_filter("tab-events")

    def action_show_tab(self, tab: str) -> None:
        self._main.show_tab(tab)
        self.refresh_view()

    async def action_back(self) -> None:
        if self.screen is not self._main:
            await self.pop_screen()
        else:
            self._main.query_one(AgentsTable).focus()

    def action_inspect(self, uuid: str | None = None) -> None:
        if uuid is None:
            uuid = self._main.query_one(TimelineTable).selected_uuid
        record = self.view.find_turn(uuid) if uuid else None
        if record is None:
            self.notify(
                "no turn selected: pick one in the Timeline panel (6)",
                severity="warning",
                markup=False,
            )
            return
        self.push_screen(InspectorScreen(self.view, record, self.trace_url, self.view.wall_clock))

    @on(DataTable.RowSelected, "#timeline")
    def _inspect_row(self, event: DataTable.RowSelected) -> None:
        self.action_inspect(str(event.row_key.value))

    @on(DataTable.RowSelected, "#agents")
    def _inspect_agent(self, event: DataTable.RowSelected) -> None:
        """``enter`` on an agent opens its newest turn, running or not: another
        framework's agent's latest run, with its trace, whose turns no Timeline row
        may show any more."""
        record = self.view.latest_turn(str(event.row_key.value))
        if record is None:
            self.notify("this agent has no turn to inspect yet", severity="warning", markup=False)
            return
        self.push_screen(InspectorScreen(self.view, record, self.trace_url, self.view.wall_clock))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand(
            "Pause / resume agent", "Pause or resume the selected agent", self.action_toggle_pause
        )
        yield SystemCommand(
            "Freeze view", "Stop repainting while data keeps arriving", self.action_freeze
        )
        yield SystemCommand("Filter events", "Filter the event log", self.action_filter_events)
        yield SystemCommand("Inspect turn", "Open the selected timeline turn", self.action_inspect)
        yield SystemCommand("Help", "Show the key map", self.action_help)
        if self.workload_error is not None:
            yield SystemCommand(
                "Workload error",
                "Why the workload failed, with the traceback",
                self.action_show_error,
            )
