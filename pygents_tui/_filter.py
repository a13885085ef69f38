"""The panels' filter language: a pure parser and matcher (no Textual here).

A query is terms separated by spaces; a row passes when every term matches:

- ``field:value``: the row's ``field`` contains ``value`` (``agent``, ``service``,
  ``instance``, ``state``, ``tool``, ``kind``);
- a bare ``value``: some field of the row (or its text) contains it;
- ``!term``: the term must *not* match.

A value with none of the regular-expression characters is matched as a plain,
case-insensitive substring, without the regex engine; any other value is a regular
expression, searched case-insensitively.

Why the limits: the filter runs over every row ten times a second, typed by a person
but possibly pasted, so a query is at most `MAX_QUERY` characters, a subject at most
`MAX_SUBJECT`, and a pattern is refused, with a message, when a repeated group itself
repeats (``(a+)+``: catastrophic backtracking), when it has more than `MAX_REPEATS`
repeats (``.*.*.*.*``: polynomial backtracking) or when it does not compile. A bad
query is a `FilterError` whose text is one line for the screen; it is never raised
past the panel that shows it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["FIELDS", "MAX_QUERY", "MAX_SUBJECT", "FilterError", "Query", "parse", "state_words"]

FIELDS: Final = ("agent", "service", "instance", "state", "tool", "kind")
MAX_QUERY: Final = 200
MAX_SUBJECT: Final = 256
MAX_TERMS: Final = 16
MAX_REPEATS: Final = 3

_ALIASES: Final = {"failed": "error", "timed out": "timeout", "timeout": "timed out"}
"""Older or other words for a state or an event kind, matched too (a failed turn's
kind was ``error`` before the dashboard named it ``failed`` everywhere)."""

_REGEX_CHARS: Final = frozenset(".^$*+?{}[]()|\\")
# A group holding a quantifier, itself quantified: ``(a+)+``, ``(\w*)*``, ``(a{2,})+``.
_NESTED: Final = re.compile(r"\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*[+*{]")
_REPEAT: Final = re.compile(r"(?<!\\)[*+{]")
_FIELD: Final = re.compile(r"([a-z]+):(.*)", re.DOTALL)


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
    pattern: re.Pattern[str] | None  # for a regular expression
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
            return self.pattern.search(subject) is not None
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


def _compile(value: str) -> re.Pattern[str] | None:
    if not _REGEX_CHARS.intersection(value):
        return None
    if _NESTED.search(value):
        raise FilterError(f"refused {value!r}: a repeated group that repeats can take forever")
    if len(_REPEAT.findall(value)) > MAX_REPEATS:
        raise FilterError(f"refused {value!r}: more than {MAX_REPEATS} repeats can take forever")
    try:
        return re.compile(value, re.IGNORECASE)
    except re.error as exc:
        raise FilterError(f"bad regular expression {value!r}: {exc}") from None
    except (RecursionError, OverflowError, ValueError) as exc:  # deeply nested, huge repeat
        raise FilterError(f"bad regular expression {value!r}: {type(exc).__name__}") from None


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
