from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos.core.messages import (
    ImagePart,
    Message,
    ReplayBlock,
    TextPart,
    ToolCall,
    ToolResult,
    dump_messages,
    load_messages,
)
from agentos.storage import (
    DEFAULT_EVICT_CHUNK_RATIO,
    DEFAULT_HISTORY_MAX_TOKENS,
    DEFAULT_MIN_KEEP_SENDS,
    SESSION_STORE,
    SESSION_STORE_MIGRATIONS,
    HistoryEvent,
    HistoryEventKind,
    InMemorySessionStore,
    SessionChanges,
    SessionHistoryBuffer,
    SessionInfo,
    SessionStore,
    SQLiteSessionStore,
    SQLiteUsageLedger,
    StoredMessage,
    is_partial,
    mark_partial,
    message_tokens,
    open_database,
    validate_tool_pairing,
)
from agentos.testing import FakeClock

# -- helpers ---------------------------------------------------------------------------------


def _user(tokens: int, tag: str = "u") -> Message:
    """A user message estimated at exactly ``tokens`` tokens (4 characters each)."""
    return Message.user((tag * 4 * tokens)[: 4 * tokens])


def _call(call_id: str) -> ToolCall:
    return ToolCall(call_id, "lookup", {"q": call_id})


def _result(call_id: str) -> Message:
    return Message.tool(ToolResult(call_id, "lookup", {"answer": call_id}))


async def _commit_turns(buffer: SessionHistoryBuffer, sizes: list[int]) -> None:
    for index, size in enumerate(sizes):
        turn = buffer.begin_turn()
        await turn.add(_user(size, tag=chr(ord("a") + index % 26)))
        await turn.commit()


def _rich_history() -> list[Message]:
    """Every kind of field a stored message must keep exactly."""
    return [
        Message.system("be brief"),
        Message.user(
            [TextPart("look at this"), ImagePart("data:image/png;base64,AAAA", "image/png")],
            name="ann",
        ),
        Message.assistant(
            "let me check",
            tool_calls=[ToolCall("c1", "lookup", {"q": "x", "n": [1, 2.5, None]})],
            replay_blocks=[
                ReplayBlock("anthropic", "thinking", {"thinking": "hmm", "signature": "sig=="}),
                ReplayBlock("gemini", "thought_signature", {"signature": "abc"}),
            ],
        ),
        Message.tool(
            ToolResult("c1", "lookup", None, is_error=True, error_details={"code": "E", "n": 2})
        ),
        Message.tool(ToolResult("c1", "lookup", {"nested": {"list": [1, "two", True]}})),
        mark_partial(Message.assistant("half an answer")),
        Message(Message.user("meta").role, "meta", metadata={"k": {"deep": [1, 2]}, "x": 1.5}),
    ]


# -- defaults and construction ---------------------------------------------------------------


def test_defaults_match_the_reference() -> None:
    buffer = SessionHistoryBuffer("s")
    assert buffer.max_tokens == DEFAULT_HISTORY_MAX_TOKENS == 120_000
    assert buffer.min_keep_sends == DEFAULT_MIN_KEEP_SENDS == 8
    assert buffer.evict_chunk_ratio == DEFAULT_EVICT_CHUNK_RATIO == 0.25
    assert isinstance(buffer.store, InMemorySessionStore)
    assert buffer.messages() == []
    assert buffer.blocks == 0
    assert buffer.tokens == 0
    assert buffer.epoch == 0


@pytest.mark.parametrize(
    "options",
    [
        {"max_tokens": 0},
        {"max_tokens": True},
        {"min_keep_sends": -1},
        {"evict_chunk_ratio": 0.0},
        {"evict_chunk_ratio": 1.5},
    ],
)
def test_bad_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=next(iter(options))):
        SessionHistoryBuffer("s", **options)  # type: ignore[arg-type]


def test_message_tokens_is_characters_over_four_rounded_up() -> None:
    assert message_tokens(Message.user("abcd")) == 1
    assert message_tokens(Message.user("abcde")) == 2
    assert message_tokens(_user(7)) == 7


# -- turns and blocks --------------------------------------------------------------------------


