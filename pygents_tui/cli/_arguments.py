"""The command line's number arguments: one rule for reading and bounding them, so
every flag refuses a bad value in the same one line (argparse adds the flag's name)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = [
    "DEMO_SPEED",
    "PORT",
    "PORT_OR_OFF",
    "SECONDS",
    "SPEED",
    "no_such_flag",
    "ranged",
    "redis_url",
]

N = TypeVar("N", int, float)


def ranged(
    what: str, cast: Callable[[str], N], ok: Callable[[N], bool], rule: str
) -> Callable[[str], N]:
    """An argparse ``type``: ``cast`` the text (else "not <what>"), and refuse a value
    that is not ``ok`` with ``rule``. The text is quoted cut: it is the user's."""

    def parse(text: str) -> N:
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text[:20]!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"{rule}, got {text[:20]}")
        return value

    return parse


PORT_OR_OFF = ranged(
    "a port number", int, lambda p: 0 <= p <= 65535, "a port is 1 to 65535 (0: off)"
)
"""A receiver's port: 0 turns that transport off."""

PORT = ranged("a port number", int, lambda p: 1 <= p <= 65535, "a port is 1 to 65535")
"""A port that must be served (the web page's: there is no "off")."""

SPEED = ranged("a speed", float, lambda v: 1 <= v <= 100, "a speed is 1 to 100")
"""A replay's speed: a recording is never played slower than it happened."""

DEMO_SPEED = ranged(
    "a speed", float, lambda v: 0 < v <= 100, "a demo speed is more than 0, at most 100"
)
"""The demo's speed divides every pause of its workload: 0 would divide by zero, and a
negative or huge one made every pause nothing, so the demo ran flat out with its
queues growing. Slower than 1 is fine (0.5 is half speed); NaN is refused (no
comparison holds for it)."""

SECONDS = ranged(
    "a number of seconds",
    float,
    lambda v: v > 0 and not math.isinf(v),
    "must be a positive number of seconds",
)

REDIS_SCHEMES = ("redis", "rediss", "redis+cluster", "rediss+cluster", "unix")
"""What ``pygents.redis.Mailboxes`` connects to (not imported from there: the
command line must not load the 'redis' extra to read its arguments)."""


def redis_url(text: str) -> str:
    """An argparse ``type`` for ``--redis``: a URL of one of `REDIS_SCHEMES`. Without
    one (``localhost:6379``), the Redis client fails deep inside the dashboard's
    start; here it is one line naming the forms it takes."""
    scheme, found, rest = text.partition("://")
    if not found or scheme.lower() not in REDIS_SCHEMES or not rest:
        raise argparse.ArgumentTypeError(
            f"not a Redis URL: {text[:40]!r}; give redis://HOST:PORT[/DB], rediss://HOST:PORT "
            "(TLS), redis+cluster://HOST:PORT (a Redis Cluster) or unix://PATH"
        )
    return text


def no_such_flag(instead: str) -> type[argparse.Action]:
    """An argparse ``action`` for a flag a command does not have but is often given
    (``listen --port``): refused in the parser's one line, with ``instead``, the flags
    meant. Without it argparse says only "unrecognized arguments"."""

    class NoSuchFlag(argparse.Action):
        def __call__(
            self,
            parser: argparse.ArgumentParser,
            namespace: argparse.Namespace,
            values: str | Sequence[Any] | None,
            option_string: str | None = None,
        ) -> None:
            parser.error(f"there is no {option_string}: {instead}")

    return NoSuchFlag
