"""Builders for Anthropic Messages API replies, for the loopback server (`fakes.loopback`).

Each builder returns one server-sent event (a string for `Reply.events`) exactly as the Messages
API streams it: ``message_start``, ``content_block_start`` / ``content_block_delta``
(``text_delta``, ``input_json_delta``, ``thinking_delta``, ``signature_delta``) /
``content_block_stop``, ``message_delta`` (stop reason and cumulative usage), ``message_stop``,
``ping`` and ``error``. ``message_start`` carries the response's cache ``diagnostics`` when a
test gives them (``null_diagnostics=True`` sends an explicit ``null``).
`error_reply` builds an HTTP error with the API's body, ``{"type": "error", "error": {...}}``;
`overloaded` is the 529 ``overloaded_error``. The ``*_stream`` helpers build whole streams.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fakes.loopback import Reply, sse

__all__ = [
    "block_stop",
    "error_body",
    "error_event",
    "error_reply",
    "input_json_delta",
    "message_delta",
    "message_start",
    "message_stop",
    "overloaded",
    "ping",
    "redacted_thinking_start",
    "signature_delta",
    "text_delta",
    "text_start",
    "text_stream",
    "thinking_delta",
    "thinking_start",
    "tool_use_start",
    "tool_use_stream",
]


def message_start(
    *,
    message_id: str = "msg_01TestMessage",
    model: str = "claude-sonnet-5",
    input_tokens: int = 25,
    output_tokens: int = 1,
    cache_read_input_tokens: int | None = None,
    cache_creation_input_tokens: int | None = None,
    diagnostics: dict[str, Any] | None = None,
    null_diagnostics: bool = False,
    service_tier: str | None = None,
) -> str:
    """The stream's first event: the message shell with its id, model and input usage.

    ``diagnostics`` is the response's cache-diagnostics object (left out when ``None``, or sent
    as ``null`` with ``null_diagnostics``). ``service_tier`` is the tier the usage reports the
    request was served at (``standard``, ``priority`` or ``batch``; left out when ``None``).
    """
    usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if service_tier is not None:
        usage["service_tier"] = service_tier
    if cache_read_input_tokens is not None:
        usage["cache_read_input_tokens"] = cache_read_input_tokens
    if cache_creation_input_tokens is not None:
        usage["cache_creation_input_tokens"] = cache_creation_input_tokens
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    if diagnostics is not None or null_diagnostics:
        message["diagnostics"] = diagnostics
    return sse({"type": "message_start", "message": message}, "message_start")


def _block_start(index: int, block: dict[str, Any]) -> str:
    return sse(
        {"type": "content_block_start", "index": index, "content_block": block},
        "content_block_start",
    )


def _delta(index: int, delta: dict[str, Any]) -> str:
    return sse(
        {"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"
    )


def text_start(index: int = 0) -> str:
    """A text block begins (empty, as the API sends it)."""
    return _block_start(index, {"type": "text", "text": ""})


def text_delta(text: str, index: int = 0) -> str:
    """A piece of a text block."""
    return _delta(index, {"type": "text_delta", "text": text})


def tool_use_start(tool_id: str, name: str, index: int = 0) -> str:
    """A ``tool_use`` block begins; its input follows as `input_json_delta` fragments."""
    return _block_start(index, {"type": "tool_use", "id": tool_id, "name": name, "input": {}})


def input_json_delta(partial_json: str, index: int = 0) -> str:
    """A fragment of a tool call's input JSON."""
    return _delta(index, {"type": "input_json_delta", "partial_json": partial_json})


def thinking_start(index: int = 0) -> str:
    """A ``thinking`` block begins."""
    return _block_start(index, {"type": "thinking", "thinking": "", "signature": ""})


def thinking_delta(thinking: str, index: int = 0) -> str:
    """A piece of a thinking block's text."""
    return _delta(index, {"type": "thinking_delta", "thinking": thinking})


