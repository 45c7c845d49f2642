"""OpenAI Chat Completions and embeddings through the official ``openai`` SDK.

The same adapter serves every server that speaks the Chat Completions wire format: OpenAI,
OpenRouter, Groq, Together AI, xAI, Mistral, Ollama, vLLM and any other through ``base_url``.
`OPENAI_COMPATIBLE_PROVIDERS` knows the endpoint and key variable of the providers agentos
names; any other server needs its ``base_url``.

Building a model or an embedder checks the SDK and the key (`ProviderError`, kind ``setup``; see
`_openai_client` for where the key and the endpoint come from). The SDK never retries: falling
back is the completion gateway's job. Closing a stream early (``aclose()``, ``break``) closes
its HTTP response. The request body is built in `_openai_wire`, the stream read in
`_openai_stream`.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.catalog import model_info
from agentos.llm.errors import ProviderError
from agentos.llm.model import CompletionOptions, ModelChunk, ModelRequest
from agentos.llm.providers._openai_client import (
    INSTALL_HINT,
    NO_KEY,
    OPENAI_COMPATIBLE_PROVIDERS,
    CompatibleProvider,
    OpenAIClients,
)
from agentos.llm.providers._openai_stream import StreamAssembler, provider_error
from agentos.llm.providers._openai_wire import (
    TokenField,
    chat_body,
    check_body_options,
    schema_prompt,
)

if TYPE_CHECKING:
    import openai

__all__ = [
    "INSTALL_HINT",
    "NO_KEY",
    "OPENAI_COMPATIBLE_PROVIDERS",
    "CompatibleProvider",
    "OpenAIEmbedder",
    "OpenAIModel",
]


class OpenAIModel:
    """A `ChatModel` on the Chat Completions API of OpenAI or of a compatible server.

    ``provider_id`` names the provider (a key of `OPENAI_COMPATIBLE_PROVIDERS`, or any name with
    a ``base_url``); ``client`` replaces the client the model would build. Building the model
    checks the SDK and the key (`ProviderError`, kind ``setup``); `stream()` raises
    `ProviderError` for every failure of the call and `GMIError` (``INVALID_ARGUMENT``) for an
    option it cannot send.

    The output cap goes out as ``max_completion_tokens`` to OpenAI itself and as ``max_tokens``
    to any other server. ``thinking_budget_tokens`` is not sent: Chat Completions has no token
    budget for thinking (``effort`` goes as ``reasoning_effort``). See `_openai_wire` for how
    each option is sent.
    """

    def __init__(
        self,
        model_id: str,
        *,
        provider_id: str = "openai",
        api_key: str | None = None,
        base_url: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        default_headers: dict[str, str] | None = None,
    ) -> None:
        self._model_id = model_id
        self._provider_id = provider_id
        self._clients = OpenAIClients(
            provider_id, model_id, api_key, base_url, client, default_headers
        )

    @property
    def provider_id(self) -> str:
        """The provider serving this model (``"openai"``, ``"openrouter"``, ...)."""
        return self._provider_id

    @property
    def model_id(self) -> str:
        """The model's id on its provider."""
        return self._model_id

    @property
    def base_url(self) -> str | None:
        """The endpoint calls go to (``None``: the SDK's default, OpenAI)."""
        return self._clients.base_url

    @property
    def _token_field(self) -> TokenField:
        return "max_completion_tokens" if self._clients.official else "max_tokens"

    def schema_prompt(self, options: CompletionOptions) -> str | None:
        """The schema message a request with ``options`` carries in its prompt, or ``None``.

        A schema strict mode cannot take goes in JSON mode with this text as a system message
        after the leading system messages; a strict schema, or none, gives ``None`` (see
        `SchemaPrompting`).
        """
        return schema_prompt(options)

    def check_options(self, options: CompletionOptions) -> None:
        """Refuse options this provider cannot take, before any call (see `ChatModel`).

        ``custom_model_params`` may not set what the adapter sends itself (``model``,
        ``messages``, ``stream``, ``stream_options``, ``tools``, ``tool_choice``,
        ``response_format``, ``n``); OpenAI takes at most 4 stop sequences.
        """
        check_body_options(options)
        if self._clients.official and len(options.stop_sequences or ()) > 4:
            raise GMIError(
                "OpenAI takes at most 4 stop sequences",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "stop_sequences"},
            )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Run one streamed completion, yielding its chunks (see `_openai_stream`)."""
        import openai

        self.check_options(request.options)
        wire = chat_body(request, model_id=self._model_id, token_field=self._token_field)
        timeout = request.options.request_timeout
        assembler = StreamAssembler(
            provider_id=self._provider_id, model_id=self._model_id, schema_route=wire.schema_route
        )
        client = await self._clients.get()
        response: openai.AsyncStream[Any] | None = None
        try:
            try:
                # The body goes out exactly as built, and the events come back as plain JSON
                # (cast_to=object): the SDK still decodes the SSE, raises HTTP errors and
                # in-stream error events, but builds no pydantic model per chunk.
                response = await client.post(
                    "/chat/completions",
                    body=wire.body,
                    cast_to=object,
                    options={
                        "security": {"bearer_auth": True},
                        **({"timeout": timeout} if timeout is not None else {}),
                    },
                    stream=True,
                    stream_cls=openai.AsyncStream[Any],
                )
                async for chunk in response:
                    for out in assembler.feed(chunk):
                        yield out
            except GMIError:
                raise  # already a ProviderError, or a refused option
            except Exception as exc:
                if not assembler.finished:
                    raise assembler.failure(exc) from exc
                # The answer was whole before the failure: only the usage report is lost.
            for out in assembler.end():
                yield out
        finally:
            if response is not None:
                await response.close()

    async def aclose(self) -> None:
        """Close the SDK client this model built (a client passed in is left open)."""
        await self._clients.aclose()


_NATIVE_DIMENSIONS: Final[dict[str, int]] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "nomic-embed-text": 768,
}
# Models that shorten their vectors on request (the `dimensions` parameter).
_SHORTENABLE: Final = frozenset({"text-embedding-3-small", "text-embedding-3-large"})
# OpenAI embeds at most 2,048 inputs per request.
_BATCH: Final = 2048


class OpenAIEmbedder:
    """An `Embedder` on an OpenAI-compatible ``/embeddings`` endpoint.

    Knows text-embedding-3-small (1536), text-embedding-3-large (3072), text-embedding-ada-002
    (1536) and Ollama's nomic-embed-text (768), and what the catalog knows; any other model
    needs ``dimension=``. A ``dimension`` below a text-embedding-3 model's own is sent as its
    ``dimensions`` parameter; a fixed-size model refuses any other size (`GMIError`
    ``INVALID_ARGUMENT``). `embed()` returns unit-length vectors, batched by 2,048 texts, and
    raises `ProviderError` like `OpenAIModel`.
    """

    def __init__(
        self,
        model_id: str = "text-embedding-3-small",
        *,
        provider_id: str = "openai",
        api_key: str | None = None,
        base_url: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        default_headers: dict[str, str] | None = None,
        dimension: int | None = None,
    ) -> None:
        self._model_id = model_id
        self._provider_id = provider_id
        # "openai/text-embedding-3-small" on OpenRouter, "nomic-embed-text:latest" on Ollama.
        name = model_id.rsplit("/", 1)[-1].split(":", 1)[0]
        info = model_info(provider_id, model_id)
        native = _NATIVE_DIMENSIONS.get(name) or (info.embedding_dimension if info else None)
        self._dimension, self._request_dimensions = _dimension(model_id, name, native, dimension)
        self._clients = OpenAIClients(
            provider_id, model_id, api_key, base_url, client, default_headers
        )

    @property
    def model_id(self) -> str:
        """The embedding model's id."""
        return self._model_id

    @property
    def dimension(self) -> int:
        """The length of every vector `embed()` returns."""
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order."""
        import openai

        vectors: list[list[float]] = []
        client = await self._clients.get()
        for start in range(0, len(texts), _BATCH):
            batch = list(texts[start : start + _BATCH])
            try:
                response = await client.embeddings.create(
                    model=self._model_id,
                    input=batch,
                    encoding_format="float",
                    dimensions=self._request_dimensions or openai.omit,
                )
            except openai.OpenAIError as exc:
                raise provider_error(
                    exc, provider_id=self._provider_id, model_id=self._model_id
                ) from exc
            rows = sorted(response.data, key=lambda row: row.index)
            sizes = {len(row.embedding) for row in rows}
            if len(rows) != len(batch) or sizes - {self._dimension}:
                raise ProviderError(
                    f"{self._provider_id} returned {len(rows)} vectors of sizes {sorted(sizes)} "
                    f"for {len(batch)} texts; expected {self._dimension}-dimensional ones",
                    provider_id=self._provider_id,
                    model_id=self._model_id,
                    kind="other",
                )
            vectors.extend(_unit(row.embedding) for row in rows)
        return vectors

    async def aclose(self) -> None:
        """Close the SDK client this embedder built (a client passed in is left open)."""
        await self._clients.aclose()


def _dimension(
    model_id: str, name: str, native: int | None, wanted: int | None
) -> tuple[int, int | None]:
    """The vectors' length and the ``dimensions`` parameter to send (``None``: send none)."""
    if wanted is None:
        if native is None:
            raise GMIError(
                f"agentos does not know how long {model_id!r} vectors are: pass dimension=",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "dimension", "model": model_id},
            )
        return native, None
    if wanted <= 0 or (native is not None and wanted > native):
        raise GMIError(
            f"dimension must be between 1 and {native or 'the model size'}, got {wanted}",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "dimension", "model": model_id},
        )
    if name in _SHORTENABLE:
        return wanted, (wanted if wanted != native else None)
    if native is not None and wanted != native:
        raise GMIError(
            f"{model_id!r} makes {native}-dimensional vectors and cannot shorten them",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "dimension", "model": model_id},
        )
    return wanted, None


def _unit(vector: list[float]) -> list[float]:
    # OpenAI's vectors are unit length already; Ollama's need not be.
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else list(vector)
