"""The self-modification tools (spec: Learning, The self-modification tools; Modes and the
process switches; reference §1.30 and case 56), through each tool's public ``run()``."""

from __future__ import annotations

import asyncio
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ToolCall
from agentos.emergent.self_improvement import (
    SelfImprovementOptions,
    SkillRegistry,
    ToolRefusal,
    learning_refusal,
    self_improvement_tools,
)
from agentos.persona import PersonaDefinition
from agentos.storage.personality_mutations import (
    InMemoryPersonalityMutationStore,
    SQLitePersonalityMutationStore,
)
from agentos.substrate import GMI, GMIConfig, TurnOptions
from agentos.testing import FakeClock, ScriptedModel, ScriptStep
from agentos.tools import Tool, ToolExecutionContext, ToolOrchestrator, tool
from fakes.gmi_helpers import make_gmi, persona, run, turn
from fakes.self_improvement import add

BOUND = {"learner": "bound", "mode": "on"}


def _persona() -> PersonaDefinition:
    return PersonaDefinition(
        id="p1",
        name="P",
        base_system_prompt="You are P.",
        personality_traits={"openness": 0.5, "honesty": 0.9},
    )


async def gmis() -> dict[str, GMI]:
    """Two READY GMIs, ``g1`` (the first) and ``g2``, each with openness 0.5."""
    made: dict[str, GMI] = {}
    for gmi_id in ("g1", "g2"):
        gmi = GMI(gmi_id)
        await gmi.initialize(_persona(), GMIConfig(model=ScriptedModel(["ok"])))
        made[gmi_id] = gmi
    return made


def build(found: dict[str, GMI], **options: Any) -> dict[str, Tool]:
    made = self_improvement_tools(SelfImprovementOptions(gmi_for=found.get, **options))
    return {t.name: t for t in made}


def ctx(
    gmi_id: str = "g2", session: str = "s1", learning: dict[str, str] | None = None
) -> ToolExecutionContext:
    data: dict[str, Any] = {} if learning is None else {"learning": dict(learning)}
    return ToolExecutionContext(gmi_id=gmi_id, session_id=session, session_data=data)


def assert_refused(exc: pytest.ExceptionInfo[ToolRefusal], tool_name: str, reason: str) -> None:
    assert exc.value.message.startswith(f"{tool_name} refused ({reason}): ")
    assert exc.value.message.endswith("; nothing was changed.")
    assert exc.value.details == {"status": "rejected", "reason": reason}


def adapt(trait: str = "openness", delta: float = 0.01) -> dict[str, Any]:
    return {"trait": trait, "delta": delta, "reasoning": "the user likes ideas"}


# -- learning_refusal: freeze -> mode -> learner ------------------------------------------------


@pytest.mark.parametrize(
    ("learning", "reason"),
    [
        ({"learner": "none", "mode": "frozen"}, "frozen"),
        ({"learner": "none", "mode": "off"}, "off"),
        ({"learner": "none", "mode": "on"}, "no_learner"),
        (BOUND, None),
        (None, None),
    ],
)
def test_learning_refusal_order(learning: dict[str, str] | None, reason: str | None) -> None:
    refusal = learning_refusal("forge_tool", ctx(learning=learning))
    assert (refusal.reason if refusal else None) == reason
    if refusal is not None:
        assert refusal.code is GMIErrorCode.PERMISSION_DENIED


@pytest.mark.parametrize("learning", [None, {"learner": "none", "mode": "off"}, BOUND])
def test_freeze_env_refuses_on_every_host_first(
    monkeypatch: pytest.MonkeyPatch, learning: dict[str, str] | None
) -> None:
    monkeypatch.setenv("AGENTOS_LEARNING_FREEZE", "1")
    refusal = learning_refusal("create_workflow", ctx(learning=learning))
    assert refusal is not None
    assert refusal.message == (
        "create_workflow refused (frozen): learning is frozen; nothing was changed."
    )


