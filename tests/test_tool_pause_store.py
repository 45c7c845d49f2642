"""The store of pending external tool requests (issue 13 item 4; DESIGN.md §5.24, §6).

Spec: "An IGMI stops a turn for the host by returning an output with isFinal: false whose
toolCalls name the calls the host runs: the runtime saves the pending request ...". Each rule of
`agentos.storage.tool_pauses` is pinned here over both backends where it holds for both: one
pending pause per session (a newer one replaces it), atomic taking (coroutines, threads, two
handles on one file, two processes), a pause that outlives a SIGKILLed process, no user reading
another's pause, exact JSON round trips, and bad input refused before any write.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import sys
import textwrap
import threading
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ToolCall
from agentos.storage import (
    TOOL_PAUSE_MIGRATIONS,
    TOOL_PAUSE_STORE,
    InMemoryToolPauseStore,
    SQLiteSessionStore,
    SQLiteToolPauseStore,
    StorageError,
    ToolPause,
    ToolPauseStore,
    open_database,
)
from agentos.testing import FakeClock

T0 = datetime(2026, 12, 3, 21, 0, tzinfo=UTC)
BACKENDS = ["memory", "sqlite"]
CALLS = (
    ToolCall("call-1", "search_incidents", {"week": 49, "status": ["open", "triaged"]}),
    ToolCall("call-2", "fetch_page", {"url": "https://example.com/a?b=c", "timeout": 2.5}),
)


def make_store(backend: str, path: Path | str = ":memory:") -> ToolPauseStore:
    if backend == "memory":
        return InMemoryToolPauseStore()
    return SQLiteToolPauseStore(path=path)


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ToolPauseStore]:
    made = make_store(request.param, tmp_path / "agentos.db")
    yield made
    if isinstance(made, SQLiteToolPauseStore):
        made.close()


def pause(**changes: Any) -> ToolPause:
    fields: dict[str, Any] = {
        "session_id": "research-session-1",
        "user_id": "user-42",
        "persona_id": "v_researcher",
        "interaction_id": "turn-1",
        "tool_calls": CALLS,
        "created_at": T0,
    }
    fields.update(changes)
    return ToolPause(**fields)


# -- saving, loading, replacing ----------------------------------------------------------------


async def test_a_saved_pause_loads_back_equal_with_every_field(store: ToolPauseStore) -> None:
    clock = FakeClock(T0)
    clock.advance(90)
    saved = ToolPause.create(
        session_id="research-session-1",
        user_id="user-42",
        persona_id="v_researcher",
        interaction_id="turn-1",
        tool_calls=[*CALLS, ToolCall("call-3", "broken", {}, unparsed_arguments="{not json")],
        rationale="Agent requires tool execution.",
        metadata={"executionMode": "external", "sessionId": "research-session-1", "n": [1, 2.0]},
        gmi_instance_id="gmi-7",
        clock=clock,
    )
    assert saved.created_at == datetime(2026, 12, 3, 21, 1, 30, tzinfo=UTC)
    assert saved.tool_call_ids == ("call-1", "call-2", "call-3")
    await store.save(saved)
    loaded = await store.load("research-session-1", user_id="user-42")
    assert loaded == saved
    assert loaded is not saved
    assert loaded.tool_calls[2].unparsed_arguments == "{not json"
    assert loaded.created_at.tzinfo is UTC
    assert isinstance(store, ToolPauseStore)


async def test_an_unknown_session_has_no_pause(store: ToolPauseStore) -> None:
    assert await store.load("nobody", user_id="user-42") is None
    assert await store.take("nobody", user_id="user-42") is None
    assert await store.list_pauses("user-42") == []


async def test_loaded_pauses_are_fresh_objects(store: ToolPauseStore) -> None:
    arguments: dict[str, Any] = {"items": [1, 2]}
    original = pause(tool_calls=(ToolCall("c", "t", arguments),), metadata={"k": ["v"]})
    await store.save(original)
    arguments["items"].append(3)  # the caller's dict changes after the save
    first = await store.load("research-session-1", user_id="user-42")
    assert first is not None
    assert first.tool_calls[0].arguments == {"items": [1, 2]}
    first.tool_calls[0].arguments["items"].append(4)
    assert first.metadata is not None
    first.metadata["k"].append("w")
    again = await store.load("research-session-1", user_id="user-42")
    assert again is not None
    assert again.tool_calls[0].arguments == {"items": [1, 2]}
    assert again.metadata == {"k": ["v"]}


async def test_a_newer_pause_of_the_session_replaces_the_pending_one(
    store: ToolPauseStore,
) -> None:
    await store.save(pause(interaction_id="turn-1"))
    newer = pause(interaction_id="turn-2", tool_calls=(ToolCall("call-9", "lookup", {}),))
    await store.save(newer)
    assert await store.load("research-session-1", user_id="user-42") == newer
    assert await store.list_pauses("user-42") == [newer]


async def test_a_save_never_replaces_another_users_pause(store: ToolPauseStore) -> None:
    mine = pause()
    await store.save(mine)
    with pytest.raises(GMIError) as caught:
        await store.save(pause(user_id="intruder", interaction_id="turn-x"))
    assert caught.value.code is GMIErrorCode.PERMISSION_DENIED
    assert caught.value.details == {"option": "user_id", "session_id": "research-session-1"}
    assert await store.load("research-session-1", user_id="user-42") == mine
    assert await store.list_pauses("intruder") == []


async def test_a_created_at_in_another_zone_is_kept_as_the_same_instant_in_utc(
    store: ToolPauseStore,
) -> None:
    local = datetime(2026, 12, 3, 23, 0, tzinfo=timezone(timedelta(hours=2)))
    await store.save(pause(created_at=local))
    loaded = await store.load("research-session-1", user_id="user-42")
    assert loaded is not None
    assert loaded.created_at == T0
    assert loaded.created_at.tzinfo is UTC


async def test_list_pauses_gives_one_users_pauses_oldest_first(store: ToolPauseStore) -> None:
    later = pause(session_id="s-b", created_at=T0 + timedelta(seconds=5))
    tie_b = pause(session_id="s-z", created_at=T0)
    tie_a = pause(session_id="s-a", created_at=T0)
    other = pause(session_id="s-other", user_id="user-7")
    for each in (later, tie_b, other, tie_a):
        await store.save(each)
    assert await store.list_pauses("user-42") == [tie_a, tie_b, later]
    assert await store.list_pauses("user-7") == [other]


# -- taking ------------------------------------------------------------------------------------


async def test_take_removes_the_pause_and_a_second_take_finds_none(
    store: ToolPauseStore,
) -> None:
    saved = pause()
    await store.save(saved)
    assert await store.take("research-session-1", user_id="user-42") == saved
    assert await store.take("research-session-1", user_id="user-42") is None
    assert await store.load("research-session-1", user_id="user-42") is None


async def test_take_with_an_interaction_id_takes_only_that_turns_pause(
    store: ToolPauseStore,
) -> None:
    newer = pause(interaction_id="turn-2")
    await store.save(newer)
    # Results meant for turn-1's pause never consume turn-2's.
    taken = await store.take("research-session-1", user_id="user-42", interaction_id="turn-1")
    assert taken is None
    assert await store.load("research-session-1", user_id="user-42") == newer
    taken = await store.take("research-session-1", user_id="user-42", interaction_id="turn-2")
    assert taken == newer


async def test_two_concurrent_takers_on_one_store_exactly_one_gets_it(
    store: ToolPauseStore,
) -> None:
    await store.save(pause())
    results = await asyncio.gather(
        *(store.take("research-session-1", user_id="user-42") for _ in range(4))
    )
    assert [r for r in results if r is not None] == [pause()]


def _race(takers: list[ToolPauseStore], session: str) -> int:
    """How many of the threads (one per taker, released together) got the session's pause."""
    asyncio.run(takers[0].save(pause(session_id=session)))
    barrier = threading.Barrier(len(takers))
    got: list[ToolPause | None] = [None] * len(takers)

    def take(index: int) -> None:
        barrier.wait()
        got[index] = asyncio.run(takers[index].take(session, user_id="user-42"))

    threads = [threading.Thread(target=take, args=(i,)) for i in range(len(takers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(each is not None for each in got)


def test_threads_on_one_in_memory_store_exactly_one_takes_each_pause() -> None:
    shared = InMemoryToolPauseStore()
    assert [_race([shared, shared, shared], f"s-{n}") for n in range(25)] == [1] * 25


def test_two_handles_on_one_sqlite_file_exactly_one_takes_each_pause(tmp_path: Path) -> None:
    path = tmp_path / "agentos.db"
    handles = [SQLiteToolPauseStore(path=path), SQLiteToolPauseStore(path=path)]
    assert [_race(list(handles), f"s-{n}") for n in range(25)] == [1] * 25
    for handle in handles:
        handle.close()


_TAKER = """
import asyncio, json, sys
from agentos.storage import SQLiteToolPauseStore

store = SQLiteToolPauseStore(path=sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
taken = asyncio.run(store.take("research-session-1", user_id="user-42"))
print(json.dumps(None if taken is None else list(taken.tool_call_ids)), flush=True)
"""


async def _child(script: str, *args: str) -> asyncio.subprocess.Process:
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        textwrap.dedent(script),
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    return child


async def test_two_processes_taking_one_pause_exactly_one_gets_it(tmp_path: Path) -> None:
    path = tmp_path / "agentos.db"
    store = SQLiteToolPauseStore(path=path)
    await store.save(pause())
    children = [await _child(_TAKER, str(path)) for _ in range(2)]
    for child in children:
        assert child.stdout is not None
        assert await child.stdout.readline() == b"ready\n"
    for child in children:  # both are past their imports and open: go together
        assert child.stdin is not None
        child.stdin.write(b"go\n")
        await child.stdin.drain()
    outputs = [json.loads((await child.communicate())[0]) for child in children]
    assert sorted(outputs, key=str) == [None, ["call-1", "call-2"]]
    assert all(child.returncode == 0 for child in children)
    assert await store.load("research-session-1", user_id="user-42") is None
    store.close()


_SAVER = """
import asyncio, json, sys
from datetime import datetime
from agentos.core.messages import ToolCall
from agentos.storage import SQLiteToolPauseStore, ToolPause
from agentos.testing import FakeClock

calls = [ToolCall(**call) for call in json.loads(sys.argv[2])]
pause = ToolPause.create(
    session_id="research-session-1", user_id="user-42", persona_id="v_researcher",
    interaction_id="turn-1", tool_calls=calls, rationale="run these",
    clock=FakeClock(datetime.fromisoformat(sys.argv[3])),
)
asyncio.run(SQLiteToolPauseStore(path=sys.argv[1]).save(pause))
print("saved", flush=True)
sys.stdin.read()  # until the test kills this process
"""


async def test_a_pause_saved_by_a_killed_process_is_loaded_by_another(tmp_path: Path) -> None:
    path = tmp_path / "agentos.db"
    calls = json.dumps([{"id": c.id, "name": c.name, "arguments": c.arguments} for c in CALLS])
    child = await _child(_SAVER, str(path), calls, T0.isoformat())
    assert child.stdout is not None
    assert await child.stdout.readline() == b"saved\n"
    child.send_signal(signal.SIGKILL)  # no close(), no clean exit: the save alone must hold
    assert await child.wait() == -signal.SIGKILL
    store = SQLiteToolPauseStore(path=path)
    assert await store.load("research-session-1", user_id="user-42") == pause(rationale="run these")
    assert store.database.fetchone("PRAGMA integrity_check")[0] == "ok"  # type: ignore[index]
    store.close()


# -- one user never reads another's pause ------------------------------------------------------


@pytest.mark.parametrize("action", ["load", "take"])
async def test_another_user_cannot_load_or_take_the_pause(
    store: ToolPauseStore, action: str
) -> None:
    mine = pause()
    await store.save(mine)
    attempt = (store.load if action == "load" else store.take)(
        "research-session-1", user_id="user-7"
    )
    with pytest.raises(GMIError) as caught:
        await attempt
    assert caught.value.code is GMIErrorCode.PERMISSION_DENIED
    assert caught.value.details == {"option": "user_id", "session_id": "research-session-1"}
    assert "user-42" not in caught.value.message  # the owner is not disclosed
    assert await store.load("research-session-1", user_id="user-42") == mine


# -- exact JSON round trips --------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=24,
)
ARGUMENTS = st.dictionaries(st.text(), JSON_VALUES, max_size=5)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arguments=ARGUMENTS, metadata=st.none() | ARGUMENTS, rationale=st.none() | st.text())
def test_arguments_and_metadata_round_trip_exactly(
    backend: str, arguments: dict[str, Any], metadata: dict[str, Any] | None, rationale: str | None
) -> None:
    store = make_store(backend)
    saved = pause(
        tool_calls=(ToolCall("c1", "tool", arguments),), metadata=metadata, rationale=rationale
    )

    async def run() -> ToolPause | None:
        await store.save(saved)
        return await store.load("research-session-1", user_id="user-42")

    loaded = asyncio.run(run())
    if isinstance(store, SQLiteToolPauseStore):
        store.close()
    assert loaded is not None
    # repr tells 1 from 1.0 from True and -0.0 from 0.0, and shows key order: exact, not just ==.
    assert repr(loaded.tool_calls[0].arguments) == repr(arguments)
    assert repr(loaded.metadata) == repr(metadata)
    assert loaded.rationale == rationale


# -- bad input ---------------------------------------------------------------------------------

BAD_RECORDS: list[tuple[dict[str, Any], str]] = [
    ({"session_id": ""}, "session_id"),
    ({"session_id": "   "}, "session_id"),
    ({"session_id": 7}, "session_id"),
    ({"user_id": ""}, "user_id"),
    ({"persona_id": ""}, "persona_id"),
    ({"interaction_id": ""}, "interaction_id"),
    ({"tool_calls": ()}, "tool_calls"),
    ({"tool_calls": (ToolCall("a", "t"), ToolCall("a", "u"))}, "tool_calls"),
    ({"tool_calls": (ToolCall("", "t"),)}, "tool_calls[0].id"),
    ({"tool_calls": (ToolCall("a", "t"), ToolCall("b", " "))}, "tool_calls[1].name"),
    ({"tool_calls": ({"id": "a", "name": "t"},)}, "tool_calls[0]"),
    ({"tool_calls": "call-1"}, "tool_calls"),
    ({"created_at": datetime(2026, 12, 3, 21, 0)}, "created_at"),
    ({"gmi_instance_id": ""}, "gmi_instance_id"),
    ({"rationale": "bad \ud800 text"}, "rationale"),
    ({"metadata": ["not", "a", "dict"]}, "metadata"),
]


@pytest.mark.parametrize(("changes", "option"), BAD_RECORDS)
def test_a_bad_record_is_refused_naming_the_field(changes: dict[str, Any], option: str) -> None:
    with pytest.raises(GMIError) as caught:
        pause(**changes)
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": option}
    assert caught.value.message.startswith(f"{option}: ")


BAD_JSON: list[tuple[Callable[[], ToolPause], str]] = [
    (
        lambda: pause(tool_calls=(ToolCall("a", "t", {"x": (1, 2)}),)),
        "tool_calls[0].arguments['x']",
    ),
    (
        lambda: pause(tool_calls=(ToolCall("a", "t", {"x": {1: 2}}),)),
        "tool_calls[0].arguments['x']",
    ),
    (
        lambda: pause(tool_calls=(ToolCall("a", "t", {"x": [float("nan")]}),)),
        "tool_calls[0].arguments['x'][0]",
    ),
    (lambda: pause(tool_calls=(ToolCall("a", "t", {"x": {1}}),)), "tool_calls[0].arguments['x']"),
    (lambda: pause(tool_calls=(ToolCall("a", "t", [1]),)), "tool_calls[0].arguments"),  # type: ignore[arg-type]
    (lambda: pause(metadata={"when": T0}), "metadata['when']"),
    (lambda: pause(metadata={"inf": float("inf")}), "metadata['inf']"),
]


@pytest.mark.parametrize(("make", "option"), BAD_JSON)
async def test_a_non_json_value_is_refused_before_any_write(
    store: ToolPauseStore, make: Callable[[], ToolPause], option: str
) -> None:
    earlier = pause(interaction_id="turn-0")
    await store.save(earlier)
    with pytest.raises(GMIError) as caught:
        await store.save(make())
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": option}
    # Nothing was written: the session's earlier pause is still the pending one.
    assert await store.list_pauses("user-42") == [earlier]


@pytest.mark.parametrize(
    ("call", "option"),
    [
        (lambda s: s.load("", user_id="user-42"), "session_id"),
        (lambda s: s.load("s", user_id=""), "user_id"),
        (lambda s: s.take(" ", user_id="user-42"), "session_id"),
        (lambda s: s.take("s", user_id="user-42", interaction_id=""), "interaction_id"),
        (lambda s: s.list_pauses(""), "user_id"),
        (lambda s: s.list_pauses(None), "user_id"),
    ],
)
async def test_bad_keys_are_refused_naming_the_argument(
    store: ToolPauseStore, call: Callable[[Any], Any], option: str
) -> None:
    with pytest.raises(GMIError) as caught:
        await call(store)
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": option}


# -- the SQLite backend on the foundation ------------------------------------------------------


def test_the_sqlite_store_is_wal_versioned_and_shares_the_database(tmp_path: Path) -> None:
    with open_database(tmp_path / "agentos.db") as database:
        sessions = SQLiteSessionStore(database)
        pauses = SQLiteToolPauseStore(database)
        assert pauses.database is database
        assert database.journal_mode == "wal"
        assert database.schema_version(TOOL_PAUSE_STORE) == len(TOOL_PAUSE_MIGRATIONS) == 2
        asyncio.run(pauses.save(pause()))
        pauses.close()  # a shared database stays open
        sessions.close()
        assert not database.closed
        again = SQLiteToolPauseStore(database)  # the migration is not run twice
        assert asyncio.run(again.load("research-session-1", user_id="user-42")) == pause()


async def test_a_pause_survives_closing_and_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "agentos.db"
    first = SQLiteToolPauseStore(path=path)
    await first.save(pause())
    first.close()
    second = SQLiteToolPauseStore(path=path)
    assert await second.list_pauses("user-42") == [pause()]
    second.close()


async def test_an_unreadable_row_raises_storage_error_naming_the_session(tmp_path: Path) -> None:
    store = SQLiteToolPauseStore(path=tmp_path / "agentos.db")
    await store.save(pause())
    store.database.execute("UPDATE tool_pauses SET tool_calls = '[{\"id\": 1}'")
    for attempt in (
        store.load("research-session-1", user_id="user-42"),
        store.take("research-session-1", user_id="user-42"),
    ):
        with pytest.raises(StorageError) as caught:
            await attempt
        assert caught.value.details == {"session_id": "research-session-1"}
    # The failed take rolled back: the row is still there for a newer save to replace.
    await store.save(pause(interaction_id="turn-2"))
    assert await store.take("research-session-1", user_id="user-42") == pause(
        interaction_id="turn-2"
    )
    store.close()


def test_the_table_refuses_a_second_row_for_a_session(tmp_path: Path) -> None:
    store = SQLiteToolPauseStore(path=tmp_path / "agentos.db")
    asyncio.run(store.save(pause()))
    with pytest.raises(sqlite3.IntegrityError):
        store.database.execute(
            "INSERT INTO tool_pauses SELECT * FROM tool_pauses WHERE session_id = ?",
            ("research-session-1",),
        )
    store.close()
