"""Spec "Learning" sentences no other test pins (the map is /work/brief/map15.md).

Each test quotes the sentence it pins. Public API only, exact values; a sentence the code does
not implement is pinned with a strict xfail whose reason starts "NOT IMPLEMENTED".
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentos import GmiAgent, agent, gmi
from agentos.core.errors import GMIErrorCode
from agentos.core.messages import Role, ToolCall, ToolResult
from agentos.emergent import ForgeCandidate, ForgeOptions, forge_tool_tool
from agentos.emergent.self_improvement import (
    SelfImprovementOptions,
    SkillRegistry,
    ToolRefusal,
    self_improvement_tools,
)
from agentos.learning import HOST_LOOPS, LAYER_LOOPS, GMILearnerSession, create_learning_layer
from agentos.llm.model import ToolDefinition
from agentos.persona.definition import PersonaDefinition
from agentos.persona.overlays import PersonaEvolutionRule
from agentos.persona.personality import PERSONALITY_HEADING, TRAIT_DIRECTIVES
from agentos.runtime import AgentOS
from agentos.substrate import GMI, GMIConfig
from agentos.testing import ScriptedModel, ScriptStep
from agentos.tools import Tool, ToolExecutionContext
from fakes.runtime_models import SELF_IMPROVEMENT_ON, TUTOR, drain, start_runtime
from fakes.self_improvement import add

FIVE_TOOLS = {
    "adapt_personality",
    "manage_skills",
    "create_workflow",
    "self_evaluate",
    "forge_tool",
}
BOUND = {"learner": "bound", "mode": "on"}
HEXACO_ORDER = (
    "honesty",
    "emotionality",
    "extraversion",
    "agreeableness",
    "conscientiousness",
    "openness",
)


def _adapt_step(call_id: str = "c1", delta: float = 0.01) -> ScriptStep:
    arguments = {"trait": "openness", "delta": delta, "reasoning": "the student likes ideas"}
    return ScriptStep(tool_calls=[ToolCall(call_id, "adapt_personality", arguments)])


async def _runtime(model: ScriptedModel, **settings: Any) -> AgentOS:
    return await start_runtime(model, **{"personas": [TUTOR], **settings})


async def _turn(runtime: AgentOS, user: str = "student-7f3a", session: str = "s1") -> None:
    request = {"user_id": user, "session_id": session, "text_input": "Adapt."}
    await drain(runtime.process_request(request))


def _openness(runtime: AgentOS, session: str = "s1") -> object:
    found = runtime.gmi_manager.gmi_for_session(session)
    assert isinstance(found, GMI)
    return (found.persona.personality_traits or {}).get("openness")


def _systems(model: ScriptedModel, index: int = 0) -> list[str]:
    return [str(m.content) for m in model.requests[index].messages if m.role is Role.SYSTEM]


def _rows(database: Path) -> list[tuple[Any, ...]]:
    """The rows of the store's table (the table must exist: the store was built)."""
    with sqlite3.connect(database) as connection:
        return list(connection.execute("SELECT * FROM personality_mutations"))


# -- First table: "Self-modification tools" row ------------------------------------------------


async def test_enabled_self_improvement_registers_all_four_tools() -> None:
    """ "With emergentConfig.selfImprovement.enabled, the runtime registers adapt_personality,
    manage_skills, create_workflow and self_evaluate"."""
    model = ScriptedModel(["Hi."])
    await _turn(await _runtime(model, emergent_config=SELF_IMPROVEMENT_ON))
    assert {t.name for t in model.requests[0].tools} >= FIVE_TOOLS


@pytest.mark.parametrize("build", ["gmi", "agent"])
async def test_no_gmi_agent_gets_any_of_the_five_tools(build: str) -> None:
    """ "a GMI from agent({ runtime: 'gmi' }) or gmi() has none of them"."""
    model = ScriptedModel(["Hi."])
    options: dict[str, Any] = {"model": model, "name": "Tutor", "learning": True}
    made = gmi(**options) if build == "gmi" else agent(runtime="gmi", **options)
    assert isinstance(made, GmiAgent)
    await made.session("s", user_id="student-7f3a").send("Adapt your personality.")
    assert {t.name for t in model.requests[0].tools} & FIVE_TOOLS == set()


