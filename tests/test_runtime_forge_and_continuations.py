"""Forged tools reach their session, and tool continuations keep their namespace (issue 15).

Item 7: a tool ``forge_tool`` registers "at session level" is offered to that session's GMI from
its next model step and runs there; another session never sees it (privacy). Item 3 and the
spec's Learners paragraph: "A tool continuation belongs to the turn it continues; one that runs
under another organization than its turn (a resume whose host passes another organizationId) is
a turn of another namespace." A pause keeps its turn's organization, so a GMI built again after
a restart binds its learner under the paused turn's namespace.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role, ToolCall, ToolResult
from agentos.learning import GMILearnerSession, LearningLayer
from agentos.llm.model import ToolDefinition
from agentos.runtime import AgentOS
from agentos.storage import SQLiteToolPauseStore, ToolPause, open_database
from agentos.storage.sqlite import open_store_database
from agentos.storage.tool_pause_sqlite import TOOL_PAUSE_MIGRATIONS, TOOL_PAUSE_STORE
from agentos.substrate import GMI
from agentos.testing import FakeClock, ScriptedModel, ScriptStep
from agentos.tools import ToolExecutionContext, ToolOrchestrator
from agentos.tools.tool import tool
from agentos.tools.toolbox import OfferedTools
from fakes.runtime_models import SELF_IMPROVEMENT_ON, TUTOR, drain, start_runtime

WEATHER = ToolDefinition("weather", "Today's weather in a city.", {"type": "object"})
USER = "student-7f3a"


@tool
def double(x: int) -> int:
    """Twice x."""
    return 2 * x


@tool(required_capabilities=["payments"])
def refund(x: int) -> int:
    """Refund x (needs a capability no persona here is allowed)."""
    return x


def _forge(step_tool: str = "double") -> ScriptStep:
    arguments = {
        "name": "twice",
        "description": "Twice x, through double.",
        "input_schema": {"type": "object", "properties": {"x": {"type": "integer"}}},
        "implementation": {
            "mode": "compose",
            "steps": [{"name": "d", "tool": step_tool, "input_mapping": "$input"}],
        },
        "test_cases": [{"input": {"x": 2}, "expected_output": 4}],
    }
    return ScriptStep(tool_calls=[ToolCall("f1", "forge_tool", arguments)])


def _call(call_id: str, name: str, **arguments: Any) -> ScriptStep:
    return ScriptStep(tool_calls=[ToolCall(call_id, name, arguments)])


async def _runtime(model: ScriptedModel, **settings: Any) -> AgentOS:
    defaults = {"personas": [TUTOR], "emergent_config": SELF_IMPROVEMENT_ON, "tools": [double]}
    return await start_runtime(model, **{**defaults, **settings})


async def _turn(runtime: AgentOS, session_id: str = "s1", text: str = "Go.", **extra: Any) -> None:
    request = {"user_id": USER, "session_id": session_id, "text_input": text, **extra}
    await drain(runtime.process_request(request))


def _offered(model: ScriptedModel, call: int) -> list[str]:
    return [definition.name for definition in model.requests[call].tools]


def _results(messages: list[Message] | Any) -> list[ToolResult]:
    return [m.tool_result for m in messages if m.role is Role.TOOL and m.tool_result is not None]


# -- forged tools reach their session only ------------------------------------------------------


async def test_a_forged_tool_is_offered_from_the_next_step_and_runs() -> None:
    model = ScriptedModel([_forge(), "APPROVE", _call("t1", "twice", x=21), "It is 42."])
    runtime = await _runtime(model)
    await _turn(runtime, text="Build a doubling tool, then use it on 21.")
    # requests: 0 the forge step, 1 the judge, 2 the next step, 3 the step after the call.
    assert "twice" not in _offered(model, 0)
    assert "twice" in _offered(model, 2)
    answer = _results(model.requests[3].messages)[-1]
    assert (answer.tool_name, answer.output, answer.is_error) == ("twice", 42, False)
    await runtime.shutdown()


async def test_another_session_never_sees_nor_runs_a_forged_tool() -> None:
    model = ScriptedModel(
        [_forge(), "APPROVE", "Forged.", _call("t2", "twice", x=1), "No such tool.", "Hi."]
    )
    runtime = await _runtime(model)
    await _turn(runtime, "s1", "Build a doubling tool.")
    await _turn(runtime, "s2", "Use twice on 1.")
    assert "twice" not in _offered(model, 3)
    refused = _results(model.requests[4].messages)[-1]
    assert refused.is_error
    assert (refused.error_details or {}).get("code") == str(GMIErrorCode.TOOL_NOT_FOUND)
    assert str(refused.output).startswith("Tool 'twice' is not available.")
    await _turn(runtime, "s1", "Hello again.")  # its own session keeps it on later turns
    assert "twice" in _offered(model, 5)
    await runtime.shutdown()


async def test_a_continuation_is_offered_its_sessions_forged_tools() -> None:
    model = ScriptedModel(
        [_forge(), "APPROVE", "Forged.", _call("w1", "weather"), _call("t3", "twice", x=3), "6."]
    )
    runtime = await _runtime(model, external_tools=[WEATHER])
    await _turn(runtime, text="Build a doubling tool.")
    await _turn(runtime, text="Weather?")
    await drain(runtime.handle_tool_results("s1", USER, [ToolResult("w1", "weather", "sunny")]))
    assert "twice" in _offered(model, 4)  # the continuation's step
    answer = _results(model.requests[5].messages)[-1]
    assert (answer.output, answer.is_error) == (6, False)
    await runtime.shutdown()


@tool(has_side_effects=True)
def send(x: int) -> int:
    """Send x (a side effect the host's approver must approve)."""
    return x


@pytest.mark.parametrize(
    ("step_tool", "settings"),
    [("refund", {}), ("send", {"tool_approver": lambda call, tool, context: True})],
)
async def test_a_forged_tool_cannot_compose_a_tool_that_needs_a_check(
    step_tool: str, settings: dict[str, Any]
) -> None:
    model = ScriptedModel([_forge(step_tool), "Ok."])
    runtime = await _runtime(model, tools=[double, refund, send], **settings)
    await _turn(runtime, text="Build a tool.")
    refused = _results(model.requests[1].messages)[-1]
    assert refused.output == (
        f"forge_tool rejected (unknown_tool): steps[0] calls '{step_tool}', which is not "
        "available; no tool was registered."
    )
    await runtime.shutdown()


# -- a continuation's namespace ----------------------------------------------------------------


def _paused_model(reply: str = "Sunny.") -> ScriptedModel:
    return ScriptedModel([_call("w1", "weather"), reply, "Sure.", "Sure."])


async def _learning_runtime(model: ScriptedModel, **settings: Any) -> AgentOS:
    return await _runtime(
        model, learning=True, external_tools=[WEATHER], emergent_config=None, **settings
    )


def _learner(runtime: AgentOS, session_id: str = "s1") -> GMILearnerSession:
    gmi = runtime.gmi_manager.gmi_for_session(session_id)
    assert isinstance(gmi, GMI)
    session = gmi.get_learner_session()
    assert isinstance(session, GMILearnerSession)
    return session


async def _turns(runtime: AgentOS) -> Any:
    layer = runtime.get_learning_layer()
    assert isinstance(layer, LearningLayer)
    return (await layer.manifest()).turns


def _learning_data(runtime: AgentOS) -> Any:
    gmi = runtime.gmi_manager.gmi_for_session("s1")
    assert isinstance(gmi, GMI)
    return gmi.session_data["learning"]


SUNNY = [ToolResult("w1", "weather", "sunny")]


@pytest.mark.parametrize("passed", [None, "acme"])
async def test_a_continuation_under_its_turns_organization_belongs_to_the_turn(
    passed: str | None,
) -> None:
    runtime = await _learning_runtime(_paused_model())
    await _turn(runtime, text="Weather?", organization_id="acme")
    pause = await runtime.get_pending_external_tool_request("s1", user_id=USER)
    assert pause is not None
    assert pause.organization_id == "acme"
    await drain(runtime.handle_tool_results("s1", USER, SUNNY, organization_id=passed))
    assert await _turns(runtime) == {"prepared": 1, "bound": 1, "none": {}}
    assert _learning_data(runtime)["learner"] == "bound"
    await runtime.shutdown()


async def test_a_continuation_under_another_organization_is_a_turn_of_another_namespace() -> None:
    runtime = await _learning_runtime(_paused_model())
    await _turn(runtime, text="Weather?", organization_id="acme")
    await drain(
        runtime.handle_tool_result("s1", USER, "w1", "weather", "sunny", organization_id="globex")
    )
    assert _learning_data(runtime)["learner"] == "none"
    learner = _learner(runtime).learner_session
    assert learner is not None
    assert learner.no_learner_reason == "another_namespace"
    await _turn(runtime, text="And tomorrow?", organization_id="acme")  # the learner stays ended
    assert await _turns(runtime) == {
        "prepared": 3,
        "bound": 1,
        "none": {"another_namespace": 2},
    }
    await runtime.shutdown()


async def test_a_rebuilt_gmi_binds_under_the_paused_turns_organization(tmp_path: Path) -> None:
    database = tmp_path / "agentos.db"
    stored = {"conversation_store": "sqlite", "database_path": database}
    first = await _learning_runtime(_paused_model(), **stored)
    await _turn(first, text="Weather?", organization_id="acme")
    await first.shutdown()  # the process that paused is gone
    second = await _learning_runtime(ScriptedModel(["Sunny."]), **stored)
    pause = await second.get_pending_external_tool_request("s1", user_id=USER)
    assert pause is not None
    assert pause.organization_id == "acme"
    await drain(second.resume_external_tool_request(pause, SUNNY))
    learner = _learner(second).learner_session
    assert learner is not None
    assert learner.key is not None
    assert (learner.key.namespace, learner.learner) == ("acme", "bound")
    await second.shutdown()


async def test_a_resumed_pause_without_organization_keeps_the_default() -> None:
    runtime = await _learning_runtime(_paused_model(), default_organization_id="tenant-1")
    await _turn(runtime, text="Weather?")
    pause = await runtime.get_pending_external_tool_request("s1", user_id=USER)
    assert pause is not None
    assert pause.organization_id == "tenant-1"
    await drain(runtime.handle_tool_results("s1", USER, SUNNY))
    assert await _turns(runtime) == {"prepared": 1, "bound": 1, "none": {}}
    await runtime.shutdown()


async def test_a_bad_organization_id_is_refused_before_the_pause_is_taken() -> None:
    runtime = await _learning_runtime(_paused_model())
    await _turn(runtime, text="Weather?", organization_id="acme")
    with pytest.raises(GMIError) as caught:
        await drain(runtime.handle_tool_results("s1", USER, SUNNY, organization_id=7))  # type: ignore[arg-type]
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": "organization_id"}
    assert await runtime.get_pending_external_tool_request("s1", user_id=USER) is not None
    await runtime.shutdown()


# -- the pause store keeps the organization ------------------------------------------------------


def _pause(**fields: Any) -> ToolPause:
    return ToolPause.create(
        session_id="s1",
        user_id=USER,
        persona_id="tutor",
        interaction_id="turn-1",
        tool_calls=[ToolCall("w1", "weather", {})],
        clock=FakeClock(),
        **fields,
    )


def test_the_sqlite_store_round_trips_the_organization(tmp_path: Path) -> None:
    store = SQLiteToolPauseStore(path=tmp_path / "agentos.db")
    asyncio.run(store.save(_pause(organization_id="acme")))
    loaded = asyncio.run(store.load("s1", user_id=USER))
    assert loaded is not None
    assert loaded.organization_id == "acme"
    store.close()


def test_a_pause_stored_before_the_column_loads_with_no_organization(tmp_path: Path) -> None:
    with open_database(tmp_path / "agentos.db") as database:
        open_store_database("v1", database, None, TOOL_PAUSE_STORE, TOOL_PAUSE_MIGRATIONS[:1])
        with database.transaction() as connection:
            connection.execute(
                "INSERT INTO tool_pauses (session_id, user_id, persona_id, interaction_id, "
                "tool_calls, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    "s1",
                    USER,
                    "tutor",
                    "turn-1",
                    '[{"id":"w1","name":"weather","arguments":{}}]',
                    "2026-01-01T00:00:00.000000+00:00",
                ),
            )
        store = SQLiteToolPauseStore(database)
        assert database.schema_version(TOOL_PAUSE_STORE) == 2
        loaded = asyncio.run(store.load("s1", user_id=USER))
        assert loaded is not None
        assert (loaded.tool_call_ids, loaded.organization_id) == (("w1",), None)


