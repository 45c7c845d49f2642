"""The review-loop strategy: a producer drafts, a reviewer approves or asks for changes.

Issue 14 ("review-loop (producer and reviewer; the reviewer answers ``{approved, feedback}`` JSON,
anything else counts as a rejection with its text as feedback; max rounds; the last draft
returned)") after the reference's table (§1.27). The roster's first member produces, the second
reviews. Each round the producer drafts (from round 2 with its last draft and the reviewer's
feedback), then the reviewer answers with the JSON verdict ``{"approved": bool, "feedback": str}``
(the one interface fixed here). An approved draft ends the loop; after ``max_rounds`` rounds (3
by default) the last draft is the result, approved or not.

A reviewer skipped by approval cannot review: the loop ends with the draft it has. A member that
fails ends the run with its error (`AgencyMemberError`), as in the sequential strategy; a budget
refusal or a control that says stop ends it with the last draft (empty when there is none).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .run import AgencyRun, member_failed

__all__ = ["DEFAULT_ROUNDS", "Verdict", "parse_verdict", "review_prompt", "revision_prompt", "run"]

DEFAULT_ROUNDS = 3
"""Rounds when ``max_rounds`` is not set (reference ``maxRounds ?? 3``)."""

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A review: approved or not, and what to change."""

    approved: bool
    feedback: str


def parse_verdict(text: str) -> Verdict:
    """The reviewer's reply as a `Verdict`.

    A JSON object (optionally in a code fence) with a boolean ``approved`` is the verdict, its
    ``feedback`` read as text (empty when absent). Anything else is a rejection whose feedback
    is the reply's text, so the producer still learns what the reviewer said.
    """
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        data = json.loads(body)
    except ValueError:
        return Verdict(False, text)
    if not isinstance(data, dict) or not isinstance(data.get("approved"), bool):
        return Verdict(False, text)
    feedback = data.get("feedback")
    return Verdict(data["approved"], "" if feedback is None else str(feedback))


def review_prompt(task: str, draft: str) -> str:
    """What the reviewer is asked: the task, the draft, and the JSON verdict to answer with."""
    return (
        f"Review this draft of the task below.\n\nThe task:\n{task}\n\nThe draft:\n{draft}\n\n"
        'Reply with JSON only: {"approved": true, "feedback": ""} when the draft is ready, or '
        '{"approved": false, "feedback": "<what must change>"} when it is not.'
    )


def revision_prompt(task: str, draft: str, feedback: str) -> str:
    """What the producer is asked from round 2: the task, its last draft and the feedback."""
    return (
        f"{task}\n\nYour last draft:\n{draft}\n\nThe reviewer's feedback:\n{feedback}\n\n"
        "Write a revised draft that addresses the feedback."
    )


async def run(run: AgencyRun) -> str:
    """Run the loop and return the approved or last draft (see the module docstring)."""
    producer, reviewer = run.plan.members[0], run.plan.members[1]
    rounds = run.plan.max_rounds or DEFAULT_ROUNDS
    draft: str | None = None
    feedback = ""
    for round_number in range(1, rounds + 1):
        if run.stopped:
            break
        prompt = run.task if draft is None else revision_prompt(run.task, draft, feedback)
        produced = await run.call_member(producer, prompt, result=round_number == rounds)
        if produced.error is not None:
            if run.stopped:
                break  # a budget refused the call: the result is the last draft
            raise member_failed(produced)
        draft = produced.output
        if run.stopped:
            break
        review = await run.call_member(reviewer, review_prompt(run.task, draft))
        if review.error is not None and not run.stopped:
            raise member_failed(review)
        if review.skipped or review.error is not None:
            break
        verdict = parse_verdict(review.output)
        if verdict.approved:
            break
        feedback = verdict.feedback
    return draft or ""
