"""The Gemini adapter (``provider="gemini"``), through Google's official ``google-genai`` SDK.

Spec: "Completion options" (a setting neither the persona nor the turn sets is not sent; a
tool choice is never sent without tools) and "Model calls through a completion gateway" (each
provider gets back only its own replay blocks; failures are classified so the gateway can fall
back before output; a billed failure reports its usage).

The request (contents: `agentos.llm.providers._gemini_request`; generation config:
`agentos.llm.providers._gemini_config`): system and summary messages become
``system_instruction``; user and assistant turns the ``user`` and ``model`` roles, with text and
inline or by-URI image parts; tool calls ``functionCall`` parts and tool results
``functionResponse`` parts of a ``user`` turn; tools ``function_declarations`` (JSON schema);
``tool_choice`` the ``function_calling_config`` mode (``AUTO``, ``NONE``, ``ANY``, or ``ANY``
with ``allowed_function_names`` for one tool); ``thinking_budget_tokens`` ``thinking_config``;
``response_schema`` ``response_mime_type="application/json"`` with ``response_json_schema``;
``json_mode`` that mime type alone; ``service_tier`` the request's ``serviceTier``;
``custom_model_params`` is merged into the generation config last.

`GeminiModel` streams ``streamGenerateContent`` and turns it into agentos chunks
(`agentos.llm.providers._gemini_response`):

- text parts → `TextDelta`; thought-summary parts (``thought: true``) never join the text;
- ``functionCall`` parts → `ToolCallChunk` (Gemini sends whole calls; one without an ``id``
  gets ``call_<n>``, numbered per model instance); parallel calls come one chunk each;
- every ``thoughtSignature`` → `ReplayChunk` of ``ReplayBlock("gemini", "thought_signature",
  data)``, ``data`` holding the signature as the API sent it and the part it came on, so the
  next request puts it back on that part (see `agentos.llm.providers._gemini_request`);
- ``usageMetadata`` → one `UsageChunk` after the `FinishChunk`, priced from the catalog:
  ``prompt_tokens`` is the whole prompt (cached tokens included, as the catalog counts them),
  ``cache_read_tokens`` the cached part, ``completion_tokens`` the answer plus the thinking
  tokens (billed as output);
- ``finishReason`` → `FinishChunk`: ``STOP`` is ``stop``, or ``tool_calls`` when the step
  called tools; ``MAX_TOKENS`` is ``length``; the safety family (``SAFETY``, ``RECITATION``,
  ``PROHIBITED_CONTENT``, ``BLOCKLIST``, ``SPII``, ...) ``content_filter``; malformed or
  unexpected calls ``error``; anything else ``other``. With a ``response_schema`` the chunk
  says ``schema_route="response_schema"``: the answer is the step's text. The tier
  the response's ``x-gemini-service-tier`` header reports goes on it as ``service_tier``.

Failures raise `ProviderError`: an HTTP error (or an error event mid-stream) has kind ``http``
with the status and, in ``details``, Google's ``status`` (also as ``error_type``), the
``ErrorInfo`` reason as ``error_code`` and a ``RetryInfo`` delay as ``retry_after`` (seconds);
a blocked prompt, or a reply the safety family stopped before any output, is kind
``refusal`` with the usage it billed; a reset connection is ``network``; a stream that ends
without a ``finishReason`` is ``stream`` (never a silent partial answer); a timeout is
``timeout``. ``after_output`` says whether text or a tool call had already streamed.

The SDK's own retries, automatic continuation and automatic function calling are off: the
completion gateway decides about retries and agentos runs the tools. ``request_timeout``
(seconds) bounds the whole call, and the SDK also sends it to Google as the server's deadline.
Gemini has no end-user field: ``user_id`` is not sent. Closing the stream early, or cancelling
its task, closes the HTTP connection.

`GeminiEmbedder` embeds through ``batchEmbedContents`` (``gemini-embedding-2`` by default:
3,072 dimensions, or ``dimension=`` sent as ``output_dimensionality``).
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, cast

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.catalog import model_info
from agentos.llm.errors import ProviderError
from agentos.llm.model import (
    ChatModel,
    CompletionOptions,
    ModelChunk,
    ModelRequest,
)
from agentos.llm.providers._gemini_client import GeminiClients
from agentos.llm.providers._gemini_config import (
    build_config,
    check_custom_params,
    check_effort,
    check_service_tier,
)
from agentos.llm.providers._gemini_request import PROVIDER, build_contents
from agentos.llm.providers._gemini_response import StreamState, provider_error

if TYPE_CHECKING:
    from google.genai import types

__all__ = [
    "DEFAULT_GEMINI_EMBEDDING_MODEL",
    "DEFAULT_GEMINI_MODEL",
    "GEMINI_EMBEDDING_DIMENSION",
    "GeminiEmbedder",
    "GeminiModel",
    "create_gemini_model",
]

DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"
"""The chat model a ``provider="gemini"`` call without a model uses."""

DEFAULT_GEMINI_EMBEDDING_MODEL = "gemini-embedding-2"
"""The embedding model `GeminiEmbedder` uses unless told otherwise."""

GEMINI_EMBEDDING_DIMENSION = 3072
"""The size of a Gemini embedding when no ``output_dimensionality`` is asked for and the
catalog does not know the model (``gemini-embedding-2`` and ``-001`` both give 3,072)."""

PROVIDER_ID = PROVIDER
_EMBED_BATCH = 100  # batchEmbedContents takes at most 100 requests


class _End:
    """The pump's last item: the stream ended normally."""


