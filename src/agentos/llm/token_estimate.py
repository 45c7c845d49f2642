"""The token estimate of a whole request (`agentos.core.tokens` counts text and messages).

A request counts its messages and the tools it offers, each at characters / 4, rounded up.
"""

from __future__ import annotations

from agentos.core.tokens import compact_json, estimate_tokens_for_chars, message_text_for_estimate
from agentos.llm.model import ModelRequest

__all__ = ["estimate_prompt_tokens"]


def estimate_prompt_tokens(request: ModelRequest) -> int:
    """The estimated size of everything ``request`` sends: its messages and tool definitions."""
    chars = sum(len(message_text_for_estimate(message)) for message in request.messages)
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description) + len(compact_json(tool.parameters))
    return estimate_tokens_for_chars(chars)
