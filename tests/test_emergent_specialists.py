"""The specialist forge's checks and the spawn_specialist tool (reference §1.31, black-box 55)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.emergent import (
    MAX_INSTRUCTIONS_CHARS,
    SpecialistForge,
    SpecialistRefused,
    SpecialistSpec,
    delegate_tool_name,
    spawn_specialist_tool,
)
from agentos.tools import Tool


def _tool(forge: SpecialistForge, added: list[str]):  # type: ignore[no-untyped-def]
    def on_spawn(spec: SpecialistSpec) -> None:
        added.append(spec.tool_name)

    return spawn_specialist_tool(forge, on_spawn)


async def test_fact_checker_gets_its_delegate_tool() -> None:
    forge = SpecialistForge()
    added: list[str] = []
    text = await _tool(forge, added).run(
        {"role": "fact_checker", "instructions": "Check every claim.", "justification": "none"}
    )
    assert added == ["delegate_to_fact_checker"]
    assert [s.role for s in forge.spawned] == ["fact_checker"]
    assert text == (
        "Specialist 'fact_checker' is ready. From your next step, hand it work with "
        'delegate_to_fact_checker({"task": "..."}).'
    )


async def test_sixth_spawn_with_the_default_cap_is_refused_naming_max_specialists() -> None:
    forge = SpecialistForge()
    added: list[str] = []
    tool = _tool(forge, added)
    for index in range(5):
        await tool.run({"role": f"s{index}", "instructions": "work"})
    with pytest.raises(SpecialistRefused) as caught:
        await tool.run({"role": "s5", "instructions": "work"})
    assert "max_specialists" in caught.value.message
    assert caught.value.code == GMIErrorCode.VALIDATION_ERROR
    assert len(added) == 5


@pytest.mark.parametrize("role", ["plan", "spawn_specialist", "delegate_to_self", "final_answer"])
def test_reserved_roles_are_refused(role: str) -> None:
    with pytest.raises(SpecialistRefused, match="reserved role name"):
        SpecialistForge().check(role, "work")


@pytest.mark.parametrize("role", ["9lives", "", "fact checker", "a.b", "_x", "x" * 53])
def test_invalid_roles_are_refused(role: str) -> None:
    with pytest.raises(SpecialistRefused, match="not a valid role"):
        SpecialistForge().check(role, "work")


def test_longest_valid_role_makes_a_64_character_tool_name() -> None:
    spec = SpecialistForge().check("x" * 52, "work")
    assert len(spec.tool_name) == 64


def test_an_existing_role_is_refused() -> None:
    forge = SpecialistForge(existing_roles=["writer"])
    with pytest.raises(SpecialistRefused, match="already exists"):
        forge.check("writer", "work")
    forge.record(forge.check("editor", "work"))
    with pytest.raises(SpecialistRefused, match="already exists"):
        forge.check("editor", "work")


def test_instructions_are_truncated_at_8192() -> None:
    spec = SpecialistForge().check("long", "a" * 10_000, "why")
    assert spec.instructions == "a" * MAX_INSTRUCTIONS_CHARS == "a" * 8192
    assert spec.justification == "why"


def test_empty_instructions_and_missing_justification_are_refused() -> None:
    with pytest.raises(SpecialistRefused, match="instructions must not be empty"):
        SpecialistForge().check("x", "  ")
    with pytest.raises(SpecialistRefused, match="justification is required"):
        SpecialistForge(require_justification=True).check("x", "work", " ")


async def test_the_judge_is_asked_after_the_checks_and_can_refuse() -> None:
    seen: list[SpecialistSpec] = []

    async def judge(spec: SpecialistSpec) -> tuple[bool, str]:
        seen.append(spec)
        return (spec.role != "bad", "too vague")

    forge = SpecialistForge(judge=judge)
    added: list[str] = []
    tool = _tool(forge, added)
    with pytest.raises(SpecialistRefused, match="plan"):
        await tool.run({"role": "plan", "instructions": "x"})
    assert seen == []  # a check refused first, the judge was not asked
    with pytest.raises(SpecialistRefused, match="the judge rejected it: too vague"):
        await tool.run({"role": "bad", "instructions": "x"})
    await tool.run({"role": "good", "instructions": "x"})
    assert added == ["delegate_to_good"]
    assert [s.role for s in seen] == ["bad", "good"]


async def test_a_raising_judge_refuses_and_judge_calls_are_capped() -> None:
    def judge(spec: SpecialistSpec) -> bool:
        raise RuntimeError("down")

    with pytest.raises(SpecialistRefused, match="the judge raised RuntimeError"):
        await SpecialistForge(judge=judge).judge(SpecialistSpec("x", "y"))
    forge = SpecialistForge(judge=lambda spec: False, max_judge_calls=1)
    with pytest.raises(SpecialistRefused, match="no reason given"):
        await forge.judge(SpecialistSpec("x", "y"))
    with pytest.raises(SpecialistRefused, match="judge call limit"):
        await forge.judge(SpecialistSpec("x", "y"))


async def test_a_failed_on_spawn_forgets_the_specialist() -> None:
    forge = SpecialistForge()

    def on_spawn(spec: SpecialistSpec) -> None:
        raise SpecialistRefused("the approval handler said no", role=spec.role)

    with pytest.raises(SpecialistRefused, match="approval handler said no"):
        await spawn_specialist_tool(forge, on_spawn).run({"role": "x", "instructions": "y"})
    assert forge.spawned == ()
    assert not forge.taken("x")


def test_record_checks_again() -> None:
    forge = SpecialistForge(max_specialists=1)
    first, second = forge.check("a", "w"), forge.check("b", "w")
    forge.record(first)
    with pytest.raises(SpecialistRefused, match="max_specialists"):
        forge.record(second)
    forge = SpecialistForge()
    forge.record(first)
    with pytest.raises(SpecialistRefused, match="already exists"):
        forge.record(first)


@pytest.mark.parametrize(
    ("option", "kwargs"),
    [
        ("max_specialists", {"max_specialists": -1}),
        ("max_specialists", {"max_specialists": True}),
        ("max_judge_calls", {"max_judge_calls": "2"}),
        ("require_justification", {"require_justification": 1}),
        ("judge", {"judge": "yes"}),
    ],
)
def test_bad_forge_options_name_the_option(option: str, kwargs: dict[str, object]) -> None:
    with pytest.raises(GMIError) as caught:
        SpecialistForge(**kwargs)  # type: ignore[arg-type]
    assert caught.value.code == GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": option}


def test_the_tool_schema() -> None:
    tool = spawn_specialist_tool(SpecialistForge(), lambda spec: None)
    assert tool.name == "spawn_specialist"
    assert tool.parameters["required"] == ["role", "instructions"]
    assert set(tool.parameters["properties"]) == {"role", "instructions", "justification"}


@given(st.from_regex(r"[a-zA-Z][a-zA-Z0-9_-]{0,51}", fullmatch=True))
def test_every_accepted_role_makes_a_valid_tool_name(role: str) -> None:
    if role in {"plan", "final_answer", "spawn_specialist", "delegate_to_self"}:
        return
    spec = SpecialistForge().check(role, "work")
    assert spec.tool_name == delegate_tool_name(role) == f"delegate_to_{role}"
    Tool.from_schema(spec.tool_name, "d", {"type": "object"}, lambda: None)
