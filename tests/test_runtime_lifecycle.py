"""The full runtime's lifecycle through its public API (issue 13 "Done when"; spec: Getting a GMI,
the IGMI pause).

- A restart between a pause and its results, two processes: a child process
  (`fakes.runtime_pause_child`) runs a turn whose model calls the host's tool, reads the
  actionable TOOL_CALL_REQUEST and exits (reading to the end, stopping at the request, or
  SIGKILLed); a new `AgentOS` on the same SQLite file finds the pause, continues it with the
  host's results and gets the FINAL_RESPONSE, its model sent what the runtime that paused would
  have sent (spec: "resumeExternalToolRequest() ... rebuilds GMI via GMIManager, hydrates
  history + turn context").
- Shutdown with a GMI stuck in a turn: the stuck model call is aborted, the consumer gets the
  abort; a GMI that does not stop within ``shutdown_timeout_ms`` (on the injected clock) is
  logged at WARNING and left to finish; afterwards every call is ``NOT_INITIALIZED``.
- Idle cleanup on the injected clock: the next request builds a new GMI that still sees the
  stored conversation.
- Concurrent requests on one session are serialised; no request sees another user's messages.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role, ToolResult
from agentos.llm.model import (
    CompletionOptions,
    ToolDefinition,
)
from agentos.runtime import (
    AgentOS,
    AgentOSResponse,
    AgentOSResponseChunkType,
    ErrorChunk,
    FinalResponseChunk,
    TextDeltaChunk,
    create_agentos_config,
)
from agentos.substrate.gmi import GMI
from agentos.substrate.state import GMIPrimeState
from agentos.testing import FakeClock, ScriptedModel, ScriptStep
from fakes import runtime_pause_child
from fakes.runtime_models import WedgedModel
from fakes.runtime_pause_child import (
    PAUSE_STEP,
    PERSONA,
    QUESTION,
    SESSION,
    USER,
    WEATHER_CALL,
    start_runtime,
)

C = AgentOSResponseChunkType
CHILD = Path(runtime_pause_child.__file__)
RESULT = ToolResult("w1", "weather", "sunny, 18 C")
ANSWER = "Sunny in Oslo."
REQUEST = {"user_id": USER, "session_id": SESSION, "text_input": QUESTION}
GUARD = 2.0
"""Real seconds a test waits for something that must already be done (a guard, not a bound)."""

EXPECTED_CONTINUATION = [
    Message.user(QUESTION),
    Message.assistant("Let me check.", tool_calls=[WEATHER_CALL]),
    Message.tool(RESULT),
]
"""What the model gets to continue the paused round (after the system prompt): the input, the
paused round's assistant message (its text and its call) and the host's result."""


async def _all(chunks: AsyncIterator[AgentOSResponse]) -> list[AgentOSResponse]:
    return [chunk async for chunk in chunks]


def _session_gmi(runtime: AgentOS, session_id: str) -> GMI:
    """The session's built-in GMI (the runtime builds `GMI` when no IGMI factory is given)."""
    gmi = runtime.gmi_manager.gmi_for_session(session_id)
    assert isinstance(gmi, GMI)
    return gmi


def _state(gmi: GMI) -> GMIPrimeState:
    return gmi.state


def _visible(messages: Sequence[Message]) -> list[Message]:
    return [m for m in messages if m.role is not Role.SYSTEM]


async def _settle(rounds: int = 50) -> None:
    """Let every task that can run, run (no time passes on any clock)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


async def _runtime(model: ScriptedModel, **overrides: Any) -> AgentOS:
    settings_: dict[str, Any] = {
        "personas": [PERSONA],
        "default_persona_id": PERSONA.id,
        "model": model,
        "utility_ai": "statistical",
    }
    settings_.update(overrides)
    runtime = AgentOS()
    await runtime.initialize(create_agentos_config(environ={}, **settings_))
    return runtime


# -- a restart between the pause and the results (two processes) --------------------------------


async def _pause_in_child(database: Path, mode: str) -> dict[str, Any]:
    """Run the child in ``mode``; the request it read (as `dump_response` gives it)."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CHILD),
        str(database),
        mode,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await child.communicate()
    expected = -signal.SIGKILL if mode == "kill" else 0
    assert child.returncode == expected, (mode, err.decode()[-2000:])
    lines = out.decode().splitlines()
    assert len(lines) == 1, lines
    request: dict[str, Any] = json.loads(lines[0])
    return request