async def test_stored_mutations_are_not_reloaded_into_a_later_runtimes_gmi(
    tmp_path: Path,
) -> None:
    """ "stored mutations are not reloaded into later GMIs"."""
    database = tmp_path / "agentos.db"
    first = await _runtime(
        ScriptedModel([_adapt_step(), "Ok."]),
        emergent_config=SELF_IMPROVEMENT_ON,
        conversation_store="sqlite",
        database_path=database,
    )
    await _turn(first)
    assert _openness(first) == pytest.approx(0.91)
    await first.shutdown()
    assert len(_rows(database)) == 1
    later = await _runtime(
        ScriptedModel(["Hello again."]),
        emergent_config=SELF_IMPROVEMENT_ON,
        conversation_store="sqlite",
        database_path=database,
    )
    await _turn(later)
    assert _openness(later) == 0.9
    await later.shutdown()


async def test_persist_with_decay_off_records_nothing(tmp_path: Path) -> None:
    """ "a PersonalityMutationStore records the changes only when a storage adapter is supplied
    and personality.persistWithDecay is on"."""
    database = tmp_path / "agentos.db"
    settings = {"self_improvement": {"enabled": True, "persist_with_decay": False}}
    runtime = await _runtime(
        ScriptedModel([_adapt_step(), "Ok."]),
        emergent_config=settings,
        conversation_store="sqlite",
        database_path=database,
    )
    await _turn(runtime)
    assert _openness(runtime) == pytest.approx(0.91)
    await runtime.shutdown()
    assert _rows(database) == []


# -- Intro: "With learning unset or false and no layer passed, there is no layer" --------------


async def test_runtime_learning_false_has_no_layer_and_sends_no_section() -> None:
    """ "With learning unset or false [...] there is no layer: the full runtime's GMIs send no
    personality section"."""
    model = ScriptedModel(["Hi."])
    runtime = await _runtime(model, learning=False)
    assert runtime.get_learning_layer() is None
    await _turn(runtime)
    assert not any(PERSONALITY_HEADING in text for text in _systems(model))


async def test_without_a_layer_a_guest_turn_is_not_refused() -> None:
    """ "the self-modification tools refuse only under the process freeze" (no no_learner)."""
    model = ScriptedModel([_adapt_step(), "Ok."])
    runtime = await _runtime(model, emergent_config=SELF_IMPROVEMENT_ON)
    await _turn(runtime, user="guest")
    assert _openness(runtime) == pytest.approx(0.91)


# -- The personality section -------------------------------------------------------------------


TRAITS_REVERSED = {
    "openness": 0.1,
    "conscientiousness": 0.65,
    "agreeableness": 0.66,
    "extraversion": 0.35,
    "emotionality": 0.34,
    "honesty": 0.9,
}
EXPECTED_SECTION = "\n".join(
    [
        PERSONALITY_HEADING,
        "",
        TRAIT_DIRECTIVES["honesty"][0],
        TRAIT_DIRECTIVES["emotionality"][1],
        TRAIT_DIRECTIVES["agreeableness"][0],
        TRAIT_DIRECTIVES["openness"][1],
    ]
)


async def test_the_section_has_agents_words_one_directive_per_trait_in_hexaco_order() -> None:
    """ "The words are the ones agent() writes [...] one directive for each HEXACO trait above
    0.65 or below 0.35, in the order honesty, emotionality, extraversion, agreeableness,
    conscientiousness, openness"."""
    assert tuple(TRAIT_DIRECTIVES) == HEXACO_ORDER
    plain_model, gmi_model = ScriptedModel(["Hi."]), ScriptedModel(["Hi."])
    plain = agent(model=plain_model, instructions="You teach.", personality=TRAITS_REVERSED)
    await plain.generate("Hello")
    tutor = gmi(
        model=gmi_model,
        name="Tutor",
        instructions="You teach.",
        personality=TRAITS_REVERSED,
        learning=True,
        chain_of_thought=False,
    )
    await tutor.session("s", user_id="student-7f3a").send("Hello")
    assert _systems(plain_model) == [f"You teach.\n\n{EXPECTED_SECTION}"]
    assert _systems(gmi_model)[-1] == EXPECTED_SECTION


