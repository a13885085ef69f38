"""The context types: ``from pygents.context import ContextItem, ContextQueue, ContextPool``."""

from __future__ import annotations

from pygents._context import ContextItem, ContextPool, ContextQueue

__all__ = ["ContextItem", "ContextPool", "ContextQueue"]
