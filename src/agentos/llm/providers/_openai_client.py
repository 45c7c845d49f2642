"""The SDK client of an OpenAI-compatible provider: its endpoint, its key, one client per loop.

- The SDK is imported when a model is built (`OpenAIClients`), so ``import agentos`` works
  without it; without it a `ProviderError` (kind ``setup``) names ``pip install 'agentos[openai]'``.
- The key is ``api_key``, else the provider's variable (``OPENAI_API_KEY`` for OpenAI). A server
  of one's own (a ``base_url``, or Ollama) needs none: a placeholder is sent. Otherwise a missing
  key is a `ProviderError` (kind ``setup``) naming the variable. The key is always given to the
  SDK, so it never sends ``OPENAI_API_KEY`` to another provider.
- The SDK never retries (``max_retries=0``): falling back is the completion gateway's job.
- One SDK client per event loop and per (key, endpoint, headers), shared by every model that
  uses them: building a client costs about 20 ms (its SSL context), so a call that builds a
  model per call (``generate_text(provider=...)``) reuses the loop's client and its open
  connections. A pooled connection cannot serve another loop than the one that opened it
  (``asyncio.run()`` per call, as the sync wrappers do); a finished loop's clients are marked
  closed when the next loop asks for one. A model's ``aclose()`` closes the shared client
  once no other open model uses it. A client passed in is used as it is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from agentos.llm.errors import ProviderError
from agentos.llm.providers._client_pool import ClientPool

if TYPE_CHECKING:
    import openai

__all__ = [
    "INSTALL_HINT",
    "NO_KEY",
    "OPENAI_COMPATIBLE_PROVIDERS",
    "CompatibleProvider",
    "OpenAIClients",
]

INSTALL_HINT: Final = "pip install 'agentos[openai]'"
NO_KEY: Final = "no-key-needed"
"""The key sent to a server that takes none (the SDK always sends an ``Authorization`` header)."""


@dataclass(frozen=True, slots=True)
class CompatibleProvider:
    """An OpenAI-compatible provider: its endpoint and the variable holding its key.

    ``base_url=None`` is the SDK's own default (OpenAI). ``base_url_env`` names a variable that
    overrides the endpoint (Ollama's ``OLLAMA_BASE_URL``); ``needs_key=False`` for a local server.
    """

    id: str
    base_url: str | None
    env_key: str | None
    needs_key: bool = True
    base_url_env: str | None = None


OPENAI_COMPATIBLE_PROVIDERS: Final[dict[str, CompatibleProvider]] = {
    p.id: p
    for p in (
        CompatibleProvider("openai", None, "OPENAI_API_KEY"),
        CompatibleProvider("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
        CompatibleProvider("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        CompatibleProvider("together", "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
        CompatibleProvider("mistral", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
        CompatibleProvider("xai", "https://api.x.ai/v1", "XAI_API_KEY"),
        CompatibleProvider(
            "ollama", "http://localhost:11434/v1", None, False, base_url_env="OLLAMA_BASE_URL"
        ),
    )
}
"""The OpenAI-compatible providers agentos names, by provider id."""


class OpenAIClients:
    """The SDK client settings of one model, and its client for each running event loop.

    Raises `ProviderError` (kind ``setup``) when the SDK is missing, when an unknown provider
    has no ``base_url``, or when a provider that needs a key has none.
    """

    def __init__(
        self,
        provider_id: str,
        model_id: str,
        api_key: str | None,
        base_url: str | None,
        client: openai.AsyncOpenAI | None,
        default_headers: dict[str, str] | None,
    ) -> None:
        try:
            import openai  # noqa: F401  (checked here so a missing SDK fails at setup)
        except ImportError as exc:
            raise ProviderError(
                f"The {provider_id} provider needs the openai SDK, which is not installed: "
                f"run {INSTALL_HINT}",
                provider_id=provider_id,
                model_id=model_id,
                kind="setup",
                details={"extra": "openai", "install": INSTALL_HINT},
            ) from exc
        self.given = client
        self.headers = dict(default_headers or {})
        known = OPENAI_COMPATIBLE_PROVIDERS.get(provider_id)
        url = base_url
        if url is None and known is not None:
            from_env = os.environ.get(known.base_url_env) if known.base_url_env else None
            url = from_env or known.base_url
        if provider_id == "ollama" and url and not url.rstrip("/").endswith("/v1"):
            url = url.rstrip("/") + "/v1"  # OLLAMA_BASE_URL names the server, not its API
        self.base_url = url
        self.official = provider_id == "openai" and (url is None or "api.openai.com" in url)
        """Whether calls go to OpenAI itself rather than to a compatible server."""
        self.api_key = NO_KEY
        if client is not None:
            return
        if known is None and base_url is None:
            raise ProviderError(
                f"{provider_id!r} is not an OpenAI-compatible provider agentos knows: pass "
                "its base_url",
                provider_id=provider_id,
                model_id=model_id,
                kind="setup",
                details={"option": "base_url"},
            )
        env_key = known.env_key if known is not None else None
        key = api_key or (os.environ.get(env_key) if env_key else None)
        if key:
            self.api_key = key
        elif known is not None and known.needs_key and base_url is None:
            raise ProviderError(
                f"The {provider_id} provider needs an API key: set {env_key} or pass api_key",
                provider_id=provider_id,
                model_id=model_id,
                kind="setup",
                details={"option": "api_key", "env": env_key},
            )

    async def get(self) -> openai.AsyncOpenAI:
        """The shared client for the running event loop, built on first use."""
        if self.given is not None:
            return self.given

        def build() -> openai.AsyncOpenAI:
            import openai

            return openai.AsyncOpenAI(
                api_key=self.api_key,
                base_url=self.base_url,
                max_retries=0,
                default_headers=self.headers or None,
            )

        return await _POOL.get(self._key, self, build)

    async def aclose(self) -> None:
        """Stop using the running loop's client; close it when no other model uses it.

        A client passed in stays open: its owner closes it.
        """
        if self.given is None:
            await _POOL.release(self._key, self)

    @property
    def _key(self) -> tuple[str, str | None, tuple[tuple[str, str], ...]]:
        return (self.api_key, self.base_url, tuple(sorted(self.headers.items())))


async def _close(client: openai.AsyncOpenAI) -> None:
    await client.close()


_POOL: ClientPool[openai.AsyncOpenAI] = ClientPool(_close)
