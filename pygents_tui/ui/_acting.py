"""What the dashboard does to agents through their sources: what each agent is
offered, the keys that act (pause, and the Mailbox panel's), the confirmation a
source asks for, and the one line that says why something is not offered.

A mixin of the `Dashboard` app, apart from it so that acting stays one piece: the
app's sources decide (`pygents_tui.state.Sources`); this only asks, confirms and
shows the answer."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from textual.app import App

from pygents_tui.state import ACTION_NEEDS, Action, Capabilities, DashboardView, Reply
from pygents_tui.state._capabilities import Capability
from pygents_tui.ui.screens.confirm import ConfirmScreen

__all__ = ["CONTROL", "KEY_ACTIONS", "PANEL_ACTIONS", "SESSION_ENV", "Acting", "log_action"]

# The ``--web`` session this dashboard serves, set by the web server for its process.
SESSION_ENV = "PYGENTS_TUI_WEB_SESSION"

KEY_ACTIONS: dict[str, Action] = {"toggle_pause": "pause"}
"""The app's actions that act on an agent through its sources, and what each asks."""
PANEL_ACTIONS: dict[str, Capability] = {"mailbox": "cancel", "show_mailbox": "mailbox"}
"""Actions of the app and its panels listed by the help only where a source offers
what they need (the Mailbox panel's keys, all through ``action_mailbox``: ``x``
needs ``cancel`` as ``r``, ``d`` and ``D`` need what Redis control offers)."""
CONTROL: tuple[Capability, ...] = ("pause", "cancel", "dead_letters", "drain")
"""What a ``read_only`` app takes away from every source."""


def log_action(what: str) -> None:
    """One line on stderr for what a browser session did, with that session (the
    `SESSION_ENV` its ``--web`` server gave this process): whoever holds the page can
    act, so what each session did stays on record. textual-serve keeps the process's
    stderr and writes it to the server's output as the session ends. Written to the
    descriptor itself: Textual captures ``sys.stderr`` while the app runs. Nothing in a
    terminal, where stderr is the screen."""
    session = os.environ.get(SESSION_ENV)
    if not session:
        return
    line = f"pygents-tui: web session {session[:16]}: {what}".replace("\n", " ")
    os.write(2, f"{line}\n".encode("utf-8", "replace"))


class Acting(App[int]):
    """The acting half of the `Dashboard` (see the module docstring)."""

    view: DashboardView
    read_only: str | None

    if TYPE_CHECKING:  # the app's own, which this half uses

        @property
        def selected_agent(self) -> str | None: ...

        def refresh_view(self) -> None: ...

        def action_show_tab(self, tab: str) -> None: ...

    @property
    def capabilities(self) -> Capabilities:
        """What the sources offer to some agent (the help lists the keys from it)."""
        return self.offered(None)

    def offered(self, agent: str | None) -> Capabilities:
        """What ``agent`` (a key; ``None``: some agent) is offered by the sources that
        serve it, less pausing when the app was made ``read_only``."""
        capabilities = self.view.sources.of(agent)
        if self.read_only is not None:
            for what in CONTROL:
                capabilities = capabilities.lacks(what, self.read_only)
        return capabilities

    def key_applies(self, action: str) -> bool:
        """Whether the help lists the keys of ``action``: not when the source never
        offers it (its key still answers, with the line saying why)."""
        asked = KEY_ACTIONS.get(action)
        if action in PANEL_ACTIONS:
            return self.view.sources.of(None).offers(PANEL_ACTIONS[action])
        return asked is None or self.capabilities.offers(ACTION_NEEDS[asked])

    def action_toggle_pause(self) -> None:
        self._act("pause")

    def _act(self, action: Action, target: str | None = None, hint: str = "") -> None:
        """Ask the sources serving the selected agent to do ``action`` to it (to its
        ``target``: a row of the Mailbox panel; ``hint`` says which row to select when
        none that applies is); where none offers it, say so in one line."""
        agent = self.selected_agent
        asked = f"{action} {agent!r}" + (f" {target!r}" if target is not None else "")
        line = self.offered(agent).why_not(ACTION_NEEDS[action])
        if line is None and hint and target is None:
            line = hint
        if line is not None:
            log_action(f"{asked}: not offered: {line!r}")
            self.notify(line, title="not offered here", severity="warning", markup=False)
            return
        log_action(f"{asked}: asked")
        self._answer(self.view.sources.act(action, agent, target))

    def _answer(self, reply: Reply) -> None:
        """Show a source's reply; a question (``reply.then``) is confirmed first, then
        what it does runs in the background and its own reply is shown."""
        then = reply.then
        log_action(f"answered {reply.text!r}")
        if then is not None:

            def decided(yes: bool | None) -> None:
                log_action(f"{reply.text!r}: {'confirmed' if yes else 'declined'}")
                if yes:
                    self.run_worker(self._confirmed(then), group="control", exit_on_error=False)

            self.push_screen(ConfirmScreen(reply.text), decided)
            return
        if reply.warning:
            self.notify(reply.text, severity="warning", markup=False)
            return
        self.notify(reply.text, markup=False)
        self.refresh_view()

    async def _confirmed(self, then: Callable[[], Awaitable[Reply]]) -> None:
        done = await then()
        self._answer(Reply(done.text, done.warning))

    def action_show_mailbox(self) -> None:
        """Key 8: the Mailbox panel, where a Redis source reads mailboxes."""
        line = self.offered(None).why_not("mailbox")
        if line is not None:
            self.notify(line, title="not offered here", severity="warning", markup=False)
            return
        self.action_show_tab("tab-mailbox")