def _integrity(path: Path) -> str:
    connection = sqlite3.connect(path)
    try:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        connection.close()


async def test_the_runtime_that_paused_continues_with_the_paused_round(tmp_path: Path) -> None:
    """The reference a restarted runtime must match: one process, the same GMI."""
    model = ScriptedModel([PAUSE_STEP, ANSWER])
    runtime = await start_runtime(tmp_path / "one.db", model)
    chunks = await _all(runtime.process_request(REQUEST))
    assert [c.type for c in chunks] == [C.TEXT_DELTA] * 3 + [C.TOOL_CALL_REQUEST]
    chunks = await _all(runtime.handle_tool_results(SESSION, USER, [RESULT]))
    final = chunks[-1]
    assert isinstance(final, FinalResponseChunk)
    assert final.final_response_text == ANSWER
    assert _visible(model.requests[1].messages) == EXPECTED_CONTINUATION
    stored = await runtime.conversation(SESSION, user_id=USER)
    # The paused round is stored paired: its calls, the host's result, then the reply.
    assert [(m.role, m.text) for m in stored] == [
        (Role.USER, QUESTION),
        (Role.ASSISTANT, "Let me check."),
        (Role.TOOL, ""),
        (Role.ASSISTANT, ANSWER),
    ]
    await runtime.shutdown()


@pytest.mark.parametrize("mode", runtime_pause_child.MODES)
async def test_a_restarted_runtime_finds_the_pause_and_continues_it(
    tmp_path: Path, mode: str
) -> None:
    database = tmp_path / "runtime.db"
    read = await _pause_in_child(database, mode)
    assert read["execution_mode"] == "external"
    assert read["requires_external_tool_result"] is True
    assert read["tool_calls"] == [{"id": "w1", "name": "weather", "arguments": {"city": "Oslo"}}]
    assert _integrity(database) == "ok"

    model = ScriptedModel([ANSWER])
    runtime = await start_runtime(database, model)
    pause = await runtime.get_pending_external_tool_request(SESSION, user_id=USER)
    assert pause is not None  # saved before the host read the request, so it survived
    assert pause.tool_calls == (WEATHER_CALL,)
    assert (pause.persona_id, pause.user_id) == (PERSONA.id, USER)
    assert pause.gmi_instance_id == read["gmi_instance_id"]

    chunks = await _all(runtime.handle_tool_results(SESSION, USER, [RESULT]))
    assert [c.type for c in chunks] == [C.TEXT_DELTA] * 3 + [C.FINAL_RESPONSE]
    final = chunks[-1]
    assert isinstance(final, FinalResponseChunk)
    assert final.final_response_text == ANSWER
    assert final.rag_sources == ()  # resumed on another GMI: none (spec)
    rebuilt = runtime.gmi_manager.gmi_for_session(SESSION)
    assert rebuilt is not None
    assert rebuilt.gmi_id != read["gmi_instance_id"]
    assert {c.gmi_instance_id for c in chunks} == {rebuilt.gmi_id}
    # The rebuilt GMI continued the paused round: the model got the call and the host's result.
    assert model.calls == 1
    sent = _visible(model.requests[0].messages)
    assert sent[-1] == Message.tool(RESULT)
    assert sent[-2].role is Role.ASSISTANT
    assert sent[-2].tool_calls == [WEATHER_CALL]
    assert await runtime.get_pending_external_tool_request(SESSION, user_id=USER) is None
    await runtime.shutdown()


@pytest.mark.parametrize(
    "mode",
    [
        "drain",
        "stop",
        "kill",
    ],
)
async def test_a_restarted_runtime_sends_what_the_runtime_that_paused_would(
    tmp_path: Path, mode: str
) -> None:
    database = tmp_path / "runtime.db"
    await _pause_in_child(database, mode)
    model = ScriptedModel([ANSWER])
    runtime = await start_runtime(database, model)
    try:
        stored = await runtime.conversation(SESSION, user_id=USER)
        assert [(m.role, m.text) for m in stored] == [
            (Role.USER, QUESTION),
            (Role.ASSISTANT, "Let me check."),
        ]
        await _all(runtime.handle_tool_results(SESSION, USER, [RESULT]))
        assert _visible(model.requests[0].messages) == EXPECTED_CONTINUATION
    finally:
        await runtime.shutdown()


