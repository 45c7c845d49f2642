"""Crash recovery of durable sessions (issue 11 item 3; DESIGN.md §5.21; spec "Sessions").

Real child processes run a `gmi()` session on a SQLite store and SIGKILL themselves at seeded
points of a turn (`fakes.crash_turn`): before a model call, mid-stream, inside a tool, and inside
each of the turn's store transactions. After each kill: the database passes ``PRAGMA
integrity_check``; opening the session reconciles the unfinished turn to exactly what the same
failure leaves in-process (no finished step lost, an unanswered call answered as a stopped round
answers it, the last message marked partial, or nothing when no step finished); the next request
is the one the in-process failure gives, with every tool call answered; the session takes it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import sqlite3
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentos.api.abort import AbortSignal
from agentos.api.results import StepFinishPart
from agentos.core.errors import GMIError
from agentos.core.messages import Message, Role, ToolCall, ToolResult
from agentos.core.tool_results import stopped_tool_result
from agentos.storage import (
    PARTIAL,
    InMemorySessionStore,
    SessionHistoryBuffer,
    SQLiteSessionStore,
    is_partial,
    validate_tool_pairing,
)
from fakes import crash_turn
from fakes.crash_turn import IN_PROCESS, KILL_POINTS, TURN_ONE, TURN_THREE, TURN_TWO

CHILD = Path(crash_turn.__file__)

# What each in-process failure leaves of the second turn, as (role, text, partial).
LEFT: dict[str, list[tuple[str, str, bool]]] = {
    "before_call_0": [],
    "mid_stream_0": [],
    "in_tool_a": [
        ("user", TURN_TWO, False),
        ("assistant", "Let me look both up.", False),
        ("tool", "Tool 'lookup' was stopped: the turn ended.", False),
        ("tool", "Tool 'lookup' was stopped: the turn ended.", True),
    ],
    "in_tool_b": [
        ("user", TURN_TWO, False),
        ("assistant", "Let me look both up.", False),
        ("tool", "1", False),
        ("tool", "Tool 'lookup' was stopped: the turn ended.", True),
    ],
    "before_call_1": [
        ("user", TURN_TWO, False),
        ("assistant", "Let me look both up.", False),
        ("tool", "1", False),
        ("tool", "2", True),
    ],
    "after_last_step": [
        ("user", TURN_TWO, False),
        ("assistant", "Let me look both up.", False),
        ("tool", "1", False),
        ("tool", "2", False),
        ("assistant", "a is 1 and b is 2.", True),
    ],
}
LEFT["mid_stream_1"] = LEFT["before_call_1"]
TURN_ONE_LEFT = [("user", TURN_ONE, False), ("assistant", "Hi! How can I help?", False)]


def _shape(messages: list[Message]) -> list[tuple[str, str, bool]]:
    return [(m.role.value, _text(m), is_partial(m)) for m in messages]


def _text(message: Message) -> str:
    if message.tool_result is not None:
        return str(message.tool_result.output)
    return message.text


async def _in_process(path: Path, point: str) -> tuple[list[Message], list[Message]]:
    """The store after the in-process failure at ``point``, and the next turn's request."""
    store = SQLiteSessionStore(path=path)
    stop = AbortSignal()

    async def fail() -> None:
        stop.abort("stopped")
        await asyncio.Event().wait()  # cancelled by the stop

    agent, model = crash_turn.build_agent(store, point, fail)
    session = agent.session("crash")
    await session.send(TURN_ONE)
    if point == "after_last_step":
        parts = session.stream(TURN_TWO).full_stream
        finished = 0
        async for part in parts:
            finished += isinstance(part, StepFinishPart)
            if finished == 2:
                break  # the answer step is stored; the turn has not ended
        await parts.aclose()  # the consumer stops reading: the turn stops there
    else:
        with pytest.raises(GMIError):
            await session.send(TURN_TWO, abort_signal=stop)
    left = await session.messages()
    await session.send(TURN_THREE)
    request = list(model.requests[-1].messages)
    store.close()
    return left, request


async def _killed(path: Path, point: str) -> int:
    child = await asyncio.create_subprocess_exec(
        sys.executable, str(CHILD), str(path), point, stderr=asyncio.subprocess.PIPE
    )
    _, stderr = await child.communicate()
    assert child.returncode == -9, (point, stderr.decode()[-2000:])
    return child.returncode


async def _reopened(path: Path) -> tuple[list[Message], list[Message], list[Message]]:
    """Open the killed session in this process: what it holds, the next request, then after."""
    store = SQLiteSessionStore(path=path)
    agent, model = crash_turn.build_agent(store, "none", _never)
    session = agent.session("crash")
    left = await session.messages()
    await session.send(TURN_THREE)
    after = await session.messages()
    store.close()
    return left, list(model.requests[-1].messages), after


async def _never() -> None:
    raise AssertionError("no failure point in the reopened process")


def _integrity(path: Path) -> str:
    connection = sqlite3.connect(path)
    try:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        connection.close()