async def test_a_turn_is_one_block_written_as_each_step_finishes() -> None:
    store = InMemorySessionStore()
    buffer = SessionHistoryBuffer("s", store)
    turn = buffer.begin_turn()
    await turn.add(Message.user("hi"))
    # Written at once: a fresh reader of the store sees the input before the turn ends.
    assert [s.message for s in store.load_messages("s")] == [Message.user("hi")]
    await turn.add([Message.assistant("", tool_calls=[_call("c1")]), _result("c1")])
    await turn.add(Message.assistant("done"))
    await turn.commit()
    stored = store.load_messages("s")
    assert {s.block for s in stored} == {turn.block}
    assert [s.position for s in stored] == [0, 1, 2, 3]
    assert buffer.blocks == 1
    assert buffer.messages() == [s.message for s in stored]
    assert buffer.tokens == sum(message_tokens(m) for m in buffer.messages())
    assert buffer.drain_history_events() == []


async def test_ten_blocks_over_budget_drop_two() -> None:
    clock = FakeClock()
    buffer = SessionHistoryBuffer("s", max_tokens=95, clock=clock)
    await _commit_turns(buffer, [10] * 9)
    assert (buffer.blocks, buffer.tokens) == (9, 90)
    assert buffer.drain_history_events() == []
    oldest_kept = buffer.messages()[2]
    await _commit_turns(buffer, [10])  # 100 > 95 with 10 blocks: min(10 - 8, max(1, ceil(2.5))) = 2
    assert (buffer.blocks, buffer.tokens) == (8, 80)
    assert buffer.messages()[0] == oldest_kept
    assert buffer.drain_history_events() == [
        HistoryEvent(HistoryEventKind.EVICTED, messages=2, blocks=2, tokens=20, at=clock.now())
    ]


async def test_eviction_repeats_in_chunks_down_to_min_keep_sends() -> None:
    buffer = SessionHistoryBuffer("s", max_tokens=1000, min_keep_sends=2)
    await _commit_turns(buffer, [10] * 20)
    assert buffer.drain_history_events() == []
    await _commit_turns(buffer, [2000])
    # 21 blocks: drop 6 -> 15: drop 4 -> 11: drop 3 -> 8: drop 2 -> 6: drop 2 -> 4: drop 1 -> 3:
    # drop 1 -> 2 = min_keep_sends, still over budget but never below the floor.
    assert buffer.blocks == 2
    assert buffer.tokens == 2010
    (event,) = buffer.drain_history_events()
    assert (event.kind, event.messages, event.blocks, event.tokens) == ("evicted", 19, 19, 190)


async def test_one_block_over_budget_is_kept_under_min_keep_sends() -> None:
    buffer = SessionHistoryBuffer("s", max_tokens=10)
    await _commit_turns(buffer, [1000])
    assert (buffer.blocks, buffer.tokens) == (1, 1000)
    assert buffer.drain_history_events() == []


async def test_min_keep_sends_zero_lets_the_last_block_go() -> None:
    buffer = SessionHistoryBuffer("s", max_tokens=10, min_keep_sends=0)
    await _commit_turns(buffer, [1000])
    assert buffer.messages() == []
    assert [e.kind for e in buffer.drain_history_events()] == ["evicted"]


async def test_eviction_drops_whole_blocks_with_their_tool_rounds() -> None:
    store = InMemorySessionStore()
    buffer = SessionHistoryBuffer("s", store, max_tokens=30, min_keep_sends=1)
    turn = buffer.begin_turn()
    await turn.add(_user(10))
    await turn.add([Message.assistant("", tool_calls=[_call("c1"), _call("c2")])])
    await turn.add([_result("c1"), _result("c2")])
    await turn.add(Message.assistant("answer"))
    await turn.commit()
    await _commit_turns(buffer, [25])
    assert buffer.blocks == 1
    assert buffer.messages() == [_user(25, tag="a")]
    assert [s.message for s in store.load_messages("s")] == buffer.messages()


# -- failed turns and partial messages ---------------------------------------------------------


