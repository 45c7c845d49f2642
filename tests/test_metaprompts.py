"""MetapromptExecutor through the GMI: triggers, replies, usage and budget, concurrency
(reference §1.6, case 34; spec: Metaprompts, Spend budget)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from agentos.core.json_reply import parse_json_object
from agentos.core.messages import Message
from agentos.core.usage import ModelUsage
from agentos.llm.budget import SpendBudget
from agentos.llm.model import CompletionOptions, ToolDefinition
from agentos.persona import get_preset_metaprompt
from agentos.substrate import (
    GMI,
    GMIMood,
    GMIPrimeState,
    ReasoningEntryType,
    render_template,
)
from agentos.testing import ScriptedModel, ScriptStep
from fakes.gmi_helpers import make_gmi, persona, run, turn

TURN_USAGE = ModelUsage(prompt_tokens=10, completion_tokens=2)
META_USAGE = ModelUsage(prompt_tokens=500, completion_tokens=40)


def model_answering(
    reply: dict[str, Any] | str, *, hold: asyncio.Event | None = None
) -> ScriptedModel:
    """Turns answer "ok"; metaprompt calls (JSON mode) answer ``reply``."""

    def script(
        messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
    ) -> ScriptStep:
        if options.json_mode:
            text = reply if isinstance(reply, str) else json.dumps(reply)
            return ScriptStep(text=[text], usage=META_USAGE, wait=hold)
        return ScriptStep(text="ok", usage=TURN_USAGE)

    return ScriptedModel(script)


def metaprompt(
    id: str, trigger: dict[str, Any], template: str = "Reply in JSON."
) -> dict[str, Any]:
    return {"id": id, "prompt_template": template, "trigger": trigger}


def triggered(gmi: GMI) -> list[tuple[str | None, str]]:
    return [
        (e.turn_id, e.message)
        for e in gmi.trace.entries()
        if e.type is ReasoningEntryType.SELF_REFLECTION_TRIGGERED
    ]


def metaprompt_calls(model: ScriptedModel) -> int:
    return sum(1 for r in model.requests if r.options.json_mode)


async def turns(gmi: GMI, count: int, *, start: int = 1) -> None:
    for index in range(start, start + count):
        await run(gmi, turn(f"message {index}", turn_id=f"t{index}"))
        await gmi.wait_for_metaprompts()


# -- case 34: triggers --------------------------------------------------------------------------


@pytest.mark.parametrize(("interval", "fired_on"), [(1, ["t2", "t4", "t6"]), (5, ["t6", "t12"])])
async def test_case_34_turn_interval(interval: int, fired_on: list[str]) -> None:
    chosen = persona(
        meta_prompts=[metaprompt("reflect", {"type": "turn_interval", "interval_turns": interval})]
    )
    model = model_answering({"adjustmentRationale": "steady"})
    gmi = await make_gmi(model, persona=chosen)
    await turns(gmi, 12 if interval == 5 else 6)
    assert [turn_id for turn_id, _ in triggered(gmi)] == fired_on
    assert metaprompt_calls(model) == len(fired_on)
    counter = await gmi.working_memory.get("metaprompt_turn_counter_reflect")
    assert counter == 0  # reset on the turn that fired


async def test_case_34_event_preset_fires_at_the_end_of_the_turn_that_raised_it() -> None:
    chosen = persona(sentiment_tracking={"enabled": True, "presets": ["frustration_recovery"]})
    model = model_answering({"adjustmentRationale": "calm", "updatedGmiMood": "EMPATHETIC"})
    gmi = await make_gmi(model, persona=chosen)
    await run(gmi, turn("This is terrible", turn_id="t1"))
    await gmi.wait_for_metaprompts()
    assert triggered(gmi) == [("t1", "metaprompt gmi_frustration_recovery triggered")]
    assert gmi.events.pending() == frozenset()  # consumed
    assert gmi.mood is GMIMood.EMPATHETIC
    assert await gmi.working_memory.get("current_gmi_mood") == "empathetic"
    await run(gmi, turn("Thanks, the weather is mild", turn_id="t2"))
    await gmi.wait_for_metaprompts()
    assert len(triggered(gmi)) == 1  # nothing pending: nothing fires


async def test_an_event_no_metaprompt_listens_for_stays_pending() -> None:
    chosen = persona(sentiment_tracking={"enabled": True, "presets": ["frustration_recovery"]})
    gmi = await make_gmi(model_answering({}), persona=chosen)
    await run(gmi, turn("I am confused"))
    await gmi.wait_for_metaprompts()
    assert [str(t) for t in gmi.events.pending()] == ["user_confused"]


async def test_case_34_manual_trigger_fires_once_and_the_flag_is_removed() -> None:
    chosen = persona(meta_prompts=[metaprompt("check_in", {"type": "manual"})])
    model = model_answering({"adjustmentRationale": "asked"})
    gmi = await make_gmi(model, persona=chosen)
    await gmi.working_memory.set("manual_trigger_check_in", True)
    await turns(gmi, 2)
    assert [turn_id for turn_id, _ in triggered(gmi)] == ["t1"]
    assert await gmi.working_memory.get("manual_trigger_check_in") is None


# -- replies ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply_mood", "mood"),
    [
        ("EMPATHETIC", GMIMood.EMPATHETIC),
        ("curious", GMIMood.CURIOUS),
        ("helpful", GMIMood.NEUTRAL),
    ],
)
async def test_case_34_mood_from_a_reply_only_when_it_is_a_mood(
    reply_mood: str, mood: GMIMood
) -> None:
    chosen = persona(meta_prompts=[metaprompt("m", {"type": "turn_interval", "interval_turns": 1})])
    gmi = await make_gmi(model_answering({"updatedGmiMood": reply_mood}), persona=chosen)
    await turns(gmi, 2)
    assert gmi.mood is mood


async def test_a_reply_updates_skill_complexity_and_working_memory_never_traits() -> None:
    reply = {
        "adjustmentRationale": "the user knows the basics",
        "updatedUserSkillLevel": "intermediate",
        "updatedTaskComplexity": "complex",
        "newMemoryImprints": [{"key": "prefers_examples", "value": True}],
        "personalityTraits": {"openness": 0.0},
    }
    chosen = persona(
        personality_traits={"openness": 0.9},
        meta_prompts=[metaprompt("m", {"type": "manual"})],
    )
    model = model_answering("Here you go:\n```json\n" + json.dumps(reply) + "\n```")
    gmi = await make_gmi(model, persona=chosen)
    await gmi.working_memory.set("manual_trigger_m", True)
    await turns(gmi, 1)
    assert gmi.user_context["skill_level"] == "intermediate"
    assert gmi.task_context["complexity"] == "complex"
    assert await gmi.working_memory.get("prefers_examples") is True
    assert gmi.persona.hexaco_traits == {"openness": 0.9}
    [change] = [e for e in gmi.trace.entries() if e.type is ReasoningEntryType.STATE_CHANGE]
    assert change.message == "metaprompt m: the user knows the basics"


async def test_a_reply_without_json_changes_nothing() -> None:
    chosen = persona(meta_prompts=[metaprompt("m", {"type": "manual"})])
    gmi = await make_gmi(model_answering("I would rather not."), persona=chosen)
    await gmi.working_memory.set("manual_trigger_m", True)
    await turns(gmi, 1)
    assert gmi.mood is GMIMood.NEUTRAL
    assert any("answered no JSON object" in e.message for e in gmi.trace.entries())


async def test_the_template_receives_the_gmis_state() -> None:
    template = (
        "mood={{current_mood}} skill={{user_skill}} sentiment={{current_sentiment}} x={{nope}}"
    )
    chosen = persona(meta_prompts=[metaprompt("m", {"type": "manual"}, template)])
    model = model_answering({})
    gmi = await make_gmi(model, persona=chosen)
    await gmi.working_memory.set("manual_trigger_m", True)
    await turns(gmi, 1)
    [request] = [r for r in model.requests if r.options.json_mode]
    assert request.messages[0].text == "mood=neutral skill=novice sentiment=neutral x={{nope}}"
    assert (request.options.temperature, request.options.max_tokens) == (0.3, 512)


def test_parse_json_object_and_render_template() -> None:
    assert parse_json_object('{"a": 1}') == {"a": 1}
    assert parse_json_object('Sure! {"a": {"b": 2}} Hope it helps') == {"a": {"b": 2}}
    assert parse_json_object("[1, 2]") is None
    assert parse_json_object("nothing") is None
    assert render_template("{{ a }}-{{b}}-{{c}}", {"a": "1", "b": "2"}) == "1-2-{{c}}"


# -- usage, budget, concurrency -----------------------------------------------------------------


async def test_a_metaprompts_usage_is_not_the_turns_but_the_budget_records_it() -> None:
    budget = SpendBudget(max_total_tokens=10_000)
    chosen = persona(meta_prompts=[metaprompt("m", {"type": "manual"})])
    gmi = await make_gmi(model_answering({}), persona=chosen, budget=budget)
    await gmi.working_memory.set("manual_trigger_m", True)
    _, output = await run(gmi, turn())
    await gmi.wait_for_metaprompts()
    assert output.usage == ModelUsage.zero() + TURN_USAGE
    assert budget.spent_tokens == META_USAGE.total_tokens  # the turn's steps are the gateway's


async def test_a_refused_metaprompt_leaves_the_turn_as_it_is() -> None:
    calls: list[str] = []
    budget = SpendBudget(max_total_tokens=1, on_limit_reached=lambda info: calls.append(info.call))
    chosen = persona(meta_prompts=[metaprompt("m", {"type": "manual"})])
    model = model_answering({"updatedGmiMood": "focused"})
    gmi = await make_gmi(model, persona=chosen, budget=budget)
    await gmi.working_memory.set("manual_trigger_m", True)
    _, output = await run(gmi, turn())
    await gmi.wait_for_metaprompts()
    assert output.response_text == "ok"
    assert calls == ["gmi.metaprompt"]
    assert gmi.mood is GMIMood.NEUTRAL
    assert metaprompt_calls(model) == 0


async def test_ten_turns_in_a_row_with_metaprompts_firing_none_refused() -> None:
    chosen = persona(
        sentiment_tracking={"enabled": True, "presets": ["all"]},
        meta_prompts=[metaprompt("reflect", {"type": "turn_interval", "interval_turns": 1})],
    )
    hold = asyncio.Event()  # metaprompts stay running while the next turns start
    model = model_answering({"adjustmentRationale": "ok"}, hold=hold)
    gmi = await make_gmi(model, persona=chosen)
    texts = ["This is terrible", "I love it", "I'm confused??", "awful awful", "great, thanks"]
    outputs = []
    for index in range(10):
        _, output = await run(gmi, turn(texts[index % 5], turn_id=f"t{index}"))
        outputs.append(output)
        assert gmi.state is GMIPrimeState.READY
    assert all(o.error is None and o.response_text == "ok" for o in outputs)
    assert len(triggered(gmi)) >= 10
    hold.set()
    await gmi.wait_for_metaprompts()
    assert metaprompt_calls(model) == len(triggered(gmi))


async def test_shutdown_cancels_a_running_metaprompt_cleanly() -> None:
    hold = asyncio.Event()
    chosen = persona(meta_prompts=[metaprompt("m", {"type": "manual"})])
    gmi = await make_gmi(model_answering({"updatedGmiMood": "focused"}, hold=hold), persona=chosen)
    await gmi.working_memory.set("manual_trigger_m", True)
    await run(gmi, turn())
    await asyncio.sleep(0)
    await gmi.shutdown()
    assert gmi.state is GMIPrimeState.SHUTDOWN
    assert gmi.mood is GMIMood.NEUTRAL


async def test_a_metaprompt_finds_no_model_when_another_provider_served_the_turn() -> None:
    from agentos.llm.gateway import CompletionGateway, FallbackLeg, GatewayDefaults
    from agentos.llm.model import ChatModel

    primary = ScriptedModel([ScriptStep.fail(503, "down")], provider_id="a")
    backup = ScriptedModel(["served"], provider_id="b")

    def resolver(provider: str | None, model: str | None, **_: object) -> ChatModel:
        return backup if provider == "b" else primary

    gateway = CompletionGateway(
        GatewayDefaults(provider="a", model="m", fallback_providers=[FallbackLeg("b", "m")]),
        resolver=resolver,
    )
    chosen = persona(
        default_provider_id="a",
        default_model_id="m",
        meta_prompts=[metaprompt("m", {"type": "manual"})],
    )
    gmi = GMI("g")
    from agentos.substrate import GMIConfig

    await gmi.initialize(chosen, GMIConfig(gateway=gateway))
    await gmi.working_memory.set("manual_trigger_m", True)
    _, output = await run(gmi, turn())
    await gmi.wait_for_metaprompts()
    assert output.response_text == "served"
    skipped = [
        e for e in gmi.trace.entries() if e.type is ReasoningEntryType.SELF_REFLECTION_SKIPPED
    ]
    assert len(skipped) == 1
    assert "a:m did not serve the turn" in skipped[0].message


def test_the_self_reflection_metaprompt_is_available_to_personas() -> None:
    reflection = get_preset_metaprompt("gmi_self_trait_adjustment")
    assert reflection.trigger is not None
    assert (reflection.trigger.type, reflection.trigger.interval_turns) == ("turn_interval", 5)
