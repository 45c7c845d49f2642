"""`CognitiveMemoryBridge`: a GMI's link to its cognitive memory.

Spec: Mood-weighted memory bridge, Cognitive memory → Scope; reference §1.11. Before the first
model call of a user turn, `assemble_context()` retrieves memories for the user's message, scored
with emotional congruence to the GMI's PAD state, and writes the memory context (1,600 tokens by
default). After a turn that ended without error, `sync_for_turn()` feeds the exchange to the
observer and encodes it with the GMI's PAD state and mood: the user's message as an episodic
``user_statement`` under the session's user, the reply as a semantic ``agent_inference`` under
the session's scope id.

Scope (DESIGN.md §5.17, `agentos.memory.scope.SessionScopes`): a session is opened with a
``scope_id`` (the session id, or a fresh one when the id is reopened after close) and,
optionally, a ``user_id``. Scopes are typed: the user's messages go to the user scope
``(USER, user_id)`` or, without a user, to the session's own ``(THREAD, scope_id)``; the replies
to ``(THREAD, scope_id)``; recall reads only those scopes. A user scope and a session scope never
match, whatever their strings, so a session whose id equals someone's user id
(``session("alice", user_id="mallory")``, or ``session("alice")`` with no user) neither recalls
user alice's memories nor files anything where alice recalls it. Sessions of one user recall
what that user said in each of them; sessions without a user recall nothing of each other's.
"""

from __future__ import annotations

from agentos.memory.config import RetrievalOptions
from agentos.memory.manager import CognitiveMemoryManager
from agentos.memory.scope import ScopeKey, SessionScopes
from agentos.memory.trace import PAD, MemoryType, SourceType
from agentos.substrate.collaborators import TurnExchange
from agentos.substrate.mood import GMIMood, PADState

__all__ = ["CognitiveMemoryBridge", "memory_pad"]


def memory_pad(pad: PADState) -> PAD:
    """The GMI's PAD state as cognitive memory reads it."""
    return PAD(pad.pleasure, pad.arousal, pad.dominance)


class CognitiveMemoryBridge:
    """Recall and encoding for one session of a GMI, within the session's scopes."""

    def __init__(
        self,
        manager: CognitiveMemoryManager,
        *,
        scope_id: str,
        user_id: str | None = None,
        persona_id: str | None = None,
        domain: str | None = None,
    ) -> None:
        if not scope_id:
            raise ValueError("a memory bridge needs a scope_id")
        self.manager = manager
        self.scope_id = scope_id
        self.user_id = user_id or None
        self.session_scopes = SessionScopes.of(scope_id, self.user_id)
        self.persona_id = persona_id
        self.domain = domain

    @property
    def scopes(self) -> list[ScopeKey]:
        """The scopes this session recalls from (the user's, then the session's own)."""
        return list(self.session_scopes.recall)

    def _tags(self, role: str) -> list[str]:
        owner = self.user_id or self.scope_id
        return list(dict.fromkeys(t for t in (role, self.persona_id, owner, self.domain) if t))

    async def assemble_context(
        self, query: str, *, mood: GMIMood, pad: PADState, token_budget: int
    ) -> str | None:
        """The memory context for ``query``, or ``None`` when nothing is recalled."""
        if not query.strip():
            return None
        assembled = await self.manager.assemble_for_prompt(
            query,
            token_budget,
            pad=memory_pad(pad),
            options=RetrievalOptions(scopes=self.scopes),
        )
        return assembled.context_text or None

    async def sync_for_turn(self, exchange: TurnExchange) -> None:
        """Observe and encode a finished exchange (see the module doc)."""
        pad = memory_pad(exchange.pad)
        mood = exchange.mood.value
        scopes = self.session_scopes
        if exchange.user_text:
            await self._file(
                "user",
                exchange.user_text,
                scopes.user,
                pad,
                mood,
                MemoryType.EPISODIC,
                SourceType.USER_STATEMENT,
            )
        if exchange.response_text:
            await self._file(
                "assistant",
                exchange.response_text,
                scopes.thread,
                pad,
                mood,
                MemoryType.SEMANTIC,
                SourceType.AGENT_INFERENCE,
            )

    async def _file(
        self,
        role: str,
        text: str,
        scope: ScopeKey,
        pad: PAD,
        mood: str,
        memory_type: MemoryType,
        source: SourceType,
    ) -> None:
        """Observe one side of the exchange, then encode it in ``scope``."""
        await self.manager.observe(
            role, text, pad=pad, scope=scope.kind, scope_id=scope.id, recall_scopes=self.scopes
        )
        await self.manager.encode(
            text,
            pad=pad,
            gmi_mood=mood,
            type=memory_type,
            scope=scope.kind,
            scope_id=scope.id,
            source_type=source,
            tags=self._tags(role),
        )
