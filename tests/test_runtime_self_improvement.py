"""The self-modification tools on the full runtime (spec "Learning": The self-modification tools).

"Only the full runtime registers these tools": with ``emergent_config.self_improvement.enabled``
the runtime's model sees them and a real model tool call runs them on the CALLING session's GMI
(reference case 56, without its bug of changing the first active GMI). With a layer they keep
its bounds (``step_bound``, ``call_limit``) and modes; honesty and emotionality are
``operator_only`` on every host; the refusal's text and details reach the model as the tool's
failed result. A ``gmi()`` agent gets none of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role, ToolCall
from agentos.runtime import AgentOS
from agentos.storage import SQLitePersonalityMutationStore
from agentos.substrate import GMI
from agentos.testing import ScriptedModel, ScriptStep
from agentos.tools.tool import tool
from fakes.runtime_models import SELF_IMPROVEMENT_ON, TUTOR, drain, start_runtime

TOOL_NAMES = {"adapt_personality", "create_workflow", "self_evaluate", "forge_tool"}


def _adapt(call_id: str, trait: str = "openness", delta: float = 0.01) -> ScriptStep:
    arguments = {"trait": trait, "delta": delta, "reasoning": "the student likes ideas"}
    return ScriptStep(tool_calls=[ToolCall(call_id, "adapt_personality", arguments)])


async def _runtime(model: ScriptedModel, **settings: Any) -> AgentOS:
    return await start_runtime(
        model, **{"personas": [TUTOR], "emergent_config": SELF_IMPROVEMENT_ON, **settings}
    )


async def _turn(runtime: AgentOS, session_id: str = "s1", text: str = "Adapt.") -> None:
    request = {"user_id": "student-7f3a", "session_id": session_id, "text_input": text}
    await drain(runtime.process_request(request))


def _trait(runtime: AgentOS, session_id: str, trait: str = "openness") -> object:
    gmi = runtime.gmi_manager.gmi_for_session(session_id)
    assert isinstance(gmi, GMI)
    return (gmi.persona.personality_traits or {}).get(trait)


def _tool_outputs(messages: list[Message] | Any) -> list[str]:
    """The tool results' outputs the model receives (a refusal's details kept with them)."""
    return [
        str(m.tool_result.output)
        for m in messages
        if m.role is Role.TOOL and m.tool_result is not None
    ]


def _tool_details(messages: list[Message] | Any) -> list[object]:
    return [
        (m.tool_result.error_details or {}).get("details")
        for m in messages
        if m.role is Role.TOOL and m.tool_result is not None
    ]


async def test_the_model_sees_the_tools_only_when_enabled() -> None:
    on = ScriptedModel(["Hi."])
    await _turn(await _runtime(on))
    assert {tool.name for tool in on.requests[0].tools} >= TOOL_NAMES
    off = ScriptedModel(["Hi."])
    await _turn(await _runtime(off, emergent_config=None))
    assert not TOOL_NAMES & {tool.name for tool in off.requests[0].tools}


async def test_adapt_personality_changes_the_calling_sessions_gmi_only() -> None:
    model = ScriptedModel(["Hello.", _adapt("c1"), "Done."])
    runtime = await _runtime(model, learning=True)
    await _turn(runtime, "s2", "Hello.")
    await _turn(runtime, "s1")
    assert _trait(runtime, "s1") == pytest.approx(0.91)
    assert _trait(runtime, "s2") == 0.9
    outputs = _tool_outputs(model.requests[2].messages)
    assert len(outputs) == 1
    assert "refused" not in outputs[0]
    # The prompt keeps the authored traits: the section of both calls is the same text.
    section = [str(m.content) for m in model.requests[1].messages if m.role is Role.SYSTEM]
    assert section == [str(m.content) for m in model.requests[2].messages if m.role is Role.SYSTEM]


async def _refused_output(model: ScriptedModel, runtime: AgentOS) -> str:
    await _turn(runtime)
    outputs = _tool_outputs(model.requests[-1].messages)
    return outputs[-1]


@pytest.mark.parametrize(
    ("step", "learning", "reason"),
    [
        (_adapt("c1", delta=0.05), True, "step_bound"),
        (_adapt("c1", trait="honesty"), True, "operator_only"),
        (_adapt("c1", trait="emotionality"), None, "operator_only"),
    ],
)
async def test_a_refusal_reaches_the_model_with_its_text(
    step: ScriptStep, learning: object, reason: str
) -> None:
    model = ScriptedModel([step, "Understood."])
    runtime = await _runtime(model, learning=learning)
    output = await _refused_output(model, runtime)
    assert output.startswith(f"adapt_personality refused ({reason}): ")
    assert output.endswith("nothing was changed.")
    details = _tool_details(model.requests[-1].messages)[-1]
    assert details == {"status": "rejected", "reason": reason}
    assert _trait(runtime, "s1") == 0.9


async def test_without_a_layer_a_larger_step_is_accepted() -> None:
    model = ScriptedModel([_adapt("c1", delta=0.05), "Done."])
    runtime = await _runtime(model)
    await _turn(runtime)
    assert _trait(runtime, "s1") == pytest.approx(0.95)


async def test_the_layer_allows_three_accepted_calls_per_session() -> None:
    steps: list[ScriptStep | str] = []
    for index in range(4):
        steps += [_adapt(f"c{index}"), "Ok."]
    model = ScriptedModel(steps)
    runtime = await _runtime(model, learning=True)
    for _ in range(4):
        await _turn(runtime)
    last = _tool_outputs(model.requests[-1].messages)[-1]
    assert last.startswith("adapt_personality refused (call_limit): ")
    assert _trait(runtime, "s1") == pytest.approx(0.93)


@pytest.mark.parametrize(
    ("variable", "learning", "reason"),
    [
        ("AGENTOS_LEARNING_FREEZE", True, "frozen"),
        ("AGENTOS_LEARNING_FREEZE", None, "frozen"),
        ("AGENTOS_LEARNING_OFF", True, "off"),
    ],
)
async def test_the_process_switches_refuse(
    monkeypatch: pytest.MonkeyPatch, variable: str, learning: object, reason: str
) -> None:
    monkeypatch.setenv(variable, "1")
    model = ScriptedModel([_adapt("c1"), "Ok."])
    runtime = await _runtime(model, learning=learning)
    output = await _refused_output(model, runtime)
    assert output.startswith(f"adapt_personality refused ({reason}): ")
    assert _trait(runtime, "s1") == 0.9


async def test_the_off_switch_without_a_layer_refuses_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTOS_LEARNING_OFF", "1")
    model = ScriptedModel([_adapt("c1"), "Ok."])
    runtime = await _runtime(model)
    await _turn(runtime)
    assert _trait(runtime, "s1") == pytest.approx(0.91)


async def test_a_turn_with_no_learner_is_refused_no_learner() -> None:
    model = ScriptedModel([_adapt("c1"), "Ok."])
    runtime = await _runtime(model, learning=True)
    guest = {"user_id": "guest", "session_id": "s1", "text_input": "Adapt."}
    await drain(runtime.process_request(guest))
    last = _tool_outputs(model.requests[-1].messages)[-1]
    assert last.startswith("adapt_personality refused (no_learner): ")


async def test_accepted_changes_are_stored_in_the_sqlite_database(tmp_path: Path) -> None:
    database = tmp_path / "agentos.db"
    model = ScriptedModel([_adapt("c1"), "Ok."])
    runtime = await _runtime(model, conversation_store="sqlite", database_path=database)
    await _turn(runtime)
    gmi = runtime.gmi_manager.gmi_for_session("s1")
    assert gmi is not None
    await runtime.shutdown()
    store = SQLitePersonalityMutationStore(path=database)  # another process reads the file
    try:
        stored = await store.load_for_agent(gmi.gmi_id)
    finally:
        store.close()
    assert [m.trait for m in stored] == ["openness"]
    assert stored[0].delta == pytest.approx(0.01)


async def test_enabled_skills_reach_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "cite.md").write_text(
        "---\nid: cite\ncategory: research\ndescription: Cite sources.\nenabled: true\n---\n"
        "Cite every source.\n"
    )
    model = ScriptedModel(["Hi."])
    settings = {"self_improvement": {"enabled": True, "skills_dir": str(tmp_path)}}
    runtime = await _runtime(model, emergent_config=settings)
    await _turn(runtime)
    system = "\n".join(str(m.content) for m in model.requests[0].messages if m.role is Role.SYSTEM)
    assert "## Skill: cite\nCite every source." in system
    assert "manage_skills" in {tool.name for tool in model.requests[0].tools}


@pytest.mark.parametrize(
    ("emergent", "option"),
    [
        ({"self_improvement": {"enabled": "yes"}}, "emergent_config.self_improvement.enabled"),
        ({"self_improvement": {"colour": 1}}, "emergent_config.self_improvement.colour"),
        ({"forge": {}}, "emergent_config.forge"),
        (
            {"self_improvement": {"enabled": True, "decay_rate": 2}},
            "emergent_config.self_improvement.decay_rate",
        ),
    ],
)
async def test_a_bad_emergent_config_is_refused_naming_the_field(
    emergent: object, option: str
) -> None:
    with pytest.raises(GMIError) as caught:
        await _runtime(ScriptedModel([]), emergent_config=emergent)
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.details["option"] == option


async def test_a_gmi_agent_has_none_of_the_tools() -> None:
    from agentos import gmi

    model = ScriptedModel(["Hi."])
    agent = gmi(model=model, instructions="You teach.", learning=True)
    await agent.generate("Hello.")
    assert not TOOL_NAMES & {tool.name for tool in model.requests[0].tools}


# -- forge_tool ---------------------------------------------------------------------------------


@tool
def double(x: int) -> int:
    """Twice x."""
    return 2 * x


def _forge(mode: str = "compose") -> ScriptStep:
    implementation: dict[str, Any] = (
        {"mode": "compose", "steps": [{"name": "d", "tool": "double", "input_mapping": "$input"}]}
        if mode == "compose"
        else {"mode": "sandbox", "code": "def execute(input):\n    return 4 * input['x']\n"}
    )
    arguments = {
        "name": "quadruple_ish",
        "description": "Twice x, through double.",
        "input_schema": {"type": "object", "properties": {"x": {"type": "integer"}}},
        "implementation": implementation,
        "test_cases": [{"input": {"x": 2}, "expected_output": 4}],
    }
    return ScriptStep(tool_calls=[ToolCall("f1", "forge_tool", arguments)])


async def test_forge_tool_composes_existing_tools_tested_then_judged_by_the_model() -> None:
    model = ScriptedModel([_forge(), "APPROVE", "Forged."])
    runtime = await _runtime(model, tools=[double], learning=True)
    await _turn(runtime, text="Build a tool.")
    assert "forge_tool" in {t.name for t in model.requests[0].tools}
    judged = model.requests[1].messages[-1].text
    assert judged.startswith("You review a tool an agent built")
    assert '"passed": true' in judged
    output = _tool_outputs(model.requests[2].messages)[-1]
    assert "'status': 'registered'" in output
    assert "'tool': 'quadruple_ish'" in output


async def test_forge_tool_rejected_by_the_judge_registers_nothing() -> None:
    model = ScriptedModel([_forge(), "REJECT: it only doubles", "Ok."])
    runtime = await _runtime(model, tools=[double])
    await _turn(runtime, text="Build a tool.")
    output = _tool_outputs(model.requests[2].messages)[-1]
    assert output == (
        "forge_tool rejected (judge_rejected): the judge rejected it: it only doubles; "
        "no tool was registered."
    )


async def test_sandboxed_code_is_refused_unless_the_host_allows_it() -> None:
    model = ScriptedModel([_forge("sandbox"), "Ok."])
    runtime = await _runtime(model, tools=[double])
    await _turn(runtime, text="Build a tool.")
    output = _tool_outputs(model.requests[1].messages)[-1]
    assert output.startswith("forge_tool rejected (sandbox_not_allowed): ")


async def test_forge_tool_is_refused_under_the_freeze(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTOS_LEARNING_FREEZE", "1")
    model = ScriptedModel([_forge(), "Ok."])
    runtime = await _runtime(model, tools=[double])
    await _turn(runtime, text="Build a tool.")
    output = _tool_outputs(model.requests[1].messages)[-1]
    assert output.startswith("forge_tool refused (frozen): ")


async def test_a_bad_forge_setting_is_refused_naming_it() -> None:
    settings = {"self_improvement": {"enabled": True, "sandbox_memory_mb": 0}}
    with pytest.raises(GMIError) as caught:
        await _runtime(ScriptedModel([]), emergent_config=settings)
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.details["option"] == "emergent_config.self_improvement.sandbox_memory_mb"


async def test_the_manifest_reports_the_forged_code_executor() -> None:
    settings = {"self_improvement": {"enabled": True, "allow_sandbox_tools": True}}
    runtime = await _runtime(ScriptedModel([]), learning=True, emergent_config=settings)
    layer = runtime.get_learning_layer()
    assert layer is not None
    loops = (await layer.manifest()).loops
    assert loops["forged_code_executor"].live is True
    assert loops["self_improvement_tools"].live is True
