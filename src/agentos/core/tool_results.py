"""Error results of tool calls: the one shape every error result the model sees takes.

`tool_error_result` builds it (the message as output, ``error_details`` ``{"code", "message"}``
plus ``"details"`` when there are any); `stopped_tool_result` is the result a stopped tool round
records for each call it did not finish (DESIGN.md §5.22), which the session store also writes
when it reconciles a turn a crash left unfinished (DESIGN.md §5.21), so both read the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentos.core.errors import GMIErrorCode
from agentos.core.messages import ToolCall, ToolResult

__all__ = ["stopped_tool_result", "tool_error_result"]


def tool_error_result(
    call: ToolCall,
    code: GMIErrorCode | str,
    message: str,
    details: Mapping[str, Any] | None = None,
) -> ToolResult:
    """An error result for ``call``: the message as output, ``error_details`` with the code."""
    error_details: dict[str, Any] = {"code": str(code), "message": message}
    if details:
        error_details["details"] = dict(details)
    return ToolResult(
        call.id, call.name, output=message, is_error=True, error_details=error_details
    )


def stopped_tool_result(call: ToolCall) -> ToolResult:
    """The error result (``SYS_ABORTED``) of a call whose round stopped before it finished."""
    return tool_error_result(
        call, GMIErrorCode.ABORTED, f"Tool '{call.name}' was stopped: the turn ended."
    )
