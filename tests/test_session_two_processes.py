"""Two handles, two processes, one durable session (issue 11 item 4; DESIGN.md §5.21).

The store is the source of truth before every turn: a turn takes the session's lease and reloads
what another handle or process wrote, so their turns interleave in order. A turn another handle
or process is running makes a send wait, up to the store's ``lease_timeout``, then fail with
``SESSION_BUSY`` naming the session. A lease a dead process left is taken over and its turn
reconciled; a live one is never touched.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from agentos.api.gmi_agent import gmi
from agentos.cli.chat_session import ChatSession, ChatSettings
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role
from agentos.storage import AGENTOS_HOME_ENV, SQLiteSessionStore, validate_tool_pairing
from agentos.storage.session_lease import DEFAULT_LEASE_TIMEOUT
from agentos.testing import ScriptedModel, ScriptStep
from fakes import session_writer

TESTS = Path(session_writer.__file__).parent.parent


def _echo() -> ScriptedModel:
    return ScriptedModel(lambda messages, tools, options: f"re: {messages[-1].text}")


def _texts(messages: Sequence[Message]) -> list[str]:
    return [m.text for m in messages]


def _alternating(messages: Sequence[Message]) -> bool:
    """User, then the turn's steps (tool rounds whole), then the next user message."""
    validate_tool_pairing(messages)
    plain = [m.role for m in messages if m.role is not Role.TOOL and not m.tool_calls]
    return plain == [Role.USER, Role.ASSISTANT] * (len(plain) // 2) and len(plain) % 2 == 0


async def test_two_handles_in_one_process_take_turns_in_order(tmp_path: Path) -> None:
    path = tmp_path / "agentos.db"
    first = gmi(model=_echo(), store=SQLiteSessionStore(path=path)).session("s")
    second = gmi(model=_echo(), store=SQLiteSessionStore(path=path)).session("s")
    await first.send("1")
    await second.send("2")
    await first.send("3")  # failed with "position 2 already holds a message" before the fix
    await asyncio.gather(second.send("4"), first.send("5"))
    stored = await first.messages()
    assert _alternating(stored)
    users = [m.text for m in stored if m.role is Role.USER]
    assert users[:3] == ["1", "2", "3"]
    assert sorted(users[3:]) == ["4", "5"]
    assert all(f"re: {m.text}" == stored[i + 1].text for i, m in enumerate(stored) if i % 2 == 0)
    assert await second.messages() == stored


async def test_a_send_waits_for_another_handles_turn_then_gets_session_busy(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agentos.db"
    gate, started = asyncio.Event(), asyncio.Event()

    def held(*_: object) -> ScriptStep:
        started.set()  # the slow turn holds the lease and has stored its input
        return ScriptStep(text="slow", wait=gate)

    slow = gmi(model=ScriptedModel(held), store=SQLiteSessionStore(path=path))
    quick_store = SQLiteSessionStore(path=path, lease_timeout=0.05)
    quick = gmi(model=_echo(), store=quick_store).session("s")
    running = asyncio.create_task(slow.session("s").send("first"))
    await started.wait()
    with pytest.raises(GMIError) as caught:
        await quick.send("second")
    assert caught.value.code is GMIErrorCode.SESSION_BUSY
    assert caught.value.code.value == "GMI_SESSION_BUSY"
    assert "session 's' is busy" in caught.value.message
    assert caught.value.details == {"session_id": "s", "lease_timeout": 0.05}
    gate.set()
    await running
    await quick.send("second")  # the slow turn ended: the lease is free
    assert _texts(await quick.messages()) == ["first", "slow", "second", "re: second"]


def test_the_lease_timeout_is_an_option_of_the_store_and_is_checked() -> None:
    assert SQLiteSessionStore(path=":memory:").lease_timeout == DEFAULT_LEASE_TIMEOUT == 30.0
    for bad in (-1, "30", float("nan"), True):
        with pytest.raises(GMIError) as caught:
            SQLiteSessionStore(path=":memory:", lease_timeout=bad)  # type: ignore[arg-type]
        assert caught.value.details == {"option": "lease_timeout"}


_HOLD_A_TURN = """
import asyncio, os, signal, sys
from agentos.core.messages import Message
from agentos.storage import SessionHistoryBuffer, SQLiteSessionStore

async def main():
    buffer = SessionHistoryBuffer("s", SQLiteSessionStore(path=sys.argv[1]))
    turn = await buffer.start_turn()
    await turn.add(Message.user("unanswered"))
    print("holding", flush=True)
    await asyncio.to_thread(sys.stdin.read)  # until the test closes stdin
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


async def _holder(path: Path) -> asyncio.subprocess.Process:
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        textwrap.dedent(_HOLD_A_TURN),
        str(path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert child.stdout is not None
    assert await child.stdout.readline() == b"holding\n"
    return child


async def test_a_live_lease_is_not_reconciled_and_a_dead_ones_turn_is(tmp_path: Path) -> None:
    path = tmp_path / "agentos.db"
    store = SQLiteSessionStore(path=path, lease_timeout=0.05)
    session = gmi(model=_echo(), store=store).session("s")
    child = await _holder(path)
    # Its holder lives: the turn is left as it is, and a send finds the session busy.
    assert _texts(await session.messages()) == ["unanswered"]
    with pytest.raises(GMIError) as caught:
        await session.send("mine")
    assert caught.value.code is GMIErrorCode.SESSION_BUSY
    assert _texts(await session.messages()) == ["unanswered"]
    assert child.stdin is not None
    child.stdin.close()
    assert await child.wait() == -signal.SIGKILL
    # Its holder died: the turn finished no step, so nothing of it remains.
    assert _texts(await session.messages()) == []
    await session.send("mine")
    assert _texts(await session.messages()) == ["mine", "re: mine"]


async def test_a_dead_processes_lease_is_taken_over_by_the_next_turn(tmp_path: Path) -> None:
    path = tmp_path / "agentos.db"
    session = gmi(model=_echo(), store=SQLiteSessionStore(path=path)).session("s")
    await session.send("before")
    child = await _holder(path)
    assert child.stdin is not None
    child.stdin.close()
    assert await child.wait() == -signal.SIGKILL
    # No messages() first: the send's own lease acquisition takes the dead lease over.
    await session.send("after")
    assert _texts(await session.messages()) == ["before", "re: before", "after", "re: after"]


async def test_two_processes_forty_sends_land_in_order_or_find_the_session_busy(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agentos.db"
    SQLiteSessionStore(path=path).close()  # migrated once, before both start

    async def run(name: str, seed: int) -> list[dict[str, str]]:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "fakes.session_writer",
            str(path),
            name,
            str(seed),
            "20",
            "0.25",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=TESTS,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        out, err = await child.communicate()
        assert child.returncode == 0, err.decode()[-3000:]
        return [json.loads(line) for line in out.decode().splitlines()]

    a, b = await asyncio.gather(run("A", 11), run("B", 22))
    assert len(a) == len(b) == 20
    store = SQLiteSessionStore(path=path)
    stored = [s.message for s in store.load_messages(session_writer.SESSION)]
    store.close()
    assert _alternating(stored)
    users = [m.text for m in stored if m.role is Role.USER]
    for sent in (a, b):
        landed = [r["prompt"] for r in sent if r["outcome"] == "landed"]
        assert [u for u in users if u.split("-")[0] == sent[0]["prompt"].split("-")[0]] == landed
        assert {r["outcome"] for r in sent} <= {"landed", "busy"}
    landed_all = [r["prompt"] for r in a + b if r["outcome"] == "landed"]
    assert sorted(users) == sorted(landed_all)  # none lost, none doubled
    replies = {m.text for m in stored if m.role is Role.ASSISTANT and not m.tool_calls}
    assert replies == {session_writer.reply_to(p) for p in landed_all}
    busy = sum(r["outcome"] == "busy" for r in a + b)
    print(f"two processes, 40 sends: {len(landed_all)} landed, {busy} busy, 0 lost")


@pytest.mark.parametrize(("age", "busy"), [(5.0, True), (11.0, False)])
async def test_a_holder_on_another_host_keeps_its_lease_while_its_heartbeat_is_fresh(
    tmp_path: Path, age: float, busy: bool
) -> None:
    store = SQLiteSessionStore(path=tmp_path / "agentos.db", lease_timeout=0.05, lease_ttl=10.0)
    session = gmi(model=_echo(), store=store).session("s")
    await session.send("before")
    store.database.execute(
        "UPDATE session_leases SET token = 't', host = 'elsewhere.example', pid = 1, "
        "started = '', heartbeat_at = ?, turn_block = 1 WHERE session_id = 's'",
        (time.time() - age,),
    )
    if busy:
        with pytest.raises(GMIError) as caught:
            await session.send("now")
        assert caught.value.code is GMIErrorCode.SESSION_BUSY
    else:
        await session.send("now")  # the heartbeat is older than lease_ttl: taken over
    assert _texts(await session.messages())[-2:] == (
        ["before", "re: before"] if busy else ["now", "re: now"]
    )


async def test_two_chat_terminals_on_one_session_take_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What two ``agentos chat --session x`` terminals do, through the command's own session."""
    monkeypatch.setenv(AGENTOS_HOME_ENV, str(tmp_path))
    settings = ChatSettings(session="x")
    one = ChatSession.open(settings, _echo())
    two = ChatSession.open(settings, _echo())
    try:
        assert await one.turn("from one", lambda _: None) == "re: from one"
        assert await two.turn("from two", lambda _: None) == "re: from two"
        assert await one.turn("one again", lambda _: None) == "re: one again"
        assert _texts(await two.session.messages()) == [
            "from one",
            "re: from one",
            "from two",
            "re: from two",
            "one again",
            "re: one again",
        ]
    finally:
        await one.close()
        await two.close()
