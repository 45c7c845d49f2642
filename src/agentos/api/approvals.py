"""Approvals: the answers a human-in-the-loop gate gives, and the one way to ask it.

Spec (Multi-agent work: "HITL approvals"; line 119: ``agent.generate()`` / ``stream()`` take
"the tool-approval gate agency() passes with each call to a member"). An approver answers an
`ApprovalRequest` with ``True`` / ``False`` or an `ApprovalDecision` (with a reason, and for a
``before_agent`` request extra instructions), sync or async. `ask()` turns whatever it does
into an `ApprovalDecision`: a raise counts as not approved, the exception as the reason.

`tool_gate()` makes the per-call ``approve_tool`` option of an agent's ``generate()`` /
``stream()`` (and of a session's ``send()`` / ``stream()``) into what the tool orchestrator
asks for each tool call after the agent's own ``on_before_tool_execution``, with the arguments
it left (a call the hook skipped is never asked; neither is a call of an unknown tool or with
arguments its schema refuses, which gets its own error result): ``None`` when the call may
run, else the error result the model gets instead, ``"Tool call '<name>' was not approved:
<reason>"`` (`not_approved_result`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from agentos.core.messages import ToolCall, ToolResult
from agentos.tools.orchestrator import not_approved_result

from .call_checks import invalid

__all__ = [
    "ApprovalDecision",
    "ApprovalRequest",
    "Approver",
    "ToolApprovalGate",
    "ask",
    "check_approve_tool",
    "decide",
    "tool_gate",
]


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    """An approver's answer: ``approved``, why (``reason``), and extra ``instructions``.

    ``instructions`` apply to a ``before_agent`` request only: the member gets them with its
    task. A decision without a reason that refuses is reported as ``"no reason given"``.
    """

    approved: bool
    reason: str | None = None
    instructions: str | None = None


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What an approver is asked about.

    ``kind`` is ``"tool"`` (``details``: ``tool``, ``arguments``, ``tool_call_id``),
    ``"agent"`` (``details``: ``input``) or ``"emergent_spawn"`` (``details``: ``role``,
    ``instructions``, ``justification``); ``agent`` names the member (or the manager) the
    request is about.
    """

    kind: Literal["tool", "agent", "emergent_spawn"]
    agent: str
    details: Mapping[str, Any] = field(default_factory=dict)


Answer: TypeAlias = "bool | ApprovalDecision"
"""What an approver returns: ``True`` / ``False`` or an `ApprovalDecision`."""

Approver: TypeAlias = Callable[
    [ApprovalRequest], "bool | ApprovalDecision | Awaitable[bool | ApprovalDecision]"
]
"""An approval handler: sync or async, answering an `ApprovalRequest`."""

ToolApprovalGate: TypeAlias = Callable[
    [ToolCall], "bool | ApprovalDecision | Awaitable[bool | ApprovalDecision]"
]
"""The per-call ``approve_tool`` option: asked for each tool call the agent's hook let run."""


async def decide(answer: Callable[[], object]) -> ApprovalDecision:
    """Run ``answer()`` (awaiting what it returns) and make its answer an `ApprovalDecision`.

    ``True`` / ``False`` become a decision without a reason; a raise is not approved, with
    ``"the approval handler raised <exc>"`` as the reason; anything else is not approved,
    naming what was returned.
    """
    try:
        returned = answer()
        if inspect.isawaitable(returned):
            returned = await returned
    except Exception as exc:
        return ApprovalDecision(False, reason=f"the approval handler raised {exc!r}")
    if isinstance(returned, ApprovalDecision):
        return returned
    if isinstance(returned, bool):
        return ApprovalDecision(returned)
    return ApprovalDecision(
        False, reason=f"the approval handler returned {type(returned).__name__}, not a decision"
    )


async def ask(approver: Approver, request: ApprovalRequest) -> ApprovalDecision:
    """Ask ``approver`` about ``request``; its answer as an `ApprovalDecision` (see `decide`)."""
    return await decide(lambda: approver(request))


def tool_gate(
    approve_tool: ToolApprovalGate,
) -> Callable[[ToolCall], Awaitable[ToolResult | None]]:
    """The step loop's approval gate running ``approve_tool`` for each call.

    It returns ``None`` for an approved call, else the error result the model gets instead
    (`not_approved_result`), the reason ``"no reason given"`` when the decision gives none.
    A gate that raises counts as not approved, the exception as the reason.
    """

    async def gate(call: ToolCall) -> ToolResult | None:
        decision = await decide(lambda: approve_tool(call))
        if decision.approved:
            return None
        return not_approved_result(call, decision.reason)

    return gate


def check_approve_tool(value: object) -> None:
    """Refuse an ``approve_tool`` option that is not callable, naming it (`GMIError`)."""
    if value is not None and not callable(value):
        invalid("approve_tool", f"must be a function taking a ToolCall, got {type(value).__name__}")
