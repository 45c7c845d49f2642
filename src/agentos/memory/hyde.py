"""HyDE for memory: search with a hypothetical memory instead of the raw query (reference §1.17).

Asked to recall something, a model writes the note the memory would hold if it knew the answer
("I am allergic to peanuts." for "what am I allergic to?"); its embedding sits closer to the
real note than the question's does. The manager uses it only when a retrieval asks for it
(``hyde=True``, or a policy with ``hyde: 'always'``) and a model invoker is attached; a failed
or empty hypothesis leaves the raw query.
"""

from __future__ import annotations

from agentos.memory.invoker import ModelInvoker

__all__ = ["HYDE_SYSTEM_PROMPT", "MemoryHydeRetriever"]

HYDE_SYSTEM_PROMPT = """\
You help a memory system search its notes. Given a question or topic, write the note the \
memory would contain if it already knew the answer: one or two sentences in the first person, \
as an observation about the user or the conversation. Do not answer the question, do not \
hedge, and do not mention that the note is hypothetical.

Examples:
Query: "what am I allergic to?" -> I am allergic to peanuts and avoid anything cooked in nut oil.
Query: "where does my sister live" -> My sister lives in Lyon, where she moved for her nursing job.
Query: "deadline for the report" -> The quarterly report is due to my manager on Friday."""


class MemoryHydeRetriever:
    """Writes hypothetical memories with a `ModelInvoker`."""

    def __init__(self, invoker: ModelInvoker) -> None:
        self._invoker = invoker

    async def generate_hypothesis(self, query: str) -> str:
        """The hypothetical note for ``query``, or ``""`` when the model fails."""
        try:
            text = await self._invoker(HYDE_SYSTEM_PROMPT, f'Query: "{query}"')
        except Exception:
            return ""
        return text.strip()

    async def search_text(self, query: str) -> str:
        """What to embed for ``query``: the hypothesis, else the query itself."""
        return await self.generate_hypothesis(query) or query