def signature_delta(signature: str, index: int = 0) -> str:
    """A thinking block's signature, sent just before the block stops."""
    return _delta(index, {"type": "signature_delta", "signature": signature})


def redacted_thinking_start(data: str, index: int = 0) -> str:
    """A ``redacted_thinking`` block, whole in its start event."""
    return _block_start(index, {"type": "redacted_thinking", "data": data})


def block_stop(index: int = 0) -> str:
    """A content block ends."""
    return sse({"type": "content_block_stop", "index": index}, "content_block_stop")


def message_delta(
    stop_reason: str | None = "end_turn",
    *,
    output_tokens: int = 12,
    stop_sequence: str | None = None,
    stop_details: dict[str, Any] | None = None,
    input_tokens: int | None = None,
) -> str:
    """The top-level change at the end: the stop reason and cumulative output usage."""
    delta: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": stop_sequence}
    if stop_details is not None:
        delta["stop_details"] = stop_details
    usage: dict[str, Any] = {"output_tokens": output_tokens}
    if input_tokens is not None:
        usage["input_tokens"] = input_tokens
    return sse({"type": "message_delta", "delta": delta, "usage": usage}, "message_delta")


def message_stop() -> str:
    """The stream's last event."""
    return sse({"type": "message_stop"}, "message_stop")


def ping() -> str:
    """A keep-alive the API may send anywhere in a stream."""
    return sse({"type": "ping"}, "ping")


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """The API's error body."""
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": "req_011TestRequest",
    }


def error_event(error_type: str = "overloaded_error", message: str = "Overloaded") -> str:
    """An ``error`` event inside a stream that began with 200."""
    return sse(error_body(error_type, message), "error")


def error_reply(status: int, error_type: str, message: str) -> Reply:
    """An HTTP error answer with the API's body and its ``request-id`` header."""
    return Reply(
        status=status,
        json=error_body(error_type, message),
        headers={"request-id": "req_011TestRequest"},
    )


def overloaded() -> Reply:
    """The API's 529 ``overloaded_error``."""
    return error_reply(529, "overloaded_error", "Overloaded")


def text_stream(
    pieces: Sequence[str],
    *,
    stop_reason: str = "end_turn",
    model: str = "claude-sonnet-5",
    input_tokens: int = 25,
    output_tokens: int = 12,
    message_id: str = "msg_01TestMessage",
    diagnostics: dict[str, Any] | None = None,
    service_tier: str | None = None,
) -> list[str]:
    """A whole stream answering with one text block made of ``pieces``."""
    return [
        message_start(
            message_id=message_id,
            model=model,
            input_tokens=input_tokens,
            diagnostics=diagnostics,
            service_tier=service_tier,
        ),
        text_start(),
        *(text_delta(piece) for piece in pieces),
        block_stop(),
        message_delta(stop_reason, output_tokens=output_tokens),
        message_stop(),
    ]


def tool_use_stream(
    calls: Sequence[tuple[str, str, dict[str, Any]]],
    *,
    text: str | None = None,
    fragment: int = 7,
    output_tokens: int = 40,
    message_id: str = "msg_01TestMessage",
    diagnostics: dict[str, Any] | None = None,
) -> list[str]:
    """A whole stream calling tools ``(id, name, input)`` in parallel, each its own block.

    The optional ``text`` comes first, as Claude often writes a line before calling; each
    input's JSON is split into ``fragment``-character ``input_json_delta`` pieces.
    """
    events = [message_start(message_id=message_id, diagnostics=diagnostics)]
    index = 0
    if text is not None:
        events += [text_start(index), text_delta(text, index), block_stop(index)]
        index += 1
    for tool_id, name, arguments in calls:
        raw = json.dumps(arguments, ensure_ascii=False)
        events.append(tool_use_start(tool_id, name, index))
        events += [
            input_json_delta(raw[at : at + fragment], index) for at in range(0, len(raw), fragment)
        ]
        events.append(block_stop(index))
        index += 1
    events += [message_delta("tool_use", output_tokens=output_tokens), message_stop()]
    return events
