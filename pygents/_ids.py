"""Random ids for turns and agents.

They need uniqueness, not secrecy: a private generator (seeded from the OS, and again
in every forked child) is far cheaper than ``uuid4()``'s ``os.urandom`` call and
unaffected by applications that seed the ``random`` module.
"""

from __future__ import annotations

import os
import random
from typing import Final

__all__ = ["new_uuid"]

_ids = random.Random()
os.register_at_fork(after_in_child=_ids.seed)

_VERSION_4: Final = 4 << 76  # the version nibble
_VARIANT: Final = 0x8000 << 48  # the RFC 4122 variant bits
_CLEARED: Final = ~((0xF000 << 64) | (0xC000 << 48))


def new_uuid() -> str:
    """A random (version 4) UUID string, as ``str(uuid.UUID(int=..., version=4))``
    writes it, formatted here directly (a ``UUID`` object per turn costs more than
    the rest of a turn's id)."""
    n = (_ids.getrandbits(128) & _CLEARED) | _VERSION_4 | _VARIANT
    h = f"{n:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
