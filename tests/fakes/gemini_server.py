"""Builders for the Gemini API's wire format, played by `LoopbackServer`.

The google-genai SDK, given ``base_url`` and an API key, posts to
``{base_url}/{version}/models/{model}:streamGenerateContent?alt=sse`` (streamed chat) and
``{base_url}/{version}/models/{model}:batchEmbedContents`` (every embedding call of the Gemini
Developer API, one text or many), sending the key as the ``x-goog-api-key`` header. A streamed
answer is server-sent events whose ``data:`` is one ``GenerateContentResponse`` each:

    {"candidates": [{"content": {"role": "model", "parts": [...]}, "finishReason": "STOP"}],
     "usageMetadata": {...}, "modelVersion": "...", "responseId": "..."}

Parts carry ``text`` (``thought: true`` for a thought summary), ``functionCall`` (whole calls,
never streamed in pieces) and ``thoughtSignature`` (base64). Only the last event carries
``finishReason``; a signature for plain text may come alone on an empty text part in that event.
A blocked prompt is an event with ``promptFeedback.blockReason`` and no candidates. Errors are
``{"error": {"code": 429, "message": ..., "status": "RESOURCE_EXHAUSTED", "details": [...]}}``
with the HTTP status, or as an event of a stream that already started.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from fakes.loopback import RecordedRequest, Reply, sse

__all__ = [
    "MODEL_VERSION",
    "RESPONSE_ID",
    "SIGNATURE_BYTES",
    "SIGNATURE_B64",
    "batch_embed_reply",
    "blocked_prompt",
    "chunk",
    "error_body",
    "error_reply",
    "function_call_part",
    "is_embed_request",
    "is_stream_request",
    "stream_reply",
    "text_part",
    "usage",
]

MODEL_VERSION = "gemini-2.5-flash-001"
"""The ``modelVersion`` the builders report unless told otherwise."""

RESPONSE_ID = "resp-gemini-1"
"""The ``responseId`` the builders report unless told otherwise."""

# Bytes whose standard base64 has both '+' and '/', the characters the URL-safe alphabet swaps,
# so tests see what happens to a signature's encoding on its way back.
SIGNATURE_BYTES = bytes([0xFB, 0xEF, 0xBE, 0xFF, 0xE0, 0x10, 0x61, 0x62, 0x63])
SIGNATURE_B64 = base64.b64encode(SIGNATURE_BYTES).decode("ascii")


def text_part(text: str, *, thought: bool = False, signature: str | None = None) -> dict[str, Any]:
    """A text part; ``thought=True`` makes it a thought summary."""
    part: dict[str, Any] = {"text": text}
    if thought:
        part["thought"] = True
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def function_call_part(
    name: str,
    args: dict[str, Any] | None = None,
    *,
    call_id: str | None = None,
    signature: str | None = None,
) -> dict[str, Any]:
    """A whole function call, as Gemini sends it (``id`` only when the API gives one)."""
    call: dict[str, Any] = {"name": name, "args": args if args is not None else {}}
    if call_id is not None:
        call["id"] = call_id
    part: dict[str, Any] = {"functionCall": call}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def usage(
    prompt: int,
    candidates: int | None = None,
    *,
    cached: int | None = None,
    thoughts: int | None = None,
    total: int | None = None,
) -> dict[str, Any]:
    """A ``usageMetadata`` object; the total defaults to the sum, as the API reports it."""
    meta: dict[str, Any] = {"promptTokenCount": prompt}
    if candidates is not None:
        meta["candidatesTokenCount"] = candidates
    if cached is not None:
        meta["cachedContentTokenCount"] = cached
    if thoughts is not None:
        meta["thoughtsTokenCount"] = thoughts
    meta["totalTokenCount"] = (
        total if total is not None else prompt + (candidates or 0) + (thoughts or 0)
    )
    return meta


def chunk(
    *parts: dict[str, Any],
    finish: str | None = None,
    usage_metadata: dict[str, Any] | None = None,
    model_version: str | None = MODEL_VERSION,
    response_id: str | None = RESPONSE_ID,
) -> dict[str, Any]:
    """One ``GenerateContentResponse`` of a stream: a candidate with ``parts``."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if not parts:
        del candidate["content"]
    if finish is not None:
        candidate["finishReason"] = finish
    response: dict[str, Any] = {"candidates": [candidate]}
    if usage_metadata is not None:
        response["usageMetadata"] = usage_metadata
    if model_version is not None:
        response["modelVersion"] = model_version
    if response_id is not None:
        response["responseId"] = response_id
    return response


def blocked_prompt(
    reason: str = "SAFETY", usage_metadata: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The one event of a stream whose prompt was blocked: feedback, no candidates."""
    response: dict[str, Any] = {
        "promptFeedback": {
            "blockReason": reason,
            "safetyRatings": [
                {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}
            ],
        },
        "modelVersion": MODEL_VERSION,
        "responseId": RESPONSE_ID,
    }
    if usage_metadata is not None:
        response["usageMetadata"] = usage_metadata
    return response


def stream_reply(*events: dict[str, Any], **reply: Any) -> Reply:
    """A ``streamGenerateContent?alt=sse`` answer; ``reply`` goes to `Reply` (pace, resets)."""
    return Reply(events=[sse(event) for event in events], **reply)


def error_body(
    code: int, status: str, message: str, details: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    """A Google API error body (``google.rpc.Status`` as JSON)."""
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = list(details)
    return {"error": error}


def error_reply(
    code: int, status: str, message: str, details: Sequence[dict[str, Any]] = ()
) -> Reply:
    """An HTTP error status with its Google error body."""
    return Reply(status=code, json=error_body(code, status, message, details))


def batch_embed_reply(vectors: Sequence[Sequence[float]]) -> Reply:
    """A ``batchEmbedContents`` answer: one embedding per request, in order."""
    return Reply(json={"embeddings": [{"values": list(vector)} for vector in vectors]})


def is_stream_request(request: RecordedRequest, model: str) -> bool:
    """Whether ``request`` is a streamed ``generateContent`` call for ``model``."""
    return request.method == "POST" and request.path.endswith(
        f"/models/{model}:streamGenerateContent?alt=sse"
    )


def is_embed_request(request: RecordedRequest, model: str) -> bool:
    """Whether ``request`` is a ``batchEmbedContents`` call for ``model``."""
    return request.method == "POST" and request.path.endswith(f"/models/{model}:batchEmbedContents")