async def test_a_failed_turn_with_steps_keeps_them_the_last_marked_partial() -> None:
    store = InMemorySessionStore()
    buffer = SessionHistoryBuffer("s", store)
    await _commit_turns(buffer, [1])
    turn = buffer.begin_turn()
    await turn.add(Message.user("question"))
    await turn.add(Message.assistant("first half"))
    await turn.fail(has_steps=True)
    held = buffer.messages()
    assert held[-1] == mark_partial(Message.assistant("first half"))
    assert is_partial(held[-1])
    assert held[-1].metadata == {"partial": True}
    assert [s.message for s in store.load_messages("s")] == held
    # Never sent to a provider; still listed by messages().
    assert buffer.prompt_messages() == held[:-1]
    assert buffer.blocks == 2


async def test_a_partial_tool_result_leaves_its_whole_round_out_of_the_prompt() -> None:
    buffer = SessionHistoryBuffer("s")
    turn = buffer.begin_turn()
    await turn.add(Message.user("q"))
    await turn.add([Message.assistant("", tool_calls=[_call("c1"), _call("c2")]), _result("c1")])
    await turn.add(_result("c2"))
    await turn.fail(has_steps=True)
    assert is_partial(buffer.messages()[-1])
    assert len(buffer.messages()) == 4
    assert buffer.prompt_messages() == [Message.user("q")]


async def test_a_failed_turn_without_steps_keeps_nothing() -> None:
    store = InMemorySessionStore()
    buffer = SessionHistoryBuffer("s", store)
    await _commit_turns(buffer, [1, 2])
    before = buffer.messages()
    turn = buffer.begin_turn()
    await turn.add(Message.user("never answered"))
    await turn.fail(has_steps=False)
    assert buffer.messages() == before
    assert [s.message for s in store.load_messages("s")] == before
    assert buffer.blocks == 2
    assert buffer.drain_history_events() == []


async def test_discard_removes_the_turn_and_is_safe_to_repeat() -> None:
    buffer = SessionHistoryBuffer("s")
    await _commit_turns(buffer, [1])
    before = buffer.messages()
    turn = buffer.begin_turn()
    await turn.add([Message.user("structured?"), Message.assistant("not json")])
    await turn.discard()
    assert buffer.messages() == before
    await turn.discard()
    assert turn.ended


def test_mark_partial_copies_and_is_partial_reads_the_flag() -> None:
    original = Message(Message.user("x").role, "x", metadata={"a": 1})
    marked = mark_partial(original)
    assert original.metadata == {"a": 1}
    assert marked.metadata == {"a": 1, "partial": True}
    assert not is_partial(original)
    assert is_partial(marked)
    assert not is_partial(Message(original.role, "x", metadata={"partial": "yes"}))


async def test_an_ended_turn_refuses_more_writes() -> None:
    buffer = SessionHistoryBuffer("s")
    turn = buffer.begin_turn()
    await turn.commit()
    with pytest.raises(RuntimeError, match="already ended"):
        await turn.add(Message.user("late"))
    with pytest.raises(RuntimeError, match="already ended"):
        await turn.commit()
    with pytest.raises(RuntimeError, match="already ended"):
        await turn.fail(has_steps=True)


# -- epochs: clear() and reseed() during a turn ------------------------------------------------


async def test_clear_during_a_turn_discards_its_later_writes() -> None:
    clock = FakeClock()
    store = InMemorySessionStore()
    buffer = SessionHistoryBuffer("s", store, clock=clock)
    turn = buffer.begin_turn()
    await turn.add(_user(3))
    await buffer.clear()
    assert turn.stale
    assert buffer.epoch == 1
    await turn.add(_user(5))
    await turn.commit()
    assert buffer.messages() == []
    assert store.load_messages("s") == []
    assert buffer.drain_history_events() == [
        HistoryEvent(HistoryEventKind.CLEARED, messages=1, blocks=1, tokens=3, at=clock.now()),
        HistoryEvent(HistoryEventKind.DISCARDED, messages=1, blocks=0, tokens=5, at=clock.now()),
    ]


