"""Scripted members and request readers the agency tests share."""

from __future__ import annotations

from collections.abc import Sequence

from agentos.core.messages import Message
from agentos.core.usage import ModelUsage
from agentos.testing import ScriptedModel, ScriptStep

__all__ = ["conversation", "model", "user_inputs"]


def model(*texts: str, tokens: tuple[int, int] = (10, 5)) -> ScriptedModel:
    """A scripted member model answering ``texts`` in order, each with the same usage."""
    return ScriptedModel([ScriptStep(text, usage=ModelUsage(*tokens)) for text in texts])


def user_inputs(scripted: ScriptedModel) -> list[str]:
    """The last user message of each request ``scripted`` received."""
    out = []
    for request in scripted.requests:
        users = [m for m in request.messages if m.role.value == "user"]
        out.append(users[-1].text)
    return out


def conversation(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """``(role, text)`` of each message but the system prompt."""
    return [(m.role.value, m.text) for m in messages if m.role.value != "system"]
