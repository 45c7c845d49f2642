r"""The graph strategy: members in dependency tiers, each tier's members at once.

Reference §1.27: ``depends_on`` makes a DAG (a cycle or an unknown dependency is refused when
the agency is built); the members of a tier run concurrently (an `asyncio.TaskGroup`: issue 14
item 7); a member with dependencies gets ``"Original task: <p>\n\nOutputs from
dependencies:\n[dep]:\n<text>"`` per dependency; a member the approval skipped outputs
``"[skipped by HITL]"``, which its dependents see. The result is the last tier's outputs: one
member's output as it is, several joined as ``[name]:\n<text>`` blocks. A member that fails
ends the run with its error.
"""

from __future__ import annotations

import asyncio

from .config import Member, check_graph
from .results import AgentCall
from .run import AgencyRun, member_failed

__all__ = ["dependency_input", "run"]


def dependency_input(task: str, outputs: list[tuple[str, str]]) -> str:
    """What a member with dependencies gets: the task, then each dependency's output."""
    blocks = "\n\n".join(f"[{name}]:\n{text}" for name, text in outputs)
    return f"Original task: {task}\n\nOutputs from dependencies:\n{blocks}"


async def run(run: AgencyRun) -> str:
    """Run the tiers in order; return the last tier's output(s)."""
    plan = run.plan
    tiers = check_graph({member.name: member.depends_on for member in plan.members})
    outputs: dict[str, str] = {}
    last: list[AgentCall] = []
    for position, tier in enumerate(tiers):
        if run.stopped:
            break
        final = position == len(tiers) - 1
        members = [plan.member(name) for name in tier]
        last = await _tier(run, members, outputs, result=final and len(members) == 1)
        for call in last:
            if call.error is not None and not run.stopped:
                raise member_failed(call)
            outputs[call.agent] = call.output
    finished = [call for call in last if call.error is None]
    if len(finished) == 1:
        return finished[0].output
    return "\n\n".join(f"[{call.agent}]:\n{call.output}" for call in finished)


async def _tier(
    run: AgencyRun, members: list[Member], outputs: dict[str, str], *, result: bool
) -> list[AgentCall]:
    """Run one tier's members at once; their calls in roster order."""

    def prompt(member: Member) -> str:
        if not member.depends_on:
            return run.task
        return dependency_input(run.task, [(dep, outputs[dep]) for dep in member.depends_on])

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(run.call_member(m, prompt(m), result=result)) for m in members]
    return [task.result() for task in tasks]
