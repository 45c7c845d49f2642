"""The debate strategy: every member speaks each round, then a judge gives the verdict.

Issue 14 ("debate (rounds, transcript, a judge)") after the reference's table (§1.27): the roster
debates for ``max_rounds`` rounds (3 by default). In round 1 each member states its position on
the task alone; from round 2 each member sees the whole transcript so far (every earlier speech,
``[<name>, round <r>]: <text>``, joined by a ``---`` line) and answers it. A judge (a plain agent of
the agency's model) then reads the transcript and gives the result. A member that fails or is
skipped by approval adds nothing to the transcript (the debate goes on without it); a judge that
fails ends the run with its error (`AgencyMemberError`). A budget refusal or a control that says
stop ends the debate before the next speech, and the result is then the last speech.
"""

from __future__ import annotations

from .run import AgencyRun, member_failed

__all__ = ["DEFAULT_ROUNDS", "JUDGE_INSTRUCTIONS", "run"]

DEFAULT_ROUNDS = 3
"""Rounds when ``max_rounds`` is not set (reference ``maxRounds ?? 3``)."""

JUDGE_INSTRUCTIONS = (
    "You judge a debate between agents. Weigh each argument on its merits, not on who spoke "
    "last or most, and decide the best answer to the task.\n\n"
    "Reply in this form:\nVerdict: <the final answer to the task>\n"
    "Reasoning: <the arguments that decided it, briefly>"
)
"""The judge's system instructions (our words; the verdict form is fixed)."""

_SEPARATOR = "\n---\n"


def opening_prompt(task: str) -> str:
    """What a member is asked in round 1."""
    return (
        f"The team is debating this task:\n{task}\n\n"
        "State your opening position: your answer and your main reasons, in about 150 words "
        "at most."
    )


def rebuttal_prompt(task: str, transcript: list[str], round_number: int) -> str:
    """What a member is asked from round 2: the task, the transcript so far, the round."""
    return (
        f"The team is debating this task:\n{task}\n\n"
        f"The debate so far:\n{_SEPARATOR.join(transcript)}\n\n"
        f"Round {round_number}: answer the strongest points the others made, then defend or "
        "revise your position, in about 150 words at most."
    )


def judge_prompt(task: str, transcript: list[str]) -> str:
    """What the judge is asked: the task and the whole transcript."""
    return f"The task:\n{task}\n\nThe debate:\n{_SEPARATOR.join(transcript)}\n\nGive your verdict."


async def run(run: AgencyRun) -> str:
    """Run the debate and return the judge's verdict (see the module docstring)."""
    rounds = run.plan.max_rounds or DEFAULT_ROUNDS
    transcript: list[str] = []
    last = ""
    for round_number in range(1, rounds + 1):
        for member in run.plan.members:
            if run.stopped:
                return last
            prompt = (
                opening_prompt(run.task)
                if round_number == 1
                else rebuttal_prompt(run.task, transcript, round_number)
            )
            call = await run.call_member(member, prompt)
            if call.skipped or call.error is not None:
                continue
            transcript.append(f"[{member.name}, round {round_number}]: {call.output}")
            last = call.output
    if run.stopped or not transcript:
        return last
    verdict = await run.call_helper(
        "judge", JUDGE_INSTRUCTIONS, judge_prompt(run.task, transcript), result=True
    )
    if verdict.error is not None:
        if run.stopped:
            return last  # a budget refused the judge: the result is the last speech
        raise member_failed(verdict)
    return verdict.output
