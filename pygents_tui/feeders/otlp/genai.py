"""What a span of another framework's agent is, read from the GenAI conventions or
OpenInference: a run, a tool call, a model call, a workflow — or nothing of those.

pygents' own spans are read elsewhere (their turn spans and live records say more);
every other sender is read by the conventions alone, never by its framework:

* the GenAI conventions name the operation: ``invoke_agent`` is a run of the agent
  in ``gen_ai.agent.name``, ``execute_tool`` a call of ``gen_ai.tool.name``, ``chat``
  (and the other model operations) a model call, ``invoke_workflow`` a workflow that
  holds runs;
* OpenInference names the span's kind: an ``AGENT`` span with ``agent.name`` is a run
  (one without it is the workflow around the runs), ``TOOL`` a tool call, ``LLM`` a
  model call.

A conversation is ``gen_ai.conversation.id`` or OpenInference's ``session.id``. A span
that failed says so in its status; its reason is ``error.type``, else the status
message. Every text is cut to the receiver's bounds already; these are only read.
Pure functions over the decoded span: the OTLP feeder decides what to write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from operator import methodcaller
from typing import Final

from pygents_otel import _names as k
from pygents_tui.feeders.otlp.coerce import as_text
from pygents_tui.listen.decode import ReceivedSpan, Value

__all__ = ["PYGENTS_SCOPE", "Foreign", "Role", "read_foreign"]

PYGENTS_SCOPE: Final = "pygents_otel"
"""The instrumentation scope of pygents' own spans, which this module leaves alone."""


class Role(StrEnum):
    """What a foreign span stands for."""

    RUN = "run"  # one run of one agent
    TOOL = "tool"  # one call of a tool
    MODEL = "model"  # one model call (its tokens are read from it, and only from it)
    WORKFLOW = "workflow"  # a span around runs (a workflow, an SDK trace's root)


# The GenAI operations (``gen_ai.operation.name``) and what each is.
_OPERATIONS: Final[Mapping[str, Role]] = {
    k.INVOKE_AGENT: Role.RUN,
    k.EXECUTE_TOOL: Role.TOOL,
    "invoke_workflow": Role.WORKFLOW,
    "chat": Role.MODEL,
    "text_completion": Role.MODEL,
    "generate_content": Role.MODEL,
    "embeddings": Role.MODEL,
}
# OpenInference's span kinds; an AGENT span is a run only when it names its agent.
_KINDS: Final[Mapping[str, Role]] = {
    k.OI_AGENT: Role.RUN,
    k.OI_TOOL: Role.TOOL,
    "LLM": Role.MODEL,
    "EMBEDDING": Role.MODEL,
}
_PYGENTS_PREFIX: Final = "pygents."
_IS_PYGENTS: Final = methodcaller("startswith", _PYGENTS_PREFIX)  # (a C loop, not a generator)
_OI_AGENT_NAME: Final = "agent.name"
_OI_TOOL_NAME: Final = "tool.name"
_OI_SESSION: Final = "session.id"


@dataclass(frozen=True, slots=True)
class Foreign:
    """A foreign span, as the dashboard reads it."""

    role: Role
    agent: str | None  # the agent the span names (a run's own; a tool's or a call's if said)
    tool: str | None  # a tool call's tool
    conversation: str | None
    failed: bool
    error: str | None  # why it failed: ``error.type``, else the status message


def _first(attributes: Mapping[str, Value], *names: str) -> str | None:
    for name in names:
        found = as_text(attributes.get(name))
        if found:
            return found
    return None


def read_foreign(span: ReceivedSpan) -> Foreign | None:
    """``span`` as a run, a tool call, a model call or a workflow; ``None`` for pygents'
    own spans and for any span the conventions say nothing of."""
    if span.scope == PYGENTS_SCOPE:
        return None
    attributes = span.attributes
    operation = as_text(attributes.get(k.OPERATION))
    role = _OPERATIONS.get(operation) if operation else None
    if role is None:
        kind = as_text(attributes.get(k.OI_SPAN_KIND))
        role = _KINDS.get(kind) if kind else None
    if role is None:
        return None
    if any(map(_IS_PYGENTS, attributes)):
        return None  # pygents' own, under another scope name (a relay, a test)
    agent = _first(attributes, k.AGENT_NAME, _OI_AGENT_NAME)
    if role is Role.RUN and agent is None:
        if operation == k.INVOKE_AGENT:
            agent = span.name.removeprefix(f"{k.INVOKE_AGENT} ").strip() or None
        if agent is None:  # OpenInference's workflow root: an AGENT span naming none
            role = Role.WORKFLOW
    tool = _first(attributes, k.TOOL_NAME, _OI_TOOL_NAME) if role is Role.TOOL else None
    if role is Role.TOOL and tool is None:
        tool = span.name.removeprefix(f"{k.EXECUTE_TOOL} ").strip() or None
    failed = span.status == "error"
    error = None
    if failed:
        error = _first(attributes, k.ERROR_TYPE) or span.status_message or "error"
    return Foreign(
        role=role,
        agent=agent,
        tool=tool,
        conversation=_first(attributes, k.CONVERSATION_ID, _OI_SESSION),
        failed=failed,
        error=error,
    )
