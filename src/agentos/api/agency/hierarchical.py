"""The hierarchical strategy: a manager hands parts of the task to members through tools.

Issue 14 ("hierarchical (a manager with ``delegate_to_<role>({task})`` tools and the roster in its
prompt)", item 4) and the spec ("With the hierarchical strategy and emergent.enabled, the manager
gets a spawn_specialist tool; a specialist it creates becomes callable as delegate_to_<role> on
the manager's next turn ... each send() starts from the configured roster"), after the reference
(§1.27, §1.31).

The manager is a plain agent of the agency's model. Its tools are a `ToolBox` built fresh for each
call: ``delegate_to_<name>({task})`` per member (described by the member's instructions, or
"General purpose"), and with ``emergent={"enabled": True, ...}`` ``spawn_specialist``. A spawn
passes the `SpecialistForge` checks, the optional judge (``emergent.judge``: a function, or
``True`` for a plain agent of the agency's model), then ``hitl.approvals.before_emergent_spawn``;
the specialist (a plain agent of the agency's model with the spawn's instructions) is then built
and ``delegate_to_<role>`` added to the manager's tool box, which the step loop reads at each
step, so the manager can call it from its next step. The forge and the box live only for the
call. Members and specialists are called alike (`AgencyRun.call_member`: approvals, budgets,
accounting); a failed call reaches the manager as an error tool result.

``adaptive=True`` on a non-hierarchical strategy runs this manager too, told its default strategy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.emergent import (
    DEFAULT_MAX_SPECIALISTS,
    SpecialistForge,
    SpecialistJudge,
    SpecialistRefused,
    SpecialistSpec,
    delegate_tool_name,
    spawn_specialist_tool,
)
from agentos.tools import Tool, ToolBox

from ..agent import agent
from ..approvals import ApprovalRequest, ask
from .config import HELPER_NAMES, AgencyPlan, Member, refuse, refuse_unknown
from .review_loop import parse_verdict
from .run import AgencyRun, member_failed

__all__ = [
    "DEFAULT_MANAGER_STEPS",
    "EMERGENT_OPTIONS",
    "MANAGER",
    "check_emergent",
    "manager_instructions",
    "run",
]

MANAGER = "manager"
"""The manager's name in ``agent_calls`` and in approval requests."""
DEFAULT_MANAGER_STEPS = 10
"""The manager's step limit (reference ``maxSteps ?? 10``)."""
EMERGENT_OPTIONS = frozenset(
    {"enabled", "max_specialists", "require_justification", "judge", "max_judge_calls", "tier"}
)
"""The keys ``emergent=`` takes (``tier`` is accepted and has no effect: the spec says a
specialist is gone on the next call "whatever emergent.tier names")."""

_STRATEGY_HINTS = {
    "sequential": "pass the task through the agents in roster order, each building on the "
    "output of the one before",
    "parallel": "give the task to every agent at once, then combine their answers",
    "debate": "have the agents argue their positions over rounds, then decide between them",
    "review-loop": "have the first agent draft and the second review, revising until the "
    "reviewer approves",
    "graph": "run each agent after the agents it depends on, passing their outputs on",
}
_TASK_SCHEMA = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "description": "The work to hand over, with everything the agent needs to know.",
        }
    },
    "required": ["task"],
    "additionalProperties": False,
}
_SPECIALIST_JUDGE = (
    "You decide whether a manager agent may create a new specialist agent. Approve it when the "
    "role is clear, the instructions are safe and specific, and the team lacks the skill. "
    'Reply with JSON only: {"approved": true or false, "feedback": "<your reason>"}.'
)


def manager_instructions(run: AgencyRun, *, emergent: bool) -> str:
    """The manager's system prompt.

    Its job, the roster (``- <name> (delegate_to_<name>): <description>``), the agency's
    instructions, and the notes for emergent specialists and ``adaptive=True``'s default strategy.
    """
    roster = "\n".join(
        f"- {m.name} ({delegate_tool_name(m.name)}): {m.description}" for m in run.plan.members
    )
    parts = [
        "You manage a team of agents. Split the task into parts, hand each part to the agent "
        "best suited to it with its delegate_to_<name> tool, and combine what they return into "
        "your final answer.",
        f"The team:\n{roster}",
    ]
    if run.plan.instructions:
        parts.append(run.plan.instructions)
    if emergent:
        parts.append(
            "When no one on the team suits a part of the work, create a specialist with "
            "spawn_specialist (role, instructions, justification). From your next step you can "
            "hand it work with delegate_to_<role>."
        )
    if run.plan.adaptive and run.plan.strategy != "hierarchical":
        hint = _STRATEGY_HINTS.get(run.plan.strategy, run.plan.strategy)
        parts.append(
            f"Your default strategy is {run.plan.strategy}: {hint}. Follow it unless the task "
            "is better served another way."
        )
    return "\n\n".join(parts)


