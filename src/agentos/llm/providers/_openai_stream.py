"""A Chat Completions stream turned into agentos chunks, and SDK failures into provider errors.

`StreamAssembler` reads the streamed chunks of one call (one choice) as the JSON the server sent:

- each text delta becomes a `TextDelta` as it arrives;
- tool-call fragments are joined by their ``index`` (parallel calls interleave) and become
  one `ToolCallChunk` per call, with parsed arguments, when the finish reason arrives: a call
  is complete only then, and holding it lets a call cut before its end fail before any output,
  so the gateway can still fall back; arguments that are not a JSON object are the model's
  mistake, kept as ``ToolCall.unparsed_arguments`` for the tool round to answer with an error;
- the finish reason is normalised (``function_call`` is ``tool_calls``; a reply that called tools
  but says ``stop``, as some compatible servers do, is ``tool_calls``; an unknown one is
  ``other``) and becomes the `FinishChunk`;
- the usage-only final chunk becomes a `UsageChunk`, priced from the catalog;
- the ``service_tier`` the chunks report (the tier OpenAI served the request at, which can
  differ from the one asked for) goes on the `FinishChunk`, the last one reported before it.

A stream that ends, is cut or reports an error before its finish reason raises a `ProviderError`
carrying the usage the stream reported and whether text had reached the caller
(``after_output``): a partial answer is never passed off as a whole one. Once the finish reason
has arrived the answer is whole, so a failure after it only loses the usage report.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from agentos.core.messages import ToolCall
from agentos.core.usage import ModelUsage
from agentos.llm.catalog import priced
from agentos.llm.errors import ProviderError, ProviderErrorKind
from agentos.llm.model import (
    FinishChunk,
    FinishReason,
    ModelChunk,
    SchemaRoute,
    TextDelta,
    ToolCallChunk,
    UsageChunk,
)

if TYPE_CHECKING:
    import openai

__all__ = ["StreamAssembler", "model_usage", "provider_error"]

_FINISH: Final[dict[str, FinishReason]] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}
_REFUSAL_CODE: Final = re.compile(r"content_policy|content_filter|safety_violation", re.I)


@dataclass
class _PendingCall:
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)


class StreamAssembler:
    """The state of one streamed call: feed it each SDK chunk, then call `end()`."""

    def __init__(self, *, provider_id: str, model_id: str, schema_route: SchemaRoute | None):
        self.provider_id = provider_id
        self.model_id = model_id
        self.schema_route = schema_route
        self.output = False
        """Whether text has reached the caller (a failure now comes after output)."""
        self.finished = False
        """Whether the finish reason has arrived: the answer is whole."""
        self.usage: ModelUsage | None = None
        self._calls: dict[int, _PendingCall] = {}
        self._refusal: list[str] = []
        self._message_id: str | None = None
        self._response_model: str | None = None
        self._service_tier: str | None = None

    def feed(self, chunk: Mapping[str, Any]) -> list[ModelChunk]:
        """The agentos chunks one streamed chunk yields (raises `ProviderError` on a broken stream).

        ``chunk`` is the event's JSON as the server sent it: reading plain dicts spares the
        SDK's per-chunk model building, the largest per-chunk cost of a stream.
        """
        if not isinstance(chunk, Mapping):
            raise self._broken(f"{self.provider_id} sent a stream event that is not an object")
        if chunk.get("object") == "error":
            # vLLM reports a failure mid-stream as {"object": "error", "message": ...}, which
            # the SDK does not recognise as an error event.
            message = chunk.get("message") or "the server reported an error"
            raise self._broken(f"{self.provider_id} reported an error in the stream: {message}")
        self._message_id = self._message_id or chunk.get("id") or None
        self._response_model = chunk.get("model") or self._response_model
        tier = chunk.get("service_tier")
        if isinstance(tier, str) and tier:
            self._service_tier = tier
        raw_usage = chunk.get("usage")
        if isinstance(raw_usage, Mapping):
            # Providers report running totals: the last report wins.
            self.usage = model_usage(
                raw_usage, provider_id=self.provider_id, model_id=self.model_id
            )
        out: list[ModelChunk] = []
        for choice in chunk.get("choices") or ():
            # One choice is asked for (a server may leave its index out); nothing after the
            # finish belongs to it.
            if self.finished or (choice.get("index") or 0) != 0:
                continue
            delta = choice.get("delta")
            if delta:
                content = delta.get("content")
                if content:
                    self.output = True
                    out.append(TextDelta(content))
                refusal = delta.get("refusal")
                if refusal:
                    self._refusal.append(refusal)
                for fragment in delta.get("tool_calls") or ():
                    self._add_fragment(fragment)
            reason = choice.get("finish_reason")
            if reason:
                out.extend(self._finish(str(reason)))
        return out

    def end(self) -> list[ModelChunk]:
        """The chunks left when the stream is over; raises when it ended before its answer."""
        if self._refusal:
            text = "".join(self._refusal)
            raise ProviderError(
                f"{self.provider_id} refused to answer: {text}",
                provider_id=self.provider_id,
                model_id=self.model_id,
                usage=self.usage,
                after_output=self.output,
                kind="refusal",
                details={"refusal": text},
            )
        if not self.finished:
            raise self._broken("the stream ended without a finish reason")
        return [UsageChunk(self.usage)] if self.usage is not None else []

    def failure(self, error: BaseException) -> ProviderError:
        """``error``, raised while streaming, as a `ProviderError` with this call's state."""
        return provider_error(
            error,
            provider_id=self.provider_id,
            model_id=self.model_id,
            after_output=self.output,
            usage=self.usage,
        )

    def _add_fragment(self, fragment: Mapping[str, Any]) -> None:
        index = fragment.get("index")
        function = fragment.get("function") or {}
        if not isinstance(index, int):
            # A server that leaves the index out: a fragment with an id or a name (which only
            # a call's first fragment carries) starts a new call, any other continues the last.
            starts = fragment.get("id") or function.get("name")
            index = len(self._calls) if starts or not self._calls else max(self._calls)
        pending = self._calls.setdefault(index, _PendingCall())
        pending.id = pending.id or fragment.get("id") or None
        pending.name = pending.name or function.get("name") or None
        arguments = function.get("arguments")
        if arguments:
            pending.arguments.append(arguments)

    def _finish(self, reason: str) -> list[ModelChunk]:
        if reason == "error":  # OpenRouter's finish for a failure it reports in the stream
            raise self._broken(f"{self.provider_id} ended the stream with an error")
        if self._refusal:
            self.finished = True
            return []  # `end()` raises the refusal, with the usage that follows
        normalised = _FINISH.get(reason, "other")
        calls: list[ModelChunk] = []
        for index in sorted(self._calls):
            call = self._tool_call(index, self._calls[index], cut=normalised == "length")
            if call is not None:
                calls.append(ToolCallChunk(call))
        self.finished = True
        if calls and normalised == "stop":
            normalised = "tool_calls"
        finish = FinishChunk(
            normalised,
            response_model=self._response_model,
            provider_message_id=self._message_id,
            schema_route=self.schema_route,
            service_tier=self._service_tier,
        )
        return [*calls, finish]

    def _tool_call(self, index: int, pending: _PendingCall, *, cut: bool) -> ToolCall | None:
        text = "".join(pending.arguments)
        arguments: object = None
        try:
            arguments = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError:
            if cut:
                return None  # the output limit cut the call: the step finishes as "length"
        if not pending.name:
            raise self._broken(f"tool call {index} has no name")
        # Some compatible servers send no call id; the next request must still pair the result.
        call_id = pending.id or f"call_{uuid.uuid4().hex[:24]}"
        if not isinstance(arguments, dict):
            # The model's mistake, not the stream's: the call gets an error result the model
            # sees (the orchestrator's invalid-arguments path) and its sibling calls still run.
            return ToolCall(call_id, pending.name, {}, unparsed_arguments=text)
        return ToolCall(call_id, pending.name, arguments)

    def _broken(self, message: str) -> ProviderError:
        return ProviderError(
            message,
            provider_id=self.provider_id,
            model_id=self.model_id,
            usage=self.usage,
            after_output=self.output,
            kind="stream",
        )


