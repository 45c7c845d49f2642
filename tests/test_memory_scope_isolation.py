"""One user never recalls another's memories: typed memory scopes (issue 11, item 1).

DESIGN.md §5.17 and the spec's Cognitive memory → Scope: a user scope and a session scope never
match, whatever their strings. A session's user messages are filed under its user (or, without
one, under the session's own scope), its replies under the session's scope, and recall reads only
those. Checked through the public API on the in-memory and the SQLite memory store: what the
model is sent (the memory context and everything else of each request) and what
``agent.memory.retrieve()`` returns.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos import gmi
from agentos.api.gmi_agent import GmiAgent
from agentos.api.session import AgentSession
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message
from agentos.memory import (
    CognitiveMemoryConfig,
    CognitiveMemoryManager,
    InMemoryMemoryStore,
    MemoryScope,
    MemoryStore,
    RetrievalOptions,
    ScopeKey,
    SessionScopes,
    SQLiteMemoryStore,
)
from agentos.memory.sqlite_schema import MEMORY_STORE
from agentos.memory.store import TraceFilter
from agentos.memory.trace import SourceType
from agentos.storage.session_store import SQLiteSessionStore
from agentos.storage.sqlite import open_database
from agentos.testing import HashEmbedder, ScriptedModel

DIM = 128
IDS = ("alice", "bob", "carol")  # session ids and user ids drawn from one small alphabet
MARKER = re.compile(r"\b[ur]mk\d{4}\b")
QUERY = "remember the secret word please"
StoreFactory = Callable[[], MemoryStore]
STORES: dict[str, StoreFactory] = {
    "in-memory": InMemoryMemoryStore,
    "sqlite": lambda: SQLiteMemoryStore(path=":memory:"),
}


def markers(text: str) -> set[str]:
    return set(MARKER.findall(text))


def request_text(messages: Sequence[Message]) -> str:
    return "\n".join(m.text for m in messages)


@dataclass(frozen=True)
class Written:
    """Who wrote a marker: a user message or a reply, in which opening, by which user."""

    kind: str
    scope_id: str
    user_id: str | None


class Ledger:
    """Every marker written and who wrote it; what each reader may see."""

    def __init__(self) -> None:
        self.written: dict[str, Written] = {}

    def allowed(self, scope_id: str, user_id: str | None) -> set[str]:
        """What a session (one opening, one user or none) may be shown: its own opening's text
        and, with a user, what that user said in any opening."""
        return {
            marker
            for marker, w in self.written.items()
            if w.scope_id == scope_id or (user_id and w.kind == "user" and w.user_id == user_id)
        }

    def said_by(self, user_id: str) -> set[str]:
        return {m for m, w in self.written.items() if w.kind == "user" and w.user_id == user_id}


class Scenario:
    """A gmi() agent with memory on ``store``; each reply carries a fresh marker."""

    def __init__(self, store: MemoryStore) -> None:
        counter = itertools.count()
        self.texts = itertools.count()

        def reply(*_: Any) -> str:
            return f"Noted, the secret word is kept rmk{next(counter):04d}."

        self.model = ScriptedModel(reply)
        self.store = store
        self.agent = self.new_agent()
        self.ledger = Ledger()
        self.openings: set[tuple[str, str | None]] = set()

    def new_agent(self) -> GmiAgent:
        """An agent on the scenario's memory store (a new process on the same memory file)."""
        return gmi(model=self.model, memory={"embedder": HashEmbedder(DIM), "store": self.store})

    async def restart(self) -> None:
        """``agent.close()``, then a new agent on the same memory store, as a restart does."""
        await self.agent.close()
        self.agent = self.new_agent()

    async def send(self, session: AgentSession) -> None:
        """Send a marked message on ``session``; check every request it made."""
        scope_id, user_id = session.scope_id, session.user_id or None
        marker = f"umk{next(self.texts):04d}"
        before = len(self.model.requests)
        result = await session.send(f"Please remember the secret word {marker}.")
        self.ledger.written[marker] = Written("user", scope_id, user_id)
        [reply_marker] = markers(result.text)
        self.ledger.written[reply_marker] = Written("reply", scope_id, user_id)
        self.openings.add((scope_id, user_id))
        allowed = self.ledger.allowed(scope_id, user_id)
        for request in self.model.requests[before:]:
            seen = markers(request_text(request.messages))
            assert seen <= allowed, f"{session.id}/{user_id} was sent {sorted(seen - allowed)}"

    async def recalled(self, scopes: Sequence[tuple[MemoryScope, str]]) -> set[str]:
        # After a restart with no session opened yet, read the kept store as the next agent will.
        memory = self.agent.memory or CognitiveMemoryManager(
            CognitiveMemoryConfig(embedder=HashEmbedder(DIM), store=self.store)
        )
        options = RetrievalOptions(scopes=scopes, top_k=100, neutral_mood=True)
        result = await memory.retrieve(QUERY, options=options)
        return {m for hit in result.retrieved for m in markers(hit.trace.content)}

    async def check_retrieve(self) -> None:
        """``agent.memory.retrieve()`` with a session's scopes or a user's holds only theirs."""
        for scope_id, user_id in self.openings:
            found = await self.recalled(SessionScopes.of(scope_id, user_id).recall)
            assert found <= self.ledger.allowed(scope_id, user_id)
        for user_id in {u for _, u in self.openings if u}:
            assert await self.recalled([ScopeKey.user(user_id)]) == self.ledger.said_by(user_id)


