"""The hook API in one place: ``from pygents.hooks import TurnHook, hook``.

The same objects as at the top level of `pygents`, gathered for code that
imports hook names from their own module.
"""

from __future__ import annotations

from pygents._enums import (
    AgentHook,
    ContextPoolHook,
    ContextQueueHook,
    HookType,
    ToolHook,
    TurnHook,
)
from pygents._hooks import Hook, HookMetadata, HookRegistry, hook

__all__ = [
    "AgentHook",
    "ContextPoolHook",
    "ContextQueueHook",
    "Hook",
    "HookMetadata",
    "HookRegistry",
    "HookType",
    "ToolHook",
    "TurnHook",
    "hook",
]