async def test_a_runtime_seat_overlay_never_renders_honesty_or_emotionality_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """ "never sets honesty-humility or emotionality: an overlay value for either is not
    rendered, and a warning names the persona and the trait"."""
    model = ScriptedModel(["Sure."])
    runtime = await _runtime(model, learning=True)
    rule = PersonaEvolutionRule.model_validate(
        {
            "id": "cold",
            "trigger": "always",
            "patch": {
                "persona_traits": {"extraversion": 0.95, "honesty": 0.1, "emotionality": 0.9}
            },
        }
    )
    runtime.gmi_manager.set_seat_rules("agency-1", "reviewer", [rule])
    with caplog.at_level(logging.WARNING, logger="agentos.learning"):
        request = {
            "user_id": "student-7f3a",
            "session_id": "s1",
            "text_input": "Review.",
            "agency_id": "agency-1",
            "role_id": "reviewer",
        }
        await drain(runtime.process_request(request))
    section = next(text for text in _systems(model) if text.startswith(PERSONALITY_HEADING))
    assert section == "\n".join(
        [
            PERSONALITY_HEADING,
            "",
            TRAIT_DIRECTIVES["extraversion"][0],
            TRAIT_DIRECTIVES["conscientiousness"][0],
            TRAIT_DIRECTIVES["openness"][0],
        ]
    )
    warnings = {r.getMessage() for r in caplog.records if r.name == "agentos.learning"}
    assert warnings == {
        f"persona 'tutor': the role overlay's {trait} is not rendered; only the persona "
        "definition sets it"
        for trait in ("honesty", "emotionality")
    }


# -- The self-modification tools: every changing action, every refusal -------------------------


def _approve(candidate: ForgeCandidate) -> bool:
    return True


class Host:
    """The five tools over two skills, one workflow tool and a forge registry."""

    def __init__(self, skills: Path) -> None:
        (skills / "a.md").write_text(
            "---\nid: concise\ncategory: style\ndescription: Short answers.\n---\nBe brief.\n"
        )
        (skills / "b.md").write_text(
            "---\nid: cite\ncategory: research\ndescription: Cite sources.\nenabled: true\n"
            "---\nCite every source.\n"
        )
        self.gmis: dict[str, GMI] = {}
        self.skills = SkillRegistry(skills)
        host_tools: dict[str, Tool] = {"add": add}
        self.forge = ForgeOptions(tools=host_tools, judge=_approve)
        made = self_improvement_tools(
            SelfImprovementOptions(
                gmi_for=self.gmis.get, skills=self.skills, tools=lambda: host_tools
            )
        )
        self.tools = {t.name: t for t in [*made, forge_tool_tool(self.forge)]}

    async def start(self) -> GMI:
        mind = GMI("g1")
        persona = PersonaDefinition(
            id="p1", name="P", base_system_prompt="You are P.", personality_traits={"openness": 0.5}
        )
        await mind.initialize(persona, GMIConfig(model=ScriptedModel(["ok"])))
        self.gmis["g1"] = mind
        return mind

    def state(self) -> tuple[object, ...]:
        mind = self.gmis["g1"]
        return (
            mind.persona.hexaco_traits["openness"],
            mind.user_context.get("preferences", {}),
            self.skills.prompt_context("session:s1"),
            self.forge.registry.tools("s1"),
        )


COMPOSE = {"mode": "compose", "steps": [{"tool": "add", "input_mapping": "$input"}]}
ACTIONS: list[tuple[str, dict[str, Any]]] = [
    ("adapt_personality", {"trait": "openness", "delta": 0.01, "reasoning": "likes ideas"}),
    ("manage_skills", {"action": "enable", "skill_id": "concise"}),
    ("manage_skills", {"action": "disable", "skill_id": "cite"}),
    ("create_workflow", {"action": "create", "name": "w", "steps": [{"tool": "add"}]}),
    ("self_evaluate", {"action": "adjust", "param": "verbosity", "value": "low"}),
    (
        "forge_tool",
        {
            "name": "sum2",
            "description": "a + b",
            "input_schema": {"type": "object"},
            "implementation": COMPOSE,
            "test_cases": [{"input": {"a": 1, "b": 2}, "expected_output": 3}],
        },
    ),
]
WHY = {
    "frozen": "learning is frozen",
    "off": "learning is off",
    "no_learner": "this turn has no learner",
}


