"""The spec's token estimate: characters / 4, rounded up (PromptEngine, budgets, test doubles).

Exact counts come from the provider's usage report; this estimate sizes a request before it is
sent. A message counts its text, its tool calls (name and JSON arguments) and its tool result's
JSON output; a request also counts the tools it offers.
"""

from __future__ import annotations

import json
import math

from agentos.core.messages import Message
from agentos.llm.model import ModelRequest

__all__ = [
    "estimate_prompt_tokens",
    "estimate_tokens",
    "estimate_tokens_for_chars",
    "message_text_for_estimate",
]


def estimate_tokens(text: str) -> int:
    """Characters / 4, rounded up."""
    return estimate_tokens_for_chars(len(text))


def estimate_tokens_for_chars(chars: int) -> int:
    """`estimate_tokens` of a text of ``chars`` characters, for a count kept as text streams."""
    return math.ceil(chars / 4)


def message_text_for_estimate(message: Message) -> str:
    """What a message puts in front of the model: text, tool calls, a tool result's output."""
    parts = [message.text]
    parts.extend(call.name + _json(call.arguments) for call in message.tool_calls)
    if message.tool_result is not None:
        parts.append(_json(message.tool_result.output))
    return "".join(parts)


def estimate_prompt_tokens(request: ModelRequest) -> int:
    """The estimated size of everything ``request`` sends: its messages and tool definitions."""
    chars = sum(len(message_text_for_estimate(message)) for message in request.messages)
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description) + len(_json(tool.parameters))
    return math.ceil(chars / 4)


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)
