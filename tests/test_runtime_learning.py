"""The full runtime's learning layer through `AgentOS` (spec "Learning": The option, Learners).

Pins the runtime column of the Learners table and the runtime's sentences of "The option": the
option and a passed layer (refused together, ``CONFIGURATION_ERROR`` before any service starts),
`AgentOS.get_learning_layer()`, one learner session per GMI ended when the GMI shuts down, the
turn's namespace (the request's organization, the single-tenant default, none), workflow turns,
seat GMIs (no learner, the seat's overlay), and the manifest's host loops.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Role
from agentos.learning import GMILearnerSession, LearningLayer, create_learning_layer
from agentos.persona.definition import PersonaDefinition
from agentos.persona.overlays import PersonaEvolutionRule
from agentos.runtime import AgentOS
from agentos.runtime.config import AgentOSConfig
from agentos.substrate import GMI
from agentos.testing import ScriptedModel
from fakes.runtime_models import drain, start_runtime

TUTOR = PersonaDefinition.model_validate(
    {
        "id": "tutor",
        "name": "Tutor",
        "baseSystemPrompt": "You are a patient CS tutor.",
        "personalityTraits": {"openness": 0.9, "conscientiousness": 0.95},
    }
)
HEADING = "## Personality & Communication Style"


def _model(turns: int = 8) -> ScriptedModel:
    return ScriptedModel(["Sure."] * turns)


async def _runtime(model: ScriptedModel, **settings: Any) -> AgentOS:
    return await start_runtime(model, **{"personas": [TUTOR], **settings})


async def _turn(runtime: AgentOS, text: str = "Explain recursion.", **extra: Any) -> None:
    request = {"user_id": "student-7f3a", "session_id": "lesson-1", "text_input": text, **extra}
    await drain(runtime.process_request(request))


def _layer(runtime: AgentOS) -> LearningLayer:
    layer = runtime.get_learning_layer()
    assert layer is not None
    return layer


async def _turns(runtime: AgentOS) -> Mapping[str, Any]:
    return (await _layer(runtime).manifest()).turns


def _system_texts(model: ScriptedModel, call: int = -1) -> list[str]:
    messages = model.requests[call].messages
    return [str(m.content) for m in messages if m.role is Role.SYSTEM]


# -- The option ---------------------------------------------------------------------------------


async def test_learning_unset_has_no_layer_and_sends_no_section() -> None:
    model = _model()
    runtime = await _runtime(model)
    assert runtime.get_learning_layer() is None
    await _turn(runtime)
    assert not any(HEADING in text for text in _system_texts(model))


async def test_learning_true_sends_the_section_right_after_the_base_prompt() -> None:
    model = _model()
    runtime = await _runtime(model, learning=True)
    await _turn(runtime)
    texts = _system_texts(model)
    at = next(i for i, text in enumerate(texts) if HEADING in text)
    assert "You are a patient CS tutor." in texts[at - 1]
    manifest = await _layer(runtime).manifest()
    assert (manifest.surface, manifest.profile, manifest.mode) == ("runtime", "custom", "on")
    assert manifest.turns == {"prepared": 1, "bound": 1, "none": {}}
    assert manifest.loops["personality_rendering"].live is True


@pytest.mark.parametrize(
    ("learning", "option"),
    [
        ({"namespace": "acme"}, "learning.namespace"),
        ({"mode": "sometimes"}, "learning.mode"),
        ({"agent_key": " "}, "learning.agent_key"),
        ({"colour": "red"}, "learning.colour"),
        ("yes", "learning"),
    ],
)
async def test_a_bad_learning_option_is_refused_before_any_service_starts(
    learning: object, option: str
) -> None:
    loads: list[int] = []

    class Loader:
        async def load_personas(self) -> list[PersonaDefinition]:
            loads.append(1)
            return [TUTOR]

    config = AgentOSConfig(persona_loader=Loader(), model=_model(), learning=learning)  # type: ignore[arg-type]
    with pytest.raises(GMIError) as caught:
        await AgentOS().initialize(config)
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.details["option"] == option
    assert loads == []  # the personas were never loaded: no service started


async def test_learning_together_with_a_passed_layer_is_refused() -> None:
    layer = create_learning_layer(surface="runtime")
    with pytest.raises(GMIError) as caught:
        await _runtime(_model(), learning=True, learning_layer=layer)
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.details["option"] == "learning"


async def test_a_passed_layer_is_used_and_left_open_a_built_one_closed() -> None:
    passed = create_learning_layer({"agent_key": "tutor-bot"}, surface="runtime")
    runtime = await _runtime(_model(), learning_layer=passed)
    assert runtime.get_learning_layer() is passed
    await _turn(runtime)
    assert (await passed.manifest()).turns["bound"] == 1
    await runtime.shutdown()
    assert passed.closed is False
    built_runtime = await _runtime(_model(), learning=True)
    built = _layer(built_runtime)
    await built_runtime.shutdown()
    assert built.closed is True


# -- Learners -----------------------------------------------------------------------------------


def _session(runtime: AgentOS, session_id: str = "lesson-1") -> GMILearnerSession:
    gmi = runtime.gmi_manager.gmi_for_session(session_id)
    assert isinstance(gmi, GMI)
    session = gmi.get_learner_session()
    assert isinstance(session, GMILearnerSession)
    return session


async def test_one_learner_per_gmi_its_user_and_the_persona_id_as_agent() -> None:
    runtime = await _runtime(_model(), learning=True)
    await _turn(runtime)
    await _turn(runtime, "And again?")
    opened = _session(runtime).learner_session
    assert opened is not None
    assert opened.key is not None
    assert (opened.key.namespace, opened.key.agent_key, opened.key.user_id) == (
        "",
        "tutor",
        "student-7f3a",
    )
    assert await _turns(runtime) == {"prepared": 2, "bound": 2, "none": {}}


async def test_agent_key_of_the_config_names_the_agent() -> None:
    runtime = await _runtime(_model(), learning={"agent_key": "cs-tutor"})
    await _turn(runtime)
    opened = _session(runtime).learner_session
    assert opened is not None
    assert opened.key is not None
    assert opened.key.agent_key == "cs-tutor"


@pytest.mark.parametrize(
    ("default", "first", "second", "namespace", "none"),
    [
        (None, "acme", "globex", "acme", {"another_namespace": 1}),
        ("acme", None, "acme", "acme", {}),
        ("acme", None, "globex", "acme", {"another_namespace": 1}),
        (None, None, "acme", "", {"another_namespace": 1}),
    ],
)
async def test_the_namespace_is_the_request_organization_else_the_default_else_none(
    default: str | None,
    first: str | None,
    second: str | None,
    namespace: str,
    none: dict[str, int],
) -> None:
    runtime = await _runtime(_model(), learning=True, default_organization_id=default)
    await _turn(runtime, organization_id=first)
    opened = _session(runtime).learner_session
    assert opened is not None
    assert opened.key is not None
    assert opened.key.namespace == namespace
    await _turn(runtime, "Next.", organization_id=second)
    turns = await _turns(runtime)
    assert turns["none"] == none
    assert turns["bound"] == 2 - sum(none.values())


async def test_a_turn_of_another_namespace_leaves_the_session_without_learner() -> None:
    runtime = await _runtime(_model(), learning=True)
    await _turn(runtime, organization_id="acme")
    await _turn(runtime, organization_id="globex")
    await _turn(runtime, organization_id="acme")
    assert await _turns(runtime) == {
        "prepared": 3,
        "bound": 1,
        "none": {"another_namespace": 2},
    }


async def test_a_workflow_turn_has_no_learner_and_the_next_turn_has_it_again() -> None:
    model = _model()
    runtime = await _runtime(model, learning=True)
    await _turn(runtime, metadata={"workflow_id": "wf-1"})
    await _turn(runtime, "Plain turn.")
    assert await _turns(runtime) == {"prepared": 2, "bound": 1, "none": {"workflow_turn": 1}}
    # The section is sent on the workflow turn too: the authored traits in every case.
    assert any(HEADING in text for text in _system_texts(model, 0))


async def test_a_seat_gmi_has_no_learner_and_renders_its_overlay_for_itself_only() -> None:
    model = _model()
    runtime = await _runtime(model, learning=True)
    rule = PersonaEvolutionRule.model_validate(
        {
            "id": "lively",
            "trigger": "always",
            "patch": {"persona_traits": {"extraversion": 0.95, "honesty": 0.1}},
        }
    )
    runtime.gmi_manager.set_seat_rules("agency-1", "reviewer", [rule])
    await _turn(runtime, agency_id="agency-1", role_id="reviewer")
    seat_prompt = "\n".join(_system_texts(model, 0))
    await _turn(runtime, "Own GMI now.")
    own_prompt = "\n".join(_system_texts(model, 1))
    assert await _turns(runtime) == {"prepared": 2, "bound": 1, "none": {"workflow_seat": 1}}
    assert HEADING in seat_prompt
    assert HEADING in own_prompt
    lively = "Be lively and talkative"  # the overlay's extraversion: the seat's prompt only
    assert lively in seat_prompt
    assert lively not in own_prompt
    assert "Bring curiosity and imagination" in seat_prompt  # the authored traits stay
    seat_gmi = runtime.gmi_manager.gmi_for_seat("lesson-1", "agency-1", "reviewer")
    assert isinstance(seat_gmi, GMI)
    seat_session = seat_gmi.get_learner_session()
    assert isinstance(seat_session, GMILearnerSession)
    assert seat_session.seat is True
    assert seat_session.context.overlay_traits == {"extraversion": 0.95, "honesty": 0.1}


@pytest.mark.parametrize("how", ["deactivate", "cleanup", "shutdown"])
async def test_the_learner_ends_when_the_gmi_shuts_down(how: str) -> None:
    runtime = await _runtime(_model(), learning=True)
    await _turn(runtime)
    session = _session(runtime)
    opened = session.learner_session
    assert opened is not None
    assert opened.learner == "bound"
    if how == "deactivate":
        assert await runtime.gmi_manager.deactivate_gmi_for_session("lesson-1") is True
    elif how == "cleanup":
        assert await runtime.gmi_manager.cleanup_inactive_gmis(minutes=1e-9) == 1
    else:
        await runtime.shutdown()
    assert (opened.learner, opened.no_learner_reason) == ("none", "session_ended")


async def test_a_new_gmi_after_deactivation_binds_a_new_learner() -> None:
    runtime = await _runtime(_model(), learning=True)
    await _turn(runtime)
    first = _session(runtime)
    await runtime.gmi_manager.deactivate_gmi_for_session("lesson-1")
    await _turn(runtime)
    assert _session(runtime) is not first
    assert await _turns(runtime) == {"prepared": 2, "bound": 2, "none": {}}


async def test_the_off_switch_puts_the_runtime_layer_in_mode_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTOS_LEARNING_OFF", "1")
    model = _model()
    runtime = await _runtime(model, learning=True)
    await _turn(runtime)
    manifest = await _layer(runtime).manifest()
    assert (manifest.mode, manifest.mode_set_by) == ("off", "AGENTOS_LEARNING_OFF")
    assert any(HEADING in text for text in _system_texts(model))  # authored traits in every mode


# -- The manifest's host loops ------------------------------------------------------------------


async def test_the_manifest_lists_the_runtime_loops_with_details() -> None:
    runtime = await _runtime(_model(), learning=True)
    loops = (await _layer(runtime).manifest()).loops
    assert loops["memory"].live is False
    assert loops["sentiment"].live == "varies"
    assert loops["metaprompts"].live == "varies"
    assert loops["self_improvement_tools"].live is False
    assert loops["hitl"].live is False
    assert loops["rag"].live is False
    assert loops["tool_policy"].live is True
    assert all(loops[name].detail for name in ("memory", "sentiment", "hitl", "rag"))


async def test_the_manifest_says_varies_for_a_memory_factory_and_live_for_an_approver() -> None:
    runtime = await _runtime(
        _model(),
        learning=True,
        cognitive_memory_factory=lambda request: None,
        tool_approver=lambda call, tool: True,
        emergent_config={"self_improvement": {"enabled": True}},
    )
    loops = (await _layer(runtime).manifest()).loops
    assert loops["memory"].live == "varies"
    assert loops["hitl"].live is True
    assert loops["self_improvement_tools"].live is True


async def test_a_layer_that_cannot_open_a_learner_never_fails_the_turn() -> None:
    model = _model()
    passed = create_learning_layer(surface="runtime")
    runtime = await _runtime(model, learning_layer=passed)
    await passed.close()  # a closed layer opens no learner session
    await _turn(runtime)
    assert await _turns(runtime) == {
        "prepared": 1,
        "bound": 0,
        "none": {"learner_unavailable": 1},
    }
    assert any(HEADING in text for text in _system_texts(model))  # the GMI renders it itself
    gmi = runtime.gmi_manager.gmi_for_session("lesson-1")
    assert isinstance(gmi, GMI)
    assert gmi.get_learner_session() is not None


async def test_the_freeze_switch_freezes_the_runtime_layer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTOS_LEARNING_FREEZE", "1")
    runtime = await _runtime(_model(), learning=True)
    await _turn(runtime)
    manifest = await _layer(runtime).manifest()
    assert (manifest.mode, manifest.mode_set_by) == ("frozen", "AGENTOS_LEARNING_FREEZE")
