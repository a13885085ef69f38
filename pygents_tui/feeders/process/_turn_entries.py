"""The in-process feeder's turn entries: what it keeps of each turn, value and event
of this process (bounded previews and plain values, never the program's objects).

(Not the store's entries of ``state._entries``, which these extend, nor OTLP log
records, nor the recording files of ``recording``.)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Final, TypeGuard

from pygents import Turn
from pygents_tui.state import LogEntry, TurnEntry, ValueEntry
from pygents_tui.text._errors import Traceback
from pygents_tui.text._preview import preview

__all__ = ["LogEntry", "TurnDetails", "TurnRecord", "ValueRecord", "tokens_of", "tokens_text"]

_LISTED: Final = 20  # arguments, keyword arguments and metadata entries kept per turn
_LAST_VALUES: Final = 10  # a stream's last values kept per turn
_EVENTS_KEPT: Final = 12  # hook events kept per turn, besides its start and its end...
_VALUES_KEPT: Final = 4  # ... of which values (a stream's first few)
_SHOWN_TOKENS: Final = 10**15  # counts from here up are shown as "10^15+"

Tokens = tuple[int | None, int | None]
_PLAIN: Final = frozenset({str, bytes, int, float, bool})
_ABSENT: Final = object()


def _is_count(value: object) -> TypeGuard[int | None]:
    """A token count: a non-negative ``int`` (not a ``bool``), or ``None`` (not reported)."""
    return value is None or (type(value) is int and value >= 0)


def tokens_of(value: object) -> Tokens | None:
    """The ``(input, output)`` tokens ``value`` reports, or ``None`` if it reports none.

    The rule, duck-typed since the dashboard cannot know the program's classes: a value
    reports token usage when it has ``input_tokens`` and ``output_tokens`` attributes,
    each a non-negative ``int`` or ``None`` (not reported), at least one an ``int``.
    That is the shape of the usage objects model clients return (the Responses API's,
    Anthropic's) and of the assistant example's ``Usage``. A value whose attributes
    cannot be read reports nothing.
    """
    if value is None or type(value) in _PLAIN:
        return None  # the usual values, quickly
    try:
        tokens_in = getattr(value, "input_tokens", _ABSENT)
        tokens_out = getattr(value, "output_tokens", _ABSENT)
    except Exception:
        return None
    if (
        _is_count(tokens_in)
        and _is_count(tokens_out)
        and (tokens_in is not None or tokens_out is not None)
    ):
        return tokens_in, tokens_out
    return None


def _shown(count: int | None) -> str:
    if count is None:
        return "?"
    return f"{count:,}" if count < _SHOWN_TOKENS else "10^15+"


def tokens_text(tokens: Tokens) -> str:
    """``12 in, 5 out``; ``?`` for a side not reported."""
    return f"{_shown(tokens[0])} in, {_shown(tokens[1])} out"


def _key(key: Any) -> str:
    """A short printable string key as it is (the usual case, and cheap); any other
    key previewed."""
    if type(key) is str and len(key) <= 40 and key.isprintable():
        return key
    return preview(key, 40)


def _pairs(mapping: Mapping[Any, Any]) -> tuple[tuple[str, str], ...]:
    if not mapping:
        return ()
    items = mapping.items() if len(mapping) <= _LISTED else islice(mapping.items(), _LISTED)
    pairs = tuple([(_key(k), preview(v, 100)) for k, v in items])
    if len(mapping) > len(pairs):
        pairs += (("…", f"{len(mapping) - len(pairs)} more"),)
    return pairs


@dataclass(slots=True)
class TurnDetails:
    """What the inspector shows of a turn, as bounded previews.

    The dashboard keeps this, not the turn: a finished turn's output, values,
    arguments and error are the program's to free, and keeping them alive for a
    screen that shows one line of each would hold on to every big result ever made.
    """

    args: tuple[str, ...]
    kwargs: tuple[tuple[str, str], ...]
    metadata: tuple[tuple[str, str], ...]
    tags: str
    output: str | None  # a coroutine's output (None for a stream)
    values: int  # a stream's count of values
    last_values: tuple[str, ...]  # ... and the last few
    traceback: Traceback | None  # where the turn failed

    @classmethod
    def of(
        cls,
        turn: Turn,
        streaming: bool,
        output: str | None = None,
        error: BaseException | None = None,
    ) -> TurnDetails:
        """Previews of ``turn`` now; ``output`` is its output's preview if known, and
        ``error`` what it failed with."""
        args = turn.args
        shown = tuple(preview(a, 100) for a in args[:_LISTED]) if args else ()
        if len(args) > len(shown):
            shown += (f"… {len(args) - len(shown)} more",)
        result = turn.output
        stream = result if streaming and isinstance(result, list) else None
        if stream is None and output is None:
            output = preview(result, 200)
        return cls(
            args=shown,
            kwargs=_pairs(turn.kwargs),
            metadata=_pairs(turn.metadata),
            tags=preview(", ".join(sorted(tags)), 200) if (tags := turn.tags) else "",
            output=None if stream is not None else output,
            values=len(stream) if stream is not None else 0,
            last_values=tuple(preview(v, 100) for v in stream[-_LAST_VALUES:]) if stream else (),
            traceback=Traceback.of(error) if error is not None else None,
        )


@dataclass(slots=True, eq=False)
class TurnRecord(TurnEntry):
    """One turn of this process in the dashboard's store: what the store keeps of
    every turn (`TurnEntry`, its key being the turn's uuid), and the turn itself.

    ``turn`` is the live turn while it runs (the panels read its progress), and None
    once it has ended: from then on ``kept`` holds what there is to show."""

    turn: Turn | None = None
    kept: TurnDetails | None = None  # what the inspector shows once the turn ended
    tokens: Tokens | None = None  # the token usage its values reported, added up
    # What happened to it (`hook_events`): its start, then what happened inside it, up to
    # a bound (`left_out` counts the rest), then its end.
    events: list[LogEntry] = field(default_factory=list, repr=False)
    left_out: int = 0
    ending: LogEntry | None = field(default=None, repr=False)

    def happened(self, entry: LogEntry, value: bool = False) -> None:
        """Keep ``entry``, one of its hook events (``value``: one of its values), while
        under the bound; count it otherwise."""
        kept = self.events
        if len(kept) > _EVENTS_KEPT or (
            value and sum(e.kind == "value" for e in kept) >= _VALUES_KEPT
        ):
            self.left_out += 1
        else:
            kept.append(entry)

    def hook_events(self) -> tuple[LogEntry, ...]:
        """Its start, the hook events fired inside it and its values (the first of
        each, `left_out` more said in one line), then its end once it ended."""
        found = tuple(self.events)
        if self.left_out:
            last = found[-1] if found else None
            at = last.at if last is not None else self.started
            who = last.agent if last is not None else self.agent_label
            found += (LogEntry(at, who, "more", f"… {self.left_out} more not kept"),)
        return found + ((self.ending,) if self.ending is not None else ())

    def shown(self, value: Any) -> str:
        """How the values panel shows ``value``, one of this turn's: its preview, or,
        for a value that reports token usage (`tokens_of`), its tokens, which are
        added to the turn's (a side stays unknown until a value reports it)."""
        tokens = tokens_of(value)
        if tokens is None:
            return preview(value, 200)
        total = self.tokens
        self.tokens = (
            tokens if total is None else (_plus(total[0], tokens[0]), _plus(total[1], tokens[1]))
        )
        return f"tokens: {tokens_text(tokens)}"

    def let_go(self, details: TurnDetails | None) -> None:
        """Keep ``details`` (``None``: nothing will show this record), then drop the
        turn: its output and values are the program's to free."""
        if details is not None:
            self.kept = details
        self.turn = None

    def inspect(self) -> TurnDetails:
        """The turn's details: read from the live turn while it runs."""
        if self.turn is not None:
            return TurnDetails.of(self.turn, self.streaming)
        assert self.kept is not None  # set when the turn ended
        return self.kept

    def details(self) -> list[tuple[str, str]]:
        """The inspector's labelled lines; an empty label continues the line above.
        Where the turn failed, its traceback ends them."""
        details = self.inspect()
        lines = [("turn", self.uuid)]
        if self.streaming:
            lines.append(("output", f"{details.values} value(s)"))
            lines.extend(("", value) for value in details.last_values)
        elif not self.error:
            lines.append(("output", details.output or ""))
        if self.tokens is not None:
            lines.append(("tokens", tokens_text(self.tokens)))
        if self.trace_id:
            lines.append(("trace", self.trace_id))
        # A heading with nothing under it reads as missing data: empty ones are left out.
        arguments = [f"{index}: {arg}" for index, arg in enumerate(details.args)]
        arguments += [f"{key} = {value}" for key, value in details.kwargs]
        metadata = [f"{key} = {value}" for key, value in details.metadata]
        for heading, section in (("arguments", arguments), ("metadata", metadata)):
            if section:
                lines.append((heading, ""))
                lines.extend(("", line) for line in section)
        lines.append(("tags", details.tags or "—"))
        if details.traceback is not None:
            lines += [("", ""), ("traceback", "")]
            lines.extend(("", line) for line in details.traceback.lines())
        return lines


def _plus(total: int | None, more: int | None) -> int | None:
    if more is None:
        return total
    return more if total is None else total + more


ValueRecord = ValueEntry  # the name this module gave it before the state package
