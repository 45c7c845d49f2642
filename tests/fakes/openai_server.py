"""OpenAI's wire format for the loopback server: Chat Completions SSE chunks, errors, embeddings.

Shapes follow OpenAI's API reference ("The chat completion chunk object", "Error codes",
"The embedding object"): every chunk of a stream shares its ``id``, ``created`` and ``model``;
the first delta carries the role, text arrives as ``content`` deltas, a tool call as a first
fragment with its ``id``, ``type`` and ``name`` and then ``arguments`` fragments under the same
``index``; the finish reason comes on a chunk with an empty delta; with
``stream_options.include_usage`` a last chunk has ``choices: []`` and the usage; ``[DONE]`` ends
the stream. An error body is ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fakes.loopback import LoopbackServer, Reply, sse

__all__ = [
    "DONE",
    "CallSpec",
    "ChunkMaker",
    "OpenAIServer",
    "content_policy_400",
    "embeddings_reply",
    "error_body",
    "error_reply",
    "invalid_key_401",
    "overloaded_529",
    "quota_429",
    "rate_limit_429",
    "server_error_500",
    "stream_error_event",
    "stream_reply",
    "usage_body",
]

DONE = "data: [DONE]\n\n"
"""The event that ends every Chat Completions stream."""


def usage_body(prompt: int, completion: int, *, cached: int = 0) -> dict[str, Any]:
    """A ``usage`` object as OpenAI reports it (cached tokens are part of ``prompt_tokens``)."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


@dataclass(frozen=True)
class CallSpec:
    """A streamed tool call: its id, its name and its arguments split into fragments."""

    id: str
    name: str
    fragments: Sequence[str]


class ChunkMaker:
    """Builds the SSE events of one streamed completion (one id, one model).

    ``service_tier``, when given, goes on every chunk, as OpenAI reports the tier it served
    the request at.
    """

    def __init__(
        self,
        *,
        id: str = "chatcmpl-9xYzAbC",
        model: str = "gpt-4o-mini-2024-07-18",
        service_tier: str | None = None,
    ) -> None:
        self.id = id
        self.model = model
        self.service_tier = service_tier

    def chunk(
        self,
        delta: dict[str, Any] | None = None,
        *,
        finish_reason: str | None = None,
        choices: list[dict[str, Any]] | None = None,
        usage: dict[str, Any] | None = None,
        **extra: Any,
    ) -> str:
        """One ``chat.completion.chunk`` event."""
        body: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": 1_726_000_000,
            "model": self.model,
            "system_fingerprint": "fp_44709d6fcb",
            "choices": choices
            if choices is not None
            else [
                {
                    "index": 0,
                    "delta": delta or {},
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": usage,
        }
        if self.service_tier is not None:
            body["service_tier"] = self.service_tier
        body.update(extra)
        return sse(body)

    def role(self) -> str:
        """The first chunk: the assistant role and empty content."""
        return self.chunk({"role": "assistant", "content": "", "refusal": None})

    def text(self, piece: str) -> str:
        """A text delta."""
        return self.chunk({"content": piece})

    def tool_start(self, index: int, call: CallSpec) -> str:
        """The first fragment of a tool call: id, type, name and empty arguments."""
        fragment = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        return self.chunk({"tool_calls": [fragment]})

    def tool_args(self, index: int, arguments: str) -> str:
        """A fragment of a tool call's arguments."""
        return self.chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]})

    def finish(self, reason: str = "stop") -> str:
        """The chunk with the finish reason and an empty delta."""
        return self.chunk({}, finish_reason=reason)

    def usage(self, prompt: int = 12, completion: int = 5, *, cached: int = 0) -> str:
        """The usage-only final chunk (``choices: []``)."""
        return self.chunk(choices=[], usage=usage_body(prompt, completion, cached=cached))

    def text_events(
        self,
        pieces: Sequence[str],
        *,
        finish: str = "stop",
        usage: tuple[int, int] | None = (12, 5),
    ) -> list[str]:
        """A whole text answer: role, the pieces, the finish, the usage and ``[DONE]``."""
        events = [self.role(), *(self.text(piece) for piece in pieces), self.finish(finish)]
        if usage is not None:
            events.append(self.usage(*usage))
        return [*events, DONE]

    def tool_events(
        self,
        calls: Sequence[CallSpec],
        *,
        interleave: bool = False,
        text: Sequence[str] = (),
        usage: tuple[int, int] | None = (40, 18),
    ) -> list[str]:
        """Tool calls (optionally after text), their fragments in order or interleaved by index."""
        events = [self.role(), *(self.text(piece) for piece in text)]
        events += [self.tool_start(i, call) for i, call in enumerate(calls)] if interleave else []
        if interleave:
            longest = max(len(call.fragments) for call in calls)
            for step in range(longest):
                for i, call in enumerate(calls):
                    if step < len(call.fragments):
                        events.append(self.tool_args(i, call.fragments[step]))
        else:
            for i, call in enumerate(calls):
                events.append(self.tool_start(i, call))
                events += [self.tool_args(i, fragment) for fragment in call.fragments]
        events.append(self.finish("tool_calls"))
        if usage is not None:
            events.append(self.usage(*usage))
        return [*events, DONE]


