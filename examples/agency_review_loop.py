"""A review loop: a writer drafts, an editor reviews, the writer revises until it is approved.

    python examples/agency_review_loop.py

runs offline on scripted models (the editor rejects the first draft, approves the second). With
a provider key in the environment (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``
or ``OPENROUTER_API_KEY``) both agents run on that provider instead.

The editor answers with the review-loop's JSON verdict, ``{"approved": bool, "feedback": str}``;
anything else counts as a rejection whose text is the feedback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agentos import AgencyResult, agency
from agentos.core.messages import Message
from agentos.llm import configured_provider
from agentos.testing import ScriptedModel

TASK = "Write a two-sentence description of a reusable steel water bottle."
WRITER = "You write short, concrete product copy."
EDITOR = (
    "You are a strict copy editor. Approve copy only when it names a concrete benefit and has "
    "no filler words."
)


def _scripted_writer() -> ScriptedModel:
    def write(messages: Sequence[Message], tools: Any, options: Any) -> str:
        prompt = messages[-1].text
        if "feedback" not in prompt:
            return "This bottle is really very nice. It is great for lots of things."
        return (
            "This double-walled steel bottle keeps water cold for 24 hours. It survives drops "
            "and never holds a taste."
        )

    return ScriptedModel(write)


def _scripted_editor() -> ScriptedModel:
    def review(messages: Sequence[Message], tools: Any, options: Any) -> str:
        if "really very nice" in messages[-1].text:
            return '{"approved": false, "feedback": "Name a concrete benefit; cut the filler."}'
        return '{"approved": true, "feedback": ""}'

    return ScriptedModel(review)


async def main(provider: str | None = None) -> AgencyResult:
    """Run the loop on ``provider`` (scripted models when None) and print each call."""
    if provider is None:
        writer: dict[str, Any] = {"model": _scripted_writer(), "instructions": WRITER}
        editor: dict[str, Any] = {"model": _scripted_editor(), "instructions": EDITOR}
    else:
        writer = {"provider": provider, "instructions": WRITER}
        editor = {"provider": provider, "instructions": EDITOR}
    team = agency(agents={"writer": writer, "editor": editor}, strategy="review-loop", max_rounds=3)
    result = await team.generate(TASK)
    for call in result.agent_calls:
        print(f"[{call.agent}] {call.output}")
    print(f"\nFinal copy: {result.text}")
    print(f"[usage] {result.usage.total_tokens} tokens over {len(result.agent_calls)} calls")
    await team.close()
    return result


if __name__ == "__main__":
    asyncio.run(main(configured_provider()))
