r"""The sequential strategy: the members in roster order, each given the task and the last output.

Reference §1.27 and black-box case 54: member k gets the prompt (k = 0) or
``"Original task: <prompt>\n\nPrevious agent (<name>) output:\n<text>"``; the result is the
last member's output. A member the ``before_agent`` approval skipped passes nothing on: the next
member gets the output before it. A member that fails ends the run with its error
(`AgencyMemberError`); a budget refusal or a control that says stop ends it with the last output.
"""

from __future__ import annotations

from .run import AgencyRun, member_failed

__all__ = ["next_input", "run"]


def next_input(task: str, previous: str, output: str) -> str:
    """What the member after ``previous`` gets: the task, and ``previous``'s ``output``."""
    return f"Original task: {task}\n\nPrevious agent ({previous}) output:\n{output}"


async def run(run: AgencyRun) -> str:
    """Run the members one after another; return the last output."""
    members = run.plan.members
    prompt, text = run.task, ""
    for position, member in enumerate(members):
        if run.stopped:
            break
        last = position == len(members) - 1
        call = await run.call_member(member, prompt, result=last)
        if call.error is not None:
            if run.stopped:
                break  # a budget refused the call: the result is the output so far
            raise member_failed(call)
        if call.skipped:
            continue
        text = call.output
        prompt = next_input(run.task, member.name, call.output)
    return text