async def test_reseed_during_a_turn_discards_its_writes_and_its_failure() -> None:
    buffer = SessionHistoryBuffer("s")
    turn = buffer.begin_turn()
    await turn.add(Message.user("old"))
    seed = [Message.user("new"), Message.assistant("seeded")]
    await buffer.reseed(seed)
    await turn.add(Message.assistant("late"))
    await turn.fail(has_steps=True)  # must not mark the reseeded history partial
    assert buffer.messages() == seed
    kinds = [e.kind for e in buffer.drain_history_events()]
    assert kinds == ["reseeded", "discarded"]


async def test_a_turn_begun_after_clear_writes_normally() -> None:
    buffer = SessionHistoryBuffer("s")
    await _commit_turns(buffer, [1])
    await buffer.clear()
    turn = buffer.begin_turn()
    assert not turn.stale
    await turn.add(Message.user("fresh"))
    await turn.commit()
    assert buffer.messages() == [Message.user("fresh")]


# -- reseed ------------------------------------------------------------------------------------


async def test_reseed_makes_a_block_per_user_message_and_bumps_the_epoch() -> None:
    clock = FakeClock()
    store = InMemorySessionStore()
    buffer = SessionHistoryBuffer("s", store, clock=clock)
    await _commit_turns(buffer, [1, 1])
    seed = [
        Message.system("sys"),
        Message.user("q1"),
        Message.assistant("", tool_calls=[_call("c1")]),
        _result("c1"),
        Message.assistant("a1"),
        Message.user("q2"),
        Message.assistant("a2"),
    ]
    await buffer.reseed(seed)
    assert buffer.messages() == seed
    assert buffer.epoch == 1
    assert buffer.blocks == 3  # [system], [q1 ... a1], [q2, a2]
    blocks = [s.block for s in store.load_messages("s")]
    assert blocks == sorted(blocks)
    assert len(set(blocks[1:5])) == 1
    tokens = sum(message_tokens(m) for m in seed)
    assert buffer.drain_history_events() == [
        HistoryEvent(HistoryEventKind.RESEEDED, 7, 3, tokens, clock.now())
    ]


@pytest.mark.parametrize(
    ("seed", "call_id"),
    [
        ([Message.user("q"), Message.assistant("", tool_calls=[_call("lost")])], "lost"),
        (
            [
                Message.assistant("", tool_calls=[_call("c1"), _call("c2")]),
                _result("c1"),
                Message.user("next"),
            ],
            "c2",
        ),
        ([Message.user("q"), _result("stray")], "stray"),
        ([Message.assistant("", tool_calls=[_call("c1")]), _result("c1"), _result("c1")], "c1"),
    ],
)
async def test_reseed_refuses_broken_tool_pairing_and_changes_nothing(
    seed: list[Message], call_id: str
) -> None:
    store = InMemorySessionStore()
    buffer = SessionHistoryBuffer("s", store)
    await _commit_turns(buffer, [1, 2])
    before = buffer.messages()
    turn = buffer.begin_turn()
    with pytest.raises(ValueError, match=repr(call_id)):
        await buffer.reseed(seed)
    assert buffer.messages() == before
    assert [s.message for s in store.load_messages("s")] == before
    assert buffer.epoch == 0
    assert not turn.stale
    assert buffer.drain_history_events() == []


async def test_reseed_applies_the_bound() -> None:
    buffer = SessionHistoryBuffer("s", max_tokens=50, min_keep_sends=1)
    await buffer.reseed([_user(40, "a"), _user(40, "b")])
    assert buffer.messages() == [_user(40, "b")]
    kinds = [(e.kind, e.blocks) for e in buffer.drain_history_events()]
    assert kinds == [("reseeded", 2), ("evicted", 1)]


def test_validate_tool_pairing_accepts_whole_rounds() -> None:
    validate_tool_pairing([])
    validate_tool_pairing(
        [
            Message.user("q"),
            Message.assistant("", tool_calls=[_call("a"), _call("b")]),
            _result("b"),
            _result("a"),
            Message.assistant("done"),
        ]
    )


# -- events ------------------------------------------------------------------------------------