def model_usage(raw: Mapping[str, Any], *, provider_id: str, model_id: str) -> ModelUsage:
    """OpenAI's usage object (as JSON) as a `ModelUsage`, with its cost.

    ``prompt_tokens`` is OpenAI's figure, which counts the cached tokens too (also reported as
    ``cache_read_tokens``), as the catalog's prices expect. OpenRouter reports the call's cost
    itself, which wins over the catalog's list price.
    """
    prompt = _count(raw.get("prompt_tokens"))
    completion = _count(raw.get("completion_tokens"))
    details = raw.get("prompt_tokens_details") or {}
    usage = ModelUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=_count(raw.get("total_tokens")) or prompt + completion,
        cache_read_tokens=_count(details.get("cached_tokens", 0)),
        cache_write_tokens=_count(details.get("cache_write_tokens", 0)),
    )
    reported = raw.get("cost") if provider_id == "openrouter" else None
    if isinstance(reported, int | float) and math.isfinite(reported) and reported >= 0:
        return replace(usage, cost_usd=float(reported))
    return priced(provider_id, model_id, usage)


def _count(value: object) -> int:
    # Compatible servers sometimes send null or omit a figure.
    return value if isinstance(value, int) and value > 0 else 0


def provider_error(
    error: BaseException,
    *,
    provider_id: str,
    model_id: str,
    after_output: bool = False,
    usage: ModelUsage | None = None,
) -> ProviderError:
    """An SDK failure as a `ProviderError` whose ``kind`` says where the call failed.

    An HTTP error status is ``http`` with the status, its message prefixed ``[<status>]`` and the
    body's error ``type`` / ``code`` in ``details`` (``error_type`` / ``error_code``); a
    content-policy refusal (code or type ``content_policy_violation`` / ``content_filter``, or
    OpenRouter's moderation flag) is ``refusal`` whatever its status. A timeout is ``timeout``,
    a connection refused or reset ``network``, an error event inside the stream or a malformed
    event ``stream``, anything else ``other``.
    """
    import openai

    common: dict[str, Any] = {
        "provider_id": provider_id,
        "model_id": model_id,
        "after_output": after_output,
        "usage": usage,
    }
    if isinstance(error, openai.APIStatusError):
        return _status_error(error, provider_id, common)
    if isinstance(error, openai.APITimeoutError):
        return ProviderError(f"the request to {provider_id} timed out", kind="timeout", **common)
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__
        reason = f"{type(cause).__name__}: {cause}" if cause is not None else str(error)
        return ProviderError(
            f"the connection to {provider_id} failed ({reason})", kind="network", **common
        )
    if isinstance(error, openai.APIError):
        return _stream_error(error, provider_id, common)
    if isinstance(error, json.JSONDecodeError):
        return ProviderError(
            f"{provider_id} sent an event that is not JSON: {error}", kind="stream", **common
        )
    return ProviderError(f"{provider_id} failed: {type(error).__name__}: {error}", **common)


