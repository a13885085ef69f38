"""The assistant's real model: the OpenAI API, or any server that speaks its
chat-completions protocol, through the official ``openai`` client.

Retries, timeouts, proxies, keep-alive and TLS are the client's; this module only maps
its stream onto the assistant's parts (:class:`~model.TextDelta`, :class:`~model.Usage`,
:class:`~model.Reply`) and its errors onto :class:`~model.ModelError`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, cast
from urllib.parse import urlsplit

import openai
from openai.types.chat import ChatCompletionMessageParam

from .model import Message, Model, ModelError, Part, Reply, TextDelta, ToolCall, Usage

__all__ = ["DEFAULT_MODEL", "OFFICIAL_BASE_URL", "OpenAIModel", "model_from_env"]

DEFAULT_MODEL = "gpt-4o-mini"
"""The model :func:`model_from_env` asks for when ``OPENAI_MODEL`` is not set."""
OFFICIAL_BASE_URL = "https://api.openai.com/v1"
"""Where :func:`model_from_env` sends requests when ``OPENAI_BASE_URL`` is not set."""
_DETAIL_LIMIT = 300  # characters of an endpoint's error message kept in a ModelError
_MASKED_KEY = 8  # keys this long or longer are masked in messages (shorter ones are no secret)


def _parse_arguments(text: str) -> dict[str, Any]:
    """A tool call's JSON arguments; what does not parse to an object is kept, raw,
    under ``_raw`` so that the tool's argument check can tell the model what was wrong."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_raw": text}


class _ToolCalls:
    """Assembles a stream's ``delta.tool_calls`` fragments into whole :class:`ToolCall`.

    Fragments of one call share an ``index``: the first carries the id and the name,
    the following ones pieces of the JSON arguments. A server that leaves the index
    out continues the last call unless the fragment brings a new id.
    """

    def __init__(self) -> None:
        self._calls: dict[int, tuple[list[str], list[str], list[str]]] = {}
        self._last: int | None = None

    def add(self, fragment: Any) -> None:
        index = getattr(fragment, "index", None)
        call_id = getattr(fragment, "id", None) or ""
        if not isinstance(index, int):
            known = {"".join(ids) for ids, _, _ in self._calls.values()}
            new = call_id and call_id not in known
            index = len(self._calls) if new or self._last is None else self._last
        self._last = index
        ids, names, arguments = self._calls.setdefault(index, ([], [], []))
        if call_id:
            ids[:] = [call_id]
        function = getattr(fragment, "function", None)
        if function is not None:
            if name := getattr(function, "name", None):
                names.append(name)
            if piece := getattr(function, "arguments", None):
                arguments.append(piece)

    def build(self) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(
                id="".join(ids) or f"call_{index}",
                name="".join(names),
                arguments=_parse_arguments("".join(arguments)),
            )
            for index, (ids, names, arguments) in sorted(self._calls.items())
        )


