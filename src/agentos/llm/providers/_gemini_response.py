"""What the Gemini adapter receives: streamed responses and errors as agentos chunks.

Private to `agentos.llm.providers.gemini`, whose docstring states the contract. Importing this
module does not import the SDK: the functions that need it import it in their bodies, and the
adapter checked it is installed before calling them.
"""

from __future__ import annotations

import itertools
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentos.core.messages import ToolCall
from agentos.core.usage import ModelUsage
from agentos.llm.catalog import priced
from agentos.llm.errors import ProviderError, ProviderErrorKind
from agentos.llm.model import (
    FinishChunk,
    FinishReason,
    ModelChunk,
    ReplayChunk,
    TextDelta,
    ToolCallChunk,
    UsageChunk,
)
from agentos.llm.providers._gemini_request import PROVIDER, signature_block

if TYPE_CHECKING:
    from google.genai import types

__all__ = ["StreamState", "finish_reason", "model_usage", "provider_error"]

PROVIDER_ID = PROVIDER

_CONTENT_FILTER = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "PROHIBITED_CONTENT",
        "BLOCKLIST",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
    }
)
_ERROR_FINISH = frozenset(
    {
        "MALFORMED_FUNCTION_CALL",
        "UNEXPECTED_TOOL_CALL",
        "MISSING_THOUGHT_SIGNATURE",
        "MALFORMED_RESPONSE",
        "TOO_MANY_TOOL_CALLS",
        "LANGUAGE",
        "NO_IMAGE",
    }
)


_TIER_HEADER = "x-gemini-service-tier"


def _served_tier(response: types.GenerateContentResponse) -> str | None:
    """The tier the response says it was served at, from its ``x-gemini-service-tier`` header.

    Google reports the served tier (``standard`` when a ``priority`` request was downgraded)
    in that header; the SDK gives each streamed response the HTTP headers, and keeps no
    tier in the parsed body (its usage metadata has no such field).
    """
    http = response.sdk_http_response
    headers = http.headers if http is not None else None
    if not headers:
        return None
    for name, value in headers.items():
        if name.lower() == _TIER_HEADER and value:
            return value
    return None


def finish_reason(raw: str, called_tools: bool) -> FinishReason:
    """Gemini's ``finishReason`` in agentos terms (see the adapter's docstring)."""
    if raw == "STOP":
        return "tool_calls" if called_tools else "stop"
    if raw == "MAX_TOKENS":
        return "length"
    if raw in _CONTENT_FILTER:
        return "content_filter"
    if raw in _ERROR_FINISH:
        return "error"
    return "other"


def _transport_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """The exception types of a timeout and of a failed connection, for each HTTP backend.

    The SDK picks httpx2, httpx or aiohttp at run time, so the classes are read from the
    modules already imported rather than imported here.
    """
    timeouts: list[type[BaseException]] = [TimeoutError]
    network: list[type[BaseException]] = [OSError]
    for name in ("httpx2", "httpx"):
        module: Any = sys.modules.get(name)
        if module is not None:
            timeouts.append(module.TimeoutException)
            network.append(module.TransportError)
    aiohttp: Any = sys.modules.get("aiohttp")
    if aiohttp is not None:
        network.append(aiohttp.ClientError)
    return tuple(timeouts), tuple(network)


def _retry_after(delay: object) -> float | None:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)s", str(delay))
    return float(match.group(1)) if match else None


def provider_error(
    exc: BaseException, model_id: str, *, after_output: bool = False
) -> ProviderError:
    """``exc`` from the SDK or its HTTP library as a `ProviderError`, classified."""
    if isinstance(exc, ProviderError):
        return exc
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        code = exc.code if isinstance(exc.code, int) else None
        status = str(exc.status or "")
        details: dict[str, Any] = {"status": status, "error_type": status} if status else {}
        body = exc.details.get("error", {}) if isinstance(exc.details, dict) else {}
        for item in body.get("details", []) if isinstance(body, dict) else []:
            type_url = str(item.get("@type", "")) if isinstance(item, dict) else ""
            if type_url.endswith("google.rpc.ErrorInfo") and item.get("reason"):
                details["error_code"] = item["reason"]
            elif type_url.endswith("google.rpc.RetryInfo"):
                seconds = _retry_after(item.get("retryDelay"))
                if seconds is not None:
                    details["retry_after"] = seconds
        return ProviderError(
            f"Gemini answered HTTP {code} {status}: {exc.message or exc}",
            status_code=code,
            provider_id=PROVIDER_ID,
            model_id=model_id,
            after_output=after_output,
            kind="http",
            details=details,
        )
    timeouts, network = _transport_errors()
    kind: ProviderErrorKind
    if isinstance(exc, timeouts):
        kind, text = "timeout", "the Gemini call timed out"
    elif isinstance(exc, network):
        kind, text = "network", f"the connection to Gemini failed: {type(exc).__name__} {exc}"
    elif isinstance(exc, errors.UnknownApiResponseError | ValueError):
        kind, text = "stream", f"Gemini sent a response agentos cannot read: {exc}"
    else:
        kind, text = "other", f"the Gemini call failed: {type(exc).__name__}: {exc}"
    return ProviderError(
        text, provider_id=PROVIDER_ID, model_id=model_id, after_output=after_output, kind=kind
    )


