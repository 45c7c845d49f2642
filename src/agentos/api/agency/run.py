"""`AgencyRun`: one agency call as its strategy sees it; every model call goes through it.

A strategy (``async def run(run: AgencyRun) -> str``) reads the task and the plan, calls members
with `AgencyRun.call_member` and the agency's own plain agents with `AgencyRun.call_helper`, and
returns the result text. The run does, for every call, what the spec asks of the agency: the
``before_agent`` approval (skip, or extra instructions), the ``before_tool`` gate passed to the
member's call (spec: "the agency's gate is asked after the member's onBeforeToolExecution"),
the two budgets (spec: "A seat's turn is held to two budgets"), the session's earlier turns as
earlier messages of the first call each member or manager gets, the events, the accounting and
the controls.
"""

from __future__ import annotations

import time
import uuid
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, ToolCall
from agentos.core.usage import ModelUsage
from agentos.llm.budget import JointBudget, SpendBudget, SpendLimitError
from agentos.tools import ToolBox

from ..agent import agent
from ..agent_types import Agent, Session
from ..approvals import ApprovalDecision, ApprovalRequest, ask
from ..results import ErrorPart, FinishPart, TextDeltaPart, ToolCallPart
from ..stream_result import StreamTextResult
from .config import AgencyPlan, Member
from .controls import AgencyLimitWarning, limit_error
from .results import AgentCall, AgentFinished, AgentStarted, AgentTextDelta, EventSink

__all__ = ["SKIPPED_BY_HITL", "AgencyMemberError", "AgencyRun", "member_failed"]

SKIPPED_BY_HITL = "[skipped by HITL]"
"""The output of a member call the ``before_agent`` approval skipped (reference: graph)."""

_ADDED_INSTRUCTIONS = "\n\n[Additional instructions]: "


class AgencyMemberError(GMIError):
    """A member's call failed and the strategy cannot go on without it; ``details["agent"]``."""


def member_failed(call: AgentCall) -> AgencyMemberError:
    """The error a strategy raises when ``call`` (a failed one) ends the run."""
    return AgencyMemberError(
        f"agent {call.agent!r} failed: {call.error}",
        GMIErrorCode.PROCESSING_ERROR,
        {"agent": call.agent},
    )


def _ignore(_: Any) -> None:
    return None


