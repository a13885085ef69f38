"""pygents: an async agent runtime built from tools, turns, agents, hooks and context.

``import pygents`` uses the standard library only; telemetry lives in
``pygents_otel`` and the dashboard in ``pygents_tui``.
"""

from __future__ import annotations

from pygents._agent import Agent, AgentRegistry
from pygents._calling import Injectable
from pygents._context import ContextItem, ContextPool, ContextQueue
from pygents._enums import (
    COLD_EVENTS,
    HOT_EVENTS,
    AgentHook,
    ContextPoolHook,
    ContextQueueHook,
    HookType,
    StopReason,
    ToolHook,
    ToolType,
    TurnHook,
)
from pygents._errors import (
    CompletionCheckReturnError,
    FixedKwargOverrideWarning,
    PygentsError,
    SafeExecutionError,
    TurnTimeoutError,
    UnregisteredAgentError,
    UnregisteredError,
    UnregisteredHookError,
    UnregisteredToolError,
    WrongRunMethodError,
)
from pygents._hooks import Hook, HookMetadata, HookRegistry, hook
from pygents._observe import (
    Event,
    Subscriber,
    Subscription,
    subscribe,
    unsubscribe,
)
from pygents._public import publish as _publish
from pygents._scope import Scope, ScopeKind, current_scope
from pygents._tool import (
    CompletionCheckTool,
    DecoratedTool,
    Tool,
    ToolMetadata,
    ToolRegistry,
    tool,
)
from pygents._turn import Turn
from pygents._version import __version__

__all__ = [
    "COLD_EVENTS",
    "HOT_EVENTS",
    "Agent",
    "AgentHook",
    "AgentRegistry",
    "CompletionCheckReturnError",
    "CompletionCheckTool",
    "ContextItem",
    "ContextPool",
    "ContextPoolHook",
    "ContextQueue",
    "ContextQueueHook",
    "DecoratedTool",
    "Event",
    "FixedKwargOverrideWarning",
    "Hook",
    "HookMetadata",
    "HookRegistry",
    "HookType",
    "Injectable",
    "PygentsError",
    "SafeExecutionError",
    "Scope",
    "ScopeKind",
    "StopReason",
    "Subscriber",
    "Subscription",
    "Tool",
    "ToolHook",
    "ToolMetadata",
    "ToolRegistry",
    "ToolType",
    "Turn",
    "TurnHook",
    "TurnTimeoutError",
    "UnregisteredAgentError",
    "UnregisteredError",
    "UnregisteredHookError",
    "UnregisteredToolError",
    "WrongRunMethodError",
    "__version__",
    "current_scope",
    "hook",
    "subscribe",
    "tool",
    "unsubscribe",
]

# Tracebacks and reprs name ``pygents.TurnTimeoutError``, not the private module that
# defines it (see pygents/_public.py for why, and why pickle still works).
_publish(__name__, __all__, globals())
