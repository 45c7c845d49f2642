"""Tools: functions a model can call, their execution context, and the orchestrator."""

from agentos.tools.context import ToolExecutionContext
from agentos.tools.orchestrator import (
    CALL_TOOL_GATE,
    HITL_REJECTED,
    ToolApprover,
    ToolGate,
    ToolOrchestrator,
    not_approved_result,
    tool_error_result,
)
from agentos.tools.tool import Tool, ToolArgumentsError, tool
from agentos.tools.toolbox import OfferedTools, ToolBox

__all__ = [
    "CALL_TOOL_GATE",
    "HITL_REJECTED",
    "OfferedTools",
    "Tool",
    "ToolApprover",
    "ToolArgumentsError",
    "ToolBox",
    "ToolExecutionContext",
    "ToolGate",
    "ToolOrchestrator",
    "not_approved_result",
    "tool",
    "tool_error_result",
]
