"""Redis mailboxes as a source of ``pygents-tui listen`` (``--redis URL``).

Once a second (``interval``) the source reads every mailbox with one
`Mailboxes.survey` — a single pipelined round trip of read-only scripts, each list
bounded by ``rows`` — and folds it into the fleet's store through
`pygents_tui.feeders.redis.store.StoreAdapter`: depth, running turns per worker with
their idle time and delivery count, live workers, dead letters with their error and
age, and the first queued turns. What it puts on Redis is documented in
docs/dashboard.md.

A Redis that fails or answers slowly (``timeout``) costs one Events line when it
starts failing, a count on the status line, and another line when it answers again:
the dashboard carries on, and the client reconnects by itself on the next survey.

Control is opt-in (``control=True``, ``--control``): without it every action answers
the read-only line. With it the source offers pausing a mailbox, cancelling a
running turn, retrying or dropping a dead letter and draining a worker, each through
`Mailboxes` (that is, through Redis: no server, no port). An action is answered with
a question (`Reply.then`): the app confirms it, then runs it; the outcome is one
Events line and one toast, an error included.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from pygents._errors import cut
from pygents_tui.feeders.otlp.fleet import CAPABILITIES, FleetModel
from pygents_tui.feeders.redis.store import StoreAdapter
from pygents_tui.state import Action, Capabilities, Reply
from pygents_tui.state._capabilities import Capability
from pygents_tui.text._errors import summary
from pygents_tui.text._plural import counted

if TYPE_CHECKING:
    from pygents.redis import MailboxSurvey, Survey

__all__ = ["READ_ONLY", "RedisSource"]

READ_ONLY: Final = "read-only: start listen with --control to act on Redis mailboxes"
_CLOSE_TRIES: Final = 10  # cancellations tried on close, each waited on for _CLOSE_GRACE
_CLOSE_GRACE: Final = 0.3
_CONTROL: Final[tuple[Capability, ...]] = ("pause", "cancel", "dead_letters", "drain")
# What a mailbox does not hold: said as the OTLP source says it.
_LACKS: Final = {what: CAPABILITIES.lacking[what] for what in ("context_items", "program_output")}
_READ_ONLY_CAPABILITIES: Final = Capabilities(
    MappingProxyType({**_LACKS, **dict.fromkeys(_CONTROL, READ_ONLY)}), frozenset({"mailbox"})
)
_CONTROL_CAPABILITIES: Final = Capabilities(
    MappingProxyType(_LACKS), frozenset({"mailbox", *_CONTROL})
)


class RedisSource:
    """The mailboxes under ``prefix`` on the Redis at ``url``, as a `Source` of
    ``fleet``'s agents (a `TargetedSource`: its actions aim at a turn, a dead letter
    or a worker). `start` runs the survey on a timer in the running loop; `close`
    stops it and the connections."""

    def __init__(
        self,
        fleet: FleetModel,
        url: str,
        *,
        prefix: str = "pygents",
        control: bool = False,
        interval: float = 1.0,
        rows: int = 50,
        timeout: float = 2.0,
    ) -> None:
        # Imported here, when a source is made: ``pygents.redis`` loads the OpenTelemetry
        # SDK, which the listener's modules must not load by being imported.
        from pygents.redis import Mailboxes, MailboxUnavailableError

        self._unavailable = MailboxUnavailableError
        self.mailboxes = Mailboxes(url, prefix=prefix, socket_timeout=timeout)
        self.store = StoreAdapter(fleet, prefix)
        self.control = control
        self.interval = interval
        self.rows = rows
        self.timeout = timeout
        self.error: str | None = None  # the last failure, while Redis keeps failing
        self.surveys = 0  # surveys folded in
        self.errors = 0  # surveys that failed
        self.survey: Survey | None = None
        self._served: dict[str, MailboxSurvey] = {}  # by agent key
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    # -- reading ---------------------------------------------------------------------

    def start(self) -> None:
        """Survey now, then every ``interval`` seconds (and at once after an action)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        """Stop surveying and close the connections, in bounded time.

        The Redis client can absorb a cancellation that lands as it connects, then
        wait on its socket (as `pygents.redis`'s reply reader notes): so the survey
        loop also ends on a flag, and a loop still running shortly after being
        cancelled gets its connections closed under it and is cancelled again."""
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            for _ in range(_CLOSE_TRIES):
                task.cancel()
                done, _ = await asyncio.wait({task}, timeout=_CLOSE_GRACE)
                if done:
                    break
                with contextlib.suppress(Exception):  # closing: a failure changes nothing
                    await self.mailboxes.client.connection_pool.disconnect()
        await self.mailboxes.aclose()

    def wake(self) -> None:
        """Survey at once: an action's effect shows without waiting for the timer."""
        self._wake.set()

    async def _run(self) -> None:
        while not self._closed:
            self._wake.clear()
            await self.refresh()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)

    async def refresh(self) -> bool:
        """One survey folded into the store; False (counted, said once) if it failed."""
        try:
            async with asyncio.timeout(self.timeout):
                survey = await self.mailboxes.survey(rows=self.rows)
        except Exception as exc:  # whatever Redis does, the dashboard carries on
            line = self._failure(exc)
            self.errors += 1
            self.store.failed(line)
            if self.error is None:
                self.store.note("redis", "unavailable", line)
            self.error = line
            return False
        if self.error is not None:
            self.store.note("redis", "available", f"{self.mailboxes.where} answers again")
            self.error = None
        self.store.answered()
        self.show(survey)
        return True

    def show(self, survey: Survey) -> None:
        """Fold ``survey`` into the store and keep it for the Mailbox panel."""
        self._served = self.store.apply(survey)
        self.survey = survey
        self.surveys += 1

    def _failure(self, exc: BaseException) -> str:
        """One line: ``cannot reach Redis at URL: why`` (the client's own error, not
        the wrapper's sentence around it), else what else went wrong."""
        where = self.mailboxes.where
        if isinstance(exc, TimeoutError):
            return f"cannot reach Redis at {where}: no answer within {self.timeout:g}s"
        if isinstance(exc, self._unavailable) and exc.__cause__ is not None:
            return f"cannot reach Redis at {where}: {summary(exc.__cause__, 200)}"
        return f"cannot read the mailboxes at {where}: {summary(exc, 200)}"

    def mailbox(self, agent: str) -> MailboxSurvey | None:
        """The latest survey of the mailbox serving ``agent`` (a key), if one does."""
        return self._served.get(agent)

    # -- the Source protocol ---------------------------------------------------------

    def serves(self, agent: str) -> bool:
        return agent in self._served

    def capabilities(self, agent: str | None) -> Capabilities:
        return _CONTROL_CAPABILITIES if self.control else _READ_ONLY_CAPABILITIES

    def act(self, action: Action, agent: str) -> Reply:
        """``pause``: pause the agent's mailbox, or resume it if it is paused."""
        found = self._served.get(agent)
        if found is None or action != "pause":
            return Reply(f"{self.store.label(agent)} has no mailbox to {action} now", True)
        name, workers = found.agent, counted(len(found.workers), "worker")
        if found.paused:
            return self._ask(
                f"Resume mailbox {name}? Its workers take its turns again.",
                agent,
                lambda: self.mailboxes.resume(name),
                f"resumed mailbox {name} ({workers})",
                f"resume mailbox {name}",
            )
        take = "takes" if len(found.workers) == 1 else "take"
        return self._ask(
            f"Pause mailbox {name}? Its {workers} {take} no more of its turns "
            "(running ones finish).",
            agent,
            lambda: self.mailboxes.pause(name),
            f"paused mailbox {name} ({workers})",
            f"pause mailbox {name}",
        )

    def act_on(self, action: Action, agent: str, target: str) -> Reply:
        """``cancel`` a running turn (``target``: its message id), ``retry`` or ``drop``
        a dead letter (its id), ``drain`` a worker (its name)."""
        found = self._served.get(agent)
        if found is None:
            return Reply(f"{self.store.label(agent)} has no mailbox now", True)
        name = found.agent
        if action == "cancel":
            turn = next((p for p in found.pending if p.message_id == target), None)
            if turn is None or not turn.turn_uuid:
                return Reply(f"that turn is no longer running on mailbox {name}", True)
            what = f"the turn {turn.turn_uuid} ({turn.tool})"
            return self._ask(
                f"Cancel {what} on mailbox {name}? Worker {turn.consumer} cancels it.",
                agent,
                lambda: self.mailboxes.cancel(name, turn.turn_uuid, message_id=target),
                f"cancel requested for {what}",
                f"cancel {what}",
            )
        if action in ("retry", "drop"):
            dead = next((d for d in found.dead_letters if d.id == target), None)
            what = f"dead letter {target}" + (f" ({dead.tool})" if dead and dead.tool else "")
            if action == "retry":
                return self._ask(
                    f"Retry {what} of mailbox {name}? It is put back on the mailbox.",
                    agent,
                    lambda: self.mailboxes.retry_dead_letter(name, target),
                    f"retried {what} of mailbox {name}",
                    f"retry {what}",
                )
            return self._ask(
                f"Drop {what} of mailbox {name}? It is deleted for good.",
                agent,
                lambda: self.mailboxes.drop_dead_letter(name, target),
                f"dropped {what} of mailbox {name}",
                f"drop {what}",
            )
        if action == "drain":
            return self._ask(
                f"Drain worker {target}? It finishes its turns, then stops.",
                agent,
                lambda: self.mailboxes.drain_worker(target),
                f"drain requested for worker {target}",
                f"drain worker {target}",
            )
        return self.act(action, agent)

    def _ask(
        self,
        question: str,
        agent: str,
        call: Callable[[], Awaitable[Any]],
        done: str,
        doing: str,
    ) -> Reply:
        """The question the app confirms, and the action run once it is confirmed:
        its Events line and its reply (``done``; on a failure, that it could not
        ``doing``), in one line each."""
        label = self.store.label(agent)

        async def then() -> Reply:
            try:
                async with asyncio.timeout(max(self.timeout, 5.0)):
                    result = await call()
            except Exception as exc:  # a refusal or Redis down: one line, never a crash
                line = f"could not {doing}: {summary(exc, 200)}"
                self.store.note(label, "control", line)
                return Reply(line, True)
            line = done
            if result == "not found":  # cancel: finished (or removed) meanwhile
                line = f"{done}: no longer in the mailbox (it had finished)"
            elif result == "removed":
                line = f"{done}: removed before it ran"
            self.store.note(label, "control", line)
            self.wake()
            return Reply(cut(line, 300), result == "not found")

        return Reply(cut(question, 300), then=then)
