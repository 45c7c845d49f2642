"""Tools: functions a model can call."""

from agentos.tools.tool import Tool, ToolArgumentsError, tool

__all__ = ["Tool", "ToolArgumentsError", "tool"]
