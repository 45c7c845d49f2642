"""The provider seam: a chat model that streams normalised chunks.

Every adapter (local, OpenAI-compatible, Anthropic, Gemini) and every test double turns its
provider's stream into the five chunk types below, which consumers ``match`` on:

- `TextDelta`: a piece of the reply's text;
- `ToolCallChunk`: one tool call, already assembled from its streamed pieces;
- `ReplayChunk`: a provider replay block (thinking block, thought signature), verbatim;
- `UsageChunk`: the request's usage so far (providers report running totals: the last one wins);
- `FinishChunk`: why the model stopped.

A model's stream may raise `agentos.llm.ProviderError`; closing the stream early (``aclose()``,
or breaking out of ``async for``) aborts the call. A model may also offer
``check_options(options)``, which callers run before any work to refuse options it cannot
honour (a `GMIError` naming the option), and ``schema_prompt(options)`` (`SchemaPrompting`),
which names the system message it would add for a schema its payload cannot carry, so a caller
can put that message in the prompt itself (`schema_prompt_for`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from agentos.core.messages import Message, ReplayBlock, ToolCall
from agentos.core.usage import ModelUsage

__all__ = [
    "WrapperModel",
    "thinking_budget_tokens",
    "CacheDiagnosticsRequest",
    "ChatModel",
    "CompletionOptions",
    "FinishChunk",
    "FinishReason",
    "ModelChunk",
    "ModelRequest",
    "ReplayChunk",
    "SchemaRoute",
    "TextDelta",
    "ToolCallChunk",
    "ToolChoice",
    "ToolDefinition",
    "UsageChunk",
    "aclose_stream",
    "closing_stream",
    "complete_text",
]

T = TypeVar("T")

FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "error", "other"]
"""Why a model step ended, normalised across providers."""

ToolChoice = Literal["auto", "none", "required"] | str


@dataclass(frozen=True, slots=True)
class CacheDiagnosticsRequest:
    """Ask the provider to compare this request's prompt prefix with an earlier response's.

    ``previous_message_id`` names the response to compare against; ``None`` opts in without a
    comparison (the first call). Providers without prompt-cache diagnostics (all but
    Anthropic's) ignore it. The answer arrives as `FinishChunk.cache_diagnostics`.
    """

    previous_message_id: str | None = None


SchemaRoute = Literal[
    "json_schema", "json_mode", "output_format", "tool", "response_schema", "prompt"
]
"""Where an adapter put a requested schema, so the caller knows where the answer is:

- ``json_schema``: OpenAI/OpenRouter strict ``response_format``; the answer is the text;
- ``json_mode``: ``response_format={"type": "json_object"}`` with the schema as a system message;
- ``output_format``: Anthropic's JSON output format; the answer is the text;
- ``tool``: a forced tool call named after the schema; the answer is that call's arguments,
  which the adapter streams as the step's text (never as a `ToolCallChunk`);
- ``response_schema``: Gemini's ``response_schema``; the answer is the text;
- ``prompt``: the schema as a system message only; the answer is the text.
"""
"""``auto``, ``none``, ``required``, or the name of the one tool the model must call."""


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as the model sees it: a name, a description and a JSON schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CompletionOptions:
    """The completion options a call sends; a field left ``None`` is not sent.

    ``custom_model_params`` carries provider-specific settings (``repeat_penalty``, ``top_k``
    and ``min_p`` for the local model, for example). ``response_schema`` (a JSON schema) and
    ``schema_name`` ask for a structured answer: each adapter sends its provider's payload and
    says on its `FinishChunk` where it put the schema. ``user_id`` is the end user's id, sent as
    the provider's end-user field. ``effort`` (a reasoning-effort level such as ``"low"``) and
    ``cache`` (prompt caching: ``True``, ``False``, or a time to live ``"5m"`` / ``"1h"``) go to
    providers that have such settings; a fallback leg's own values replace them on its hop.

    ``prompt_cache_key`` (a key that routes requests sharing a prompt prefix to the same cache),
    ``prompt_cache_retention`` (how long a cached prefix is kept; OpenAI takes ``"in_memory"``
    and ``"24h"``) and ``service_tier`` (the processing tier asked for: OpenAI's ``"auto"``,
    ``"default"``, ``"flex"``, ``"priority"``, ...; Anthropic's ``"auto"`` / ``"standard_only"``;
    Gemini's ``"standard"`` / ``"flex"`` / ``"priority"``) go to providers that have such a
    setting and are not sent to the others; a model whose provider takes a fixed set of values
    refuses any other in ``check_options``. ``json_mode=True`` asks for a reply that is one JSON
    object without a schema (OpenAI's ``response_format={"type": "json_object"}``); ``False`` or
    ``None`` sends nothing (plain text is every provider's default), and a ``response_schema``
    takes its place when both are set (a schema answer is JSON already).

    ``schema_prompt_given=True`` says the caller already put the system message that carries
    ``response_schema`` into the request's messages (the text `SchemaPrompting.schema_prompt`
    gave), or chose to leave it out: an adapter whose payload cannot carry the schema then
    adds no message of its own, and still sends the rest of its route (JSON mode, say). The
    GMI sets it on each hop it gave the message to, before ``before_model_call`` runs, so a hook
    that removes the message removes it (spec: Completion options). It changes nothing on a
    request without a ``response_schema``, or on one whose payload carries the schema.
    """

    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    stop_sequences: tuple[str, ...] | None = None
    seed: int | None = None
    tool_choice: ToolChoice | None = None
    user_id: str | None = None
    request_timeout: float | None = None
    custom_model_params: dict[str, Any] = field(default_factory=dict)
    response_schema: dict[str, Any] | None = None
    schema_name: str | None = None
    thinking_budget_tokens: int | None = None
    cache_diagnostics: CacheDiagnosticsRequest | None = None
    effort: str | None = None
    cache: bool | Literal["5m", "1h"] | None = None
    prompt_cache_key: str | None = None
    prompt_cache_retention: str | None = None
    service_tier: str | None = None
    json_mode: bool | None = None
    schema_prompt_given: bool = False


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything one model step sends: the messages, the tools offered and the options."""

    messages: Sequence[Message]
    tools: Sequence[ToolDefinition] = ()
    options: CompletionOptions = field(default_factory=CompletionOptions)


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the reply's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallChunk:
    """One complete tool call the model requested."""

    tool_call: ToolCall


@dataclass(frozen=True, slots=True)
class ReplayChunk:
    """A block the provider needs back on the next request, kept verbatim."""

    block: ReplayBlock


@dataclass(frozen=True, slots=True)
class UsageChunk:
    """The request's usage so far; a later `UsageChunk` of the same call supersedes it."""

    usage: ModelUsage


@dataclass(frozen=True, slots=True)
class FinishChunk:
    """The end of a step, with its reason and what the provider reported about the answer.

    ``response_model`` is the model that answered; ``service_tier`` the processing tier the
    provider says it served the request at (OpenAI's ``service_tier``, Anthropic's
    ``usage.service_tier``, Gemini's ``x-gemini-service-tier`` header), ``None`` when it did not
    say; ``provider_message_id`` the response's id; ``schema_route`` where a requested schema
    went; ``cache_diagnostics`` Anthropic's prompt-cache diagnostics, as sent.
    """

    finish_reason: FinishReason
    response_model: str | None = None
    provider_message_id: str | None = None
    schema_route: SchemaRoute | None = None
    cache_diagnostics: dict[str, Any] | None = None
    service_tier: str | None = None


ModelChunk = TextDelta | ToolCallChunk | ReplayChunk | UsageChunk | FinishChunk
"""Any chunk a `ChatModel` streams."""


@runtime_checkable
class ChatModel(Protocol):
    """A model a provider serves: it knows who it is and streams one step at a time."""

    @property
    def provider_id(self) -> str:
        """The provider serving this model (``"local"``, ``"openai"``, ...)."""
        ...

    @property
    def model_id(self) -> str:
        """The model's id on its provider."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Run one model step, yielding its chunks as they arrive."""
        ...


class WrapperModel:
    """A `ChatModel` around another, the ``inner`` model.

    ``provider_id``, ``model_id`` and every attribute the wrapper does not define
    (``check_options``, ``schema_prompt``, ``load``, ...) are the inner model's. The base of
    the wrappers that add one concern to a model (metering, a budget, sampling defaults), as
    pydantic-ai's ``WrapperModel`` is; a subclass defines ``stream``.
    """

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner

    @property
    def provider_id(self) -> str:
        """The inner model's provider: the one that serves the call."""
        return self.inner.provider_id

    @property
    def model_id(self) -> str:
        """The inner model's id."""
        return self.inner.model_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class closing_stream(Generic[T]):  # lower case: it reads as ``async with closing_stream(s)``
    """Use ``stream`` and close it on exit, so leaving early aborts the call it belongs to.

    A class rather than an ``@asynccontextmanager``: that one is an async generator of its
    own, and every model step enters several of these.
    """

    __slots__ = ("_stream",)

    def __init__(self, stream: AsyncIterator[T]) -> None:
        self._stream = stream

    async def __aenter__(self) -> AsyncIterator[T]:
        return self._stream

    async def __aexit__(self, *exc_info: object) -> None:
        await aclose_stream(self._stream)


async def aclose_stream(stream: AsyncIterator[Any]) -> None:
    """Close ``stream`` when it can be closed (an async generator, a provider's stream).

    What `closing_stream` does on exit, for a ``try``/``finally`` on a path every chunk takes.
    """
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


async def complete_text(model: ChatModel, request: ModelRequest) -> str:
    """The text of one step of ``model`` on ``request`` (its text deltas joined).

    For the side calls that want an answer, not a turn (a sentiment score, a summary, a judge's
    verdict): no tools are run and nothing is metered here; provider errors propagate, and the
    stream is closed whatever happens.
    """
    parts: list[str] = []
    async with closing_stream(model.stream(request)) as stream:
        async for chunk in stream:
            if type(chunk) is TextDelta:
                parts.append(chunk.text)
    return "".join(parts)


def thinking_budget_tokens(thinking: object) -> int | None:
    """The reasoning token budget a ``thinking`` setting asks for, or ``None``.

    A whole number is the budget; a mapping gives it as ``budget_tokens`` (or the TypeScript
    ``budgetTokens``); anything else (``True``, ``None``) asks for no budget of its own.
    """
    if isinstance(thinking, int) and not isinstance(thinking, bool):
        return thinking
    if isinstance(thinking, Mapping):
        value = thinking.get("budget_tokens", thinking.get("budgetTokens"))
        return int(value) if value is not None else None
    return None