@pytest.mark.parametrize(("name", "arguments"), ACTIONS, ids=lambda v: str(v)[:24])
@pytest.mark.parametrize(
    ("freeze", "learning", "reason"),
    [
        (False, {"learner": "bound", "mode": "frozen"}, "frozen"),
        (False, {"learner": "none", "mode": "frozen"}, "frozen"),
        (False, {"learner": "bound", "mode": "off"}, "off"),
        (False, {"learner": "none", "mode": "off"}, "off"),
        (False, {"learner": "none", "mode": "on"}, "no_learner"),
        (True, None, "frozen"),
        (True, {"learner": "none", "mode": "off"}, "frozen"),
        (True, BOUND, "frozen"),
    ],
)
async def test_every_changing_action_refuses_in_the_specs_order_and_changes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    arguments: dict[str, Any],
    freeze: bool,
    learning: dict[str, str] | None,
    reason: str,
) -> None:
    """ "Before they act, forge_tool, create_workflow's create, manage_skills' enable and
    disable, self_evaluate's adjust and adapt_personality check, in this order: the freeze [...],
    the mode [...] and the learner"; "its error reads <tool> refused (<reason>): <why>; nothing
    was changed., and its details are { status: 'rejected', reason }"."""
    monkeypatch.delenv("AGENTOS_LEARNING_OFF", raising=False)
    if freeze:
        monkeypatch.setenv("AGENTOS_LEARNING_FREEZE", "1")
    else:
        monkeypatch.delenv("AGENTOS_LEARNING_FREEZE", raising=False)
    host = Host(tmp_path)
    await host.start()
    before = host.state()
    data = {} if learning is None else {"learning": dict(learning)}
    context = ToolExecutionContext(gmi_id="g1", session_id="s1", session_data=data)
    with pytest.raises(ToolRefusal) as refused:
        await host.tools[name].run(arguments, context)
    assert (
        refused.value.message == f"{name} refused ({reason}): {WHY[reason]}; nothing was changed."
    )
    assert refused.value.details == {"status": "rejected", "reason": reason}
    assert refused.value.code is GMIErrorCode.PERMISSION_DENIED
    assert host.state() == before
    listed = await host.tools["create_workflow"].run({"action": "list"}, ToolExecutionContext())
    assert listed["workflows"] == []


@pytest.mark.parametrize(
    "learning",
    [{"learner": "none", "mode": "on"}, {"learner": "bound", "mode": "off"}, {"mode": "frozen"}],
)
async def test_list_search_report_and_run_answer_as_without_a_layer(
    tmp_path: Path, learning: dict[str, str]
) -> None:
    """ "list, search, report and create_workflow's run answer as they do without a layer"."""
    host = Host(tmp_path)
    await host.start()
    plain = ToolExecutionContext(gmi_id="g1", session_id="s1")
    await host.tools["create_workflow"].run(
        {"action": "create", "name": "w", "steps": [{"tool": "add", "args": {"a": 1, "b": 2}}]},
        plain,
    )
    refused = ToolExecutionContext(
        gmi_id="g1", session_id="s1", session_data={"learning": learning}
    )
    calls = [
        ("manage_skills", {"action": "list"}),
        ("manage_skills", {"action": "search", "query": "cite"}),
        ("self_evaluate", {"action": "report"}),
        ("create_workflow", {"action": "run", "name": "w"}),
        ("create_workflow", {"action": "list"}),
    ]
    for name, arguments in calls:
        assert await host.tools[name].run(arguments, refused) == await host.tools[name].run(
            arguments, plain
        )
    assert (await host.tools["create_workflow"].run({"action": "run", "name": "w"}, refused)) == {
        "name": "w",
        "results": [3],
    }


@pytest.mark.parametrize(
    ("delta", "accepted"),
    [(0.05, False), (-0.05, False), (0.021, False), (-0.021, False), (0.02, True), (-0.02, True)],
)
async def test_step_bound_refuses_a_delta_above_002_either_way(
    tmp_path: Path, delta: float, accepted: bool
) -> None:
    """ "it refuses a delta above 0.02 either way (step_bound)"."""
    host = Host(tmp_path)
    mind = await host.start()
    context = ToolExecutionContext(gmi_id="g1", session_id="s1", session_data={"learning": BOUND})
    arguments = {"trait": "openness", "delta": delta, "reasoning": "likes ideas"}
    if accepted:
        out = await host.tools["adapt_personality"].run(arguments, context)
        assert out["new_value"] == pytest.approx(0.5 + delta)
        assert mind.persona.hexaco_traits["openness"] == pytest.approx(0.5 + delta)
        return
    with pytest.raises(ToolRefusal) as refused:
        await host.tools["adapt_personality"].run(arguments, context)
    assert refused.value.details == {"status": "rejected", "reason": "step_bound"}
    assert mind.persona.hexaco_traits["openness"] == 0.5


# -- The manifest -------------------------------------------------------------------------------


