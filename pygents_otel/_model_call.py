"""A tool that calls a model says so, and its span becomes the model call's.

In pygents a model step is a tool (the assistant's ``respond``), so its span is
``execute_tool respond``; a GenAI viewer looks for a ``chat {model}`` span with the
model, the provider, the tokens and the finish reasons, and shows nothing of them
otherwise. `model_call`, called from the tool's body once the call has answered,
turns the tool's own span into that span: one span, not a copy, so nothing counts
twice. (With a client instrumentation that records the call itself — the
``openai-v2`` one — there is already a ``chat`` span: do not call this as well.)

The usage and model names are the OpenTelemetry GenAI conventions' and, for viewers
that read OpenInference (Phoenix), ``llm.*``. They are spelled here, by the one
writer: the dashboard reads these and older spellings in ``pygents_tui/state/_tokens.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue

from pygents_otel import _names as n
from pygents_otel._text import bounded

__all__ = ["model_call"]

_CHAT: Final = "chat"
_REQUEST_MODEL: Final = "gen_ai.request.model"
_RESPONSE_MODEL: Final = "gen_ai.response.model"
_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
_INPUT: Final = "gen_ai.usage.input_tokens"
_OUTPUT: Final = "gen_ai.usage.output_tokens"
_CACHE_READ: Final = "gen_ai.usage.cache_read.input_tokens"
_CACHE_WRITE: Final = "gen_ai.usage.cache_creation.input_tokens"
_REASONING: Final = "gen_ai.usage.reasoning.output_tokens"
_OI_LLM: Final = "LLM"
_OI_MODEL: Final = "llm.model_name"
_OI_PROVIDER: Final = "llm.provider"
_OI_PROMPT: Final = "llm.token_count.prompt"
_OI_COMPLETION: Final = "llm.token_count.completion"
_OI_TOTAL: Final = "llm.token_count.total"


def _count(value: object) -> int | None:
    """A token count as given: a non-negative int (a bool is no count), else nothing."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def model_call(
    *,
    model: str,
    provider: str,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cache_read_tokens: int | None = None,
    cache_write_tokens: int | None = None,
    reasoning_tokens: int | None = None,
    finish_reasons: Iterable[str] = (),
    response_model: str | None = None,
) -> bool:
    """Make the span of the tool running now the span of the model call it made.

    Call it from the tool's body after the call answered. The span is renamed
    ``chat {model}`` and gets ``gen_ai.operation.name=chat``, the request and response
    model, ``gen_ai.provider.name``, the ``gen_ai.usage.*`` counts given (input counts
    cache reads and writes, output counts reasoning, as the conventions count them),
    the finish reasons, and OpenInference's ``LLM`` kind and token counts. Returns
    whether there was such a span (``False`` outside a traced tool, or when nothing
    records): a tool runs the same either way.
    """
    span = trace.get_current_span()
    attributes = getattr(span, "attributes", None)
    if not span.is_recording() or attributes is None:
        return False
    if attributes.get(n.OPERATION) not in (n.EXECUTE_TOOL, _CHAT):
        return False  # not a tool's span: the caller's own, or a turn's
    model = bounded(model)
    found: dict[str, AttributeValue] = {
        n.OPERATION: _CHAT,
        n.OI_SPAN_KIND: _OI_LLM,
        _REQUEST_MODEL: model,
        _RESPONSE_MODEL: bounded(response_model) if response_model else model,
        n.PROVIDER: bounded(provider),
        _OI_MODEL: model,
        _OI_PROVIDER: bounded(provider),
    }
    reasons = [bounded(str(reason)) for reason in finish_reasons]
    if reasons:
        found[_FINISH_REASONS] = reasons
    counts = {
        _INPUT: _count(input_tokens),
        _OUTPUT: _count(output_tokens),
        _CACHE_READ: _count(cache_read_tokens),
        _CACHE_WRITE: _count(cache_write_tokens),
        _REASONING: _count(reasoning_tokens),
    }
    found.update({key: value for key, value in counts.items() if value is not None})
    prompt, completion = counts[_INPUT], counts[_OUTPUT]
    if prompt is not None:
        found[_OI_PROMPT] = prompt
    if completion is not None:
        found[_OI_COMPLETION] = completion
    if prompt is not None or completion is not None:
        found[_OI_TOTAL] = (prompt or 0) + (completion or 0)
    span.update_name(f"{_CHAT} {model}")
    span.set_attributes(found)
    return True
