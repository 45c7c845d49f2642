"""A manager that spawns a specialist and delegates to it (hierarchical agency, emergent).

    python examples/agency_hierarchical.py

runs offline on scripted models: the manager finds no one on its team to check facts, spawns a
``fact_checker`` with ``spawn_specialist``, asks the writer for a paragraph with
``delegate_to_writer``, has the new specialist check it with ``delegate_to_fact_checker`` (the
tool exists from the step after the spawn), then answers. With a provider key in the environment
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY`` or ``OPENROUTER_API_KEY``) the
manager, the writer and any specialist run on that provider, and the model decides what to do.

A specialist lasts for one call: the next ``generate()`` starts from the configured roster.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agentos import AgencyResult, agency
from agentos.core.messages import Message, ToolCall
from agentos.llm import configured_provider
from agentos.llm.model import ToolDefinition
from agentos.testing import ScriptedModel, ScriptStep

TASK = "Write a short paragraph about the Moon for a children's encyclopedia, with facts checked."
WRITER = "You write clear, friendly prose for children."
CHECKER = "You check factual claims. List each claim as correct or wrong, with the right figure."


def _scripted_manager() -> ScriptedModel:
    """The agency's model: plays the manager, and the fact checker once it is spawned."""

    def play(messages: Sequence[Message], tools: Sequence[ToolDefinition], options: Any) -> Any:
        if CHECKER in messages[0].text:  # the spawned specialist's system prompt
            return (
                "The Moon is about 384,000 km away: correct. It orbits in about 27 days: correct."
            )
        results = [m.tool_result.output for m in messages if m.tool_result is not None]
        step = len(results)
        if step == 0:
            arguments = {
                "role": "fact_checker",
                "instructions": CHECKER,
                "justification": "No one on the team can verify facts.",
            }
            return ScriptStep(tool_calls=[ToolCall("spawn-1", "spawn_specialist", arguments)])
        if step == 1:
            task = {"task": "Write three sentences about the Moon's distance and orbit."}
            return ScriptStep(tool_calls=[ToolCall("call-1", "delegate_to_writer", task)])
        if step == 2:
            check = {"task": f"Check these claims:\n{results[1]}"}
            return ScriptStep(tool_calls=[ToolCall("call-2", "delegate_to_fact_checker", check)])
        return f"{results[1]}\n\n(Checked: {results[2]})"

    return ScriptedModel(play)


def _scripted_writer() -> ScriptedModel:
    return ScriptedModel(
        [
            "The Moon is about 384,000 km from Earth. It goes around us in about 27 days. "
            "Its light is sunlight bouncing off its dusty surface."
        ]
    )


async def main(provider: str | None = None) -> AgencyResult:
    """Run the hierarchical agency on ``provider`` (scripted when None); print each call."""
    if provider is None:
        team = agency(
            agents={"writer": {"model": _scripted_writer(), "instructions": WRITER}},
            strategy="hierarchical",
            model=_scripted_manager(),
            emergent={"enabled": True, "max_specialists": 2},
        )
    else:
        team = agency(
            agents={"writer": {"provider": provider, "instructions": WRITER}},
            strategy="hierarchical",
            provider=provider,
            emergent={"enabled": True, "max_specialists": 2},
            instructions="Have every fact checked by a fact-checking specialist before you answer.",
        )
    result = await team.generate(TASK)
    for call in result.agent_calls:
        print(f"[{call.agent}] {call.input!r}\n  -> {call.output}")
    print(f"\nSpecialists spawned: {result.metadata.get('emergent_agents')}")
    print(f"Answer:\n{result.text}")
    await team.close()
    return result


if __name__ == "__main__":
    asyncio.run(main(configured_provider()))