@pytest.mark.parametrize("value", ["true", "0", "yes", " 1", ""])
def test_other_freeze_values_set_nothing(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("AGENTOS_LEARNING_FREEZE", value)
    assert learning_refusal("manage_skills", ctx()) is None
    assert learning_refusal("manage_skills", None) is None


# -- adapt_personality without a layer (case 56, code semantics) -------------------------------


async def test_case_56_budget_and_clamp_on_the_calling_gmi() -> None:
    found = await gmis()
    tools = build(found, max_delta_per_session=0.3)
    out = await tools["adapt_personality"].run(adapt(delta=0.1), ctx(session="a"))
    assert out["previous_value"] == 0.5
    assert out["new_value"] == pytest.approx(0.6)
    assert out["clamped"] is False
    # The CALLING GMI changed, not the first one (reference bug not reproduced).
    assert found["g2"].persona.hexaco_traits["openness"] == pytest.approx(0.6)
    assert found["g1"].persona.hexaco_traits["openness"] == 0.5
    big = await tools["adapt_personality"].run(adapt(delta=0.5), ctx(gmi_id="g1", session="b"))
    assert big["delta"] == pytest.approx(0.3)
    assert big["new_value"] == pytest.approx(0.8)
    assert big["clamped"] is True
    assert big["remaining_budget"] == 0.0


async def test_case_56_session_totals_are_per_session() -> None:
    tools = build(await gmis(), max_delta_per_session=0.3)
    await tools["adapt_personality"].run(adapt(delta=0.1), ctx(session="s"))
    second = await tools["adapt_personality"].run(adapt(delta=0.1), ctx(session="s"))
    other = await tools["adapt_personality"].run(adapt(delta=0.1), ctx(session="t"))
    assert second["session_total"] == pytest.approx(0.2)
    assert other["session_total"] == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (adapt(trait="charisma"), "Invalid trait 'charisma'"),
        ({"trait": "openness", "delta": 0.1, "reasoning": "  "}, "reasoning must not be empty"),
        (adapt(delta=math.nan), "finite number"),
    ],
)
async def test_case_56_bad_input(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(GMIError, match=message):
        await build(await gmis())["adapt_personality"].run(arguments, ctx())


@pytest.mark.parametrize("learning", [None, BOUND])
@pytest.mark.parametrize("trait", ["honesty", "emotionality"])
async def test_operator_only_on_every_host(learning: dict[str, str] | None, trait: str) -> None:
    found = await gmis()
    with pytest.raises(ToolRefusal) as exc:
        await build(found)["adapt_personality"].run(adapt(trait, 0.01), ctx(learning=learning))
    assert_refused(exc, "adapt_personality", "operator_only")
    assert found["g2"].persona.hexaco_traits["honesty"] == 0.9


async def test_no_calling_gmi_is_an_error() -> None:
    with pytest.raises(GMIError, match="no GMI 'gone'"):
        await build(await gmis())["adapt_personality"].run(adapt(), ctx(gmi_id="gone"))


# -- adapt_personality with a layer ------------------------------------------------------------


async def test_layer_step_bound_and_call_limit() -> None:
    found = await gmis()
    run = build(found)["adapt_personality"].run
    with pytest.raises(ToolRefusal) as exc:
        await run(adapt(delta=0.05), ctx(learning=BOUND))
    assert_refused(exc, "adapt_personality", "step_bound")
    assert found["g2"].persona.hexaco_traits["openness"] == 0.5
    for _ in range(3):
        await run(adapt(delta=-0.02), ctx(learning=BOUND))
    assert found["g2"].persona.hexaco_traits["openness"] == pytest.approx(0.44)
    with pytest.raises(ToolRefusal) as exc:
        await run(adapt(delta=0.01), ctx(learning=BOUND))
    assert_refused(exc, "adapt_personality", "call_limit")
    # Another session has its own three calls.
    await run(adapt(delta=0.01), ctx(session="s2", learning=BOUND))


@pytest.mark.parametrize(
    ("learning", "reason"),
    [
        ({"learner": "bound", "mode": "frozen"}, "frozen"),
        ({"learner": "bound", "mode": "off"}, "off"),
        ({"learner": "none", "mode": "on"}, "no_learner"),
    ],
)
async def test_layer_modes_refuse_before_operator_only(
    learning: dict[str, str], reason: str
) -> None:
    with pytest.raises(ToolRefusal) as exc:
        await build(await gmis())["adapt_personality"].run(adapt("honesty"), ctx(learning=learning))
    assert_refused(exc, "adapt_personality", reason)


async def test_freeze_env_refuses_without_a_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTOS_LEARNING_FREEZE", "1")
    found = await gmis()
    with pytest.raises(ToolRefusal) as exc:
        await build(found)["adapt_personality"].run(adapt(), ctx())
    assert_refused(exc, "adapt_personality", "frozen")
    assert found["g2"].persona.hexaco_traits["openness"] == 0.5


@hyp_settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(-0.2, 0.2, allow_nan=False), min_size=1, max_size=8))
def test_with_a_layer_no_accepted_call_moves_a_trait_more_than_the_step(
    deltas: list[float],
) -> None:
    async def scenario() -> None:
        found = await gmis()
        run = build(found)["adapt_personality"].run
        accepted = 0
        for delta in deltas:
            before = found["g2"].persona.hexaco_traits["openness"]
            try:
                await run(adapt(delta=delta), ctx(learning=BOUND))
            except ToolRefusal:
                assert found["g2"].persona.hexaco_traits["openness"] == before
                continue
            accepted += 1
            moved = abs(found["g2"].persona.hexaco_traits["openness"] - before)
            assert moved <= 0.02 + 1e-12
        assert accepted <= 3

    asyncio.run(scenario())