async def test_the_manifest_names_the_specs_loops_and_a_host_built_layer_is_custom() -> None:
    """ "surface ('gmi', 'runtime' or 'custom')"; "loops: the host's (memory, [...], rag) and the
    layer's own (personality_rendering, [...], ledger)"; "its manifest lists those loops as
    off"."""
    assert HOST_LOOPS == (
        "memory",
        "memory_mechanisms",
        "memory_observer_reflector",
        "memory_store",
        "sentiment",
        "metaprompts",
        "emergent_tools",
        "self_improvement_tools",
        "forged_code_executor",
        "hitl",
        "tool_policy",
        "rag",
    )
    assert LAYER_LOOPS == (
        "personality_rendering",
        "outcomes",
        "trait_changes",
        "lessons",
        "skills",
        "ledger",
    )
    layer = create_learning_layer({"agent_key": "support-bot"}, environ={}, log=lambda _: None)
    manifest = (await layer.manifest()).as_dict()
    assert (manifest["surface"], manifest["mode"], manifest["mode_set_by"]) == (
        "custom",
        "on",
        "config",
    )
    assert list(manifest["loops"]) == [*HOST_LOOPS, *LAYER_LOOPS]
    for name in ("outcomes", "trait_changes", "lessons", "ledger"):
        assert manifest["loops"][name]["live"] is False
        assert manifest["loops"][name]["detail"]
    assert all(set(state) <= {"live", "detail"} for state in manifest["loops"].values())
    assert manifest["turns"] == {"prepared": 0, "bound": 0, "none": {}}


# -- Learners: tool continuations on the full runtime -------------------------------------------


WEATHER = ToolDefinition("weather", "Today's weather in a city.", {"type": "object"})


def _weather_model(*replies: str) -> ScriptedModel:
    return ScriptedModel([ScriptStep(tool_calls=[ToolCall("w1", "weather", {})]), *replies])


async def _paused(runtime: AgentOS, organization_id: str) -> None:
    request = {
        "user_id": "student-7f3a",
        "session_id": "s1",
        "text_input": "Weather?",
        "organization_id": organization_id,
    }
    await drain(runtime.process_request(request))


async def _bound(runtime: AgentOS) -> tuple[str, str | None]:
    found = runtime.gmi_manager.gmi_for_session("s1")
    assert isinstance(found, GMI)
    session = found.get_learner_session()
    assert isinstance(session, GMILearnerSession)
    opened = session.learner_session
    assert opened is not None
    assert opened.key is not None
    return opened.learner, opened.key.namespace


@pytest.mark.parametrize(
    ("resume_org", "turns", "learner"),
    [
        (None, {"prepared": 1, "bound": 1, "none": {}}, "bound"),
        ("acme", {"prepared": 1, "bound": 1, "none": {}}, "bound"),
        ("globex", {"prepared": 2, "bound": 1, "none": {"another_namespace": 1}}, "none"),
    ],
)
async def test_a_continuation_belongs_to_its_turn_unless_another_organization_resumes_it(
    resume_org: str | None, turns: dict[str, Any], learner: str
) -> None:
    """ "A tool continuation belongs to the turn it continues; one that runs under another
    organization than its turn (a resume whose host passes another organizationId) is a turn
    of another namespace"."""
    runtime = await _runtime(_weather_model("Sunny."), learning=True, external_tools=[WEATHER])
    await _paused(runtime, "acme")
    result = [ToolResult("w1", "weather", "sunny")]
    await drain(
        runtime.handle_tool_results("s1", "student-7f3a", result, organization_id=resume_org)
    )
    layer = runtime.get_learning_layer()
    assert layer is not None
    assert (await layer.manifest()).turns == turns
    assert await _bound(runtime) == (learner, "acme")


async def test_a_gmi_rebuilt_to_resume_binds_under_the_paused_turns_organization(
    tmp_path: Path,
) -> None:
    """ "a GMI built again to resume a stored turn is bound at the first turn it prepares, under
    that turn's organization"."""
    database = tmp_path / "agentos.db"
    stored = {"conversation_store": "sqlite", "database_path": database}
    first = await _runtime(_weather_model(), learning=True, external_tools=[WEATHER], **stored)
    await _paused(first, "acme")
    await first.shutdown()
    again = await _runtime(
        ScriptedModel(["Sunny."]), learning=True, external_tools=[WEATHER], **stored
    )
    result = [ToolResult("w1", "weather", "sunny")]
    await drain(again.handle_tool_results("s1", "student-7f3a", result))
    layer = again.get_learning_layer()
    assert layer is not None
    assert (await layer.manifest()).turns == {"prepared": 1, "bound": 1, "none": {}}
    assert await _bound(again) == ("bound", "acme")
    await again.shutdown()