# -- shutdown with a GMI stuck in a turn ---------------------------------------------------------


class _Consumer:
    """Reads one request's chunks in a task of its own; keeps what it got and how it ended."""

    def __init__(self, runtime: AgentOS, request: dict[str, Any]) -> None:
        self.chunks: list[AgentOSResponse] = []
        self.error: BaseException | None = None
        self.task = asyncio.create_task(self._read(runtime, request))

    async def _read(self, runtime: AgentOS, request: dict[str, Any]) -> None:
        try:
            async for chunk in runtime.process_request(request):
                self.chunks.append(chunk)
        except Exception as exc:  # kept: the test checks how the turn ended
            self.error = exc


async def test_shutdown_aborts_a_turn_stuck_in_its_model_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    never = asyncio.Event()
    model = ScriptedModel([ScriptStep(text="never", wait=never)])
    runtime = await _runtime(model, clock=FakeClock(), shutdown_timeout_ms=50)
    consumer = _Consumer(runtime, {"user_id": USER, "session_id": "s1", "text_input": "hi"})
    await _settle()
    assert model.calls == 1  # the turn is inside its model call
    gmi = _session_gmi(runtime, "s1")
    with caplog.at_level(logging.WARNING):
        await asyncio.wait_for(runtime.shutdown(), GUARD)
    await asyncio.wait_for(consumer.task, GUARD)
    assert consumer.error is None
    assert [c.type for c in consumer.chunks] == [C.ERROR, C.FINAL_RESPONSE]
    error = consumer.chunks[0]
    assert isinstance(error, ErrorChunk)
    assert error.code is GMIErrorCode.ABORTED
    final = consumer.chunks[-1]
    assert isinstance(final, FinalResponseChunk)
    assert final.error is not None
    assert final.error["code"] == GMIErrorCode.ABORTED.value
    assert _state(gmi) is GMIPrimeState.SHUTDOWN
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # within the bound
    with pytest.raises(GMIError) as caught:
        await _all(runtime.process_request({"user_id": USER, "session_id": "s1"}))
    assert caught.value.code is GMIErrorCode.NOT_INITIALIZED
    with pytest.raises(GMIError) as caught:
        _ = runtime.gmi_manager
    assert caught.value.code is GMIErrorCode.NOT_INITIALIZED


async def _stuck_runtime(
    release: asyncio.Event, clock: FakeClock, **overrides: Any
) -> tuple[AgentOS, _Consumer, GMI]:
    """A runtime whose session ``s1`` runs a turn wedged in its model call."""
    model = WedgedModel(release)
    runtime = await _runtime(model, clock=clock, shutdown_timeout_ms=8000, **overrides)
    consumer = _Consumer(runtime, {"user_id": USER, "session_id": "s1", "text_input": "hi"})
    await _settle()
    assert model.calls == 1
    gmi = _session_gmi(runtime, "s1")
    return runtime, consumer, gmi


async def test_a_gmi_that_misses_the_bound_is_logged_at_warning_and_finishes_on_its_own(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    release = asyncio.Event()
    runtime, consumer, gmi = await _stuck_runtime(release, clock)
    with caplog.at_level(logging.WARNING, logger="agentos.substrate.gmi_manager"):
        shutdown = asyncio.create_task(runtime.shutdown())
        await _settle()
        assert not shutdown.done()  # the bound runs on the injected clock, which has not moved
        await clock.advance_and_settle(8.0)
        await asyncio.wait_for(shutdown, GUARD)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warnings] == [
        f"GMI {gmi.gmi_id} of session s1 did not shut down within 8000 ms; it finishes on its own"
    ]
    with pytest.raises(GMIError) as caught:
        await _all(runtime.process_request({"user_id": USER, "session_id": "s1"}))
    assert caught.value.code is GMIErrorCode.NOT_INITIALIZED
    # Its own bound passed on the same clock: it closed without the turn, which runs on.
    assert _state(gmi) is GMIPrimeState.SHUTDOWN
    assert not consumer.task.done()
    release.set()  # the wedged call lets go: the turn ends with the abort
    await asyncio.wait_for(consumer.task, GUARD)
    await asyncio.wait_for(gmi.shutdown(), GUARD)
    assert _state(gmi) is GMIPrimeState.SHUTDOWN
    assert consumer.error is None
    assert [c.type for c in consumer.chunks] == [C.ERROR, C.FINAL_RESPONSE]
    error = consumer.chunks[0]
    assert isinstance(error, ErrorChunk)
    assert error.code is GMIErrorCode.ABORTED