class GeminiModel:
    """A `ChatModel` served by the Gemini API (see the module docstring for the contract).

    ``api_key`` defaults to ``GEMINI_API_KEY``; ``base_url`` points the SDK elsewhere (a proxy,
    a test server); ``client`` is a ready ``google.genai.Client`` to use instead (its owner
    keeps its settings, retries included, and closes it). Raises `ProviderError` of kind
    ``setup`` when the SDK is not installed or no key is found.
    """

    def __init__(
        self,
        model_id: str = DEFAULT_GEMINI_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: object | None = None,
    ) -> None:
        self._model_id = model_id
        self._clients = GeminiClients(api_key, base_url, client, model_id)
        self._call_ids = itertools.count(1)

    @property
    def provider_id(self) -> str:
        """``"gemini"``."""
        return PROVIDER_ID

    @property
    def model_id(self) -> str:
        """The Gemini model's id (``gemini-2.5-flash``, ...)."""
        return self._model_id

    def check_options(self, options: CompletionOptions) -> None:
        """Refuse, before any call, options Gemini cannot take (`GMIError` naming the option).

        A ``custom_model_params`` key must name a ``GenerateContentConfig`` field (snake_case or
        camelCase) that the adapter does not set itself (tools, tool config, system instruction,
        HTTP options, candidate count, automatic calling and continuation). An ``effort`` must
        be one of Gemini's thinking levels (``minimal``, ``low``, ``medium``, ``high``,
        ``xhigh``), a ``service_tier`` one of its tiers (``standard``, ``flex``, ``priority``).
        """
        check_custom_params(options.custom_model_params)
        check_effort(options.effort)
        check_service_tier(options.service_tier)

    async def aclose(self) -> None:
        """Stop using the pooled SDK client (closed once no model uses it); a given one stays."""
        await self._clients.release()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Run one step on Gemini, yielding its chunks as they arrive."""
        system, contents = build_contents(request.messages)
        config = build_config(request.options, request.tools, system)
        state = StreamState(self._model_id, self._call_ids)
        queue: asyncio.Queue[types.GenerateContentResponse | BaseException | _End] = asyncio.Queue()
        # The SDK's stream is read by a task of its own, never left waiting at a yield: the
        # SDK's nested generators close the HTTP response only when an exception reaches them
        # while they read, so closing this stream cancels that task mid-read.
        pump = asyncio.create_task(
            self._pump(contents, config, request.options.request_timeout, queue)
        )
        try:
            while True:
                item = await queue.get()
                if isinstance(item, _End):
                    break
                if isinstance(item, asyncio.CancelledError):
                    raise item
                if isinstance(item, BaseException):
                    raise state.failed(item) from item
                for chunk in state.read(item):
                    yield chunk
            for chunk in state.end(request.options.response_schema is not None):
                yield chunk
        finally:
            if not pump.done():
                pump.cancel()
            await asyncio.wait([pump])

    async def _pump(
        self,
        contents: list[types.Content],
        config: types.GenerateContentConfig,
        seconds: float | None,
        queue: asyncio.Queue[types.GenerateContentResponse | BaseException | _End],
    ) -> None:
        """Read the SDK's stream into ``queue``, within ``seconds`` when set."""
        try:
            async with asyncio.timeout(seconds):
                client = await self._clients.get()
                stream = await client.aio.models.generate_content_stream(
                    model=self._model_id,
                    contents=cast("types.ContentListUnion", contents),
                    config=config,
                )
                async for response in stream:
                    queue.put_nowait(response)
        except asyncio.CancelledError:
            # Cancelled by the reader, which no longer reads, or by someone else (the loop
            # shutting down): the reader must not wait for an item that never comes.
            queue.put_nowait(asyncio.CancelledError())
            raise
        except Exception as exc:  # handed to the reader, which raises it as a ProviderError
            queue.put_nowait(exc)
        else:
            queue.put_nowait(_End())


