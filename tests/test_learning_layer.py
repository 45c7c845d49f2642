"""The learning layer: the option, the section, modes and switches, the manifest, a turn loop.

Spec "Learning" (The option; The personality section; Modes and the process switches; The
manifest; A turn loop of your own), through `agentos.learning`'s public API.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.learning import (
    HOST_LOOPS,
    LAYER_LOOPS,
    MANIFEST_LOG_PREFIX,
    LearnerContext,
    LearnerKey,
    LearningSettings,
    LoopState,
    check_learning,
    create_learning_layer,
    effective_mode,
    learning_switches,
    render_section,
)
from agentos.persona.personality import PERSONALITY_HEADING, TRAIT_DIRECTIVES
from agentos.substrate.learning_seam import TurnPreparation
from agentos.substrate.prompt_engine import SystemPrompt

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CONTEXT = LearnerContext("s-1", "tutor", {"openness": 0.9, "conscientiousness": 0.95})
KEY = LearnerKey(namespace="", agent_key="tutor", user_id="student-7f3a")


def turn(n: int = 1, user: str | None = "student-7f3a", namespace: str = "") -> TurnPreparation:
    return TurnPreparation(f"turn-{n}", user, namespace, "Explain recursion.")


def option_of(error: pytest.ExceptionInfo[GMIError]) -> Any:
    return error.value.details["option"]


# --- The option -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "option"),
    [
        ({"mode": "paused"}, "learning.mode"),
        ({"mode": 1}, "learning.mode"),
        ({"agent_key": "  "}, "learning.agent_key"),
        ({"agent_key": 7}, "learning.agent_key"),
        ({"namespace": 3}, "learning.namespace"),
        ({"anonymous_user_ids": "guest"}, "learning.anonymous_user_ids"),
        ({"anonymous_user_ids": ["ok", 2]}, "learning.anonymous_user_ids"),
        ({"traits": "yes"}, "learning.traits"),
        ({"lessons": 1}, "learning.lessons"),
        ({"skills": None}, "learning.skills"),
        ({"agentKey": "x"}, "learning.agentKey"),
        ("on", "learning"),
        (1, "learning"),
    ],
)
def test_a_bad_learning_value_is_refused_naming_the_field(value: object, option: str) -> None:
    with pytest.raises(GMIError) as error:
        check_learning(value, surface="gmi")
    assert error.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert option_of(error) == option


def test_the_runtime_refuses_a_namespace_with_the_code_it_asks_for() -> None:
    with pytest.raises(GMIError) as error:
        check_learning(
            {"namespace": "acme"}, surface="runtime", code=GMIErrorCode.CONFIGURATION_ERROR
        )
    assert error.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert option_of(error) == "learning.namespace"
    with pytest.raises(GMIError) as bad_mode:
        check_learning({"mode": "x"}, surface="runtime", code=GMIErrorCode.CONFIGURATION_ERROR)
    assert bad_mode.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert option_of(bad_mode) == "learning.mode"


def test_learning_settings_check_each_field_at_construction() -> None:
    with pytest.raises(GMIError) as error:
        LearningSettings(mode="paused")  # type: ignore[arg-type]
    assert option_of(error) == "learning.mode"
    assert LearningSettings(anonymous_user_ids=["bot"]).anonymous_user_ids == ("bot",)  # type: ignore[arg-type]


def test_unset_false_true_and_a_config() -> None:
    assert check_learning(None) is None
    assert check_learning(False) is None
    assert check_learning(True, surface="gmi") == LearningSettings()
    full = LearningSettings(traits=True, lessons=True, skills=True)
    assert check_learning(True, surface="gmi", profile="full") == full
    assert check_learning(True, surface="runtime", profile="full") == LearningSettings()
    assert check_learning({"mode": "frozen"}, surface="gmi", profile="full") == LearningSettings(
        mode="frozen", traits=True, lessons=True, skills=True
    )
    assert check_learning({"skills": False}, profile="full") == LearningSettings(
        traits=True, lessons=True
    )
    settings = LearningSettings(agent_key="bot")
    assert check_learning(settings) is settings


def test_create_learning_layer_refuses_false_and_bad_arguments() -> None:
    with pytest.raises(GMIError) as false:
        create_learning_layer(False)
    assert option_of(false) == "learning"
    with pytest.raises(GMIError) as surface:
        create_learning_layer(surface="server")  # type: ignore[arg-type]
    assert option_of(surface) == "surface"
    with pytest.raises(GMIError) as loops:
        create_learning_layer(host_loops={"telepathy": LoopState(True)})
    assert option_of(loops) == "host_loops.telepathy"


# --- The personality section ------------------------------------------------------------------


def test_the_section_is_the_personality_section_at_priority_2() -> None:
    section = render_section({"honesty": 0.9, "openness": 0.2, "extraversion": 0.66})
    high_honesty, _ = TRAIT_DIRECTIVES["honesty"]
    high_extraversion, _ = TRAIT_DIRECTIVES["extraversion"]
    _, low_openness = TRAIT_DIRECTIVES["openness"]
    text = f"{PERSONALITY_HEADING}\n\n{high_honesty}\n{high_extraversion}\n{low_openness}"
    assert section == SystemPrompt(text, 2, "personality")


@given(st.dictionaries(st.sampled_from(list(TRAIT_DIRECTIVES)), st.floats(0.35, 0.65)))
def test_traits_that_all_sit_from_035_to_065_send_no_section(traits: dict[str, float]) -> None:
    assert render_section(traits) is None


def test_an_overlay_renders_its_traits_but_never_honesty_or_emotionality(
    caplog: pytest.LogCaptureFixture,
) -> None:
    authored = {"honesty": 0.5, "extraversion": 0.5}
    overlay = {"honesty": 0.1, "emotionality": 0.9, "extraversion": 0.9}
    with caplog.at_level(logging.WARNING, logger="agentos.learning"):
        section = render_section(authored, overlay, persona_id="critic")
    high_extraversion, _ = TRAIT_DIRECTIVES["extraversion"]
    assert section is not None
    assert section.content == f"{PERSONALITY_HEADING}\n\n{high_extraversion}"
    assert [r.getMessage() for r in caplog.records] == [
        f"persona 'critic': the role overlay's {trait} is not rendered; only the persona "
        "definition sets it"
        for trait in ("honesty", "emotionality")
    ]


# --- Modes and the process switches -----------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "configured", "expected"),
    [
        ({}, "on", ("on", "config")),
        ({}, "frozen", ("frozen", "config")),
        ({}, "off", ("off", "config")),
        ({"AGENTOS_LEARNING_OFF": "1"}, "on", ("off", "AGENTOS_LEARNING_OFF")),
        ({"AGENTOS_LEARNING_OFF": "1"}, "frozen", ("off", "AGENTOS_LEARNING_OFF")),
        ({"AGENTOS_LEARNING_FREEZE": "1"}, "on", ("frozen", "AGENTOS_LEARNING_FREEZE")),
        ({"AGENTOS_LEARNING_FREEZE": "1"}, "off", ("off", "config")),
        ({"AGENTOS_LEARNING_FREEZE": "1"}, "frozen", ("frozen", "config")),
        (
            {"AGENTOS_LEARNING_FREEZE": "1", "AGENTOS_LEARNING_OFF": "1"},
            "on",
            ("off", "AGENTOS_LEARNING_OFF"),
        ),
        (
            {"AGENTOS_LEARNING_OFF": "true", "AGENTOS_LEARNING_FREEZE": "yes"},
            "on",
            ("on", "config"),
        ),
        ({"AGENTOS_LEARNING_OFF": " 1", "AGENTOS_LEARNING_FREEZE": "01"}, "on", ("on", "config")),
    ],
)
async def test_the_mode_in_effect_and_what_set_it(
    environ: dict[str, str], configured: str, expected: tuple[str, str]
) -> None:
    layer = create_learning_layer({"mode": configured}, environ=environ, log=lambda _: None)
    assert (layer.mode, layer.mode_set_by) == expected
    manifest = await layer.manifest()
    assert (manifest.mode, manifest.mode_set_by) == expected
    session = await layer.for_learner(KEY, CONTEXT)
    prepared = await session.prepare_turn(turn())
    assert prepared.mode == expected[0]
    assert prepared.system_prompts == (render_section(CONTEXT.authored_traits),)


@given(st.text())
def test_only_the_value_1_counts(value: str) -> None:
    switches = learning_switches({"AGENTOS_LEARNING_OFF": value})
    assert switches == (("off", "AGENTOS_LEARNING_OFF") if value == "1" else (None, None))
    assert effective_mode("on", {"AGENTOS_LEARNING_FREEZE": value}) == (
        ("frozen", "AGENTOS_LEARNING_FREEZE") if value == "1" else ("on", "config")
    )


async def test_the_switches_are_read_at_each_prepare(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTOS_LEARNING_OFF", raising=False)
    monkeypatch.delenv("AGENTOS_LEARNING_FREEZE", raising=False)
    layer = create_learning_layer(log=lambda _: None)
    other = create_learning_layer({"mode": "frozen"}, log=lambda _: None)
    session = await layer.for_learner(KEY, CONTEXT)
    assert (await session.prepare_turn(turn(1))).mode == "on"
    monkeypatch.setenv("AGENTOS_LEARNING_OFF", "1")
    assert (await session.prepare_turn(turn(2))).mode == "off"
    assert (other.mode, other.mode_set_by) == ("off", "AGENTOS_LEARNING_OFF")
    monkeypatch.setenv("AGENTOS_LEARNING_OFF", "0")
    monkeypatch.setenv("AGENTOS_LEARNING_FREEZE", "1")
    assert (await session.prepare_turn(turn(3))).mode == "frozen"
    assert (other.mode, other.mode_set_by) == ("frozen", "config")


# --- The manifest -----------------------------------------------------------------------------


async def test_the_manifest_lists_every_loop_and_the_turns() -> None:
    layer = create_learning_layer(
        {"traits": True},
        surface="gmi",
        profile="light",
        host_loops={"memory": LoopState("varies", "the persona decides"), "rag": LoopState(False)},
        environ={},
        log=lambda _: None,
    )
    layer.set_host_loops({"sentiment": LoopState(True)})
    session = await layer.for_learner(KEY, CONTEXT)
    await session.prepare_turn(turn(1))
    await session.prepare_turn(turn(2, user="someone-else"))
    manifest = (await layer.manifest()).as_dict()
    assert list(manifest["loops"]) == [*HOST_LOOPS, *LAYER_LOOPS]
    loops = manifest["loops"]
    assert loops["memory"] == {"live": "varies", "detail": "the persona decides"}
    assert loops["rag"] == {"live": False}
    assert loops["sentiment"] == {"live": True}
    assert loops["hitl"] == {"live": False, "detail": "not reported by the host"}
    assert loops["personality_rendering"] == {"live": True}
    assert [name for name in LAYER_LOOPS if loops[name]["live"] is True] == [
        "personality_rendering"
    ]
    assert loops["trait_changes"]["detail"].startswith("asked for (learning.traits)")
    assert loops["lessons"]["detail"].startswith("not asked for (learning.lessons)")
    assert loops["skills"]["detail"].startswith("not asked for (learning.skills)")
    assert manifest["guardrails"]["complete"] is False
    assert manifest["guardrails"]["detail"]
    assert manifest["turns"] == {"prepared": 2, "bound": 1, "none": {"another_user": 1}}
    assert (manifest["surface"], manifest["profile"]) == ("gmi", "light")
    assert (manifest["mode"], manifest["mode_set_by"]) == ("on", "config")


async def test_the_console_line_is_logged_once_when_the_first_learner_opens() -> None:
    lines: list[str] = []
    layer = create_learning_layer(environ={}, log=lines.append)
    await layer.for_learner(None, CONTEXT)
    await layer.for_learner(LearnerKey("", "tutor", "guest"), CONTEXT)
    assert lines == []
    await layer.for_learner(KEY, CONTEXT)
    await layer.for_learner(LearnerKey("", "tutor", "student-2"), CONTEXT)
    assert len(lines) == 1
    assert lines[0].startswith(f"{MANIFEST_LOG_PREFIX} ")
    logged = json.loads(lines[0].removeprefix(MANIFEST_LOG_PREFIX))
    assert logged == (await layer.manifest()).as_dict()


async def test_close_refuses_new_sessions_and_ends_open_learners() -> None:
    layer = create_learning_layer(environ={}, log=lambda _: None)
    session = await layer.for_learner(KEY, CONTEXT)
    assert session.no_learner_reason is None
    await layer.close()
    await layer.close()
    assert layer.closed
    assert session.learner == "none"
    prepared = await session.prepare_turn(turn())
    assert (prepared.learner, prepared.no_learner_reason) == ("none", "layer_closed")
    with pytest.raises(GMIError) as error:
        await layer.for_learner(KEY, CONTEXT)
    assert error.value.code is GMIErrorCode.INVALID_STATE


async def test_for_learner_checks_its_arguments() -> None:
    layer = create_learning_layer(log=lambda _: None)
    with pytest.raises(GMIError) as key:
        await layer.for_learner(("acme", "bot", "u"), CONTEXT)  # type: ignore[arg-type]
    assert option_of(key) == "key"
    with pytest.raises(GMIError) as context:
        await layer.for_learner(KEY, {"session_id": "s"})  # type: ignore[arg-type]
    assert option_of(context) == "context"


# --- A turn loop of your own ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        (None, "caller_said_so"),
        (LearnerKey("acme", "bot", ""), "anonymous_user"),
        (LearnerKey("acme", "bot", "anonymous_user"), "anonymous_user"),
        (LearnerKey("acme", "bot", "anonymous"), "anonymous_user"),
        (LearnerKey("acme", "bot", "system"), "anonymous_user"),
        (LearnerKey("acme", "bot", "guest"), "anonymous_user"),
        (LearnerKey("acme", "bot", "kiosk"), "anonymous_user"),
        (LearnerKey("acme", "bot", None), "no_user"),
        (LearnerKey("acme", None, "user-42"), "no_agent"),
        (LearnerKey("acme", " ", "user-42"), "no_agent"),
    ],
)
async def test_a_key_naming_no_learner_gives_a_session_with_none(
    key: LearnerKey | None, reason: str
) -> None:
    layer = create_learning_layer({"anonymous_user_ids": ["kiosk"]}, environ={})
    context = LearnerContext("s", "bot", {"honesty": 0.9}, no_learner_reason="caller_said_so")
    session = await layer.for_learner(key, context)
    assert (session.learner, session.no_learner_reason) == ("none", reason)
    user = None if key is None else key.user_id
    prepared = await session.prepare_turn(turn(user=user, namespace="acme"))
    assert prepared.learner == "none"
    assert prepared.no_learner_reason == reason
    assert prepared.system_prompts == (render_section({"honesty": 0.9}),)
    assert (await layer.manifest()).turns == {"prepared": 1, "bound": 0, "none": {reason: 1}}


async def test_a_key_of_none_without_a_reason_says_no_key() -> None:
    layer = create_learning_layer(environ={})
    session = await layer.for_learner(None, CONTEXT)
    assert session.no_learner_reason == "no_key"


async def test_the_turn_loop_example_prints_the_prepared_turn(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTOS_LEARNING_OFF", raising=False)
    monkeypatch.delenv("AGENTOS_LEARNING_FREEZE", raising=False)
    spec = importlib.util.spec_from_file_location(
        "learning_turn_loop", EXAMPLES / "learning_turn_loop.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    prepared = await module.main()
    section = render_section({"honesty": 0.9, "extraversion": 0.8})
    assert section is not None
    assert prepared.system_prompts == (section,)
    assert (prepared.learner, prepared.mode) == ("bound", "on")
    printed = capsys.readouterr().out
    assert printed.startswith(MANIFEST_LOG_PREFIX)
    assert f"system prompt (priority 2):\n{section.content}\n" in printed
    assert printed.endswith("learner: bound, mode: on\n")
