"""Tools: functions a model can call, their execution context, and the orchestrator."""

from agentos.tools.context import ToolExecutionContext
from agentos.tools.orchestrator import ToolOrchestrator, tool_error_result
from agentos.tools.tool import Tool, ToolArgumentsError, tool

__all__ = [
    "Tool",
    "ToolArgumentsError",
    "ToolExecutionContext",
    "ToolOrchestrator",
    "tool",
    "tool_error_result",
]