def stream_reply(events: Sequence[str], **options: Any) -> Reply:
    """A 200 SSE reply (``pace``, ``reset_after``, ``hold_after`` pass through)."""
    headers = {"x-request-id": "req_7f3a", "openai-processing-ms": "112"}
    return Reply(events=list(events), headers=headers, **options)


def error_body(
    message: str, type: str | None, code: str | int | None, param: str | None = None
) -> dict[str, Any]:
    """An OpenAI error body."""
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def error_reply(status: int, body: dict[str, Any]) -> Reply:
    """An error status with its JSON body, as OpenAI answers a request it will not serve."""
    return Reply(status=status, json=body, headers={"x-request-id": "req_err_1"})


def rate_limit_429() -> Reply:
    """HTTP 429: requests per minute exceeded."""
    return error_reply(
        429,
        error_body(
            "Rate limit reached for gpt-4o-mini in organization org-abc on requests per min "
            "(RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.",
            "requests",
            "rate_limit_exceeded",
        ),
    )


def quota_429() -> Reply:
    """HTTP 429: the account's quota is spent."""
    return error_reply(
        429,
        error_body(
            "You exceeded your current quota, please check your plan and billing details.",
            "insufficient_quota",
            "insufficient_quota",
        ),
    )


def server_error_500() -> Reply:
    """HTTP 500: OpenAI's generic server error."""
    return error_reply(
        500,
        error_body(
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
            None,
        ),
    )


def overloaded_529() -> Reply:
    """HTTP 529: an overloaded upstream, as some OpenAI-compatible gateways relay it."""
    return error_reply(529, error_body("The engine is currently overloaded.", "overloaded", None))


def content_policy_400() -> Reply:
    """HTTP 400: the request was rejected by the safety system."""
    return error_reply(
        400,
        error_body(
            "Your request was rejected as a result of our safety system. Your prompt may "
            "contain text that is not allowed by our safety system.",
            "invalid_request_error",
            "content_policy_violation",
        ),
    )


def invalid_key_401() -> Reply:
    """HTTP 401: a wrong API key."""
    return error_reply(
        401,
        error_body(
            "Incorrect API key provided: sk-test. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            "invalid_api_key",
        ),
    )


def stream_error_event(message: str, type: str | None, code: str | int | None) -> str:
    """An error inside a 200 stream: a data event whose object is ``{"error": {...}}``."""
    return sse({"error": {"message": message, "type": type, "param": None, "code": code}})


def embeddings_reply(
    vectors: Sequence[Sequence[float]], *, model: str = "text-embedding-3-small", order: str = "in"
) -> Reply:
    """An embeddings list; ``order="reversed"`` lists the rows last first (``index`` decides)."""
    rows = [
        {"object": "embedding", "index": i, "embedding": list(vector)}
        for i, vector in enumerate(vectors)
    ]
    if order == "reversed":
        rows.reverse()
    tokens = 3 * len(rows)
    return Reply(
        json={
            "object": "list",
            "data": rows,
            "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
    )


class OpenAIServer(LoopbackServer):
    """A `LoopbackServer` that shuts down at once.

    ``serve_forever()`` checks for shutdown every half second by default, which made each test
    that starts a server half a second slower; this one checks every 10 ms.
    """

    def __init__(self, replies: Sequence[Reply]) -> None:
        super().__init__(replies)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