Op = tuple[str, str, str | None]
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("send"), st.sampled_from(IDS), st.sampled_from((None, "", *IDS))),
        st.tuples(st.just("close"), st.sampled_from(IDS), st.none()),
        st.tuples(st.just("restart"), st.just(""), st.none()),
    ),
    min_size=1,
    max_size=14,
)


async def play(ops: list[Op], store: MemoryStore) -> None:
    scenario = Scenario(store)
    handles: dict[str, AgentSession] = {}
    for op, session_id, user_id in ops:
        if op == "restart":
            await scenario.restart()
            handles.clear()
            continue
        if op == "close":
            handle = handles.pop(session_id, None)
            if handle is not None:
                await handle.close()
            continue
        open_for = handles[session_id].user_id if session_id in handles else None
        if session_id in handles and user_id is not None and user_id != open_for:
            # The id is open for another user: the spec's refusal, nothing is sent.
            with pytest.raises(GMIError, match="is open for user"):
                scenario.agent.session(session_id, user_id=user_id)
            continue
        session = scenario.agent.session(session_id, user_id=user_id)
        handles[session_id] = session
        await scenario.send(session)
    await scenario.check_retrieve()
    await scenario.agent.close()


@pytest.mark.parametrize("store", sorted(STORES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_no_prompt_or_retrieval_holds_another_users_text(store: str, ops: list[Op]) -> None:
    asyncio.run(play(ops, STORES[store]()))


# -- plain examples -------------------------------------------------------------------------


def system_text(model: ScriptedModel, index: int = -1) -> str:
    return request_text(model.requests[index].messages)


@pytest.mark.parametrize("store", sorted(STORES))
async def test_a_session_named_after_a_user_does_not_recall_that_users_memories(
    store: str,
) -> None:
    scenario = Scenario(STORES[store]())
    agent = scenario.agent
    await scenario.send(agent.session("s1", user_id="alice"))
    alice_said = scenario.ledger.said_by("alice")
    mallory = agent.session("alice", user_id="mallory")
    await scenario.send(mallory)
    assert not markers(system_text(scenario.model)) & alice_said
    # ... and what mallory's session filed is not where alice recalls it.
    await scenario.send(agent.session("s2", user_id="alice"))
    assert markers(system_text(scenario.model)) & alice_said == alice_said
    assert await scenario.recalled([ScopeKey.user("alice")]) == scenario.ledger.said_by("alice")
    await agent.close()


@pytest.mark.parametrize("store", sorted(STORES))
async def test_a_session_without_a_user_never_reaches_the_user_of_its_id(store: str) -> None:
    scenario = Scenario(STORES[store]())
    agent = scenario.agent
    await scenario.send(agent.session("s1", user_id="alice"))
    alice_said = scenario.ledger.said_by("alice")
    anonymous = agent.session("alice")
    await scenario.send(anonymous)
    assert not markers(system_text(scenario.model)) & alice_said
    # The anonymous session's message is filed in its own (thread) scope, not in user alice's.
    assert await scenario.recalled([ScopeKey.user("alice")]) == alice_said
    thread = await scenario.recalled([ScopeKey.thread(anonymous.scope_id)])
    assert thread == {
        m for m, w in scenario.ledger.written.items() if w.scope_id == anonymous.scope_id
    }
    assert thread
    await agent.close()


async def test_sessions_of_one_user_recall_each_other_and_anonymous_ones_do_not() -> None:
    scenario = Scenario(InMemoryMemoryStore())
    agent = scenario.agent
    await scenario.send(agent.session("monday", user_id="ada"))
    ada_said = scenario.ledger.said_by("ada")
    await scenario.send(agent.session("friday", user_id="ada"))
    assert markers(system_text(scenario.model)) & ada_said == ada_said

    first = agent.session("anon")
    await scenario.send(first)
    first_text = {m for m, w in scenario.ledger.written.items() if w.scope_id == "anon"}
    await scenario.send(agent.session("other"))
    assert not markers(system_text(scenario.model)) & first_text
    # A closed session and the one reopened after it with the same id are strangers too.
    await first.close()
    again = agent.session("anon")
    assert again.scope_id != "anon"
    await scenario.send(again)
    assert not markers(system_text(scenario.model)) & first_text
    await agent.close()


async def test_a_scope_is_a_kind_and_an_id_and_a_bare_id_is_refused() -> None:
    assert SessionScopes.of("s1", "ada").recall == (
        ScopeKey(MemoryScope.USER, "ada"),
        ScopeKey(MemoryScope.THREAD, "s1"),
    )
    # A blank user id is no user (the spec's anonymous ''): the session's own scope only.
    assert SessionScopes.of("s1", "").recall == (ScopeKey(MemoryScope.THREAD, "s1"),)
    by_value = RetrievalOptions(scopes=[("user", "ada")])  # type: ignore[list-item]
    assert by_value.scopes == (ScopeKey.user("ada"),)
    for bad in (["ada"], "ada", [("user", "ada", "x")], [("friend", "ada")], [("user", 7)]):
        with pytest.raises(GMIError) as caught:
            RetrievalOptions(scopes=bad)  # type: ignore[arg-type]
        assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
        assert caught.value.details == {"option": "scopes"}


async def test_a_memory_written_before_typed_scopes_is_moved_to_the_session_it_was_for(
    tmp_path: Path,
) -> None:
    """Migration 2 of the SQLite memory store: rows the old bridge wrote (everything under a
    'user' scope) land in the scopes today's bridge would have used."""
    path = tmp_path / "agentos.db"
    store = SQLiteMemoryStore(path=path)
    old = CognitiveMemoryManager(CognitiveMemoryConfig(embedder=HashEmbedder(DIM), store=store))

    async def old_turn(said: str, replied: str, *, scope_id: str, user_id: str | None) -> None:
        owner = user_id or scope_id  # the old bridge: the user id, else the scope id
        user_tags, reply_tags = ["user", "p1", owner], ["assistant", "p1", owner]
        await old.encode(said, scope=MemoryScope.USER, scope_id=owner, tags=user_tags)
        await old.encode(
            replied,
            scope=MemoryScope.USER,
            scope_id=scope_id,
            source_type=SourceType.AGENT_INFERENCE,
            tags=reply_tags,
        )

    await old_turn("alice one", "reply one", scope_id="s1", user_id="alice")
    await old_turn("anon two", "reply two", scope_id="alice", user_id=None)
    await old_turn("alice three", "reply three", scope_id="s3", user_id="alice")
    await old.encode("a fact the host filed", scope_id="alice")
    await old.shutdown()
    database = open_database(path)
    database.execute("UPDATE schema_version SET version = 1 WHERE store = ?", (MEMORY_STORE,))
    database.close()

    reopened = SQLiteMemoryStore(path=path)
    memory = CognitiveMemoryManager(
        CognitiveMemoryConfig(embedder=HashEmbedder(DIM), store=reopened)
    )
    scopes = {t.content: (t.scope, t.scope_id) for t in await reopened.list_traces(TraceFilter())}
    assert scopes == {
        "alice one": ScopeKey.user("alice"),
        "reply one": ScopeKey.thread("s1"),
        "anon two": ScopeKey.thread("alice"),
        "reply two": ScopeKey.thread("alice"),
        "alice three": ScopeKey.user("alice"),
        "reply three": ScopeKey.thread("s3"),
        "a fact the host filed": ScopeKey.user("alice"),
    }
    await memory.shutdown()


async def test_a_session_without_a_user_is_not_picked_up_by_one(tmp_path: Path) -> None:
    """Reopening an open id with another user throws (spec: Scope), and "no user" is not a
    wildcard: in this process or resumed from a durable store after a restart."""
    agent = gmi(model=ScriptedModel(["ok"]))
    await agent.session("shared").send("hi")
    with pytest.raises(GMIError) as caught:
        agent.session("shared", user_id="mallory")
    assert caught.value.details == {"option": "user_id"}
    await agent.close()

    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path=path)
    first = gmi(model=ScriptedModel(["ok"]), store=store)
    await first.session("shared").send("hi")
    store.close()  # the process "exits" without closing the session: it stays open
    resumed = gmi(model=ScriptedModel([]), store=SQLiteSessionStore(path=path))
    with pytest.raises(GMIError) as caught:
        resumed.session("shared", user_id="mallory")
    assert caught.value.details == {"option": "user_id"}
    await resumed.close()


@pytest.mark.parametrize("store", sorted(STORES))
async def test_a_new_agent_on_a_kept_memory_does_not_continue_another_users_session(
    store: str,
) -> None:
    """A restart with the memory file kept but no session store: session "a" is not continued.

    The spec's "first opening" assumes agent.close() starts a new memory; a passed store
    outlives the agent, so the next agent's "a" is a new scope and bob never sees alice's "a".
    """
    scenario = Scenario(STORES[store]())
    first = scenario.agent.session("a", user_id="alice")
    await scenario.send(first)
    alice_text = set(scenario.ledger.written)
    await scenario.restart()
    for user_id in ("bob", None):
        later = scenario.agent.session("a", user_id=user_id)
        assert later.scope_id != first.scope_id
        await scenario.send(later)
        assert not markers(system_text(scenario.model)) & alice_text
        await later.close()
    # Alice herself still recalls what she said, from the kept memory.
    await scenario.send(scenario.agent.session("b", user_id="alice"))
    assert markers(system_text(scenario.model)) & alice_text == alice_text & (
        scenario.ledger.said_by("alice")
    )
    await scenario.agent.close()