def _status_error(
    error: openai.APIStatusError, provider_id: str, common: dict[str, Any]
) -> ProviderError:
    """An HTTP error status: ``http``, or ``refusal`` when the body says content policy."""
    fields = _error_fields(error.body)
    details = fields.details()
    if error.request_id:
        details["request_id"] = error.request_id
    text = fields.message or f"{provider_id} answered HTTP {error.status_code}"
    return ProviderError(
        f"[{error.status_code}] {text}",
        status_code=error.status_code,
        kind="refusal" if fields.refusal else "http",
        details=details,
        **common,
    )


def _stream_error(
    error: openai.APIError, provider_id: str, common: dict[str, Any]
) -> ProviderError:
    """An error event inside a 200 stream (the SDK raises it with the event's error object)."""
    fields = _error_fields(error.body)
    text = fields.message or error.message
    kind: ProviderErrorKind = "refusal" if fields.refusal else "stream"
    # OpenRouter gives such an error an HTTP-like numeric code (502: the model is down).
    prefix = f"[{fields.status}] " if fields.status is not None else ""
    return ProviderError(
        f"{prefix}{provider_id} reported an error in the stream: {text}",
        status_code=fields.status,
        kind=kind,
        details=fields.details(),
        **common,
    )


@dataclass(frozen=True, slots=True)
class _ErrorFields:
    message: str | None = None
    type: str | None = None
    code: str | None = None
    status: int | None = None
    refusal: bool = False

    def details(self) -> dict[str, Any]:
        found = {"error_type": self.type, "error_code": self.code}
        return {key: value for key, value in found.items() if value is not None}


def _error_fields(body: object) -> _ErrorFields:
    """The message, type and code of an OpenAI-style error object (or a bare message)."""
    if isinstance(body, str):
        return _ErrorFields(message=body or None)
    if not isinstance(body, Mapping):
        return _ErrorFields()
    message = body.get("message")
    kind = body.get("type")
    code = body.get("code")
    status = code if isinstance(code, int) and 400 <= code <= 599 else None
    code_text = str(code) if code is not None else None
    kind_text = str(kind) if kind is not None else None
    metadata = body.get("metadata")
    flagged = isinstance(metadata, Mapping) and "flagged_input" in metadata
    refusal = flagged or any(
        _REFUSAL_CODE.search(marker) for marker in (code_text, kind_text) if marker
    )
    return _ErrorFields(
        message=message if isinstance(message, str) and message else None,
        type=kind_text,
        code=code_text,
        status=status,
        refusal=refusal,
    )