async def run(run: AgencyRun) -> str:
    """Run the manager with its tools and return its final answer (see the module docstring)."""
    forge = _forge(run.plan, _model_judge(run))
    box = ToolBox([_delegate_tool(run, member) for member in run.plan.members])
    if forge is not None:
        box.add(spawn_specialist_tool(forge, _on_spawn(run, box)))
    manager = await run.call_helper(
        MANAGER,
        manager_instructions(run, emergent=forge is not None),
        run.task,
        result=True,
        tools=box,
        max_steps=DEFAULT_MANAGER_STEPS,
    )
    if manager.error is not None and not run.stopped:
        raise member_failed(manager)
    return manager.output


def _delegate_tool(run: AgencyRun, member: Member) -> Tool:
    async def delegate(task: str) -> str:
        if run.stopped:  # a limit said stop: no more member calls, the manager must conclude
            raise GMIError(
                "The agency reached a limit: give your final answer now.",
                GMIErrorCode.RATE_LIMIT_EXCEEDED,
                {"agent": member.name},
            )
        call = await run.call_member(member, task)
        if call.error is not None:  # an error result the manager reads: it may retry or go on
            raise GMIError(
                f"Agent '{member.name}' failed: {call.error}",
                GMIErrorCode.TOOL_EXECUTION_FAILED,
                {"agent": member.name},
            )
        return call.output

    return Tool.from_schema(
        delegate_tool_name(member.name), member.description, _TASK_SCHEMA, delegate
    )


def _specialist(run: AgencyRun, spec: SpecialistSpec) -> Member:
    """The spawned specialist: a plain agent of the agency's model, built once per spawn."""
    options: dict[str, Any] = {"name": spec.role, "instructions": spec.instructions}
    if run.plan.model is not None:
        options["model"] = run.plan.model
    if run.plan.provider is not None:
        options["provider"] = run.plan.provider
    return Member(spec.role, agent(**options), description=spec.instructions)


def _on_spawn(run: AgencyRun, box: ToolBox) -> Callable[[SpecialistSpec], Awaitable[None]]:
    async def on_spawn(spec: SpecialistSpec) -> None:
        approver = run.plan.hitl.before_emergent_spawn
        if approver is not None:
            details = {
                "role": spec.role,
                "instructions": spec.instructions,
                "justification": spec.justification,
            }
            decision = await ask(approver, ApprovalRequest("emergent_spawn", MANAGER, details))
            if not decision.approved:
                reason = decision.reason or "no reason given"
                raise SpecialistRefused(
                    f"the approval handler refused it: {reason}", role=spec.role
                )
        specialist = _specialist(run, spec)
        box.add(_delegate_tool(run, specialist))
        run.add_spawned(specialist)

    return on_spawn


def check_emergent(plan: AgencyPlan) -> None:
    """Refuse bad ``emergent`` options, naming the field (`AgencyConfigError`).

    agency() may call it when it is built; `run` calls it before the manager's first step.
    """
    _forge(plan, lambda spec: True)


def _forge(plan: AgencyPlan, model_judge: SpecialistJudge) -> SpecialistForge | None:
    """The call's forge when ``emergent.enabled``; bad ``emergent`` options raise, named."""
    options: Mapping[str, Any] = plan.emergent
    refuse_unknown(options, EMERGENT_OPTIONS, "emergent.")
    enabled = options.get("enabled", False)
    if not isinstance(enabled, bool):
        refuse("emergent.enabled", f"must be a bool, got {enabled!r}")
    if not enabled:
        return None
    cap = options.get("max_specialists", DEFAULT_MAX_SPECIALISTS)
    if plan.controls.max_emergent_agents is not None and isinstance(cap, int):
        cap = min(cap, plan.controls.max_emergent_agents)
    judge = options.get("judge")
    try:
        return SpecialistForge(
            max_specialists=cap,
            require_justification=options.get("require_justification", False),
            existing_roles=[*(member.name for member in plan.members), *sorted(HELPER_NAMES)],
            judge=model_judge if judge is True else judge or None,
            max_judge_calls=options.get("max_judge_calls"),
        )
    except GMIError as error:
        refuse(f"emergent.{error.details.get('option', '')}", error.message)


def _model_judge(run: AgencyRun) -> Callable[[SpecialistSpec], Awaitable[tuple[bool, str]]]:
    """``emergent.judge=True``: a plain agent of the agency's model reviews each spawn."""

    async def judge(spec: SpecialistSpec) -> tuple[bool, str]:
        prompt = (
            f"The task the team works on:\n{run.task}\n\nProposed role: {spec.role}\n"
            f"Justification: {spec.justification or '(none given)'}\n"
            f"Instructions:\n{spec.instructions}"
        )
        call = await run.call_helper("specialist_judge", _SPECIALIST_JUDGE, prompt)
        if call.error is not None:
            return False, f"the judge failed: {call.error}"
        verdict = parse_verdict(call.output)
        return verdict.approved, verdict.feedback

    return judge
