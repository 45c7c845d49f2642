"""The Anthropic Messages API adapter (``provider="anthropic"``), on the official ``anthropic`` SDK.

`AnthropicModel` streams one model step through ``AsyncAnthropic.messages.create(stream=True)``
and turns the API's events into agentos chunks:

- ``text_delta`` -> `TextDelta`; a ``tool_use`` block, its input assembled from its
  ``input_json_delta`` fragments, -> `ToolCallChunk` when the block stops (parallel calls
  each in their own block);
- a ``thinking`` block (its text and ``signature``) or a ``redacted_thinking`` block ->
  `ReplayChunk` holding ``ReplayBlock("anthropic", type, data)``, ``data`` being the block as
  the API sent it, so the next request can send it back unchanged;
- usage from ``message_start`` (input, cache read and cache creation tokens) and
  ``message_delta`` (output tokens, running totals) -> `UsageChunk`, priced from the catalog.
  ``prompt_tokens`` counts every input token, the API's ``input_tokens`` (the uncached part)
  plus cache reads and cache writes, which are also given apart (the catalog's convention);
- the stop reason -> `FinishChunk` (``end_turn`` / ``stop_sequence`` -> stop, ``max_tokens`` /
  ``model_context_window_exceeded`` -> length, ``tool_use`` -> tool_calls, anything else ->
  other) with the response's model, message id and schema route, and the ``service_tier``
  the usage reports (``standard``, ``priority`` or ``batch``);
- prompt-cache diagnostics: with ``options.cache_diagnostics`` the request carries the
  ``diagnostics`` object (``previous_message_id``, null on first use; no beta header on the API
  version the SDK pins), and the response's ``diagnostics`` object, which the stream gives on
  ``message_start``'s message, goes on the `FinishChunk` as ``cache_diagnostics``, as sent.

Failures raise `ProviderError`: an HTTP error keeps its status (529 ``overloaded_error``
included) with kind ``http`` and the body's ``error_type``; an ``error`` event inside the stream
the same, its status read from its error type, with ``after_output`` and the usage reported so
far; a ``refusal`` stop reason is kind ``refusal`` with the turn's usage (spec: "Billed failures
count"); a reset connection is ``network``, a timeout ``timeout``, a stream that ends with no stop
reason or breaks its protocol ``stream``. Closing the stream early closes the HTTP connection.

The request's shape is described in `_anthropic_request` (``temperature`` and ``top_p`` are not
sent: the API version the SDK pins, 2026-10-21, refuses them on every model), structured output
in `_anthropic_schema`; the route a step took is on its `FinishChunk` (``output_format``,
``tool`` or ``prompt``). On the ``tool`` route the forced tool's input is streamed as the step's
text, never as a tool call. A thinking budget is sent as ``{"type": "enabled",
"budget_tokens": n}`` to the models before Claude 4.6 and as adaptive thinking to the others,
which deprecate or refuse a budget. Anthropic offers no embeddings, so this module has none.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.errors import ProviderError, ProviderErrorKind
from agentos.llm.model import ChatModel, CompletionOptions, ModelChunk, ModelRequest
from agentos.llm.providers._anthropic_request import (
    MIN_THINKING_BUDGET,
    build_params,
    check_service_tier,
)
from agentos.llm.providers._anthropic_schema import (
    SCHEMA_WORDING,
    SchemaPlan,
    model_traits,
    schema_plan,
)
from agentos.llm.providers._anthropic_stream import PROVIDER, StreamState
from agentos.llm.providers._client_pool import ClientPool
from agentos.llm.schema_prompt import schema_instruction

if TYPE_CHECKING:
    import anthropic

__all__ = ["DEFAULT_ANTHROPIC_MODEL", "AnthropicModel", "create_anthropic_model"]

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5"
"""The model `create_anthropic_model` builds when none is named (the spec's fallback leg)."""

_PROVIDER = PROVIDER
_ENV_KEY = "ANTHROPIC_API_KEY"
_INSTALL_HINT = "pip install 'agentos[anthropic]'"

# An `error` event arrives inside a 200 stream: its status comes from its error type, so
# fallback decisions (529 and 5xx retryable, 4xx not) read it as they read an HTTP error.
_STATUS_BY_ERROR_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

# Keys of the request this adapter owns; custom_model_params may not replace them.
_RESERVED_PARAMS = frozenset({"model", "messages", "stream"})


def _sdk() -> ModuleType:
    try:
        import anthropic
    except ModuleNotFoundError as exc:
        raise ProviderError(
            f"The Anthropic provider needs the anthropic SDK, which is not installed: "
            f"run {_INSTALL_HINT}",
            provider_id=_PROVIDER,
            kind="setup",
            details={"extra": "anthropic", "install": _INSTALL_HINT},
        ) from exc
    return anthropic


class AnthropicModel:
    """A `ChatModel` served by Anthropic's Messages API.

    ``api_key`` defaults to ``ANTHROPIC_API_KEY``; ``base_url`` to the SDK's default (or
    ``ANTHROPIC_BASE_URL``). A ``client`` given is used as is, except that its retries are
    turned off like those of the client built here: the completion gateway decides on retries
    and fallback. Raises `ProviderError` (kind ``setup``) when the SDK is missing or no key is
    found, naming the extra or the variable.
    """

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: anthropic.AsyncAnthropic | None = None,
    ) -> None:
        self._model_id = model_id
        self._given: Any = None
        self._settings: tuple[str, str | None] = ("", None)
        if client is None:
            _sdk()
            key = api_key or os.environ.get(_ENV_KEY)
            if not key:
                raise ProviderError(
                    f"The Anthropic provider needs an API key: set {_ENV_KEY} or pass api_key",
                    provider_id=_PROVIDER,
                    model_id=model_id,
                    kind="setup",
                    details={"env": _ENV_KEY, "option": "api_key"},
                )
            # The client itself comes from the pool of the loop that runs each call.
            self._settings = (key, base_url)
        else:
            # A copy that shares the caller's connection pool, which stays the caller's to close.
            self._given = client.with_options(max_retries=0)

    @property
    def provider_id(self) -> str:
        """``"anthropic"``."""
        return _PROVIDER

    @property
    def model_id(self) -> str:
        """The Claude model's id."""
        return self._model_id

    async def aclose(self) -> None:
        """Stop using the running loop's shared client (closed once no model uses it).

        A client given is left open: its owner closes it.
        """
        if self._given is None:
            await _POOL.release(self._settings, self)

    async def _client(self) -> Any:
        if self._given is not None:
            return self._given
        key, base_url = self._settings
        sdk = _sdk()
        return await _POOL.get(
            self._settings,
            self,
            lambda: sdk.AsyncAnthropic(api_key=key, base_url=base_url, max_retries=0),
        )

    def schema_plan(self, options: CompletionOptions) -> SchemaPlan | None:
        """Where a request with ``options`` would put its schema (``None`` without one)."""
        return schema_plan(self._model_id, options)

    def schema_prompt(self, options: CompletionOptions) -> str | None:
        """The schema message a request with ``options`` carries in its prompt, or ``None``.

        On the ``prompt`` route (`schema_plan`) the schema goes as this text, a system message
        after the leading system messages; the JSON output format and the forced tool carry it
        in the payload and give ``None``, as does a request without a schema (see
        `SchemaPrompting`).
        """
        plan = self.schema_plan(options)
        if plan is None or plan.route != "prompt" or options.response_schema is None:
            return None
        return schema_instruction(
            options.response_schema, options.schema_name, wording=SCHEMA_WORDING
        )

    def check_options(self, options: CompletionOptions) -> None:
        """Refuse options this model cannot honour, before any call (see `ChatModel`).

        Raises `GMIError` (``INVALID_ARGUMENT``) naming the option: a thinking budget under
        the API's minimum or not below ``max_tokens`` where it counts toward it, a
        ``service_tier`` other than ``auto`` / ``standard_only``, ``custom_model_params`` that
        set what the adapter sends itself.
        """
        check_service_tier(options.service_tier)
        budget = options.thinking_budget_tokens
        if budget is not None and budget < MIN_THINKING_BUDGET:
            raise GMIError(
                f"thinking_budget_tokens must be at least {MIN_THINKING_BUDGET} on Anthropic, "
                f"got {budget}",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "thinking_budget_tokens", "provider_id": _PROVIDER},
            )
        if (
            budget is not None
            and options.max_tokens is not None
            and options.max_tokens <= budget
            and model_traits(self._model_id).manual_thinking_budget
        ):
            raise GMIError(
                f"max_tokens ({options.max_tokens}) must exceed thinking_budget_tokens "
                f"({budget}) on {self._model_id}: the thinking counts toward max_tokens",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "max_tokens", "provider_id": _PROVIDER},
            )
        reserved = sorted(_RESERVED_PARAMS & set(options.custom_model_params))
        if reserved:
            raise GMIError(
                f"custom_model_params cannot set {', '.join(reserved)}: the adapter sends them",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "custom_model_params", "reserved": reserved},
            )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Run one step, yielding its chunks; raises `ProviderError` when the call fails."""
        self.check_options(request.options)
        params, plan = build_params(self._model_id, request)
        timeout = request.options.request_timeout
        # The SDK's timeout bounds each read, and the SDK swallows `ping` events: a stream that
        # keeps pinging must still end at request_timeout, so each wait is also held to the
        # whole call's deadline (never across a yield, where the consumer's code runs).
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        state = StreamState(self._model_id, plan)
        client = await self._client()
        try:
            async with asyncio.timeout_at(deadline):
                events = await client.messages.create(**params, stream=True)
        except Exception as exc:
            raise self._error(exc, state) from exc
        try:
            iterator = aiter(events)
            while not state.stopped:
                try:
                    async with asyncio.timeout_at(deadline):
                        event = await anext(iterator)
                except StopAsyncIteration:
                    break
                for chunk in state.handle(event):
                    yield chunk
            final = state.finish()
        except ProviderError:
            raise
        except Exception as exc:
            raise self._error(exc, state) from exc
        finally:
            # Also on cancellation or an early aclose(): closing the response closes the
            # connection, so the provider stops generating.
            await events.close()
        yield final

    def _error(self, exc: Exception, state: StreamState) -> ProviderError:
        sdk = _sdk()
        import httpx2

        usage = state.usage() if state.started else None
        kind: ProviderErrorKind
        status: int | None = None
        details: dict[str, Any] = {}
        message = str(exc) or type(exc).__name__
        if isinstance(exc, sdk.APIStatusError):
            error_type = exc.type
            status = exc.status_code
            if status < 400:  # an `error` event in a stream that began with 200
                status = _STATUS_BY_ERROR_TYPE.get(str(error_type), 500)
            kind = "http"
            message = f"[{status}] {exc.api_message or message}"
            details = {
                key: value
                for key, value in (
                    ("error_type", error_type),
                    ("error_code", exc.error_code),
                    ("request_id", exc.request_id),
                )
                if value is not None
            }
        elif isinstance(exc, sdk.APITimeoutError | httpx2.TimeoutException | TimeoutError):
            kind = "timeout"
            message = str(exc) or "the request timed out (request_timeout)"
        elif isinstance(exc, sdk.APIConnectionError | httpx2.TransportError | OSError):
            kind = "network"
        elif isinstance(exc, sdk.APIResponseValidationError | ValueError | httpx2.StreamError):
            kind = "stream"  # a malformed event (bad JSON, an unexpected shape)
        else:
            kind = "other"
        return ProviderError(
            f"Anthropic {self._model_id}: {message}",
            status_code=status,
            provider_id=_PROVIDER,
            model_id=self._model_id,
            usage=usage,
            after_output=state.output,
            kind=kind,
            details=details,
        )


def create_anthropic_model(
    model_id: str | None, api_key: str | None, base_url: str | None
) -> ChatModel:
    """The provider factory for `agentos.llm.resolve`: ``(model_id, api_key, base_url)``."""
    return AnthropicModel(model_id or DEFAULT_ANTHROPIC_MODEL, api_key=api_key, base_url=base_url)


async def _close_client(client: Any) -> None:
    await client.close()


_POOL: ClientPool[Any] = ClientPool(_close_client)