async def test_events_are_drained_once_in_order() -> None:
    clock = FakeClock()
    buffer = SessionHistoryBuffer("s", clock=clock)
    await _commit_turns(buffer, [1])
    await buffer.clear()
    clock.advance(timedelta(seconds=5))
    await buffer.reseed([Message.user("x")])
    events = buffer.drain_history_events()
    assert [e.kind for e in events] == [HistoryEventKind.CLEARED, HistoryEventKind.RESEEDED]
    assert events[1].at - events[0].at == timedelta(seconds=5)
    assert buffer.drain_history_events() == []


# -- loading and continuing ------------------------------------------------------------------


async def test_a_new_buffer_continues_the_stored_history() -> None:
    store = InMemorySessionStore()
    first = SessionHistoryBuffer("s", store)
    await _commit_turns(first, [1, 2, 3])
    second = SessionHistoryBuffer("s", store)
    await second.load()
    await second.load()  # idempotent
    assert second.messages() == first.messages()
    assert (second.blocks, second.tokens) == (3, 6)
    turn = second.begin_turn()
    await turn.add(Message.user("more"))
    await turn.commit()
    stored = store.load_messages("s")
    assert stored[-1].block > stored[-2].block
    assert stored[-1].position > stored[-2].position
    assert SessionHistoryBuffer("s", store).messages() == second.messages()
    assert SessionHistoryBuffer("other", store).messages() == []


# -- the store contract, over both backends ---------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    if request.param == "memory":
        yield InMemorySessionStore()
        return
    sqlite_store = SQLiteSessionStore(path=tmp_path / "agentos.db")
    yield sqlite_store
    sqlite_store.close()


def _stored(messages: list[Message], block: int = 0, start: int = 0) -> tuple[StoredMessage, ...]:
    return tuple(StoredMessage(block, start + i, m) for i, m in enumerate(messages))


def test_store_round_trips_every_message_field(store: SessionStore) -> None:
    history = _rich_history()
    store.write("s", SessionChanges(append=_stored(history, block=3)))
    loaded = store.load_messages("s")
    assert [s.message for s in loaded] == history
    assert [(s.block, s.position) for s in loaded] == [(3, i) for i in range(len(history))]
    assert dump_messages([s.message for s in loaded]) == dump_messages(history)
    assert store.load_messages("unknown") == []


def test_store_saves_and_loads_info(store: SessionStore) -> None:
    assert store.load_info("s") is None
    opened = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    info = SessionInfo("s", "user-1", "s", open=True, opened_at=opened)
    store.save_info(info)
    assert store.load_info("s") == info
    closed = SessionInfo("s", None, "scope-2", False, opened, opened + timedelta(hours=1))
    store.save_info(closed)
    assert store.load_info("s") == closed
    assert store.load_info("t") is None


def test_session_info_refuses_naive_times() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        SessionInfo("s", None, "s", True, datetime(2026, 1, 1))


def test_store_applies_changes_in_the_documented_order(store: SessionStore) -> None:
    store.write("s", SessionChanges(append=_stored([_user(1, "a"), _user(1, "b")], block=0)))
    store.write("s", SessionChanges(append=_stored([_user(1, "c")], block=1, start=2)))
    info = SessionInfo("s", None, "s", True, datetime(2026, 1, 1, tzinfo=UTC))
    store.write(
        "s",
        SessionChanges(
            drop_blocks=frozenset({0, 99}),
            replace=(StoredMessage(1, 2, mark_partial(_user(1, "c"))),),
            append=_stored([_user(1, "d")], block=2, start=3),
            info=info,
        ),
    )
    assert [(s.block, s.position, s.message) for s in store.load_messages("s")] == [
        (1, 2, mark_partial(_user(1, "c"))),
        (2, 3, _user(1, "d")),
    ]
    assert store.load_info("s") == info
    store.write("s", SessionChanges(reset=_stored([_user(1, "e")], block=7, start=10)))
    assert [(s.block, s.position) for s in store.load_messages("s")] == [(7, 10)]
    store.write("s", SessionChanges(reset=()))
    assert store.load_messages("s") == []