async def test_refusal_reaches_the_model_as_a_failed_tool_result() -> None:
    found = await gmis()
    orchestrator = ToolOrchestrator(list(build(found).values()))
    call = ToolCall("c1", "adapt_personality", adapt(delta=0.05))
    result = await orchestrator.process_tool_call(call, ctx(learning=BOUND))
    assert result.is_error
    assert result.output.startswith("adapt_personality refused (step_bound): ")
    assert result.error_details is not None
    assert result.error_details["details"] == {"status": "rejected", "reason": "step_bound"}


# -- the mutation store ------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_mutations_are_recorded_and_decay_on_the_store_clock(
    backend: str, tmp_path: Path
) -> None:
    clock = FakeClock()
    store: Any = (
        InMemoryPersonalityMutationStore(clock)
        if backend == "memory"
        else SQLitePersonalityMutationStore(path=tmp_path / "m.db", clock=clock)
    )
    found = await gmis()
    tools = build(found, mutation_store=store, decay_rate=0.3)
    await tools["adapt_personality"].run(adapt(delta=0.1), ctx())
    [row] = await store.load_for_agent("g2")
    assert (row.trait, row.baseline_value, row.strength) == ("openness", 0.5, 1.0)
    assert row.delta == pytest.approx(0.1)
    clock.advance(timedelta(days=2))
    result = await store.decay_for_agent("g2", 0.3)
    assert (result.decayed, result.pruned) == (1, 0)
    [row] = await store.load_for_agent("g2")
    assert row.strength == pytest.approx(0.4)
    assert (await store.decay_for_agent("g2", 0.3)).decayed == 0  # same day: nothing more
    clock.advance(timedelta(days=1))
    assert (await store.decay_for_agent("g2", 0.3)).pruned == 1
    assert await store.load_for_agent("g2") == []
    # Stored mutations are never reloaded: a new GMI starts from its authored traits.
    fresh = GMI("g2")
    await fresh.initialize(_persona(), GMIConfig(model=ScriptedModel(["ok"])))
    assert fresh.persona.hexaco_traits["openness"] == 0.5


async def test_no_store_write_without_persist_with_decay() -> None:
    store = InMemoryPersonalityMutationStore(FakeClock())
    tools = build(await gmis(), mutation_store=store, persist_with_decay=False)
    await tools["adapt_personality"].run(adapt(), ctx())
    assert await store.load_for_agent("g2") == []


# -- manage_skills -----------------------------------------------------------------------------


def skills_dir(tmp_path: Path) -> Path:
    (tmp_path / "a.md").write_text(
        "---\nid: concise\ncategory: style\ndescription: Short answers.\n---\nBe brief.\n"
    )
    (tmp_path / "b.md").write_text(
        "---\nid: cite\ncategory: research\ndescription: Cite sources.\nlocked: true\n"
        "enabled: true\n---\nCite every source.\n"
    )
    return tmp_path


async def test_manage_skills_list_search_enable_disable(tmp_path: Path) -> None:
    registry = SkillRegistry(skills_dir(tmp_path), allowlist=["category:style"])
    run = build(await gmis(), skills=registry)["manage_skills"].run
    listed = await run({"action": "list"}, ctx())
    assert [(s["id"], s["enabled"]) for s in listed["skills"]] == [
        ("concise", False),
        ("cite", True),
    ]
    found = await run({"action": "search", "query": "SHORT"}, ctx())
    assert [s["id"] for s in found["skills"]] == ["concise"]
    assert (await run({"action": "enable", "skill_id": "concise"}, ctx(learning=BOUND)))[
        "enabled"
    ] is True
    assert registry.prompt_context("session:s1") == (
        "## Skill: cite\nCite every source.\n\n## Skill: concise\nBe brief."
    )
    assert registry.prompt_context("session:other") == "## Skill: cite\nCite every source."
    await run({"action": "disable", "skill_id": "concise"}, ctx())
    assert registry.prompt_context("session:s1") == "## Skill: cite\nCite every source."
    with pytest.raises(ToolRefusal, match="locked"):
        await run({"action": "disable", "skill_id": "cite"}, ctx())
    with pytest.raises(GMIError, match="not enabled"):
        await run({"action": "disable", "skill_id": "concise"}, ctx())
    with pytest.raises(GMIError, match="Unknown skill 'nope'"):
        await run({"action": "enable", "skill_id": "nope"}, ctx())