def model_usage(meta: types.GenerateContentResponseUsageMetadata, model_id: str) -> ModelUsage:
    """Gemini's usage as a `ModelUsage`, priced from the catalog.

    ``prompt_tokens`` is ``promptTokenCount`` (cached tokens included, as the catalog counts
    them) plus any ``toolUsePromptTokenCount``; ``cache_read_tokens`` is
    ``cachedContentTokenCount``; thinking tokens are billed as output, so ``completion_tokens``
    is ``candidatesTokenCount + thoughtsTokenCount``.
    """
    prompt = (meta.prompt_token_count or 0) + (meta.tool_use_prompt_token_count or 0)
    completion = (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
    usage = ModelUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=meta.total_token_count or prompt + completion,
        cache_read_tokens=meta.cached_content_token_count or 0,
    )
    return priced(PROVIDER_ID, model_id, usage)


@dataclass
class StreamState:
    """What one step has streamed so far, and how its chunks are made."""

    model_id: str
    next_id: itertools.count[int]
    output: bool = False
    calls: int = 0
    finish: str | None = None
    usage: types.GenerateContentResponseUsageMetadata | None = None
    model_version: str | None = None
    response_id: str | None = None
    service_tier: str | None = None

    def read(self, response: types.GenerateContentResponse) -> list[ModelChunk]:
        """The chunks one ``GenerateContentResponse`` adds, in the order of its parts."""
        self.usage = response.usage_metadata or self.usage
        self.service_tier = _served_tier(response) or self.service_tier
        self.model_version = response.model_version or self.model_version
        self.response_id = response.response_id or self.response_id
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            reason = str(feedback.block_reason.value)
            why = f": {feedback.block_reason_message}" if feedback.block_reason_message else ""
            raise self.refusal(
                f"Gemini blocked the prompt ({reason}){why}", {"block_reason": reason}
            )
        if not response.candidates:
            return []
        candidate = response.candidates[0]
        chunks: list[ModelChunk] = []
        for part in (candidate.content.parts if candidate.content else None) or []:
            chunks.extend(self._part(part))
        if candidate.finish_reason is not None:
            self.finish = str(candidate.finish_reason.value)
        return chunks

    def _part(self, part: types.Part) -> list[ModelChunk]:
        signature = part.thought_signature
        if part.thought:
            # A thought summary is not the reply: only its signature (if any) is kept.
            if not signature:
                return []
            return [ReplayChunk(signature_block(signature, "thought", text=part.text or ""))]
        call = part.function_call
        if call is not None:
            if not call.name:
                raise ProviderError(
                    "Gemini sent a function call without a name",
                    provider_id=PROVIDER_ID,
                    model_id=self.model_id,
                    kind="stream",
                    after_output=self.output,
                )
            call_id = call.id or f"call_{next(self.next_id)}"
            self.output = True
            self.calls += 1
            chunks: list[ModelChunk] = [
                ToolCallChunk(ToolCall(call_id, call.name, dict(call.args or {})))
            ]
            if signature:
                block = signature_block(
                    signature, "function_call", tool_call_id=call_id, name=call.name
                )
                chunks.append(ReplayChunk(block))
            return chunks
        chunks = []
        if part.text:
            self.output = True
            chunks.append(TextDelta(part.text))
        if signature:
            chunks.append(ReplayChunk(signature_block(signature, "text")))
        return chunks

    def reported_usage(self) -> ModelUsage | None:
        """The latest usage Gemini reported on this stream, priced (``None`` before any)."""
        return model_usage(self.usage, self.model_id) if self.usage else None

    def failed(self, exc: BaseException) -> ProviderError:
        """``exc``, raised while streaming, as a `ProviderError` with the usage reported so far."""
        error = provider_error(exc, self.model_id, after_output=self.output)
        if error.usage is None:
            error.usage = self.reported_usage()
        return error

    def refusal(self, message: str, details: dict[str, Any]) -> ProviderError:
        """A content-policy refusal, carrying the usage Gemini billed for it."""
        return ProviderError(
            message,
            provider_id=PROVIDER_ID,
            model_id=self.model_id,
            kind="refusal",
            details=details,
            usage=self.reported_usage(),
            after_output=self.output,
        )

    def end(self, schema: bool) -> list[ModelChunk]:
        """The step's closing chunks: `FinishChunk`, then `UsageChunk` when usage came."""
        if self.finish is None:
            raise ProviderError(
                "the Gemini stream ended without a finishReason: the answer is incomplete",
                provider_id=PROVIDER_ID,
                model_id=self.model_id,
                kind="stream",
                after_output=self.output,
                usage=self.reported_usage(),
            )
        reason = finish_reason(self.finish, self.calls > 0)
        if reason == "content_filter" and not self.output:
            raise self.refusal(
                f"Gemini stopped the reply ({self.finish}) before any output",
                {"finish_reason": self.finish},
            )
        chunks: list[ModelChunk] = [
            FinishChunk(
                reason,
                response_model=self.model_version or self.model_id,
                provider_message_id=self.response_id,
                schema_route="response_schema" if schema else None,
                service_tier=self.service_tier,
            )
        ]
        if self.usage is not None:
            chunks.append(UsageChunk(model_usage(self.usage, self.model_id)))
        return chunks