@pytest.mark.parametrize(
    "changes",
    [
        # A replaced position that is not held.
        SessionChanges(
            append=(StoredMessage(1, 5, Message.user("new")),),
            replace=(StoredMessage(0, 42, Message.user("x")),),
        ),
        # An appended position that is held.
        SessionChanges(
            drop_blocks=frozenset({0}),
            append=(
                StoredMessage(1, 5, Message.user("new")),
                StoredMessage(1, 2, Message.user("dup")),
            ),
        ),
        # Two messages at one position in a reset.
        SessionChanges(reset=_stored([Message.user("a")]) + _stored([Message.user("b")])),
        # The info of another session.
        SessionChanges(
            reset=(),
            info=SessionInfo("other", None, "other", True, datetime(2026, 1, 1, tzinfo=UTC)),
        ),
    ],
)
def test_a_write_that_fails_changes_nothing(store: SessionStore, changes: SessionChanges) -> None:
    store.write("s", SessionChanges(append=_stored([Message.user("a"), Message.user("b")], 0)))
    store.write("s", SessionChanges(append=_stored([Message.user("c")], block=1, start=2)))
    before = store.load_messages("s")
    with pytest.raises(ValueError, match=r"position|carry the info"):
        store.write("s", changes)
    assert store.load_messages("s") == before
    assert store.load_info("s") is None
    assert store.load_info("other") is None


def test_store_keeps_sessions_apart(store: SessionStore) -> None:
    store.write("a", SessionChanges(append=_stored([Message.user("for a")])))
    store.write("b", SessionChanges(append=_stored([Message.user("for b")])))
    store.write("a", SessionChanges(reset=()))
    assert store.load_messages("a") == []
    assert [s.message for s in store.load_messages("b")] == [Message.user("for b")]


def test_loaded_messages_are_copies(store: SessionStore) -> None:
    store.write("s", SessionChanges(append=_stored([Message.user("x")])))
    store.load_messages("s")[0].message.metadata["sneaky"] = True
    assert store.load_messages("s")[0].message.metadata == {}


async def test_buffer_works_over_both_stores(store: SessionStore) -> None:
    buffer = SessionHistoryBuffer("s", store, max_tokens=25, min_keep_sends=1)
    await _commit_turns(buffer, [10, 10, 10])
    assert buffer.blocks == 2
    assert [s.message for s in store.load_messages("s")] == buffer.messages()


# -- SQLite specifics --------------------------------------------------------------------------


def test_sqlite_store_shares_a_database_with_other_stores(tmp_path: Path) -> None:
    database = open_database(tmp_path / "agentos.db")
    sessions = SQLiteSessionStore(database)
    ledger = SQLiteUsageLedger(database)
    assert database.schema_version(SESSION_STORE) == len(SESSION_STORE_MIGRATIONS)
    sessions.close()  # a shared database stays open
    ledger.close()
    assert not database.closed
    SQLiteSessionStore(database)  # migrations already applied: nothing to do
    database.close()
    with pytest.raises(ValueError, match="not both"):
        SQLiteSessionStore(database, path=tmp_path / "x.db")


