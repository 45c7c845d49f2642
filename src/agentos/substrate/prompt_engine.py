"""Builds the message list of one model call (spec: Sessions, the 35 % history budget).

`PromptEngine.build()` puts, in this order: the system prompts, sorted by priority (stable, so
prompts of equal priority keep the order given); the retrieved context as a system message; the
earlier history; the current turn's messages. It builds one provider-neutral list: the provider
adapters format it (the reference's templates duplicated the current user message: §5 trap 5).

The history gets 35 % of the serving model's context window (`catalog.context_window()`, 8,192
tokens when the catalog does not know the model), with tokens estimated as characters / 4
(`token_estimate`). The current turn's messages are counted first and always stay whole; earlier
messages are dropped, oldest first, until they fit in what the budget leaves and the whole
request fits the window. No summary takes their place. A tool round (an assistant message that
requested tools and the results answering it) is kept or dropped whole, so no tool result reaches
the model without the call it answers.

When even the request with no earlier message does not fit the window of a model the catalog
knows, `build()` raises `ContextWindowExceededError` before any request is sent. A model the
catalog does not know never raises: its window is a guess.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentos.core.errors import ContextWindowExceededError
from agentos.core.messages import Message
from agentos.core.tokens import compact_json, estimate_tokens, message_text_for_estimate
from agentos.llm import catalog
from agentos.llm.model import ToolDefinition
from agentos.substrate.history import normalize_history

__all__ = [
    "DISCOVERY_PRIORITY",
    "FORMAT_PREFERENCE_PRIORITY",
    "HISTORY_BUDGET_PERCENT",
    "PERSONALITY_SECTION_PRIORITY",
    "PERSONA_BASE_PRIORITY",
    "PROFILE_PRIORITY",
    "ROLLING_SUMMARY_PRIORITY",
    "SKILLS_PRIORITY",
    "STRUCTURED_REPLY_PRIORITY",
    "VERBOSITY_PREFERENCE_PRIORITY",
    "BuiltPrompt",
    "PromptEngine",
    "SystemPrompt",
    "history_budget",
    "message_tokens",
]

PERSONA_BASE_PRIORITY = 1
"""The persona's base system prompt."""
PERSONALITY_SECTION_PRIORITY = 2
"""The personality section, right after the base prompt."""
ROLLING_SUMMARY_PRIORITY = 50
"""The rolling conversation summary."""
DISCOVERY_PRIORITY = 55
"""Capability discovery."""
SKILLS_PRIORITY = 57
"""Skills."""
PROFILE_PRIORITY = 60
"""The user profile."""
STRUCTURED_REPLY_PRIORITY = 65
"""A structured reply's instruction (the full runtime's ``options.structured_reply``)."""
VERBOSITY_PREFERENCE_PRIORITY = 90
"""The user's verbosity preference."""
FORMAT_PREFERENCE_PRIORITY = 91
"""The user's preferred response format."""

HISTORY_BUDGET_PERCENT = 35
"""The history's share of the serving model's context window, in percent."""


@dataclass(frozen=True, slots=True)
class SystemPrompt:
    """One system prompt and its priority (lower comes first)."""

    content: str
    priority: int = 100
    source: str | None = None


@dataclass(frozen=True, slots=True)
class BuiltPrompt:
    """The messages of one model call and how they were sized."""

    messages: list[Message]
    context_window: int
    window_known: bool
    history_budget: int
    estimated_tokens: int
    kept_history: list[Message] = field(default_factory=list)
    dropped_history: list[Message] = field(default_factory=list)


def history_budget(context_window: int) -> int:
    """35 % of ``context_window``, rounded down (44,800 of 128,000; 2,867 of 8,192)."""
    return context_window * HISTORY_BUDGET_PERCENT // 100


def message_tokens(message: Message) -> int:
    """One message's estimated tokens: its characters / 4, rounded up."""
    return estimate_tokens(message_text_for_estimate(message))


def _tool_tokens(tools: Sequence[ToolDefinition]) -> int:
    chars = sum(len(tool.name) + len(tool.description) + _schema_chars(tool) for tool in tools)
    return math.ceil(chars / 4)


# A tool's schema is the same dict object turn after turn (`Tool.definition()` hands out the
# tool's own), so its JSON length is measured once per schema object; the entry holds the dict,
# so its id cannot be reused while the entry lives.
_SCHEMA_CHARS: dict[int, tuple[Mapping[str, Any], int]] = {}
_SCHEMA_CHARS_MAX = 512