class AgencyRun:
    """One agency call: its task, plan, calls so far, and whether a limit said stop.

    ``history`` holds the session's earlier turns (empty outside a session); ``sink`` receives
    the events (`agentos.api.agency.results`).
    """

    def __init__(
        self,
        plan: AgencyPlan,
        task: str,
        *,
        history: list[Message] | None = None,
        sink: EventSink = _ignore,
    ) -> None:
        self.task = task
        """The prompt the agency was given."""
        self.plan = plan
        """The agency's checked options."""
        self.calls: list[AgentCall] = []
        """Every call so far, in finish order."""
        self.stopped = False
        """A limit (a control with ``on_limit_reached="stop"``, a budget) said stop."""
        self.metadata: dict[str, Any] = {"budget_exhausted": None, "limit_reached": None}
        """What the result's ``metadata`` gets; strategies may add their own keys."""
        self.budget: SpendBudget | None = _launched_budget(plan.budget)
        """What the run's calls are charged to: the agency's budget, or (a team launched from
        a member's call of another agency) one drawing on it and on that call's budgets."""
        self._history = list(history or [])
        self._given_history: set[str] = set()
        self._sink = sink
        self._spawned: list[Member] = []
        self._started = time.monotonic()
        self._warned = False

    # -- what strategies read -----------------------------------------------------------------

    def usage(self) -> ModelUsage:
        """Every call's usage so far, summed."""
        total = ModelUsage.zero()
        for call in self.calls:
            total = total + call.usage
        return total

    def spawned(self) -> list[Member]:
        """The specialists spawned in this call (hierarchical), in spawn order."""
        return list(self._spawned)

    def add_spawned(self, member: Member) -> None:
        """Record a specialist spawned in this call (it lasts until the call ends)."""
        self._spawned.append(member)

    # -- calls ----------------------------------------------------------------------------------

    async def call_member(
        self,
        member: Member,
        prompt: str,
        *,
        result: bool = False,
        max_steps: int | None = None,
        tools: ToolBox | None = None,
    ) -> AgentCall:
        """Call ``member`` with ``prompt`` and return the `AgentCall` (recorded in `calls`).

        ``before_agent`` is asked first: not approved → a skipped call whose output is
        `SKIPPED_BY_HITL`; its ``instructions`` are appended as ``"[Additional instructions]"``.
        The call is held to the agency's budget and the member's own (one `JointBudget`), its
        tool calls to ``before_tool``, its steps to ``max_steps`` and the controls'
        ``max_steps_per_agent``. ``result=True`` marks its text as the result's stream text.
        A member's failure is not raised: the call has ``error`` set and no output. A member
        keeps its own tools: ``tools`` other than ``None`` raises `ValueError`.
        """
        if tools is not None:
            raise ValueError("call_member: a roster member keeps its own tools")
        decision = await self._before_agent(member.name, prompt)
        if decision is not None and not decision.approved:
            return self._skipped(member.name, prompt)
        if decision is not None and decision.instructions:
            prompt = prompt + _ADDED_INSTRUCTIONS + decision.instructions
        budgets = [b for b in (self.budget, member.agent.budget) if b is not None]
        return await self._call(member.name, member.agent, prompt, result, max_steps, budgets)

    async def call_helper(
        self,
        role: str,
        instructions: str,
        prompt: str,
        *,
        result: bool = False,
        tools: ToolBox | None = None,
        max_steps: int | None = None,
    ) -> AgentCall:
        """Call a plain agent of the agency's model/provider (manager, synthesizer, judge, ...).

        It is built for this call with ``instructions`` and ``tools``, named ``role`` in the
        calls and events, and held to the agency's budget only; otherwise as `call_member`.
        """
        options: dict[str, Any] = {"name": role, "instructions": instructions}
        if self.plan.model is not None:
            options["model"] = self.plan.model
        if self.plan.provider is not None:
            options["provider"] = self.plan.provider
        if tools is not None:
            options["tools"] = tools
        helper = agent(**options)
        budgets = [self.budget] if self.budget is not None else []
        return await self._call(role, helper, prompt, result, max_steps, budgets)

    # -- one call -------------------------------------------------------------------------------

    async def _before_agent(self, name: str, prompt: str) -> ApprovalDecision | None:
        approver = self.plan.hitl.before_agent
        if approver is None:
            return None
        return await ask(approver, ApprovalRequest("agent", name, {"input": prompt}))

    def _skipped(self, name: str, prompt: str) -> AgentCall:
        call = AgentCall(name, prompt, SKIPPED_BY_HITL, skipped=True)
        self._sink(AgentStarted(name, prompt))
        self._finish(call)
        return call

    async def _call(
        self,
        name: str,
        target: Agent,
        prompt: str,
        result: bool,
        max_steps: int | None,
        budgets: list[SpendBudget],
    ) -> AgentCall:
        options = self._options(name, max_steps, budgets)
        self._sink(AgentStarted(name, prompt))
        started = time.monotonic()
        call = AgentCall(name, prompt, "")
        seat = _SEAT.set(tuple(budgets))  # what a team this call launches draws on
        try:
            async with self._stream(name, target, prompt, options) as stream:
                await self._read(stream, call, result)
        except Exception as error:  # a member's failure is reported, never raised
            self._failed(call, error)
        finally:
            _SEAT.reset(seat)
        call.duration_ms = (time.monotonic() - started) * 1000.0
        self._finish(call)
        return call

    def _options(
        self, name: str, max_steps: int | None, budgets: list[SpendBudget]
    ) -> dict[str, Any]:
        options: dict[str, Any] = {}
        cap = self.plan.controls.max_steps_per_agent
        steps = [s for s in (max_steps, cap) if s is not None]
        if steps:
            options["max_steps"] = min(steps)
        if len(budgets) == 1:
            options["budget"] = budgets[0]
        elif budgets:
            options["budget"] = JointBudget(budgets[0], *budgets[1:])
        if self.plan.hitl.before_tool is not None:
            options["approve_tool"] = self._tool_gate(name)
        return options

    def _tool_gate(self, name: str) -> Callable[[ToolCall], Any]:
        approver = self.plan.hitl.before_tool
        assert approver is not None

        async def approve_tool(call: ToolCall) -> ApprovalDecision:
            details = {"tool": call.name, "arguments": call.arguments, "tool_call_id": call.id}
            return await ask(approver, ApprovalRequest("tool", name, details))

        return approve_tool

    @asynccontextmanager
    async def _stream(
        self, name: str, target: Agent, prompt: str, options: dict[str, Any]
    ) -> AsyncIterator[StreamTextResult]:
        """The call's stream: the agent's own, or (first call with a history) a session's.

        A call with earlier turns to give runs on a session of the member opened for it,
        seeded with them and closed after, since ``generate()`` keeps no history.
        """
        if not self._history or name in self._given_history:
            yield target.stream(prompt, **options)
            return
        self._given_history.add(name)
        light = _light_copy(target, options.get("max_steps")) if _is_gmi(target) else None
        session = (light or target).session(f"agency-{uuid.uuid4().hex}")
        try:
            seeded = await _seed(session, self._history)
            if not seeded:  # a member built with history=False gets the prompt alone
                yield target.stream(prompt, **options)
                return
            if light is not None:  # a GMI session's turn takes its steps from its agent
                options = {k: v for k, v in options.items() if k != "max_steps"}
            yield session.stream(prompt, **options)
        finally:
            # Emptied first, so a member's durable store keeps nothing of this throwaway session.
            await session.clear()
            await session.close()
            if light is not None:
                await light.close()

    async def _read(self, stream: StreamTextResult, call: AgentCall, result: bool) -> None:
        async with _closing(stream) as parts:
            async for part in parts:
                if type(part) is TextDeltaPart:
                    self._sink(AgentTextDelta(call.agent, part.text, result))
                elif type(part) is ToolCallPart:
                    call.tool_calls.append(part.tool_call)
                elif type(part) is FinishPart:
                    call.usage = part.usage
                elif type(part) is ErrorPart:
                    raise part.error
        call.output = (await stream.result).text

    def _failed(self, call: AgentCall, error: Exception) -> None:
        call.output = ""  # a failure never passes on the text it had streamed
        call.error = f"{type(error).__name__}: {error}"
        refusal = _spend_refusal(error)
        if refusal is not None and self.metadata["budget_exhausted"] is None:
            self.metadata["budget_exhausted"] = {"agent": call.agent, "error": str(refusal)}
            self.stopped = True

    def _finish(self, call: AgentCall) -> None:
        self.calls.append(call)
        self._sink(AgentFinished(call))
        self._check_controls()

    def _check_controls(self) -> None:
        controls = self.plan.controls
        elapsed = (time.monotonic() - self._started) * 1000.0
        reached = controls.breached(self.usage(), len(self.calls), elapsed)
        if reached is None:
            return
        if self.metadata["limit_reached"] is None:
            self.metadata["limit_reached"] = reached.as_dict()
        if controls.on_limit_reached == "error":
            raise limit_error(reached)
        if controls.on_limit_reached == "stop":
            self.stopped = True
        elif not self._warned:
            self._warned = True
            message = f"agency: {reached.limit} reached ({reached.value} of {reached.maximum})"
            warnings.warn(AgencyLimitWarning(message), stacklevel=2)


