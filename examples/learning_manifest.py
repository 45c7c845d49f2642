"""The spec's learning example: a tutor with ``learning=True`` and its manifest after one send.

The layer binds the session to a learner (the agent ``tutor`` with the user ``student-7f3a``, in
no namespace) and sends the tutor's personality section on every turn; it logs its manifest
once, as a console line, when it opens that first learner. Offline by default (a scripted
model plays the reply); ``--openai`` runs it on OpenAI (``OPENAI_API_KEY``), as the spec does.

    python examples/learning_manifest.py
"""

from __future__ import annotations

import asyncio
import sys

from agentos import agent
from agentos.learning import LoopManifest
from agentos.llm.model import ChatModel
from agentos.testing import ScriptedModel


async def main(model: ChatModel | None = None) -> LoopManifest:
    """One send of ``lesson-1`` for ``student-7f3a``; prints and returns the manifest."""
    chosen = model or ScriptedModel(["Recursion is like a set of nesting dolls."])
    tutor = agent(
        runtime="gmi",
        provider="openai",
        model=chosen,
        name="Tutor",
        instructions="You are a patient CS tutor.",
        personality={"openness": 0.9, "conscientiousness": 0.95},
        learning=True,
    )

    session = tutor.session("lesson-1", user_id="student-7f3a")
    await session.send("Explain recursion with an analogy.")

    assert tutor.learning is not None  # learning=True: the agent's layer
    manifest = await tutor.learning.manifest()
    print(manifest.loops["personality_rendering"].as_dict())  # {'live': True}
    print(manifest.turns)  # {'prepared': 1, 'bound': 1, 'none': {}}
    await tutor.close()
    return manifest


if __name__ == "__main__":
    live: ChatModel | None = None
    if "--openai" in sys.argv[1:]:
        from agentos.llm.resolve import resolve_model

        live = resolve_model("openai", None)
    asyncio.run(main(live))
