"""The parallel strategy: every member on the task at once, then a synthesizer.

Reference §1.27: all members get the prompt concurrently (an `asyncio.TaskGroup`, issue 14
item 7); a member that fails is skipped and reported (``metadata["failed_agents"]``), and only
finished members' outputs reach the synthesizer, so one member's failure never leaks another's
partial text. ``quorum`` (``min_agents``, ``min_providers``, ``on_shortfall`` ``"error"`` or
``"proceed"``) is checked on the members that finished. The synthesizer is a plain agent of the
agency's model (one step) whose output is the result.
"""

from __future__ import annotations

import asyncio

from agentos.core.errors import GMIError, GMIErrorCode

from .results import AgentCall
from .run import AgencyRun

__all__ = ["AgencyQuorumError", "SYNTHESIZER", "run", "synthesis_prompt"]

SYNTHESIZER = "synthesizer"
"""The synthesizer's name in the calls and events."""

_SYNTHESIZER_INSTRUCTIONS = (
    "You merge the answers several agents gave to one task into a single, coherent answer. "
    "Keep what they agree on, settle what they disagree on, and drop repetition."
)


class AgencyQuorumError(GMIError):
    """Too few members (or providers) finished for the quorum, with ``on_shortfall="error"``."""


def synthesis_prompt(task: str, outputs: list[tuple[str, str]]) -> str:
    """The synthesizer's input: the task, then each member's output under its name."""
    blocks = "\n\n".join(f"--- {name} ---\n{text}" for name, text in outputs)
    return (
        f'These agents each answered the task below.\nTask: "{task}"\n\n{blocks}\n\n'
        "Write one answer that combines them."
    )


async def run(run: AgencyRun) -> str:
    """Run the members at once, check the quorum, and synthesize what they wrote."""
    members = run.plan.members
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(run.call_member(member, run.task)) for member in members]
    calls = [task.result() for task in tasks]
    finished = [call for call in calls if call.error is None and not call.skipped]
    run.metadata["failed_agents"] = [
        {"agent": call.agent, "error": call.error} for call in calls if call.error is not None
    ]
    _check_quorum(run, finished)
    if not finished:
        if run.stopped:
            return ""
        raise AgencyQuorumError(
            "every member of the parallel agency failed", GMIErrorCode.PROCESSING_ERROR
        )
    outputs = [(call.agent, call.output) for call in finished]
    if run.stopped:
        return "\n\n".join(f"[{name}]:\n{text}" for name, text in outputs)
    instructions = _SYNTHESIZER_INSTRUCTIONS
    if run.plan.instructions:
        instructions += "\n\n" + run.plan.instructions
    prompt = synthesis_prompt(run.task, outputs)
    call = await run.call_helper(SYNTHESIZER, instructions, prompt, result=True, max_steps=1)
    if call.error is not None:
        if run.stopped:
            return "\n\n".join(f"[{name}]:\n{text}" for name, text in outputs)
        raise AgencyQuorumError(
            f"the synthesizer failed: {call.error}",
            GMIErrorCode.PROCESSING_ERROR,
            {"agent": SYNTHESIZER},
        )
    return call.output


def _check_quorum(run: AgencyRun, finished: list[AgentCall]) -> None:
    quorum = run.plan.quorum
    min_agents, min_providers = quorum.get("min_agents"), quorum.get("min_providers")
    providers = {run.plan.member(call.agent).provider for call in finished}
    providers.discard(None)
    short = []
    if min_agents is not None and len(finished) < min_agents:
        short.append(f"{len(finished)} of min_agents {min_agents} members finished")
    if min_providers is not None and len(providers) < min_providers:
        short.append(f"{len(providers)} of min_providers {min_providers} providers answered")
    if not short:
        return
    run.metadata["quorum_shortfall"] = short
    if quorum.get("on_shortfall", "error") == "error":
        raise AgencyQuorumError(
            "quorum not met: " + "; ".join(short),
            GMIErrorCode.PROCESSING_ERROR,
            {"option": "quorum", "finished": [call.agent for call in finished]},
        )
