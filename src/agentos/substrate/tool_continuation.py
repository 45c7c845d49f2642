"""A paused tool round continued with a host's results (spec: External tools; reference §1.1).

`pending_tool_calls()` finds the calls of the history's last tool round that no result answers;
`continuation_input()` checks the host's results against them and builds the turn input that
continues the round (each pending call the host left out answered ``EXTERNAL_TOOL_NOT_RUN``);
`outcome_result()` reads one call's outcome as the reference's ``ToolResultPayload`` words it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role, ToolCall, ToolResult
from agentos.substrate.turn_input import GMIInteractionType, GMITurnInput
from agentos.substrate.turn_options import NO_TURN_OPTIONS, TurnOptions
from agentos.tools.orchestrator import tool_error_result

__all__ = ["ExternalToolOutcome", "continuation_input", "outcome_result", "pending_tool_calls"]


class ExternalToolOutcome(TypedDict, total=False):
    """What a host reports for one call it ran (reference: ToolResultPayload).

    ``{"type": "success", "result": <any JSON>}`` or
    ``{"type": "error", "error": {"code": ..., "message": ..., "details": ...}}``.
    """

    type: Literal["success", "error"]
    result: Any
    error: dict[str, Any]


def pending_tool_calls(messages: Sequence[Message]) -> list[ToolCall]:
    """The calls of the last tool round in ``messages`` that no tool result answers yet.

    The round is the last assistant message that requested tools, when nothing but its own
    tool results follows it; otherwise no call is pending.
    """
    answered: set[str] = set()
    for message in reversed(messages):
        if message.role is Role.TOOL and message.tool_result is not None:
            answered.add(message.tool_result.tool_call_id)
            continue
        if message.role is Role.ASSISTANT:
            return [call for call in message.tool_calls if call.id not in answered]
        return []
    return []


def continuation_input(
    pending: Sequence[ToolCall],
    results: Sequence[ToolResult],
    user_id: str,
    options: TurnOptions | None = None,
) -> GMITurnInput:
    """The turn input that continues the round with ``results`` (``VALIDATION_ERROR`` if wrong).

    ``results`` (the GMI refuses an empty list first) must answer only ``pending`` calls, each
    at most once. ``options`` are the continuation's typed options (its ``learning_namespace``:
    the namespace its host runs it under; ``None``: the turn's it continues).
    """
    pending_ids = {call.id for call in pending}
    given = [result.tool_call_id for result in results]
    unknown = [call_id for call_id in given if call_id not in pending_ids]
    if unknown:
        raise GMIError(
            f"no pending tool call has the id {', '.join(map(repr, unknown))}; pending: "
            f"{', '.join(map(repr, sorted(pending_ids))) or 'none'}",
            GMIErrorCode.VALIDATION_ERROR,
            {"unknown_tool_call_ids": unknown},
        )
    if len(set(given)) != len(given):
        raise GMIError(
            "a tool call was answered twice", GMIErrorCode.VALIDATION_ERROR, {"ids": given}
        )
    left_out = [
        tool_error_result(
            call,
            GMIErrorCode.EXTERNAL_TOOL_NOT_RUN,
            f"The host did not run tool '{call.name}'.",
        )
        for call in pending
        if call.id not in given
    ]
    return GMITurnInput(
        interaction_id=f"turn-{uuid.uuid4()}",
        user_id=user_id,
        content=None,
        type=GMIInteractionType.TOOL_RESPONSE,
        tool_results=(*results, *left_out),
        options=options if options is not None else NO_TURN_OPTIONS,
    )


def outcome_result(
    tool_call_id: str, tool_name: str, outcome: ExternalToolOutcome | Mapping[str, Any]
) -> ToolResult:
    """The tool result of one call's ``outcome`` (``{"type": "success", ...}`` or ``"error"``)."""
    kind = outcome.get("type")
    if kind == "success":
        return ToolResult(tool_call_id, tool_name, outcome.get("result"))
    if kind == "error":
        error = dict(outcome.get("error") or {})
        return ToolResult(tool_call_id, tool_name, error, True, error)
    raise GMIError(
        f"outcome.type must be 'success' or 'error', got {kind!r}",
        GMIErrorCode.VALIDATION_ERROR,
    )