async def test_a_stuck_gmis_own_wait_ends_when_the_injected_clock_passes_the_bound() -> None:
    clock = FakeClock()
    release = asyncio.Event()
    runtime, consumer, gmi = await _stuck_runtime(release, clock)
    try:
        shutdown = asyncio.create_task(runtime.shutdown())
        await _settle()
        await clock.advance_and_settle(8.0)
        await asyncio.wait_for(shutdown, GUARD)
        # Spec: "The GMI waits for the stopped turn within the same bound before it closes its
        # memories": the bound has passed on its clock, so it closes without the turn.
        await asyncio.wait_for(asyncio.shield(gmi.shutdown()), 0.5)
        assert _state(gmi) is GMIPrimeState.SHUTDOWN
    finally:
        release.set()
        await asyncio.wait_for(consumer.task, GUARD)
        await asyncio.wait_for(gmi.shutdown(), GUARD)


async def test_a_late_turn_on_sqlite_ends_with_the_abort_not_a_storage_error(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    release = asyncio.Event()
    runtime, consumer, gmi = await _stuck_runtime(
        release, clock, conversation_store="sqlite", database_path=tmp_path / "late.db"
    )
    shutdown = asyncio.create_task(runtime.shutdown())
    await _settle()
    await clock.advance_and_settle(8.0)
    await asyncio.wait_for(shutdown, GUARD)
    release.set()
    await asyncio.wait_for(consumer.task, GUARD)
    await asyncio.wait_for(gmi.shutdown(), GUARD)
    assert [c.type for c in consumer.chunks] == [C.ERROR, C.FINAL_RESPONSE]
    assert consumer.error is None


# -- idle cleanup --------------------------------------------------------------------------------


async def test_idle_cleanup_removes_the_gmi_and_the_next_request_sees_the_conversation() -> None:
    clock = FakeClock()
    model = ScriptedModel(["Hello Ada.", "Your name is Ada."])
    runtime = await _runtime(model, clock=clock)
    manager = runtime.gmi_manager
    first = await _all(runtime.process_request(_turn("s1", "My name is Ada.")))
    old = _session_gmi(runtime, "s1")
    assert {c.gmi_instance_id for c in first} == {old.gmi_id}
    clock.advance(59 * 60)
    assert await manager.cleanup_inactive_gmis() == 0  # idle 59 minutes: kept
    clock.advance(2 * 60)
    assert await manager.cleanup_inactive_gmis() == 1  # idle 61 minutes: removed
    assert manager.gmi_for_session("s1") is None
    assert manager.active_sessions == []
    assert _state(old) is GMIPrimeState.SHUTDOWN
    second = await _all(runtime.process_request(_turn("s1", "What is my name?")))
    new = manager.gmi_for_session("s1")
    assert new is not None
    assert new.gmi_id != old.gmi_id
    assert {c.gmi_instance_id for c in second} == {new.gmi_id}
    final = second[-1]
    assert isinstance(final, FinalResponseChunk)
    assert final.final_response_text == "Your name is Ada."
    assert _visible(model.requests[1].messages) == [
        Message.user("My name is Ada."),
        Message.assistant("Hello Ada."),
        Message.user("What is my name?"),
    ]
    await runtime.shutdown()


async def test_a_request_keeps_its_gmi_from_idle_cleanup() -> None:
    clock = FakeClock()
    model = ScriptedModel(["one", "two"])
    runtime = await _runtime(model, clock=clock)
    await _all(runtime.process_request(_turn("s1", "a")))
    gmi = runtime.gmi_manager.gmi_for_session("s1")
    clock.advance(59 * 60)
    await _all(runtime.process_request(_turn("s1", "b")))  # activity: idle time starts again
    clock.advance(59 * 60)
    assert await runtime.gmi_manager.cleanup_inactive_gmis() == 0
    assert runtime.gmi_manager.gmi_for_session("s1") is gmi
    await runtime.shutdown()


# -- concurrent requests, and users kept apart ---------------------------------------------------


def _turn(session_id: str, text: str, user_id: str = USER) -> dict[str, Any]:
    return {"user_id": user_id, "session_id": session_id, "text_input": text}


async def test_two_requests_at_once_on_one_session_run_one_after_the_other() -> None:
    gate = asyncio.Event()
    model = ScriptedModel([ScriptStep(text="First answer.", wait=gate), "Second answer."])
    runtime = await _runtime(model)
    first = asyncio.create_task(_all(runtime.process_request(_turn("s1", "first question"))))
    second = asyncio.create_task(_all(runtime.process_request(_turn("s1", "second question"))))
    await _settle()
    assert model.calls == 1  # the second waits for the first turn to end
    gate.set()
    one, two = await asyncio.wait_for(asyncio.gather(first, second), GUARD)
    for chunks, text in ((one, "First answer."), (two, "Second answer.")):
        final = chunks[-1]
        assert isinstance(final, FinalResponseChunk)
        assert final.final_response_text == text
        deltas = "".join(c.text_delta for c in chunks if isinstance(c, TextDeltaChunk))
        assert deltas == text  # no chunk of the other turn in this stream
    assert _visible(model.requests[1].messages) == [
        Message.user("first question"),
        Message.assistant("First answer."),
        Message.user("second question"),
    ]
    stored = await runtime.conversation("s1", user_id=USER)
    assert [m.text for m in stored] == [
        "first question",
        "First answer.",
        "second question",
        "Second answer.",
    ]
    await runtime.shutdown()


def _echo(
    messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
) -> str:
    return f"re: {messages[-1].text}"


_PAIRS = st.lists(
    st.tuples(st.sampled_from(["ann", "bob", "cy"]), st.sampled_from(["s1", "s2", "s3"])),
    min_size=1,
    max_size=8,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_PAIRS)
async def test_a_request_never_sees_another_users_messages(pairs: list[tuple[str, str]]) -> None:
    """Requests of several users on sessions of one persona, all at once."""
    model = ScriptedModel(_echo)
    runtime = await _runtime(model)
    owners: dict[str, str] = {}
    for user, session in pairs:
        owners.setdefault(session, user)  # the first to open a session owns it

    async def ask(index: int, user: str, session: str) -> GMIError | None:
        try:
            await _all(runtime.process_request(_turn(session, f"{user}@{session}#{index}", user)))
        except GMIError as exc:
            return exc
        return None

    outcomes = await asyncio.wait_for(
        asyncio.gather(*(ask(i, u, s) for i, (u, s) in enumerate(pairs))), GUARD * 5
    )
    for (user, session), outcome in zip(pairs, outcomes, strict=True):
        if owners[session] == user:
            assert outcome is None
        else:
            assert outcome is not None
            assert outcome.code is GMIErrorCode.PERMISSION_DENIED
    allowed = sum(owners[s] == u for u, s in pairs)
    assert model.calls == allowed  # a refused request never reaches the model
    for request in model.requests:
        sent = _visible(request.messages)
        asked = sent[-1].text
        prefix = asked.split("#")[0] + "#"
        # The request's history is its own session's exchanges, in order, and nothing else.
        for question, reply in zip(sent[:-1:2], sent[1:-1:2], strict=True):
            assert question.role is Role.USER
            assert question.text.startswith(prefix)
            assert reply == Message.assistant(f"re: {question.text}")
    gmis = {runtime.gmi_manager.gmi_for_session(session) for session in owners}
    assert len(gmis) == len(owners)  # one GMI per session, though they share the persona
    for session, owner in owners.items():
        stored = [m.text for m in await runtime.conversation(session, user_id=owner)]
        asked_here = [
            f"{u}@{s}#{i}" for i, (u, s) in enumerate(pairs) if s == session and u == owner
        ]
        # Each exchange whole (no interleaving); waiting turns need not start in arrival order.
        assert sorted(stored[::2]) == asked_here
        assert stored[1::2] == [f"re: {question}" for question in stored[::2]]
    await runtime.shutdown()
