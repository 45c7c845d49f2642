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
4. the arguments are a string that is not JSON, or not a JSON object: ``SYS_VALIDATION_ERROR``
   (``ToolCall.unparsed_arguments``, the text a model sent that did not parse, included);
5. the arguments do not fit the schema: ``SYS_VALIDATION_ERROR`` naming the tool and each field;
6. the call's approval gate (below) does not approve it: ``AUTH_PERMISSION_DENIED``, the text
   ``"Tool call '<name>' was not approved: <reason>"`` (`not_approved_result`);
7. human-in-the-loop approval (below) refuses the call: ``AUTH_PERMISSION_DENIED``;
8. the handler raises: ``TOOL_EXECUTION_FAILED`` with the exception's type and text, except that a
   `GMIError` the handler raises keeps its own code (the tool chose it).

Arguments given as a string that does not parse are reported as ``Failed to parse arguments for
tool '<name>': ...``; arguments that do not fit the schema as ``Invalid arguments for tool
'<name>': ...`` (the reference's ``ToolExecutor`` wording).

Human-in-the-loop approval (reference §1.24, the orchestrator's ``hitl`` config ``{enabled false,
requireApprovalForSideEffects true, autoApproveWhenNoManager false}``): with ``hitl`` on, a call
to a tool whose ``has_side_effects`` is true runs only when the ``approve`` callback returns
``True`` for it. The callback gets the call, the tool and the context, and may be sync (run in a
worker thread, so it may block for a human's answer) or async; anything but ``True`` rejects. It
is asked after every other check, so it only ever sees calls that would run, with arguments that
fit the schema. The outcomes, all ``AUTH_PERMISSION_DENIED`` with ``details["reason"]``:

* the approver rejects: ``HITL rejected``, the message saying so;
* the approver raises: ``HITL error``, the message naming the exception;
* there is no approver: ``HITL approver missing``, unless ``auto_approve_without_approver`` is
  set, in which case the call runs (the reference's ``autoApproveWhenNoManager``).

``hitl`` defaults to on exactly when an ``approve`` callback is given; ``hitl=True`` without one
refuses every side-effect tool (unless auto-approved). ``require_approval_for_side_effects=False``
switches the gate off while keeping the rest of the configuration. Tools without side effects
never wait for approval, and side-effect tools are still offered to the model.

The approval gate (issue 14: the ``approve_tool`` an agent's call is given, which ``agency()``
passes with each call to a member) is asked about every call that would run, whatever its tool:
``gate`` given to the orchestrator, else, for one built with ``call_gate=True``, the one
`CALL_TOOL_GATE` holds in the calling context (how a GMI's turn gets its call's gate; a turn
without one sets ``None``, so a call nested in another's tool never inherits it). It returns
``None`` to let the call run, or the
error result the model gets instead.

The tools may be a `ToolBox` the caller keeps: the orchestrator then reads it at each use, so a
tool added to the box while a turn runs is listed (`list_tools` gives an `OfferedTools` the step
loop reads again before each step) and runs.

Session tools (issue 15, item 7: a tool ``forge_tool`` registers "at session level"): the
``session_tools`` provider gives the tools of the session a call runs for, read from its
`ToolExecutionContext` at each listing and each call. They are offered and run only with a
context that names them (another session's context never lists or runs them), after the
orchestrator's own tools, under the same disabled-tool check; a session tool never shadows a
tool of the orchestrator or an external tool of the same name.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, TypeAlias

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ToolCall, ToolResult
from agentos.core.tool_results import tool_error_result
from agentos.llm.model import ToolDefinition
from agentos.tools.context import ToolExecutionContext
from agentos.tools.tool import Tool, ToolArgumentsError
from agentos.tools.toolbox import OfferedTools, ToolBox

__all__ = [
    "CALL_TOOL_GATE",
    "HITL_REJECTED",
    "SessionTools",
    "ToolGate",
    "ToolApprover",
    "ToolOrchestrator",
    "not_approved_result",
    "skipped_by_hook",
    "tool_error_result",
]

ToolApprover: TypeAlias = Callable[
    [ToolCall, Tool, ToolExecutionContext | None], bool | Awaitable[bool]
]
"""Asked before a side-effect tool runs: ``True`` approves, anything else rejects."""

SessionTools: TypeAlias = Callable[[ToolExecutionContext], Sequence[Tool]]
"""The extra tools of the session a context belongs to (``forge_tool``'s, say), read live."""

ToolGate: TypeAlias = Callable[[ToolCall], Awaitable[ToolResult | None]]
"""A call's approval gate: ``None`` lets the call run, a result is what the model gets instead."""

CALL_TOOL_GATE: ContextVar[ToolGate | None] = ContextVar("agentos_call_tool_gate", default=None)
"""The approval gate of the call running in this context, for an orchestrator built without one."""

HITL_REJECTED = "HITL rejected"
"""The ``details["reason"]`` of a call the human-in-the-loop approver rejected."""


class ToolOrchestrator:
    """The tools an agent may call, the checks on them, and the calls' execution.

    ``allowed_capabilities`` are the persona's (``None`` allows none, so only tools without
    ``required_capabilities`` pass); ``check_capabilities=False`` switches the check off (gmi()
    does). ``disabled`` names tools that are neither offered nor run. ``external`` declares tools
    the host runs (DESIGN §5.24: no implementation in this process): they are offered to the
    model and never run here; a GMI's tool round pauses on their calls for the host.

    ``approve``, ``hitl``, ``require_approval_for_side_effects`` and
    ``auto_approve_without_approver`` configure human-in-the-loop approval of side-effect tools
    (see the module docs). ``hitl=False`` with an ``approve`` callback raises `ValueError`.
    ``gate`` is the call's approval gate (else, with ``call_gate``, `CALL_TOOL_GATE`'s).
    ``session_tools`` gives each context's session tools (see the module docs).
    ``tools`` given as a
    `ToolBox` is read live (see the module docs); a list is copied into a box of its own.
    """

    def __init__(
        self,
        tools: Iterable[Tool | Callable[..., Any]] | ToolBox = (),
        *,
        allowed_capabilities: Iterable[str] | None = None,
        check_capabilities: bool = True,
        disabled: Iterable[str] = (),
        approve: ToolApprover | None = None,
        hitl: bool | None = None,
        require_approval_for_side_effects: bool = True,
        auto_approve_without_approver: bool = False,
        external: Iterable[ToolDefinition | Tool] = (),
        gate: ToolGate | None = None,
        call_gate: bool = False,
        session_tools: SessionTools | None = None,
    ) -> None:
        # A caller's box is shared (tools it gains later count); a list goes into a box of its
        # own, which wraps plain functions and refuses two tools of one name.
        self._tools = tools if isinstance(tools, ToolBox) else ToolBox(tools)
        self.gate = gate
        self.call_gate = call_gate
        self.session_tools = session_tools
        self._external: dict[str, ToolDefinition] = {}
        for declared in external:
            definition = declared.definition() if isinstance(declared, Tool) else declared
            if self._tools.get(definition.name) is not None or definition.name in self._external:
                raise ValueError(f"two tools are named {definition.name!r}")
            self._external[definition.name] = definition
        if isinstance(allowed_capabilities, str) or isinstance(disabled, str):
            raise TypeError("allowed_capabilities and disabled take lists of names, not a str")
        self.allowed_capabilities: frozenset[str] = frozenset(allowed_capabilities or ())
        self.check_capabilities = check_capabilities
        self.disabled: frozenset[str] = frozenset(disabled)
        if hitl is False and approve is not None:
            raise ValueError("an approve callback needs hitl on (leave hitl unset or pass True)")
        self.approve = approve
        self.hitl: bool = approve is not None if hitl is None else hitl
        self.require_approval_for_side_effects = require_approval_for_side_effects
        self._listing: tuple[tuple[object, ...], list[ToolDefinition]] | None = None
        self.auto_approve_without_approver = auto_approve_without_approver

    @property
    def tools(self) -> Mapping[str, Tool]:
        """Every registered tool by name, disabled and denied ones included."""
        return {tool.name: tool for tool in self._tools}

    def missing_capabilities(self, tool: Tool) -> list[str]:
        """The tool's required capabilities that are not allowed (empty with checks off)."""
        if not self.check_capabilities:
            return []
        return [c for c in tool.required_capabilities if c not in self.allowed_capabilities]

    def needs_approval(self, tool: Tool) -> bool:
        """Whether a call to ``tool`` waits for human-in-the-loop approval."""
        return self.hitl and self.require_approval_for_side_effects and tool.has_side_effects

    def list_tools(self, context: ToolExecutionContext | None = None) -> list[ToolDefinition]:
        """The tools a turn may offer the model, in registration order (an `OfferedTools`).

        Disabled tools are left out, and, with capability checks on, tools whose required
        capabilities are not all allowed. ``context`` is the turn's (reference:
        ``listAvailableTools(ctx)``): its session's tools (``session_tools``) follow the
        orchestrator's own. The list's `OfferedTools.current` reads them again, tools added to
        the box or the session since included.
        """
        if self.session_tools is None or context is None:
            return OfferedTools(self._offered)
        held: list[list[ToolDefinition]] = []

        def offered() -> list[ToolDefinition]:
            # The same list while nothing changed: the step loop resends tools only on a change.
            base = self._offered()
            extra = [tool.definition() for tool in self._session_tools(context)]
            listing = [*base, *extra] if extra else base
            if held and held[0] == listing:
                return held[0]
            held[:] = [listing]
            return listing

        return OfferedTools(offered)

    def _session_tools(self, context: ToolExecutionContext | None) -> list[Tool]:
        """The context's session tools that are not disabled and shadow no other tool."""
        if self.session_tools is None or context is None:
            return []
        return [
            tool
            for tool in self.session_tools(context)
            if tool.name not in self.disabled
            and self._tools.get(tool.name) is None
            and tool.name not in self._external
        ]

    def _tool(self, name: str, context: ToolExecutionContext | None) -> Tool | None:
        """The orchestrator's tool ``name``, else the context's session tool of that name."""
        tool = self._tools.get(name)
        if tool is not None:
            return tool
        return next((t for t in self._session_tools(context) if t.name == name), None)

    def _offered(self) -> list[ToolDefinition]:
        """The listing, built again only when the box grew or a filter changed (a new list)."""
        key = (len(self._tools), self.disabled, self.allowed_capabilities, self.check_capabilities)
        if self._listing is not None and self._listing[0] == key:
            return self._listing[1]
        offered = [
            tool.definition()
            for tool in self._tools
            if tool.name not in self.disabled and not self.missing_capabilities(tool)
        ]
        offered.extend(d for name, d in self._external.items() if name not in self.disabled)
        self._listing = (key, offered)
        return offered

    def is_external(self, name: str) -> bool:
        """Whether ``name`` is a tool the host runs (DESIGN §5.24): offered, never run here."""
        return name in self._external

    async def process_tool_call(
        self, call: ToolCall, context: ToolExecutionContext | None = None
    ) -> ToolResult:
        """Run one call and return its result, or an error result; never raises."""
        if call.name in self.disabled:
            return tool_error_result(
                call, GMIErrorCode.PERMISSION_DENIED, f"Tool '{call.name}' is disabled."
            )
        tool = self._tool(call.name, context)
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
        except GMIError as exc:  # unparseable JSON or a ToolArgumentsError
            return tool_error_result(call, exc.code, exc.message, exc.details)
        gate = self.gate
        if gate is None and self.call_gate:
            gate = CALL_TOOL_GATE.get()
        if gate is not None:
            refusal = await gate(call)
            if refusal is not None:
                return refusal
        if self.needs_approval(tool):
            refusal = await self._approval_refusal(call, tool, context)
            if refusal is not None:
                return refusal
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

    async def _approval_refusal(
        self, call: ToolCall, tool: Tool, context: ToolExecutionContext | None
    ) -> ToolResult | None:
        """None when the call may run, else the error result of its refusal."""
        if self.approve is None:
            if self.auto_approve_without_approver:
                return None
            return tool_error_result(
                call,
                GMIErrorCode.PERMISSION_DENIED,
                f"Tool '{call.name}' has side effects and requires approval, but no HITL "
                "approver is configured.",
                {"reason": "HITL approver missing", "has_side_effects": True},
            )
        try:
            if inspect.iscoroutinefunction(self.approve):
                decision: object = await self.approve(call, tool, context)
            else:
                decision = await asyncio.to_thread(self.approve, call, tool, context)
                if inspect.isawaitable(decision):
                    decision = await decision
        except Exception as exc:
            return tool_error_result(
                call,
                GMIErrorCode.PERMISSION_DENIED,
                f"Approval request for tool '{call.name}' failed: {type(exc).__name__}: {exc}",
                {"reason": "HITL error", "exception_type": type(exc).__name__},
            )
        if decision is True:
            return None
        return tool_error_result(
            call,
            GMIErrorCode.PERMISSION_DENIED,
            f"Tool '{call.name}' was not run: {HITL_REJECTED} (the approver refused the call).",
            {"reason": HITL_REJECTED, "has_side_effects": True},
        )


def _parse_arguments(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as a dict: a dict as it is, a JSON object string parsed, none as {}.

    Providers stream arguments as JSON text; a caller may hand that text over unparsed. A blank
    string means no arguments. Text that is not JSON raises a `GMIError` (``VALIDATION_ERROR``,
    "Failed to parse arguments ..."); JSON that is not an object a `ToolArgumentsError`.
    """
    # A provider keeps argument text that does not parse beside the call (the model's mistake):
    # it takes the same invalid-arguments path as text a caller hands over.
    raw: object = call.arguments if call.unparsed_arguments is None else call.unparsed_arguments
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            problem = f"<root>: arguments are not valid JSON ({exc.msg} at {exc.pos})"
            raise GMIError(
                f"Failed to parse arguments for tool '{call.name}': {problem}",
                GMIErrorCode.VALIDATION_ERROR,
                {"tool_name": call.name, "problems": [problem]},
                component="tools",
            ) from exc
    if not isinstance(raw, Mapping):
        raise ToolArgumentsError(
            call.name, [f"<root>: arguments must be a JSON object, not {type(raw).__name__}"]
        )
    return dict(raw)


def skipped_by_hook(call: ToolCall) -> ToolResult:
    """The error result the model gets for a call a before-tool hook skipped."""
    return tool_error_result(
        call,
        GMIErrorCode.PERMISSION_DENIED,
        f"Tool '{call.name}' was not run: a before-tool hook skipped it.",
    )


NO_REASON = "no reason given"
"""The reason a refusal without one is reported with."""


def not_approved_result(call: ToolCall, reason: str | None) -> ToolResult:
    """The error result the model gets for a call an approval gate did not approve.

    Its text is ``"Tool call '<name>' was not approved: <reason>"`` (``"no reason given"``
    when ``reason`` is ``None`` or blank); ``details["reason"]`` keeps the reason.
    """
    why = reason if reason is not None and reason.strip() else NO_REASON
    return tool_error_result(
        call,
        GMIErrorCode.PERMISSION_DENIED,
        f"Tool call '{call.name}' was not approved: {why}",
        {"reason": why},
    )
