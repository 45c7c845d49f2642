"""Where a Gemini model's SDK client comes from: a client given, or the loop's pooled one.

Private to `agentos.llm.providers.gemini`. Models on the same key and base URL share one
``google.genai.Client`` per event loop (`ClientPool`), closed once no model uses it; the SDK's
own retries are off, since the gateway decides whether and where a failed call is tried again.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

from agentos.core.errors import GMIErrorCode
from agentos.llm.errors import ProviderError
from agentos.llm.providers._client_pool import ClientPool
from agentos.llm.providers._gemini_request import PROVIDER

if TYPE_CHECKING:
    from google import genai

__all__ = ["ENV_KEY", "GeminiClients"]

ENV_KEY = "GEMINI_API_KEY"
"""The environment variable the Gemini key is read from when none is passed."""

_INSTALL_HINT = "pip install 'agentos[gemini]'"


class GeminiClients:
    """Where one model's SDK client comes from: a client given, or the loop's pooled one.

    Raises `ProviderError` (kind ``setup``) when the SDK is missing or no key is found.
    """

    def __init__(
        self, api_key: str | None, base_url: str | None, client: object | None, model_id: str
    ) -> None:
        try:
            from google import genai  # noqa: F401  (checked here so a missing SDK fails at setup)
        except ImportError as exc:
            raise ProviderError(
                f"The Gemini provider needs the google-genai SDK, which is not installed: "
                f"run {_INSTALL_HINT}",
                provider_id=PROVIDER,
                model_id=model_id,
                kind="setup",
                details={"extra": "gemini", "install": _INSTALL_HINT},
                code=GMIErrorCode.MISSING_DEPENDENCY,
            ) from exc
        self._given = cast("genai.Client | None", client)
        self._settings: tuple[str, str | None] = ("", base_url)
        if client is not None:
            return
        key = api_key or os.environ.get(ENV_KEY)
        if not key:
            raise ProviderError(
                f"The Gemini provider needs an API key: pass api_key or set {ENV_KEY}",
                provider_id=PROVIDER,
                model_id=model_id,
                kind="setup",
                details={"option": "api_key", "env": ENV_KEY},
                code=GMIErrorCode.CONFIGURATION_ERROR,
            )
        self._settings = (key, base_url)

    async def get(self) -> genai.Client:
        """The client given, else the running loop's pooled client for these settings."""
        if self._given is not None:
            return self._given
        return await _POOL.get(self._settings, self, self._build)

    async def release(self) -> None:
        """Stop using the pooled client (closed once no model uses it); a given one stays."""
        if self._given is None:
            await _POOL.release(self._settings, self)

    def _build(self) -> genai.Client:
        from google import genai
        from google.genai import types

        key, base_url = self._settings
        options = types.HttpOptions(
            base_url=base_url,
            # One attempt: the gateway decides whether and where a failed call is tried again.
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        # vertexai=False: GOOGLE_GENAI_USE_VERTEXAI in the environment must not reroute calls.
        return genai.Client(api_key=key, vertexai=False, http_options=options)


async def _close_client(client: genai.Client) -> None:
    await client.aio.aclose()


_POOL: ClientPool[genai.Client] = ClientPool(_close_client)
