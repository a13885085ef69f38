"""Where the Redis source writes into the dashboard's store: this adapter only.

The Redis mailboxes source (`pygents_tui.feeders.redis.source`) reads; everything it
changes in the fleet's store goes through `StoreAdapter`, so that a new store needs
this module re-pointed and nothing else. It uses the fleet's public methods where
there are some (``set_contents``, ``note``) and, where there are none yet (an agent
row for a mailbox no process reports over OTLP), the ones the OTLP folding uses.

Matching: an agent heard over OTLP is served by a mailbox (its row gains the Mailbox
column, its queue's turns, and control) only when it has the mailbox's name *and*
its sender is one of the mailbox's live workers: the ``service.name`` and
``service.instance.id`` of the sender's resource are those the worker wrote beside
its heartbeat (`pygents.redis.WorkerRow.service` and ``instance``). Any sender may
name its agent ``billing``; only Redis says which processes serve that mailbox. A
mailbox with no such agent gets a row of its own, ``redis/<mailbox>``, under a
service named ``redis`` (with the prefix as its instance when it is not the
default), and an agent that merely shares its name keeps its own row, unserved.

Redis is the source of truth for what it reports: a served row's pause and depth
(waiting turns) are Redis's, put back after every fold of OTLP records
(`FleetModel.held`); its pending turns, workers and dead letters are the Mailbox
panel's, read from the survey alone. The ``redis`` service's key is reserved, so
that a sender calling itself ``redis`` gets a service of its own
(`pygents_tui.feeders.otlp.services.Services.reserved`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from pygents_tui.feeders.otlp.fleet import FleetModel
from pygents_tui.listen.decode import ResourceInfo

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
        fleet.services.reserved.add(self._resource.key)

    def service(self) -> ServiceState:
        """The ``redis`` service (made again if the user forgot it), seen now."""
        fleet = self.fleet
        now = fleet.store.clock()
        found = fleet.store.services.get(self._resource.key)
        if found is None:
            found = fleet.services.new_service(self._resource, now)
        found.last_seen, found.stale, found.live = now, False, True
        return found

    def apply(self, survey: Survey) -> dict[str, MailboxSurvey]:
        """Fold one survey into the store: rows, queues, mailbox statistics. Returns
        each served agent's mailbox, by agent key."""
        fleet = self.fleet
        service = self.service()
        by_name = {mailbox.agent: mailbox for mailbox in survey.mailboxes}
        workers = {
            mailbox.agent: {(w.service, w.instance) for w in mailbox.workers if w.service}
            for mailbox in survey.mailboxes
        }
        served: dict[str, MailboxSurvey] = {}
        heard: set[str] = set()
        for agent in fleet.store.agents.values():
            sender = agent.service
            if sender is service or agent.name not in by_name:
                continue
            if (sender.name, sender.instance) in workers[agent.name]:
                served[agent.key] = by_name[agent.name]
                heard.add(agent.name)
        for local in [name for name in service.agents if name not in by_name or name in heard]:
            fleet.store.forget_agent(service.agents[local])
        for name, mailbox in by_name.items():
            if name in heard:
                continue
            row = service.agents.get(name) or fleet.services.new_agent(service, name, name)
            _own_row(row, mailbox)
            served[row.key] = mailbox
        for key, mailbox in served.items():
            _set_queue(fleet, key, mailbox)
        fleet.store.mailbox_stats = {key: mailbox.stats for key, mailbox in served.items()}
        for key in fleet.held.keys() - served.keys():  # no longer served: its own again
            left = fleet.store.agents.get(key)
            if left is not None:
                left.live_phase = None
        fleet.held = {
            key: (mailbox.paused, _waiting(mailbox))
            for key, mailbox in served.items()
            if fleet.store.agents[key].service is not service
        }
        fleet.hold()
        fleet.store.changed()  # rows may have come or gone
        return served

    def failed(self, line: str) -> None:
        """A survey failed, for the reason ``line``: counted (the status line shows
        the count), and said above the agents table until one succeeds (`answered`).
        The ``redis`` service is not stale meanwhile: it is not a process that stopped
        sending, and that line says what is wrong."""
        fleet = self.fleet
        fleet.store.counts[ERRORS_COUNTER] += 1
        fleet.trouble[SERVICE] = line
        self.service()
        fleet.store.changed()

    def answered(self) -> None:
        """A survey succeeded: the failure line goes."""
        if self.fleet.trouble.pop(SERVICE, None) is not None:
            self.fleet.store.changed()

    def note(self, who: str, kind: str, text: str) -> None:
        """An Events line: ``who`` (an agent's label, or ``redis``) did ``text``."""
        fleet = self.fleet
        fleet.store.note(self.service(), fleet.store.clock(), who, kind, text)
        fleet.store.changed()

    def label(self, key: str) -> str:
        """The label of the agent with ``key``, as the agents table shows it."""
        found = self.fleet.store.agents.get(key)
        return found.label if found is not None else key


def _own_row(row: AgentEntry, mailbox: MailboxSurvey) -> None:
    """A mailbox's own row: its state, depth and current tool, from the survey."""
    stats = mailbox.stats
    row.turns_unseen = True  # only its mailbox is read: no turn of it is reported
    row.phase = "paused" if mailbox.paused else "running" if stats.pending else "idle"
    row.queue_depth = _waiting(mailbox)
    row.current_tool = mailbox.pending[0].tool if mailbox.pending else None


def _waiting(mailbox: MailboxSurvey) -> int:
    """The turns no worker has taken yet."""
    return max(0, mailbox.stats.depth - mailbox.stats.pending)


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
    waiting = _waiting(mailbox)
    queued = [
        (str(q.position), q.tool, arguments(q.arguments), f"{q.timeout:g}s" if q.timeout else "")
        for q in mailbox.queued
    ]
    fleet.store.set_contents(key, queued, more=max(0, waiting - len(queued)))
