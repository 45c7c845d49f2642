"""Errors a provider raises while serving a model call."""

from __future__ import annotations

from typing import Any, Literal

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.usage import ModelUsage

__all__ = ["ProviderError", "ProviderErrorKind"]

ProviderErrorKind = Literal["http", "timeout", "network", "stream", "refusal", "setup", "other"]
"""What went wrong, for fallback decisions (`is_retryable_error()`):

- ``http``: the provider answered with an error status (``status_code`` set);
- ``timeout``: the request timed out (``request_timeout`` or the SDK's own);
- ``network``: the connection could not be made or was reset;
- ``stream``: the stream broke its protocol (cut without a finish reason, malformed events);
- ``refusal``: a content-policy refusal, whatever its status;
- ``setup``: the provider could not initialise (missing credentials or SDK, bad model);
- ``other``: anything else.
"""


class ProviderError(GMIError):
    """A model call failed at its provider (code ``LLM_PROVIDER_ERROR``).

    ``status_code`` keeps the provider's HTTP status when there was one; ``usage`` is what the
    provider billed for the failed attempt, when it said; ``after_output`` tells whether the
    failure came after the step had streamed content; ``kind`` classifies the failure and
    ``details`` keeps the provider's own ``error_type`` / ``error_code`` when its body had them.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        provider_id: str | None = None,
        model_id: str | None = None,
        usage: ModelUsage | None = None,
        after_output: bool = False,
        kind: ProviderErrorKind | None = None,
        details: dict[str, Any] | None = None,
        code: GMIErrorCode | str = GMIErrorCode.LLM_PROVIDER_ERROR,
    ) -> None:
        merged = dict(details or {})
        for key, value in (
            ("status_code", status_code),
            ("provider_id", provider_id),
            ("model_id", model_id),
        ):
            if value is not None:
                merged[key] = value
        super().__init__(message, code, merged, component="llm", http_status=status_code)
        self.status_code = status_code
        self.provider_id = provider_id
        self.model_id = model_id
        self.usage = usage
        self.after_output = after_output
        self.kind: ProviderErrorKind = kind or ("http" if status_code is not None else "other")
