"""The ``learning`` option of ``gmi()`` / ``agent(runtime="gmi")`` (spec "Learning", gmi() column).

On `ScriptedModel`: the option and its refusals, the section (priority 2, after the base prompt,
every step, once), learners, modes and switches, the manifest, its console line, closing.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentos import GmiAgent, agent, gmi
from agentos.api import resolve_cognition
from agentos.api.gmi_learning import SessionUserLearner
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Role, ToolCall
from agentos.learning import MANIFEST_LOG_PREFIX, LearnerKey, LearningLayer, LearningSettings
from agentos.persona.definition import HEXACO_TRAITS
from agentos.persona.personality import personality_section
from agentos.substrate.gmi import GMI
from agentos.testing import ScriptedModel, ScriptStep
from fakes.tools import add

HEADING = "## Personality & Communication Style"
SECTION = (
    f"{HEADING}\n\n"
    "Be thorough and orderly: structure answers, check details and finish what you start.\n"
    "Bring curiosity and imagination; offer unusual angles and fresh connections."
)
BASE = "You are a patient CS tutor.\n\nAssistant name: Tutor."
TRAITS = {"openness": 0.9, "conscientiousness": 0.95}
STUDENT = "student-7f3a"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "learning_manifest.py"


def _tutor(model: ScriptedModel, **options: Any) -> GmiAgent:
    settings: dict[str, Any] = {
        "name": "Tutor",
        "instructions": "You are a patient CS tutor.",
        "personality": TRAITS,
        "learning": True,
        "chain_of_thought": False,
        **options,
    }
    return gmi(model=model, **settings)


def _systems(model: ScriptedModel, index: int) -> list[str]:
    return [m.text for m in model.requests[index].messages if m.role is Role.SYSTEM]


def _layer(tutor: GmiAgent) -> LearningLayer:
    assert tutor.learning is not None
    return tutor.learning


async def _turns(tutor: GmiAgent) -> dict[str, Any]:
    return (await _layer(tutor).manifest()).turns


def _learner(mind: GMI | None) -> SessionUserLearner:
    assert mind is not None
    session = mind.get_learner_session()
    assert isinstance(session, SessionUserLearner)
    return session


# --- the option -------------------------------------------------------------------------------


def test_learning_unset_or_false_builds_no_layer_and_true_one_per_agent() -> None:
    model = ScriptedModel([])
    assert _tutor(model, learning=None).learning is None
    assert _tutor(model, learning=False).learning is None
    first, second = _tutor(model), agent(runtime="gmi", model=model, learning=True)
    assert isinstance(second, GmiAgent)
    layer = _layer(first)
    assert isinstance(second.learning, LearningLayer)
    assert second.learning is not layer
    assert [layer.surface, layer.profile, layer.mode] == ["gmi", "light", "on"]


@pytest.mark.parametrize(
    ("learning", "option"),
    [
        ("on", "learning"),
        (1, "learning"),
        ({"mode": "paused"}, "learning.mode"),
        ({"agent_key": "  "}, "learning.agent_key"),
        ({"agent_key": 7}, "learning.agent_key"),
        ({"namespace": 1}, "learning.namespace"),
        ({"anonymous_user_ids": "guest"}, "learning.anonymous_user_ids"),
        ({"traits": "yes"}, "learning.traits"),
        ({"lessons": 1}, "learning.lessons"),
        ({"skills": None}, "learning.skills"),
        ({"agentKey": "x"}, "learning.agentKey"),
    ],
)
def test_a_bad_learning_value_is_refused_at_construction_naming_the_field(
    learning: Any, option: str
) -> None:
    for build in (gmi, lambda **o: agent(runtime="gmi", **o)):
        with pytest.raises(GMIError) as caught:
            build(model=ScriptedModel([]), learning=learning)
        assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
        assert caught.value.details == {"option": option}
        assert caught.value.message.startswith(f"{option}: ")


def test_resolve_cognition_returns_the_switches_true_on_full_asks_for_all_three() -> None:
    asked = LearningSettings(traits=True, lessons=True, skills=True)
    assert resolve_cognition({"cognition": "full", "learning": True}).learning == asked
    assert resolve_cognition({"learning": True}).learning == LearningSettings()
    custom = resolve_cognition({"cognition": {"sentiment": True}, "learning": True})
    assert custom.profile == "custom"
    assert custom.learning == LearningSettings()
    partial = resolve_cognition({"cognition": "full", "learning": {"traits": False}})
    assert partial.learning == LearningSettings(traits=False, lessons=True, skills=True)
    assert resolve_cognition({"learning": False}).learning is None
    assert resolve_cognition({}).learning is None


async def test_the_manifest_reports_the_agents_loops_and_what_learning_asked_for() -> None:
    manifest = await _layer(_tutor(ScriptedModel([]), cognition="full")).manifest()
    assert manifest.profile == "full"
    live = [name for name, state in manifest.loops.items() if state.live is True]
    assert live == [
        *("memory", "memory_mechanisms", "memory_store", "sentiment", "metaprompts"),
        "personality_rendering",
    ]
    assert all(state.detail for state in manifest.loops.values() if state.live is False)
    assert manifest.guardrails["complete"] is False
    for name, field in (("trait_changes", "traits"), ("lessons", "lessons"), ("skills", "skills")):
        assert manifest.loops[name].detail == (
            f"asked for (learning.{field}); the layer keeps nothing beyond the process, "
            "so it does not run"
        )
    light = await _layer(_tutor(ScriptedModel([]))).manifest()
    assert [n for n, s in light.loops.items() if s.live] == ["personality_rendering"]
    assert str(light.loops["lessons"].detail).startswith("not asked for (learning.lessons)")
    custom = await _layer(_tutor(ScriptedModel([]), cognition={"memory": False})).manifest()
    assert custom.profile == "custom"


# --- the personality section -----------------------------------------------------------------


async def test_the_section_follows_the_base_prompt_on_every_step_and_only_once() -> None:
    model = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("c", "add", {"a": 1, "b": 2})]), "It is 3."]
    )
    tutor = _tutor(model, tools=[add])
    await tutor.session("lesson-1", user_id=STUDENT).send("What is 1 + 2?")
    assert model.calls == 2
    for step in range(2):
        assert _systems(model, step) == [BASE, SECTION]
        assert "\n".join(m.text for m in model.requests[step].messages).count(HEADING) == 1


async def test_without_learning_the_base_prompt_carries_the_section() -> None:
    model = ScriptedModel(["Hi."])
    await _tutor(model, learning=False).session("s", user_id=STUDENT).send("Hello")
    assert _systems(model, 0) == [f"{BASE}\n\n{SECTION}"]


async def test_an_agent_built_with_system_blocks_gets_the_section_after_its_blocks() -> None:
    model = ScriptedModel(["Hi."])
    tutor = _tutor(model, system_blocks=["Block one.", "Block two."])
    await tutor.session("s", user_id=STUDENT).send("Hello")
    assert _systems(model, 0) == ["Block one.\n\nBlock two.", SECTION]


@pytest.mark.parametrize("mode", ["on", "frozen", "off"])
async def test_the_section_renders_the_authored_traits_in_every_mode(mode: str) -> None:
    model = ScriptedModel(["One.", "Two."])
    tutor = _tutor(model, learning={"mode": mode})
    session = tutor.session("s", user_id=STUDENT)
    await session.send("Hello")
    assert session.gmi is not None
    assert session.gmi.set_personality_trait("openness", 0.1) == 0.9
    await session.send("Again")  # the GMI's copy changed; no prompt did
    assert _systems(model, 0) == _systems(model, 1) == [BASE, SECTION]
    assert session.gmi.session_data["learning"] == {"learner": "bound", "mode": mode}


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.sampled_from(HEXACO_TRAITS), st.floats(0, 1)))
def test_any_persona_sends_its_authored_section_after_the_base_prompt(traits: Any) -> None:
    # Spec: one directive per trait above 0.65 or below 0.35; traits all in 0.35-0.65 send none.
    model = ScriptedModel(["Hi."])
    asyncio.run(_tutor(model, personality=traits).session("s", user_id=STUDENT).send("Hello"))
    section = personality_section(traits)
    assert _systems(model, 0) == ([BASE, section] if section else [BASE])


# --- learners ---------------------------------------------------------------------------------


async def test_a_session_with_a_user_binds_a_learner_built_with_its_first_turn() -> None:
    tutor = _tutor(ScriptedModel(["One.", "Two."]), learning={"namespace": "acme"})
    session = tutor.session("lesson-1", user_id=STUDENT)
    assert session.gmi is None  # nothing is built before the first turn
    await session.send("Hello")
    learner = _learner(session.gmi)
    opened = learner.gmi_session.learner_session
    assert opened is not None
    assert opened.key == LearnerKey(namespace="acme", agent_key="tutor", user_id=STUDENT)
    assert opened.context.persona_id == "tutor"
    assert dict(opened.context.authored_traits) == TRAITS
    await session.send("Again")
    assert _learner(session.gmi) is learner  # one per session entry
    assert await _turns(tutor) == {"prepared": 2, "bound": 2, "none": {}}


@pytest.mark.parametrize(
    ("user_id", "learning", "reason"),
    [
        (None, True, "no_user"),
        ("", True, "anonymous_user"),
        ("guest", True, "anonymous_user"),
        ("anonymous_user", True, "anonymous_user"),
        ("kiosk", {"anonymous_user_ids": ["kiosk"]}, "anonymous_user"),
    ],
)
async def test_a_session_without_a_user_has_no_learner_and_renders_the_section(
    user_id: str | None, learning: Any, reason: str
) -> None:
    model = ScriptedModel(["Hi."])
    tutor = _tutor(model, learning=learning)
    session = tutor.session("s", user_id=user_id)
    await session.send("Hello")
    assert _systems(model, 0) == [BASE, SECTION]
    assert await _turns(tutor) == {"prepared": 1, "bound": 0, "none": {reason: 1}}
    assert _learner(session.gmi).learner == "none"


async def test_an_agent_with_no_name_has_no_learner_unless_learning_names_the_agent() -> None:
    nameless = gmi(model=ScriptedModel(["Hi."]), personality=TRAITS, learning=True)
    await nameless.session("s", user_id=STUDENT).send("Hello")
    assert await _turns(nameless) == {"prepared": 1, "bound": 0, "none": {"no_agent": 1}}
    keyed = gmi(model=ScriptedModel(["Hi."]), learning={"agent_key": "support-bot"})
    session = keyed.session("s", user_id=STUDENT)
    await session.send("Hello")
    opened = _learner(session.gmi).gmi_session.learner_session
    assert opened is not None
    assert opened.key == LearnerKey(namespace="", agent_key="support-bot", user_id=STUDENT)


async def test_generate_and_stream_have_a_learner_session_each_with_no_user() -> None:
    model = ScriptedModel(["One.", "Two."])
    tutor = _tutor(model)
    await tutor.generate("Hello")
    stream = tutor.stream("Again")
    assert await stream.text == "Two."
    for step in range(2):
        assert _systems(model, step) == [BASE, SECTION]
    assert await _turns(tutor) == {"prepared": 2, "bound": 0, "none": {"no_user": 2}}


async def test_history_false_keeps_one_learner_across_the_turns_gmis() -> None:
    tutor = _tutor(ScriptedModel(["One.", "Two."]), history=False)
    session = tutor.session("s", user_id=STUDENT)
    await session.send("Hello")
    await session.send("Again")
    assert await _turns(tutor) == {"prepared": 2, "bound": 2, "none": {}}


async def test_session_close_ends_its_learner_session() -> None:
    tutor = _tutor(ScriptedModel(["Hi."]))
    session = tutor.session("s", user_id=STUDENT)
    await session.send("Hello")
    learner = _learner(session.gmi)
    before = learner.learner
    await session.close()
    assert (before, learner.learner) == ("bound", "none")
    opened = learner.gmi_session.learner_session
    assert opened is not None
    assert opened.no_learner_reason == "session_ended"


async def test_agent_close_ends_every_sessions_learner_and_leaves_the_layer_open() -> None:
    tutor = _tutor(ScriptedModel(["One.", "Two.", "Three."]))
    first, second = tutor.session("a", user_id=STUDENT), tutor.session("b", user_id="s-2")
    await first.send("Hello")
    await second.send("Hello")
    learners = [_learner(first.gmi), _learner(second.gmi)]
    layer = _layer(tutor)
    await tutor.close()
    assert [learner.learner for learner in learners] == ["none", "none"]
    assert tutor.learning is layer
    assert not layer.closed
    again = tutor.session("a", user_id=STUDENT)
    await again.send("Back")
    assert _learner(again.gmi).learner == "bound"
    assert await _turns(tutor) == {"prepared": 3, "bound": 3, "none": {}}


# --- the manifest and the console line --------------------------------------------------------


async def test_the_manifest_after_one_send_is_the_specs(capsys: pytest.CaptureFixture[str]) -> None:
    tutor = agent(
        runtime="gmi",
        model=ScriptedModel(["Recursion is like nesting dolls."]),
        name="Tutor",
        instructions="You are a patient CS tutor.",
        personality=TRAITS,
        learning=True,
    )
    assert isinstance(tutor, GmiAgent)
    session = tutor.session("lesson-1", user_id=STUDENT)
    await session.send("Explain recursion with an analogy.")
    manifest = await _layer(tutor).manifest()
    assert manifest.loops["personality_rendering"].as_dict() == {"live": True}
    assert manifest.turns == {"prepared": 1, "bound": 1, "none": {}}
    assert (manifest.surface, manifest.mode, manifest.mode_set_by) == ("gmi", "on", "config")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"{MANIFEST_LOG_PREFIX} ")
    logged = json.loads(lines[0].removeprefix(f"{MANIFEST_LOG_PREFIX} "))
    assert logged["turns"] == {"prepared": 0, "bound": 0, "none": {}}  # before the first turn


async def test_the_console_line_is_logged_once_when_the_first_learner_opens(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tutor = _tutor(ScriptedModel(["One.", "Two.", "Three."]))
    await tutor.generate("No learner here")
    assert capsys.readouterr().out == ""
    await tutor.session("a", user_id=STUDENT).send("Hello")
    await tutor.session("b", user_id="student-2").send("Hello")
    out = capsys.readouterr().out.splitlines()
    assert [line.startswith(MANIFEST_LOG_PREFIX) for line in out] == [True]


# --- the process switches ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("off", "freeze", "configured", "mode", "set_by"),
    [
        ("1", None, "on", "off", "AGENTOS_LEARNING_OFF"),
        (None, "1", "on", "frozen", "AGENTOS_LEARNING_FREEZE"),
        ("1", "1", "on", "off", "AGENTOS_LEARNING_OFF"),
        (None, "1", "off", "off", "config"),
        ("true", "yes", "on", "on", "config"),
        ("0", "", "frozen", "frozen", "config"),
    ],
)
async def test_the_process_switches_set_the_mode_and_the_section_stays(
    monkeypatch: pytest.MonkeyPatch,
    off: str | None,
    freeze: str | None,
    configured: str,
    mode: str,
    set_by: str,
) -> None:
    for name, value in (("AGENTOS_LEARNING_OFF", off), ("AGENTOS_LEARNING_FREEZE", freeze)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    model = ScriptedModel(["Hi."])
    tutor = _tutor(model, learning={"mode": configured})
    session = tutor.session("s", user_id=STUDENT)
    await session.send("Hello")
    manifest = await _layer(tutor).manifest()
    assert (manifest.mode, manifest.mode_set_by) == (mode, set_by)
    assert _systems(model, 0) == [BASE, SECTION]
    assert session.gmi is not None
    assert session.gmi.session_data["learning"] == {"learner": "bound", "mode": mode}


# --- the example ------------------------------------------------------------------------------


def test_the_learning_manifest_example_runs_and_prints_the_specs_values() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTOS_LEARNING_")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=env,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"{MANIFEST_LOG_PREFIX} ")
    assert lines[1:] == ["{'live': True}", "{'prepared': 1, 'bound': 1, 'none': {}}"]
