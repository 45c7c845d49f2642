"""Tools: functions a model can call, their execution context, and the orchestrator."""

from agentos.tools.context import ToolExecutionContext
from agentos.tools.orchestrator import (
    HITL_REJECTED,
    ToolApprover,
    ToolOrchestrator,
    tool_error_result,
)
from agentos.tools.tool import Tool, ToolArgumentsError, tool

__all__ = [
    "HITL_REJECTED",
    "Tool",
    "ToolApprover",
    "ToolArgumentsError",
    "ToolExecutionContext",
    "ToolOrchestrator",
    "tool",
    "tool_error_result",
]
