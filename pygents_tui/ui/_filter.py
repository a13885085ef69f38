"""The panels' filter language: a pure parser and matcher (no Textual here).

A query is terms separated by spaces; a row passes when every term matches:

- ``field:value``: the row's ``field`` contains ``value`` (``agent``, ``service``,
  ``instance``, ``state``, ``tool``, ``kind``, ``conversation``: the conversation or
  session a run belongs to, when its sender says);
- a bare ``value``: some field of the row (or its text) contains it;
- ``!term``: the term must *not* match.

A value with none of the regular-expression characters is matched as a plain,
case-insensitive substring, without the regex engine; any other value is a regular
expression, searched case-insensitively.

Why RE2 (``google-re2``) and not ``re``: the filter runs over every row ten times a
second, on subjects a sender chooses (agent names), so a pattern must not be able to
take exponential time. A backtracking engine can (``(a|a)*$`` on 256 characters ran
past ten seconds in ``re``), and no guard that guesses which patterns backtrack
catches them all; RE2 matches in time linear in the subject by construction. What
RE2 does not offer (backreferences, look-around) is a compile error, shown as one.
A query is at most `MAX_QUERY` characters, a subject at most `MAX_SUBJECT`, a
compiled pattern at most `MAX_PATTERN_BYTES`. A bad query is a `FilterError` whose
text is one line for the screen; it is never raised past the panel that shows it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Protocol

import re2

__all__ = [
    "ENGINE",
    "FIELDS",
    "MAX_PATTERN_BYTES",
    "MAX_QUERY",
    "MAX_SUBJECT",
    "FilterError",
    "Query",
    "parse",
    "state_words",
]

FIELDS: Final = ("agent", "service", "instance", "state", "tool", "kind", "conversation")
MAX_QUERY: Final = 200
MAX_SUBJECT: Final = 256
MAX_TERMS: Final = 16
MAX_PATTERN_BYTES: Final = 1 << 20
"""RE2's memory budget per pattern (its program and lazily built DFA); past it a
pattern does not compile (``pattern too large``) or matches on RE2's slower, still
linear, engine. A filter of 200 characters needs far less."""
ENGINE: Final = "re2"
"""The regular-expression engine of the filter: the module whose ``compile`` it uses."""

_ALIASES: Final = {"failed": "error", "timed out": "timeout", "timeout": "timed out"}
"""Older or other words for a state or an event kind, matched too (a failed turn's
kind was ``error`` before the dashboard named it ``failed`` everywhere)."""

_REGEX_CHARS: Final = frozenset(".^$*+?{}[]()|\\")
_FIELD: Final = re.compile(r"([a-z]+):(.*)", re.DOTALL)  # the query's own syntax, not a user's


class _Pattern(Protocol):
    """What the filter uses of a compiled RE2 pattern (the bindings have no types)."""

    def search(self, text: bytes) -> object | None: ...


class FilterError(ValueError):
    """A query that cannot be used; ``str()`` is one line that says why."""


def state_words(state: str) -> str:
    """``state`` with its aliases, as a filter's ``state`` field holds it."""
    alias = _ALIASES.get(state)
    return f"{state} {alias}" if alias else state


@dataclass(frozen=True, slots=True)
class _Term:
    field: str | None  # None: any field
    needle: str  # casefolded, for a plain term
    pattern: _Pattern | None  # for a regular expression
    negated: bool

    def hit(self, fields: Mapping[str, str]) -> bool:
        if self.field is None:
            subjects = list(fields.values())
        else:
            value = fields.get(self.field)
            subjects = [] if value is None else [value]
        return any(self._hit(subject[:MAX_SUBJECT]) for subject in subjects)

    def _hit(self, subject: str) -> bool:
        if self.pattern is not None:
            # Encoded here, lone surrogates replaced: the bindings' own encoding raises on them.
            return self.pattern.search(subject.encode("utf-8", "replace")) is not None
        return self.needle in subject.casefold()


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query; the empty query matches every row."""

    text: str = ""
    terms: tuple[_Term, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.terms)

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether a row with ``fields`` (name → text; a row lacking a field never
        matches a term on it) passes every term."""
        return all(term.hit(fields) != term.negated for term in self.terms)


def _options() -> re2.Options:
    options = re2.Options()
    options.case_sensitive = False
    options.never_capture = True  # only whether it matches counts
    options.log_errors = False  # RE2 would print a bad pattern's error on the terminal
    options.max_mem = MAX_PATTERN_BYTES
    return options


_OPTIONS: Final = _options()


def _compile(value: str) -> _Pattern | None:
    if not _REGEX_CHARS.intersection(value):
        return None
    try:
        pattern: _Pattern = re2.compile(value, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else ""
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise FilterError(f"bad regular expression {value!r}: {reason}") from None
    except (UnicodeEncodeError, ValueError, OverflowError) as exc:
        raise FilterError(f"bad regular expression {value!r}: {type(exc).__name__}") from None
    return pattern


def parse(text: str) -> Query:
    """``text`` as a `Query`, or a `FilterError` saying in one line what is wrong."""
    if len(text) > MAX_QUERY:
        raise FilterError(f"filter too long: {len(text)} characters (at most {MAX_QUERY})")
    words = text.split()
    if len(words) > MAX_TERMS:
        raise FilterError(f"too many terms: {len(words)} (at most {MAX_TERMS})")
    terms: list[_Term] = []
    for word in words:
        negated = word.startswith("!")
        body = word[1:] if negated else word
        field: str | None = None
        found = _FIELD.fullmatch(body)
        if found is not None:
            field, body = found.group(1), found.group(2)
            if field not in FIELDS:
                raise FilterError(f"unknown field {field!r}: use {', '.join(FIELDS)}")
        if not body:
            raise FilterError(f"{word!r} has nothing to match")
        terms.append(_Term(field, body.casefold(), _compile(body), negated))
    return Query(text.strip(), tuple(terms))
