"""`ToolOrchestrator`: the one place that lists a turn's tools and turns a tool call into a result.

Reference §1.24 (``ToolOrchestrator.listAvailableTools`` / ``processToolCall``, ``ToolExecutor``,
``ToolPermissionManager.isExecutionAllowed``) and the spec (What a turn does, step 6: the GMI runs
each requested call through ``processToolCall()``; Tools and model calls: gmi() builds its
orchestrator with capability checks off).

`ToolOrchestrator.process_tool_call` never raises (task cancellation aside). Every failure becomes
an error `ToolResult` the model sees: ``is_error=True``, ``error_details`` ``{"code", "message"}``
(plus ``"details"`` when there are any) and the message as ``output``, in this order of checks:

1. the tool is disabled: ``AUTH_PERMISSION_DENIED`` (checked first, as the reference does);
2. no tool has that name: ``TOOL_NOT_FOUND``, naming the tools this orchestrator offers;
3. with capability checks on, the tool requires a capability not allowed: ``AUTH_PERMISSION_DENIED``
   naming the missing ones;
4. the arguments are a string that is not JSON, or not a JSON object: ``SYS_VALIDATION_ERROR``;
5. the arguments do not fit the schema: ``SYS_VALIDATION_ERROR`` naming the tool and each field;
6. the handler raises: ``TOOL_EXECUTION_FAILED`` with the exception's type and text, except that a
   `GMIError` the handler raises keeps its own code (the tool chose it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ToolCall, ToolResult
from agentos.llm.model import ToolDefinition
from agentos.tools.context import ToolExecutionContext
from agentos.tools.tool import Tool, ToolArgumentsError

__all__ = ["ToolOrchestrator", "tool_error_result"]


class ToolOrchestrator:
    """The tools an agent may call, the checks on them, and the calls' execution.

    ``allowed_capabilities`` are the persona's (``None`` allows none, so only tools without
    ``required_capabilities`` pass); ``check_capabilities=False`` switches the check off (gmi()
    does). ``disabled`` names tools that are neither offered nor run.
    """

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        allowed_capabilities: Iterable[str] | None = None,
        check_capabilities: bool = True,
        disabled: Iterable[str] = (),
    ) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            if not isinstance(item, Tool):
                raise TypeError(f"tools must be Tool objects, not {type(item).__name__}")
            if item.name in self._tools:
                raise ValueError(f"two tools are named {item.name!r}")
            self._tools[item.name] = item
        if isinstance(allowed_capabilities, str) or isinstance(disabled, str):
            raise TypeError("allowed_capabilities and disabled take lists of names, not a str")
        self.allowed_capabilities: frozenset[str] = frozenset(allowed_capabilities or ())
        self.check_capabilities = check_capabilities
        self.disabled: frozenset[str] = frozenset(disabled)

    @property
    def tools(self) -> Mapping[str, Tool]:
        """Every registered tool by name, disabled and denied ones included."""
        return dict(self._tools)

    def missing_capabilities(self, tool: Tool) -> list[str]:
        """The tool's required capabilities that are not allowed (empty with checks off)."""
        if not self.check_capabilities:
            return []
        return [c for c in tool.required_capabilities if c not in self.allowed_capabilities]

    def list_tools(self, context: ToolExecutionContext | None = None) -> list[ToolDefinition]:
        """The tools a turn may offer the model, in registration order.

        Disabled tools are left out, and, with capability checks on, tools whose required
        capabilities are not all allowed. ``context`` is the turn's (reference:
        ``listAvailableTools(ctx)``); the checks here do not depend on it yet.
        """
        return [
            tool.definition()
            for tool in self._tools.values()
            if tool.name not in self.disabled and not self.missing_capabilities(tool)
        ]

    async def process_tool_call(
        self, call: ToolCall, context: ToolExecutionContext | None = None
    ) -> ToolResult:
        """Run one call and return its result, or an error result; never raises."""
        if call.name in self.disabled:
            return tool_error_result(
                call, GMIErrorCode.PERMISSION_DENIED, f"Tool '{call.name}' is disabled."
            )
        tool = self._tools.get(call.name)
        if tool is None:
            offered = ", ".join(d.name for d in self.list_tools(context)) or "none"
            return tool_error_result(
                call,
                GMIErrorCode.TOOL_NOT_FOUND,
                f"Tool '{call.name}' is not available. Available tools: {offered}.",
            )
        missing = self.missing_capabilities(tool)
        if missing:
            return tool_error_result(
                call,
                GMIErrorCode.PERMISSION_DENIED,
                f"Tool '{call.name}' requires capabilities that are not allowed: "
                f"{', '.join(missing)}.",
                {"missing_capabilities": missing},
            )
        try:
            checked = tool.validate_arguments(_parse_arguments(call))
        except ToolArgumentsError as exc:
            return tool_error_result(call, exc.code, exc.message, exc.details)
        try:
            output = await tool.invoke(checked, context)
        except GMIError as exc:
            return tool_error_result(call, exc.code, exc.message, exc.details)
        except Exception as exc:
            return tool_error_result(
                call,
                GMIErrorCode.TOOL_EXECUTION_FAILED,
                f"Tool '{call.name}' failed: {type(exc).__name__}: {exc}",
                {"exception_type": type(exc).__name__},
            )
        return ToolResult(call.id, call.name, output)


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


def _parse_arguments(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as a dict: a dict as it is, a JSON object string parsed, none as {}.

    Providers stream arguments as JSON text; a caller may hand that text over unparsed. A blank
    string means no arguments.
    """
    raw: object = call.arguments
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ToolArgumentsError(
                call.name, [f"<root>: arguments are not valid JSON ({exc.msg} at {exc.pos})"]
            ) from exc
    if not isinstance(raw, Mapping):
        raise ToolArgumentsError(
            call.name, [f"<root>: arguments must be a JSON object, not {type(raw).__name__}"]
        )
    return dict(raw)
