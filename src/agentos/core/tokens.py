"""The spec's token estimate: characters / 4, rounded up (PromptEngine, budgets, memory, personas).

Exact counts come from the provider's usage report; this estimate sizes text before it is sent.
A message counts its text, its tool calls (name and JSON arguments) and its tool result's JSON
output. It is the one estimate of the project: every layer imports it from here.
"""

from __future__ import annotations

import json
import math

from agentos.core.messages import Message

__all__ = ["estimate_tokens", "estimate_tokens_for_chars", "message_text_for_estimate"]


def estimate_tokens(text: str) -> int:
    """Characters / 4, rounded up."""
    return estimate_tokens_for_chars(len(text))


def estimate_tokens_for_chars(chars: int) -> int:
    """`estimate_tokens` of a text of ``chars`` characters, for a count kept as text streams."""
    return math.ceil(chars / 4)


def message_text_for_estimate(message: Message) -> str:
    """What a message puts in front of the model: text, tool calls, a tool result's output."""
    if not message.tool_calls and message.tool_result is None:
        return message.text  # the common message: its text alone
    parts = [message.text]
    parts.extend(call.name + compact_json(call.arguments) for call in message.tool_calls)
    if message.tool_result is not None:
        parts.append(compact_json(message.tool_result.output))
    return "".join(parts)


def compact_json(value: object) -> str:
    """``value`` as the compact JSON the estimate counts (anything unknown as its ``str``)."""
    return _COMPACT.encode(value)


_COMPACT = json.JSONEncoder(separators=(",", ":"), default=str)
"""What ``json.dumps(value, separators=(",", ":"), default=str)`` builds on every call."""