async def test_a_turn_killed_at_any_point_is_reconciled_as_the_same_failure_in_process(
    tmp_path: Path,
) -> None:
    expected: dict[str, tuple[list[Message], list[Message]]] = {}
    for point in sorted(set(IN_PROCESS.values())):
        expected[point] = await _in_process(tmp_path / f"in-process-{point}.db", point)
        left, request = expected[point]
        assert _shape(left) == TURN_ONE_LEFT + LEFT[point], point

    gate = asyncio.Semaphore(3)

    async def kill(point: str) -> None:
        async with gate:
            await _killed(tmp_path / f"killed-{point}.db", point)

    await asyncio.gather(*(kill(point) for point in KILL_POINTS))
    survived = {}
    for point in KILL_POINTS:
        path = tmp_path / f"killed-{point}.db"
        assert _integrity(path) == "ok", point
        left, request, after = await _reopened(path)
        same_left, same_request = expected[IN_PROCESS[point]]
        assert left == same_left, point  # equal message for message, metadata included
        assert request == same_request, point
        validate_tool_pairing(request)  # never a tool call without its result
        assert not any(is_partial(m) for m in request)
        assert _shape(after)[-2:] == [
            ("user", TURN_THREE, False),
            ("assistant", "Anything else?", False),
        ]
        survived[point] = len(left) - len(TURN_ONE_LEFT)
    # Every finished step survived: each point keeps what its in-process failure keeps.
    assert survived == {point: len(LEFT[IN_PROCESS[point]]) for point in KILL_POINTS}


async def test_a_turn_with_no_finished_step_leaves_nothing_so_no_two_user_messages() -> None:
    store = InMemorySessionStore()
    buffer = SessionHistoryBuffer("s", store)
    first = await buffer.start_turn()
    await first.add([Message.user("one"), Message.assistant("answer")])
    await first.commit()
    orphan = await buffer.start_turn()
    await orphan.add(Message.user("two"))
    del first, orphan, buffer  # abandoned without its end: its lease expires with it
    gc.collect()
    reopened = SessionHistoryBuffer("s", store)
    await reopened.load()
    assert [m.text for m in reopened.messages()] == ["one", "answer"]


async def test_an_unanswered_call_gets_the_stopped_rounds_result() -> None:
    store = InMemorySessionStore()
    buffer = SessionHistoryBuffer("s", store)
    turn = await buffer.start_turn()
    call = ToolCall("c1", "lookup", {"key": "a"})
    await turn.add([Message.user("q"), Message.assistant("looking", tool_calls=[call])])
    del turn, buffer
    gc.collect()
    reopened = SessionHistoryBuffer("s", store)
    await reopened.load()
    held = reopened.messages()
    assert [m.role for m in held] == [Role.USER, Role.ASSISTANT, Role.TOOL]
    assert held[-1].tool_result == stopped_tool_result(call)
    assert is_partial(held[-1])


@pytest.mark.parametrize(
    "record",
    ['[{"role": "user", "content": 42}]', "not json", '[{"role": "nobody"}]', "[]"],
)
async def test_a_stored_message_that_cannot_be_read_names_the_session_and_its_position(
    tmp_path: Path, record: str
) -> None:
    path = tmp_path / "agentos.db"
    store = SQLiteSessionStore(path=path)
    session = crash_turn.build_agent(store, "none", _never)[0].session("chat-9")
    await session.send(TURN_ONE)
    store.database.execute(
        "UPDATE session_messages SET message = ? WHERE session_id = ? AND position = 1",
        (record, "chat-9"),
    )
    reopened = crash_turn.build_agent(SQLiteSessionStore(path=path), "none", _never)[0]
    with pytest.raises(GMIError) as caught:
        await reopened.session("chat-9").messages()
    message = caught.value.message
    assert message.startswith("session 'chat-9': the stored ")
    assert "at position 1" in message
    assert "pydantic" not in message
    assert "\n" not in message
    assert caught.value.details == {"session_id": "chat-9", "position": 1}


def _turn(calls_per_step: list[int]) -> list[Message]:
    """A whole turn: its input, then steps calling tools (answered in order), then an answer."""
    messages = [Message.user("q")]
    for step, count in enumerate(calls_per_step):
        calls = [ToolCall(f"c{step}-{n}", "lookup", {"key": "a"}) for n in range(count)]
        messages.append(Message.assistant(f"step {step}", tool_calls=calls))
        messages += [Message.tool(ToolResult(call.id, call.name, "1")) for call in calls]
    messages.append(Message.assistant("answer"))
    return messages


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 3), max_size=3), st.data())
async def test_any_cut_of_a_turn_reconciles_to_a_well_formed_history(
    calls_per_step: list[int], data: st.DataObject
) -> None:
    turn = _turn(calls_per_step)
    cut = data.draw(st.integers(1, len(turn)), label="messages stored before the kill")
    store = InMemorySessionStore()
    buffer = SessionHistoryBuffer("s", store)
    writer = await buffer.start_turn()
    await writer.add(turn[:cut])
    del writer, buffer  # the process "dies": its lease expires
    gc.collect()
    reopened = SessionHistoryBuffer("s", store)
    await reopened.load()
    held = reopened.messages()
    validate_tool_pairing(held)  # every call answered
    if cut == 1:
        assert held == []  # no finished step: nothing of the turn remains
    else:
        assert [_unmarked(m) for m in held[:cut]] == turn[:cut]  # every finished step kept
        assert is_partial(held[-1])
        assert sum(map(is_partial, held)) == 1
        assert all(m.tool_result == stopped_tool_result(c) for m, c in _stopped(held))
    validate_tool_pairing(reopened.prompt_messages())
    assert not any(is_partial(m) for m in reopened.prompt_messages())


def _stopped(held: list[Message]) -> list[tuple[Message, ToolCall]]:
    calls = {call.id: call for m in held for call in m.tool_calls}
    return [
        (m, calls[m.tool_result.tool_call_id])
        for m in held
        if m.tool_result is not None and m.tool_result.is_error
    ]


def _unmarked(message: Message) -> Message:
    return dataclasses.replace(
        message, metadata={k: v for k, v in message.metadata.items() if k != PARTIAL}
    )