@asynccontextmanager
async def _closing(stream: StreamTextResult) -> AsyncIterator[Any]:
    parts = stream.full_stream
    try:
        yield parts
    finally:
        await parts.aclose()


async def _seed(session: Session, history: list[Message]) -> bool:
    """Seed ``session`` with ``history``; False when its agent keeps none (history=False)."""
    try:
        await session.reseed(history)
    except GMIError as error:
        if error.code is not GMIErrorCode.INVALID_STATE:
            raise
        return False
    return True


_SEAT: ContextVar[tuple[SpendBudget, ...]] = ContextVar("agency_seat", default=())
"""The budgets the running member call is held to; its tools (and teams they launch) see it."""


def _launched_budget(own: SpendBudget | None) -> SpendBudget | None:
    """``own``, or inside a member's call a budget drawing on both (spec, line 139).

    Spec: "a team the member launches from that seat draws on both as well": an agency run
    from a tool of another agency's member call charges its calls to that call's budgets (the
    outer agency's and the member's own) and to its own, each once.
    """
    seat = _SEAT.get()
    if not seat:
        return own
    parents = (*seat, own) if own is not None else seat
    return SpendBudget(parent=list(dict.fromkeys(parents)), budget_id="launched-team")


_NOT_FOR_ONE_CALL = ("store", "memory", "memory_provider", "memory_provider_options", "learning")


def _is_gmi(member: Agent) -> bool:
    return member.options.get("runtime") == "gmi"


def _light_copy(member: Agent, max_steps: int | None) -> Agent:
    """A GMI member as its ``generate()`` runs it: 'light', no memory, no store (spec).

    Spec: a member's generate()/stream() "on the GMI path run the 'light' profile on a GMI
    built for that call"; a session's GMI would run the member's own profile, so the first call
    that must see the session's earlier turns runs on a session of this copy. The copy shares
    the member's model, tools and hooks; its warnings were given when the member was built.
    """
    options = {k: v for k, v in member.options.items() if k not in _NOT_FOR_ONE_CALL}
    options["cognition"] = "light"
    if max_steps is not None:
        options["max_steps"] = max_steps  # a session's turn takes its steps from the agent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return agent(**options)


def _spend_refusal(error: BaseException) -> SpendLimitError | None:
    """The budget refusal behind ``error`` (itself, or a cause), if a budget refused the call."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, SpendLimitError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