class GeminiEmbedder:
    """An `Embedder` on a Gemini embedding model, through ``batchEmbedContents``.

    ``dimension`` (sent as ``output_dimensionality``) shortens the vectors; unset, nothing is
    sent and the model's own size applies (the catalog's, else 3,072). ``task_type``
    (``RETRIEVAL_QUERY``, ``RETRIEVAL_DOCUMENT``, ...) is sent when set. Each text is its own
    content, so each gets its own vector (``gemini-embedding-2`` would merge the parts of one
    content into one vector). Vectors come back L2-normalised: Gemini normalises only its
    full-size ones.
    """

    def __init__(
        self,
        model_id: str = DEFAULT_GEMINI_EMBEDDING_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: object | None = None,
        dimension: int | None = None,
        task_type: str | None = None,
        request_timeout: float | None = None,
    ) -> None:
        if dimension is not None and dimension < 1:
            raise GMIError(
                f"dimension must be a positive integer, got {dimension}",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "dimension"},
            )
        self._model_id = model_id
        self._dimension = dimension
        self._task_type = task_type
        self._timeout = request_timeout
        self._clients = GeminiClients(api_key, base_url, client, model_id)

    @property
    def provider_id(self) -> str:
        """``"gemini"``."""
        return PROVIDER_ID

    @property
    def model_id(self) -> str:
        """The embedding model's id."""
        return self._model_id

    @property
    def dimension(self) -> int:
        """The length of every vector: ``dimension`` when given, else the model's own size."""
        if self._dimension is not None:
            return self._dimension
        info = model_info(PROVIDER_ID, self._model_id)
        return (info.embedding_dimension if info else None) or GEMINI_EMBEDDING_DIMENSION

    async def aclose(self) -> None:
        """Stop using the pooled SDK client (closed once no model uses it); a given one stays."""
        await self._clients.release()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One normalised vector per text, in order; raises `ProviderError` on failure."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), _EMBED_BATCH):
            vectors.extend(await self._embed_batch(texts[start : start + _EMBED_BATCH]))
        return vectors

    async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        from google.genai import types

        config = types.EmbedContentConfig(
            output_dimensionality=self._dimension,
            task_type=self._task_type,
            http_options=(
                types.HttpOptions(timeout=max(1, math.ceil(self._timeout * 1000)))
                if self._timeout is not None
                else None
            ),
        )
        contents = [types.Content(parts=[types.Part(text=text)]) for text in texts]
        try:
            async with asyncio.timeout(self._timeout):
                client = await self._clients.get()
                response = await client.aio.models.embed_content(
                    model=self._model_id,
                    contents=cast("types.ContentListUnion", contents),
                    config=config,
                )
        except Exception as exc:
            raise provider_error(exc, self._model_id) from exc
        embeddings = response.embeddings or []
        if len(embeddings) != len(texts):
            raise ProviderError(
                f"Gemini returned {len(embeddings)} embeddings for {len(texts)} texts",
                provider_id=PROVIDER_ID,
                model_id=self._model_id,
                kind="stream",
            )
        vectors = []
        for embedding in embeddings:
            values = list(embedding.values or [])
            if len(values) != self.dimension:
                raise ProviderError(
                    f"Gemini returned a vector of {len(values)} dimensions; "
                    f"{self._model_id} was expected to give {self.dimension}",
                    provider_id=PROVIDER_ID,
                    model_id=self._model_id,
                    kind="stream",
                )
            norm = math.sqrt(math.fsum(value * value for value in values))
            vectors.append([value / norm for value in values] if norm else values)
        return vectors


def create_gemini_model(
    model_id: str | None, api_key: str | None, base_url: str | None
) -> ChatModel:
    """The provider factory for `agentos.llm.resolve`: ``(model_id, api_key, base_url)``."""
    return GeminiModel(model_id or DEFAULT_GEMINI_MODEL, api_key=api_key, base_url=base_url)