def _clip(text: str, limit: int = _DETAIL_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_HINTS: Mapping[int, str] = {
    401: "check OPENAI_API_KEY",
    403: "check the key's permissions for this model",
    404: "check OPENAI_MODEL and OPENAI_BASE_URL",
    429: "rate limited or out of quota: wait, or check the account",
}


class OpenAIModel:
    """Streams chat completions through the official ``openai`` client.

    ``base_url`` is the OpenAI API by default, or any server that speaks its
    chat-completions protocol (a local one often needs no ``api_key``: then no
    ``Authorization`` header is sent). Each call asks for the token usage
    (``stream_options.include_usage``), yielded as a :class:`Usage` before the
    :class:`Reply`. ``timeout`` (seconds) and ``max_retries`` go to the client, which
    retries connection errors, 408, 409, 429 and 5xx answers with backoff.

    The client is made here, not per call: its connection pool is reused by every
    call, from every session that shares this model. :meth:`aclose` releases it.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str = OFFICIAL_BASE_URL,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"base_url must be an http(s) URL such as {OFFICIAL_BASE_URL!r}, "
                f"got {_clip(repr(base_url), 100)}"
            )
        if not model or not isinstance(model, str):
            raise ValueError(f"model must be a model name such as {DEFAULT_MODEL!r}")
        if isinstance(timeout, bool) or not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
        if not math.isfinite(timeout):
            raise ValueError(f"timeout must be finite, got {timeout!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self._api_key = api_key or None
        # The client insists on a key; without one, each request leaves out the header
        # it would make (the client's documented ``Omit``) rather than send a fake key.
        self._headers = None if api_key else {"Authorization": openai.Omit()}
        self.client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=api_key or "no-key",
            timeout=self.timeout,
            max_retries=max_retries,
        )

    def __repr__(self) -> str:  # never the key
        return f"OpenAIModel(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def endpoint(self) -> str:
        """The URL each call posts to."""
        return f"{self.base_url}/chat/completions"

    async def aclose(self) -> None:
        """Close the client's connections."""
        await self.client.close()

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[Part]:
        options: dict[str, Any] = {"tools": list(tools)} if tools else {}
        try:
            stream = await self.client.chat.completions.create(
                model=self.model,
                # plain dicts in the wire format, which the client sends as they are
                messages=cast(
                    "list[ChatCompletionMessageParam]", [m.to_openai() for m in messages]
                ),
                stream=True,
                stream_options={"include_usage": True},
                extra_headers=self._headers,
                **options,
            )
        except openai.OpenAIError as exc:
            raise self._error(exc) from exc
        text: list[str] = []
        calls = _ToolCalls()
        usage: Usage | None = None
        # ``async with``: however the loop ends (exhausted, an error, the caller gone),
        # the client releases the response, and a tracing wrapper ends its span.
        async with stream:
            try:
                async for chunk in stream:
                    if chunk.usage is not None:
                        usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                    if not chunk.choices:
                        continue  # the usage-only last chunk
                    delta = chunk.choices[0].delta
                    if delta.content:
                        text.append(delta.content)
                        yield TextDelta(delta.content)
                    for fragment in delta.tool_calls or ():
                        calls.add(fragment)
            except openai.OpenAIError as exc:
                raise self._error(exc) from exc
            finally:
                await stream.response.aclose()
        if usage is not None:
            yield usage
        yield Reply("".join(text), calls.build())

    def _error(self, exc: openai.OpenAIError) -> ModelError:
        """``exc`` as one bounded line: what failed, where, and what to check."""
        where = self.endpoint
        if isinstance(exc, openai.APIStatusError):
            hint = _HINTS.get(exc.status_code)
            text = f"{where} answered HTTP {exc.status_code}: {_clip(_detail(exc))}"
            text += f" ({hint})" if hint else ""
        elif isinstance(exc, openai.APITimeoutError):
            text = f"{where} did not answer within {self.timeout:g}s (is the server up?)"
        elif isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            text = f"cannot connect to {where}: {_clip(str(cause) or type(cause).__name__)}"
        elif isinstance(exc, openai.APIError):
            text = f"{where} reported an error: {_clip(_detail(exc))}"
        else:
            text = f"{where}: {_clip(str(exc))}"
        key = self._api_key
        if key and len(key) >= _MASKED_KEY:  # an echoing server must not show the key
            text = text.replace(key, "***")
        return ModelError(text)


def _detail(exc: openai.APIError) -> str:
    """The endpoint's own message: ``{"error": {"message": ...}}``'s, else the client's."""
    body = exc.body
    if isinstance(body, Mapping):
        message = body.get("message")
        if isinstance(message, str) and message:
            return message
    return exc.message


def model_from_env(
    fallback: Model | None = None, environ: Mapping[str, str] | None = None
) -> Model:
    """The model the environment (``environ``, default ``os.environ``) asks for.

    * ``OPENAI_API_KEY`` and/or ``OPENAI_BASE_URL`` (or the older ``OPENAI_API_BASE``)
      set: an :class:`OpenAIModel` on that base URL — the official endpoint,
      :data:`OFFICIAL_BASE_URL`, when only a key is set — for the model named by
      ``OPENAI_MODEL``, :data:`DEFAULT_MODEL` if unset.
    * Neither: ``fallback``, or a ``RuntimeError`` saying what to set.
    """
    env = os.environ if environ is None else environ
    key = env.get("OPENAI_API_KEY", "").strip()
    base_url = (env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_BASE") or "").strip()
    if key or base_url:
        return OpenAIModel(
            env.get("OPENAI_MODEL", "").strip() or DEFAULT_MODEL,
            base_url=base_url or OFFICIAL_BASE_URL,
            api_key=key or None,
        )
    if fallback is None:
        raise RuntimeError(
            "no model configured: set OPENAI_API_KEY for the OpenAI API, or "
            "OPENAI_BASE_URL (OPENAI_API_BASE) for another OpenAI-compatible server, "
            "and optionally OPENAI_MODEL; or use the scripted model offline"
        )
    return fallback