def _schema_chars(tool: ToolDefinition) -> int:
    schema = tool.parameters
    held = _SCHEMA_CHARS.get(id(schema))
    if held is not None and held[0] is schema:
        return held[1]
    if len(_SCHEMA_CHARS) >= _SCHEMA_CHARS_MAX:
        _SCHEMA_CHARS.clear()
    chars = len(compact_json(schema))
    _SCHEMA_CHARS[id(schema)] = (schema, chars)
    return chars


def _split_current(
    history: Sequence[Message], current_turn: Sequence[Message]
) -> tuple[list[Message], list[Message]]:
    """Move into the current turn the tool round whose results the current turn answers."""
    answered = {m.tool_result.tool_call_id for m in current_turn if m.tool_result is not None}
    boundary = len(history)
    if answered:
        for index in range(len(history) - 1, -1, -1):
            if any(call.id in answered for call in history[index].tool_calls):
                boundary = index
    return list(history[:boundary]), [*history[boundary:], *current_turn]


def _units(messages: Sequence[Message]) -> list[list[Message]]:
    """Group messages into what is dropped together: a tool round, or one message.

    A tool result that answers no call of the message group before it is left out: sent
    alone, it would reach the model without the call it answers.
    """
    units: list[list[Message]] = []
    open_calls: set[str] = set()
    for message in messages:
        if message.tool_result is not None:
            if message.tool_result.tool_call_id in open_calls:
                units[-1].append(message)
            continue
        units.append([message])
        open_calls = {call.id for call in message.tool_calls}
    return units


def _head(system_prompts: Sequence[SystemPrompt], retrieved_context: str | None) -> list[Message]:
    """The system prompts by priority, then the retrieved context (empty ones left out)."""
    head: list[Message] = [
        Message.system(prompt.content)
        for prompt in sorted(system_prompts, key=lambda p: p.priority)
        if prompt.content.strip()
    ]
    if retrieved_context is not None and retrieved_context.strip():
        head.append(Message.system(retrieved_context))
    return head


def _latest_within(earlier: list[Message], allowance: int) -> tuple[list[Message], int]:
    """The latest whole units of ``earlier`` within ``allowance`` tokens, and their tokens."""
    kept_units: list[list[Message]] = []
    used = 0
    for unit in reversed(_units(earlier)):
        tokens = sum(message_tokens(m) for m in unit)
        if used + tokens > allowance:
            break
        kept_units.append(unit)
        used += tokens
    return [m for unit in reversed(kept_units) for m in unit], used


class PromptEngine:
    """Assembles the messages of a model call within the model's context window."""

    def build(
        self,
        *,
        provider: str,
        model: str,
        system_prompts: Sequence[SystemPrompt] = (),
        retrieved_context: str | None = None,
        history: Sequence[Message] = (),
        current_turn: Sequence[Message] = (),
        tools: Sequence[ToolDefinition] = (),
    ) -> BuiltPrompt:
        """The message list for ``provider``/``model``.

        ``history`` is the conversation before the turn; ``current_turn`` the messages of the
        turn being answered (its user message, and its earlier steps' replies and tool results),
        which always stay whole. Raises `ContextWindowExceededError` when the request cannot fit
        even with no earlier message and the catalog knows the model's window.
        """
        info = catalog.model_info(provider, model)  # one lookup: the window is the entry's
        window_known = info is not None
        window = info.context_window if info is not None else catalog.DEFAULT_CONTEXT_WINDOW
        budget = history_budget(window)

        head = _head(system_prompts, retrieved_context)
        earlier, current = _split_current(
            normalize_history(history), normalize_history(current_turn)
        )
        fixed_tokens = sum(message_tokens(m) for m in head) + _tool_tokens(tools)
        current_tokens = sum(message_tokens(m) for m in current)
        required = fixed_tokens + current_tokens
        if window_known and required > window:
            raise ContextWindowExceededError(
                f"the request needs about {required} tokens with no earlier message, more than "
                f"the {window}-token context window of {provider}:{model}",
                {
                    "provider": provider,
                    "model": model,
                    "context_window": window,
                    "required_tokens": required,
                },
            )

        allowance = min(budget - current_tokens, window - required)
        kept, used = _latest_within(earlier, allowance)
        kept_ids = {id(m) for m in kept}
        dropped = [m for m in earlier if id(m) not in kept_ids]

        messages = [*head, *kept, *current]
        return BuiltPrompt(
            messages=messages,
            context_window=window,
            window_known=window_known,
            history_budget=budget,
            estimated_tokens=required + used,
            kept_history=kept,
            dropped_history=dropped,
        )