async def test_manage_skills_refusals_and_allowlist(tmp_path: Path) -> None:
    registry = SkillRegistry(skills_dir(tmp_path), allowlist=["concise"])
    run = build(await gmis(), skills=registry)["manage_skills"].run
    with pytest.raises(ToolRefusal) as exc:
        await run(
            {"action": "enable", "skill_id": "concise"},
            ctx(learning={"learner": "none", "mode": "on"}),
        )
    assert_refused(exc, "manage_skills", "no_learner")
    assert registry.prompt_context("session:s1") == "## Skill: cite\nCite every source."
    # list answers as it does without a layer, even on a refused turn.
    assert (
        len(
            (await run({"action": "list"}, ctx(learning={"learner": "none", "mode": "off"})))[
                "skills"
            ]
        )
        == 2
    )
    with pytest.raises(ToolRefusal, match="not allowlisted"):
        await run({"action": "enable", "skill_id": "cite"}, ctx())


def test_skill_file_errors_name_the_field(tmp_path: Path) -> None:
    (tmp_path / "bad.md").write_text("---\nid: x\ncategory: c\n---\nbody\n")
    with pytest.raises(GMIError, match=r"bad\.md: description is missing") as exc:
        SkillRegistry(tmp_path)
    assert exc.value.details["option"] == "description"
    with pytest.raises(GMIError, match="does not exist"):
        SkillRegistry(tmp_path / "missing")


# -- create_workflow ---------------------------------------------------------------------------


async def test_create_workflow_create_run_list() -> None:
    host_tools: dict[str, Tool] = {"add": add}
    tools = build(await gmis(), tools=lambda: host_tools, workflow_max_steps=2)
    run = tools["create_workflow"].run
    steps = [{"tool": "add", "args": {"a": 1, "b": 2}}, {"tool": "add", "args": {"a": 3, "b": 4}}]
    created = await run({"action": "create", "name": "sums", "steps": steps}, ctx(learning=BOUND))
    assert created["created"]["name"] == "sums"
    assert await run({"action": "run", "name": "sums"}, ctx()) == {
        "name": "sums",
        "results": [3, 7],
    }
    assert [w["name"] for w in (await run({"action": "list"}, ctx()))["workflows"]] == ["sums"]
    with pytest.raises(GMIError, match="3 steps is more than the 2 allowed"):
        await run({"action": "create", "name": "x", "steps": steps + steps[:1]}, ctx())
    with pytest.raises(GMIError, match="cannot nest create_workflow"):
        await run({"action": "create", "name": "x", "steps": [{"tool": "create_workflow"}]}, ctx())
    with pytest.raises(GMIError, match="no tool 'rm'"):
        await run({"action": "create", "name": "x", "steps": [{"tool": "rm"}]}, ctx())
    with pytest.raises(ToolRefusal) as exc:
        await run(
            {"action": "create", "name": "y", "steps": steps},
            ctx(learning={"learner": "bound", "mode": "off"}),
        )
    assert_refused(exc, "create_workflow", "off")
    # run answers on a refused turn as it does without a layer.
    off = ctx(learning={"learner": "bound", "mode": "off"})
    assert (await run({"action": "run", "name": "sums"}, off))["results"] == [3, 7]


async def test_create_workflow_allowed_tools_and_failure() -> None:
    @tool
    def boom() -> str:
        """Fails."""
        raise RuntimeError("bad")

    host_tools: dict[str, Tool] = {"add": add, "boom": boom}
    tools = build(await gmis(), tools=lambda: host_tools, workflow_allowed_tools=("boom",))
    run = tools["create_workflow"].run
    with pytest.raises(GMIError, match="tool 'add' is not allowed"):
        await run({"action": "create", "name": "x", "steps": [{"tool": "add"}]}, ctx())
    await run({"action": "create", "name": "x", "steps": [{"tool": "boom"}]}, ctx())
    with pytest.raises(GMIError, match=r"Workflow failed at step 1 \(boom\): RuntimeError: bad"):
        await run({"action": "run", "name": "x"}, ctx())


