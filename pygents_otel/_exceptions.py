"""How a failure is written on a span: its status description and ``exception`` event.

By default this is what the SDK's ``Span.record_exception`` writes (the exception's
type, message and stack trace), bounded in length. An exception's message often
quotes the values that caused it (``ValueError(f"bad password {password}")``), so it
can carry arguments out of the process even with content capture off: with
``capture_exception_message=False`` only the type is written, in the status, the
event and every line of the stack trace that would show a message.
"""

from __future__ import annotations

import traceback
from typing import Final

from opentelemetry.util.types import AttributeValue

from pygents_otel._dump import safe_repr
from pygents_otel._text import NAME_LIMIT, TEXT_LIMIT, bounded, bounded_tail

EVENT: Final = "exception"
TYPE: Final = "exception.type"
MESSAGE: Final = "exception.message"
STACKTRACE: Final = "exception.stacktrace"
ESCAPED: Final = "exception.escaped"

_CAUSE: Final = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT: Final = "\nDuring handling of the above exception, another exception occurred:\n\n"


def type_name(error: BaseException) -> str:
    """``module.QualifiedName`` (just the name for builtins), as the SDK writes it."""
    cls = type(error)
    module = cls.__module__
    name = cls.__qualname__ if module in (None, "builtins") else f"{module}.{cls.__qualname__}"
    return bounded(name)


def message(error: BaseException) -> str:
    try:
        text = str(error)
    except Exception:
        text = safe_repr(error)
    return bounded(text, TEXT_LIMIT)


def status_description(error: BaseException, with_message: bool) -> str:
    name = type(error).__name__
    return bounded(f"{name}: {message(error)}" if with_message else name, NAME_LIMIT)


def event_attributes(error: BaseException, with_message: bool) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {TYPE: type_name(error)}
    if with_message:
        attributes[MESSAGE] = message(error)
        stack = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    else:
        stack = _stack_without_messages(error)
    attributes[STACKTRACE] = bounded_tail(stack)
    attributes[ESCAPED] = "False"
    return attributes


def _stack_without_messages(error: BaseException) -> str:
    """The stack trace ``traceback`` would print, chained exceptions included, with
    each exception's line reduced to its type (no message, no notes)."""
    # Newest first, each with the line printed after it (how the newer one followed).
    chain: list[tuple[BaseException, str]] = []
    seen: set[int] = set()
    current: BaseException | None = error
    link = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append((current, link))
        if current.__cause__ is not None:
            current, link = current.__cause__, _CAUSE
        elif current.__context__ is not None and not current.__suppress_context__:
            current, link = current.__context__, _CONTEXT
        else:
            current = None
    parts: list[str] = []
    for exc, after in reversed(chain):
        if exc.__traceback__ is not None:
            parts.append("Traceback (most recent call last):\n")
            parts.extend(traceback.format_tb(exc.__traceback__))
        parts.append(type_name(exc) + "\n")
        parts.append(after)
    return "".join(parts)