def test_a_pause_refuses_an_organization_that_is_not_text() -> None:
    with pytest.raises(GMIError) as caught:
        _pause(organization_id=" ")
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": "organization_id"}


# -- the orchestrator's session-tools seam -------------------------------------------------------


def _context(session_id: str) -> ToolExecutionContext:
    return ToolExecutionContext(gmi_id="g", persona_id="tutor", user_id=USER, session_id=session_id)


async def test_session_tools_are_offered_and_run_for_their_context_only() -> None:
    @tool(name="double")
    def shadow(x: int) -> int:
        """A session tool named as an orchestrator tool: never offered, never run."""
        return -x

    @tool
    def triple(x: int) -> int:
        """Thrice x."""
        return 3 * x

    held = {"s1": [shadow, triple]}
    orchestrator = ToolOrchestrator(
        [double], session_tools=lambda context: held.get(context.session_id or "", [])
    )
    offered = orchestrator.list_tools(_context("s1"))
    assert [d.name for d in offered] == ["double", "triple"]
    assert isinstance(offered, OfferedTools)
    assert offered.current() is offered.current()  # unchanged: the step loop resends nothing
    assert [d.name for d in orchestrator.list_tools(_context("s2"))] == ["double"]
    assert [d.name for d in orchestrator.list_tools()] == ["double"]
    ran = await orchestrator.process_tool_call(ToolCall("c1", "double", {"x": 2}), _context("s1"))
    assert ran.output == 4
    ran = await orchestrator.process_tool_call(ToolCall("c2", "triple", {"x": 2}), _context("s1"))
    assert ran.output == 6
    other = await orchestrator.process_tool_call(ToolCall("c3", "triple", {"x": 2}), _context("s2"))
    assert other.is_error
    assert (other.error_details or {}).get("code") == str(GMIErrorCode.TOOL_NOT_FOUND)
