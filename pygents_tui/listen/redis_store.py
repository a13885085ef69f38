"""Where the Redis source writes into the dashboard's store: this adapter only.

The Redis mailboxes source (`pygents_tui.listen.redis_source`) reads; everything it
changes in the fleet's store goes through `StoreAdapter`, so that a new store needs
this module re-pointed and nothing else. It uses the fleet's public methods where
there are some (``set_contents``, ``note``) and, where there are none yet (an agent
row for a mailbox no process reports over OTLP), the ones the OTLP folding uses.

Matching: an agent heard over OTLP whose agent name is a mailbox's name is served by
that mailbox (its row gains the Mailbox column, its queue's turns, and control); a
mailbox with no such agent gets a row of its own, ``redis/<mailbox>``, under a
service named ``redis`` (with the prefix as its instance when it is not the default).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from pygents_tui.listen.decode import ResourceInfo
from pygents_tui.listen.fleet import FleetModel

if TYPE_CHECKING:
    from pygents.redis import MailboxSurvey, Survey
    from pygents_tui.state import AgentEntry, ServiceState

__all__ = ["ERRORS_COUNTER", "SERVICE", "StoreAdapter", "arguments"]

SERVICE: Final = "redis"  # the service of the rows of mailboxes heard of only in Redis
ERRORS_COUNTER: Final = "redis_errors"  # the status line's count of failed surveys
_DEFAULT_PREFIX: Final = "pygents"


class StoreAdapter:
    """Writes what a survey says into ``fleet``; see the module docstring."""

    def __init__(self, fleet: FleetModel, prefix: str) -> None:
        self.fleet = fleet
        self._resource = ResourceInfo(
            SERVICE, "" if prefix == _DEFAULT_PREFIX else prefix, None, None
        )

    def service(self) -> ServiceState:
        """The ``redis`` service (made again if the user forgot it), seen now."""
        fleet = self.fleet
        now = fleet.clock()
        found = fleet.services.get(self._resource.key)
        if found is None:
            found = fleet._new_service(self._resource, now)
        found.last_seen, found.stale, found.live = now, False, True
        return found

    def apply(self, survey: Survey) -> dict[str, MailboxSurvey]:
        """Fold one survey into the store: rows, queues, mailbox statistics. Returns
        each served agent's mailbox, by agent key."""
        fleet = self.fleet
        service = self.service()
        by_name = {mailbox.agent: mailbox for mailbox in survey.mailboxes}
        served: dict[str, MailboxSurvey] = {}
        heard: set[str] = set()
        for agent in fleet.agents.values():
            if agent.service is not service and agent.name in by_name:
                served[agent.key] = by_name[agent.name]
                heard.add(agent.name)
        for local in [name for name in service.agents if name not in by_name or name in heard]:
            fleet.forget_agent(service.agents[local])
        for name, mailbox in by_name.items():
            if name in heard:
                continue
            row = service.agents.get(name) or fleet._new_agent(service, name, name)
            _own_row(row, mailbox)
            served[row.key] = mailbox
        for key, mailbox in served.items():
            _set_queue(fleet, key, mailbox)
        fleet.mailbox_stats = {key: mailbox.stats for key, mailbox in served.items()}
        fleet.changed()  # rows may have come or gone
        return served

    def failed(self) -> None:
        """Count a survey that failed (the status line shows the count)."""
        self.fleet.counts[ERRORS_COUNTER] += 1
        self.fleet.changed()

    def note(self, who: str, kind: str, text: str) -> None:
        """An Events line: ``who`` (an agent's label, or ``redis``) did ``text``."""
        fleet = self.fleet
        fleet.note(self.service(), fleet.clock(), who, kind, text)
        fleet.changed()

    def label(self, key: str) -> str:
        """The label of the agent with ``key``, as the agents table shows it."""
        found = self.fleet.agents.get(key)
        return found.label if found is not None else key


def _own_row(row: AgentEntry, mailbox: MailboxSurvey) -> None:
    """A mailbox's own row: its state, depth and current tool, from the survey."""
    stats = mailbox.stats
    row.turns_unseen = True  # only its mailbox is read: no turn of it is reported
    row.phase = "paused" if mailbox.paused else "running" if stats.pending else "idle"
    row.queue_depth = max(0, stats.depth - stats.pending)
    row.current_tool = mailbox.pending[0].tool if mailbox.pending else None


def arguments(survey: str) -> str:
    """A queued turn's arguments as the in-process queue panel writes them
    (``8, x=1``), from the survey's preview: a JSON array of the args list (``{}``
    when empty: Lua cannot tell an empty list from an empty object) and, if any, the
    kwargs object (``[[8],{"x":1}]``). A preview cut short, or not of that shape, is
    shown as it came (cut, with its ``…``)."""
    try:
        found = json.loads(survey)
    except ValueError:
        return survey
    if not isinstance(found, list) or len(found) not in (1, 2):
        return survey
    args, kwargs = found[0], found[1] if len(found) == 2 else {}
    if args == {}:
        args = []
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        return survey
    shown = [_json(value) for value in args]
    shown += [f"{name}={_json(value)}" for name, value in kwargs.items()]
    return ", ".join(shown)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _set_queue(fleet: FleetModel, key: str, mailbox: MailboxSurvey) -> None:
    waiting = max(0, mailbox.stats.depth - mailbox.stats.pending)
    queued = [
        (str(q.position), q.tool, arguments(q.arguments), f"{q.timeout:g}s" if q.timeout else "")
        for q in mailbox.queued
    ]
    fleet.set_contents(key, queued, more=max(0, waiting - len(queued)))
