"""CognitiveMemoryBridge on a GMI: memory context before the first model call, the exchange
encoded after the turn with the GMI's mood, and the spec's scope rules (issue 6, item 5)."""

from __future__ import annotations

from agentos.core.messages import Role
from agentos.memory.config import CognitiveMemoryConfig
from agentos.memory.manager import CognitiveMemoryManager
from agentos.memory.store import TraceFilter
from agentos.memory.trace import MemoryScope, MemoryType, SourceType
from agentos.substrate import GMIMood
from agentos.substrate.memory_bridge import CognitiveMemoryBridge
from agentos.testing import FakeClock, HashEmbedder, ScriptedModel
from fakes.gmi_helpers import make_gmi, persona, run, turn


def shared_memory() -> CognitiveMemoryManager:
    return CognitiveMemoryManager(
        CognitiveMemoryConfig(embedder=HashEmbedder(384), clock=FakeClock())
    )


async def session_turn(
    memory: CognitiveMemoryManager, text: str, *, scope_id: str, user_id: str | None = None
) -> ScriptedModel:
    model = ScriptedModel(["Noted."])
    bridge = CognitiveMemoryBridge(memory, scope_id=scope_id, user_id=user_id, persona_id="p1")
    chosen = persona(mood_adaptation={"enabled": True, "default_mood": "empathetic"})
    gmi = await make_gmi(model, persona=chosen, memory_bridge=bridge)
    await run(gmi, turn(text))
    return model


def memory_prompt(model: ScriptedModel) -> str:
    return "\n".join(m.text for m in model.requests[0].messages if m.role is Role.SYSTEM)


async def test_the_exchange_is_encoded_under_the_user_and_the_scope_with_the_mood() -> None:
    memory = shared_memory()
    await session_turn(memory, "I am allergic to peanuts.", scope_id="s1", user_id="alice")
    user = await memory.store.list_traces(TraceFilter(scopes=[(MemoryScope.USER, "alice")]))
    reply = await memory.store.list_traces(TraceFilter(scopes=[(MemoryScope.THREAD, "s1")]))
    assert [(t.content, t.type, t.provenance.source_type) for t in user] == [
        ("I am allergic to peanuts.", MemoryType.EPISODIC, SourceType.USER_STATEMENT)
    ]
    assert [(t.content, t.type, t.provenance.source_type) for t in reply] == [
        ("Noted.", MemoryType.SEMANTIC, SourceType.AGENT_INFERENCE)
    ]
    assert user[0].emotional_context.gmi_mood == GMIMood.EMPATHETIC.value
    # The empathetic mood's PAD (0.55, 0.15, 0.25) reached the encoding.
    assert user[0].emotional_context.dominance == 0.25
    assert user[0].tags == ["user", "p1", "alice"]


async def test_sessions_of_one_user_recall_each_other_and_anonymous_sessions_do_not() -> None:
    memory = shared_memory()
    await session_turn(memory, "I am allergic to peanuts.", scope_id="s1", user_id="alice")
    same_user = await session_turn(memory, "What am I allergic to?", scope_id="s2", user_id="alice")
    assert "I am allergic to peanuts." in memory_prompt(same_user)
    other_user = await session_turn(memory, "What am I allergic to?", scope_id="s3", user_id="bob")
    assert "peanuts" not in memory_prompt(other_user)

    await session_turn(memory, "My locker code is 4471.", scope_id="anon-1")
    anonymous = await session_turn(memory, "What is my locker code?", scope_id="anon-2")
    assert "4471" not in memory_prompt(anonymous)
    same_session = await session_turn(memory, "What is my locker code?", scope_id="anon-1")
    assert "My locker code is 4471." in memory_prompt(same_session)


def test_a_bridge_needs_a_scope() -> None:
    import pytest

    with pytest.raises(ValueError, match="scope_id"):
        CognitiveMemoryBridge(shared_memory(), scope_id="")