_RESUME_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from agentos.core.messages import Message, dump_messages
    from agentos.storage import SessionHistoryBuffer, SQLiteSessionStore

    store = SQLiteSessionStore(path=sys.argv[1])
    stored = store.load_messages("chat")
    info = store.load_info("chat")
    print(json.dumps({
        "messages": json.loads(dump_messages([s.message for s in stored])),
        "blocks": [s.block for s in stored],
        "scope_id": info.scope_id if info else None,
    }))
    # The reopened session continues: one more turn, written by this process.
    async def continue_session() -> None:
        buffer = SessionHistoryBuffer("chat", store)
        turn = buffer.begin_turn()
        await turn.add(Message.user("from the second process"))
        await turn.commit()

    asyncio.run(continue_session())
    store.close()
    """
)


async def _write_chat(path: Path) -> list[Message]:
    """Two turns (a tool round, then a failed turn) written by this process."""
    store = SQLiteSessionStore(path=path)
    opened = datetime(2026, 3, 1, tzinfo=UTC)
    store.save_info(SessionInfo("chat", "user-7", "chat", True, opened))
    buffer = SessionHistoryBuffer("chat", store)
    turn = buffer.begin_turn()
    await turn.add(Message.user("what is 2+2?"))
    await turn.add(
        Message.assistant(
            "",
            tool_calls=[_call("c1")],
            replay_blocks=[ReplayBlock("anthropic", "thinking", {"thinking": "add", "sig": "s"})],
        )
    )
    await turn.add(_result("c1"))
    await turn.add(Message.assistant("4"))
    await turn.commit()
    turn = buffer.begin_turn()
    await turn.add(Message.user("and 3+3?"))
    await turn.add(Message.assistant("6, I thi"))
    await turn.fail(has_steps=True)
    written = buffer.messages()
    store.close()
    return written


def test_sqlite_session_resumes_in_another_process(tmp_path: Path) -> None:
    path = tmp_path / "home" / "agentos.db"
    written = asyncio.run(_write_chat(path))
    completed = subprocess.run(
        [sys.executable, "-c", _RESUME_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    assert load_messages(json.dumps(report["messages"])) == written
    assert is_partial(load_messages(json.dumps(report["messages"]))[-1])
    assert report["blocks"] == [0, 0, 0, 0, 1, 1]
    assert report["scope_id"] == "chat"

    reopened = SQLiteSessionStore(path=path)
    resumed = SessionHistoryBuffer("chat", reopened)
    assert resumed.messages() == [*written, Message.user("from the second process")]
    assert resumed.blocks == 3
    reopened.close()


# -- properties --------------------------------------------------------------------------------

_STEP = st.one_of(
    st.integers(min_value=0, max_value=60).map(lambda size: ("text", size)),
    st.integers(min_value=1, max_value=3).map(lambda calls: ("tools", calls)),
)
_TURN = st.tuples(
    st.integers(min_value=0, max_value=80),  # the input's size in tokens
    st.lists(_STEP, max_size=3),
    st.sampled_from(["commit", "fail", "discard"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(_TURN, max_size=25),
    max_tokens=st.integers(min_value=1, max_value=400),
    min_keep_sends=st.integers(min_value=0, max_value=5),
    ratio=st.sampled_from([0.1, 0.25, 0.5, 1.0]),
)
def test_the_bound_holds_and_tool_rounds_stay_whole(
    turns: list[tuple[int, list[tuple[str, int]], str]],
    max_tokens: int,
    min_keep_sends: int,
    ratio: float,
) -> None:
    asyncio.run(_play(turns, max_tokens, min_keep_sends, ratio))


async def _play(
    turns: list[tuple[int, list[tuple[str, int]], str]],
    max_tokens: int,
    min_keep_sends: int,
    ratio: float,
) -> None:
    store = InMemorySessionStore()
    buffer = SessionHistoryBuffer(
        "s", store, max_tokens=max_tokens, min_keep_sends=min_keep_sends, evict_chunk_ratio=ratio
    )
    call_number = 0
    for input_size, steps, outcome in turns:
        turn = buffer.begin_turn()
        await turn.add(_user(input_size))
        for kind, size in steps:
            if kind == "text":
                await turn.add(Message.assistant("t" * size * 4))
                continue
            calls = [_call(f"c{call_number + i}") for i in range(size)]
            call_number += size
            await turn.add(
                [Message.assistant("", tool_calls=calls), *(_result(c.id) for c in calls)]
            )
        if outcome == "commit":
            await turn.commit()
        elif outcome == "fail":
            await turn.fail(has_steps=bool(steps))
        else:
            await turn.discard()
        assert buffer.tokens <= max_tokens or buffer.blocks <= min_keep_sends
        held = buffer.messages()
        validate_tool_pairing(held)
        prompt = buffer.prompt_messages()
        validate_tool_pairing(prompt)
        assert not any(is_partial(m) for m in prompt)
        assert buffer.tokens == sum(message_tokens(m) for m in held)
        assert [s.message for s in store.load_messages("s")] == held
    events = buffer.drain_history_events()
    assert all(e.kind == HistoryEventKind.EVICTED for e in events)
    assert all(e.blocks >= 1 for e in events)