async def test_create_workflow_step_timeout_on_the_clock() -> None:
    clock = FakeClock()
    started = asyncio.Event()

    async def stall() -> str:
        """Never finishes by itself."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    host_tools = {"stall": Tool.from_function(stall)}
    tools = build(await gmis(), tools=lambda: host_tools, workflow_step_timeout_s=5, clock=clock)
    run = tools["create_workflow"].run
    await run({"action": "create", "name": "w", "steps": [{"tool": "stall"}]}, ctx())
    task = asyncio.create_task(run({"action": "run", "name": "w"}, ctx()))
    await started.wait()
    await clock.advance_and_settle(5)
    with pytest.raises(GMIError, match=r"Workflow failed at step 1 .*longer than 5 s"):
        await task


# -- self_evaluate -----------------------------------------------------------------------------


def judge_of(*replies: str) -> Any:
    pending = list(replies)
    prompts: list[str] = []

    async def judge(prompt: str) -> str:
        prompts.append(prompt)
        return pending.pop(0)

    judge.prompts = prompts  # type: ignore[attr-defined]
    return judge


GOOD = '{"relevance": 0.9, "clarity": 0.8, "accuracy": 1, "helpfulness": 0.7}'
UNCLEAR = '```json\n{"relevance": 0.5, "clarity": 0.25, "accuracy": 0.5, "helpfulness": 0.5}\n```'


async def test_self_evaluate_scores_adjusts_and_reports() -> None:
    found = await gmis()
    judge = judge_of(GOOD, UNCLEAR)
    run = build(found, judge=judge)["self_evaluate"].run
    first = await run({"action": "evaluate", "response": "R", "query": "Q"}, ctx(learning=BOUND))
    assert first["scores"] == {
        "relevance": 0.9,
        "clarity": 0.8,
        "accuracy": 1.0,
        "helpfulness": 0.7,
    }
    assert first["average"] == pytest.approx(0.85)
    assert (first["adjustment"], first["self_change_refused"]) == (None, None)
    assert "Query:\nQ\n\nResponse:\nR" in judge.prompts[0]
    second = await run({"action": "evaluate", "response": "R", "query": "Q"}, ctx(learning=BOUND))
    assert second["adjustment"] == {
        "param": "verbosity",
        "previous_value": None,
        "new_value": "low",
    }
    assert found["g2"].user_context["preferences"] == {"verbosity": "low"}
    report = await run({"action": "report"}, ctx())
    assert report["evaluations"] == 2
    assert report["averages"]["clarity"] == pytest.approx(0.525)
    assert report["adjustments"] == [second["adjustment"]]


async def test_self_evaluate_on_a_refused_turn_scores_but_changes_nothing() -> None:
    found = await gmis()
    run = build(found, judge=judge_of(UNCLEAR))["self_evaluate"].run
    none = {"learner": "none", "mode": "on"}
    out = await run({"action": "evaluate", "response": "R", "query": "Q"}, ctx(learning=none))
    assert (out["adjustment"], out["self_change_refused"]) == (None, "no_learner")
    assert found["g2"].user_context.get("preferences", {}) == {}
    assert (await run({"action": "report"}, ctx()))["evaluations"] == 1


async def test_self_evaluate_adjust_and_its_refusals() -> None:
    found = await gmis()
    run = build(found)["self_evaluate"].run
    with pytest.raises(GMIError, match="temperature is not adjustable") as exc:
        await run({"action": "adjust", "param": "temperature", "value": "0.2"}, ctx())
    assert exc.value.details == {"option": "param"}
    high = await run({"action": "adjust", "param": "verbosity", "value": "high"}, ctx())
    assert high["new_value"] == "high"
    assert found["g2"].user_context["preferences"] == {"verbosity": "high"}
    personality = {"action": "adjust", "param": "personality", "trait": "openness", "delta": 0.02}
    changed = await run(personality, ctx(learning=BOUND))
    assert changed["new_value"] == pytest.approx(0.52)
    with pytest.raises(ToolRefusal) as refusal:
        await run({**personality, "delta": 0.03}, ctx(learning=BOUND))
    assert_refused(refusal, "self_evaluate", "step_bound")
    with pytest.raises(ToolRefusal) as refusal:
        await run(
            {"action": "adjust", "param": "verbosity", "value": "low"},
            ctx(learning={"learner": "bound", "mode": "frozen"}),
        )
    assert_refused(refusal, "self_evaluate", "frozen")


async def test_self_evaluate_limit_and_missing_judge() -> None:
    found = await gmis()
    run = build(found, judge=judge_of(GOOD), max_evaluations_per_session=1)["self_evaluate"].run
    await run({"action": "evaluate", "response": "R", "query": "Q"}, ctx())
    with pytest.raises(GMIError, match="used its 1 evaluations"):
        await run({"action": "evaluate", "response": "R", "query": "Q"}, ctx())
    with pytest.raises(GMIError, match="no judge model"):
        await build(found)["self_evaluate"].run(
            {"action": "evaluate", "response": "R", "query": "Q"}, ctx()
        )


# -- options -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("adjustable_params", ("temperature",)),
        ("max_delta_per_session", 1.5),
        ("decay_rate", math.nan),
        ("workflow_step_timeout_s", 0),
        ("max_evaluations_per_session", 0),
    ],
)
async def test_options_are_checked_naming_the_field(field: str, value: Any) -> None:
    with pytest.raises(GMIError) as exc:
        build(await gmis(), **{field: value})
    assert exc.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert exc.value.details == {"option": f"self_improvement.{field}"}


async def test_tool_set() -> None:
    assert list(build(await gmis())) == ["adapt_personality", "create_workflow", "self_evaluate"]


# -- inside a GMI turn -------------------------------------------------------------------------


async def test_in_a_turn_the_calling_gmi_changes_and_the_prompt_keeps_authored_traits(
    tmp_path: Path,
) -> None:
    found: dict[str, GMI] = {}
    registry = SkillRegistry(skills_dir(tmp_path))
    tools = self_improvement_tools(SelfImprovementOptions(gmi_for=found.get, skills=registry))
    call = ToolCall("c1", "adapt_personality", adapt(delta=-0.02))
    model = ScriptedModel([ScriptStep(tool_calls=[call]), "done"])
    gmi = await make_gmi(
        model,
        persona=persona(personality_traits={"openness": 0.66}),
        persona_traits={"openness": 0.66},
        tool_orchestrator=ToolOrchestrator(tools),
    )
    found[gmi.gmi_id] = gmi
    gmi.session_data["learning"] = dict(BOUND)  # what the GMI sets with a learner session
    skills = registry.prompt_context("session:s1")
    await run(gmi, turn("hi", options=TurnOptions(skill_prompt_context=skills)))
    assert gmi.persona.hexaco_traits["openness"] == pytest.approx(0.64)
    tool_message = model.requests[1].messages[-1]
    assert tool_message.tool_result is not None
    assert tool_message.tool_result.output["new_value"] == pytest.approx(0.64)
    for request in model.requests:
        system = "\n".join(m.text for m in request.messages if m.role == "system")
        assert "Personality" in system  # the authored 0.66 still renders (0.64 would not)
        assert "Cite every source." in system  # the enabled skill in the skills slot


async def test_sqlite_mutations_survive_reopening(tmp_path: Path) -> None:
    clock = FakeClock()
    first = SQLitePersonalityMutationStore(path=tmp_path / "m.db", clock=clock)
    await first.record(
        agent_id="g1",
        trait="openness",
        delta=0.02,
        reasoning="r",
        baseline_value=0.5,
        mutated_value=0.52,
    )
    first.close()
    again = SQLitePersonalityMutationStore(path=tmp_path / "m.db", clock=clock)
    [row] = await again.load_for_agent("g1")
    assert (row.id, row.mutated_value, row.created_at) == ("pm_1", 0.52, clock.now())
    with pytest.raises(GMIError, match="decay rate must be from 0 to 1"):
        await again.decay_for_agent("g1", 2)
    again.close()


@hyp_settings(max_examples=40)
@given(st.lists(st.floats(-0.5, 0.5, allow_nan=False), min_size=1, max_size=8))
def test_without_a_layer_a_session_never_moves_a_trait_beyond_its_budget(
    deltas: list[float],
) -> None:
    async def scenario() -> None:
        found = await gmis()
        run = build(found, max_delta_per_session=0.15)["adapt_personality"].run
        moved = 0.0
        for delta in deltas:
            before = found["g2"].persona.hexaco_traits["openness"]
            await run(adapt(delta=delta), ctx())
            moved += abs(found["g2"].persona.hexaco_traits["openness"] - before)
        assert moved <= 0.15 + 1e-9

    asyncio.run(scenario())
