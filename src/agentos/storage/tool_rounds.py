"""Whole tool rounds in a history: the check a reseed runs and the view a request carries.

A tool round is an assistant message with tool calls followed by one tool message per call.
Providers refuse a request with a call left unanswered or a result without its call, so a history
given from outside is checked (`validate_tool_pairing`) and a request leaves out any round that
partial messages broke (`sendable_messages`; spec "Sessions").
"""

from __future__ import annotations

from collections.abc import Sequence

from agentos.core.messages import Message, Role

from .unfinished_turns import is_partial

__all__ = ["sendable_messages", "validate_tool_pairing"]


def validate_tool_pairing(messages: Sequence[Message]) -> None:
    """Check that every tool round in ``messages`` is whole, or raise `ValueError`.

    Each tool message must answer a call of the assistant message before it (only tool messages
    between them), and each call must be answered before the next non-tool message or the end.
    The error names the call id at fault.
    """
    pending: dict[str, None] = {}
    for message in messages:
        if message.tool_result is not None:
            call_id = message.tool_result.tool_call_id
            if call_id not in pending:
                raise ValueError(
                    f"tool result for call {call_id!r} answers no call of the assistant "
                    "message before it"
                )
            del pending[call_id]
            continue
        if pending:
            break
        if message.role is Role.ASSISTANT:
            pending = dict.fromkeys(call.id for call in message.tool_calls)
    if pending:
        call_id = next(iter(pending))
        raise ValueError(f"tool call {call_id!r} is left without a result")


def sendable_messages(messages: Sequence[Message]) -> list[Message]:
    """What a request may carry of ``messages``: no partial message, and only whole rounds.

    When leaving out a partial message would break a tool round (the partial message was one of
    its results, say), the whole round is left out too, so every call in the result has its
    result and a provider accepts the request.
    """
    kept = [message for message in messages if not is_partial(message)]
    result: list[Message] = []
    index = 0
    while index < len(kept):
        message = kept[index]
        index += 1
        if message.role is Role.TOOL:
            continue  # a result whose call was left out
        if not message.tool_calls:
            result.append(message)
            continue
        end = index
        while end < len(kept) and kept[end].role is Role.TOOL:
            end += 1
        if _round_whole(message, kept[index:end]):
            result.extend(kept[index - 1 : end])
        index = end
    return result


def _round_whole(assistant: Message, results: list[Message]) -> bool:
    """Whether an assistant message's calls and the tool messages after it pair up exactly."""
    calls = {call.id for call in assistant.tool_calls}
    answered = [m.tool_result.tool_call_id for m in results if m.tool_result is not None]
    return len(answered) == len(set(answered)) and set(answered) == calls
