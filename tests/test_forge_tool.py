"""forge_tool (issue 15, item 7; reference §1.31): compose and sandbox forging, tests, judge, cap.

Driven through the tool a model calls: ``forge_tool_tool(options).run(arguments, context)``.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.emergent import (
    ForgeCandidate,
    ForgedToolRegistry,
    ForgeOptions,
    ForgeRejected,
    PythonSandbox,
    SandboxLimits,
    SandboxUnavailable,
    forge_tool_tool,
)
from agentos.emergent.self_improvement.refusals import ToolRefusal
from agentos.tools import Tool, ToolExecutionContext


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def double(x: int) -> int:
    """Double a number."""
    return 2 * x


TOOLS = {"add": Tool.from_function(add), "double": Tool.from_function(double)}
SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
CONTEXT = ToolExecutionContext(session_id="s1")
seen: list[ForgeCandidate] = []


def approve(candidate: ForgeCandidate) -> bool:
    seen.append(candidate)
    return True


def request(name: str = "add_then_double", **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": name,
        "description": "(a + b) * 2",
        "input_schema": SCHEMA,
        "implementation": {
            "mode": "compose",
            "steps": [
                {"name": "sum", "tool": "add", "input_mapping": {"a": "$input.a", "b": "$input.b"}},
                {"name": "twice", "tool": "double", "input_mapping": {"x": "$prev"}},
            ],
        },
        "test_cases": [{"input": {"a": 1, "b": 2}, "expected_output": 6}],
    }
    body.update(changes)
    return body


async def test_a_composed_tool_is_tested_judged_and_registered_for_its_session() -> None:
    seen.clear()
    options = ForgeOptions(tools=TOOLS, judge=approve)
    result = await forge_tool_tool(options).run(request(), CONTEXT)
    assert result == {
        "status": "registered",
        "tool": "add_then_double",
        "tier": "session",
        "tests_passed": 1,
    }
    assert seen[0].test_results == ({"input": {"a": 1, "b": 2}, "output": 6, "passed": True},)
    forged = options.registry.get("s1", "add_then_double")
    assert forged is not None
    assert await forged.run({"a": 4, "b": 5}, CONTEXT) == 18
    assert options.registry.tools("other") == ()


async def test_named_steps_and_literals_map_into_later_steps() -> None:
    options = ForgeOptions(tools=TOOLS, judge=approve)
    steps = [
        {"name": "first", "tool": "add", "input_mapping": {"a": "$input.a", "b": 10}},
        {"name": "second", "tool": "double", "input_mapping": {"x": "$input.b"}},
        {"name": "third", "tool": "add", "input_mapping": {"a": "$steps.first", "b": "$prev"}},
    ]
    body = request(
        "mixed",
        implementation={"mode": "compose", "steps": steps},
        test_cases=[{"input": {"a": 1, "b": 3}, "expected_output": 17}],
    )
    await forge_tool_tool(options).run(body, CONTEXT)
    forged = options.registry.get("s1", "mixed")
    assert forged is not None
    assert await forged.run({"a": 0, "b": 0}) == 10


async def test_the_judge_rejects_and_nothing_is_registered() -> None:
    options = ForgeOptions(tools=TOOLS, judge=lambda candidate: (False, "duplicates add"))
    with pytest.raises(ForgeRejected) as caught:
        await forge_tool_tool(options).run(request(), CONTEXT)
    assert caught.value.message == (
        "forge_tool rejected (judge_rejected): the judge rejected it: duplicates add; "
        "no tool was registered."
    )
    assert caught.value.details == {"status": "rejected", "reason": "judge_rejected"}
    assert options.registry.tools("s1") == ()


async def test_without_a_judge_every_forge_is_rejected() -> None:
    options = ForgeOptions(tools=TOOLS)
    with pytest.raises(ForgeRejected) as caught:
        await forge_tool_tool(options).run(request(), CONTEXT)
    assert caught.value.reason == "no_judge"
    assert options.registry.tools("s1") == ()


async def test_a_failing_test_case_rejects_before_the_judge_is_asked() -> None:
    seen.clear()
    options = ForgeOptions(tools=TOOLS, judge=approve)
    body = request(test_cases=[{"input": {"a": 1, "b": 2}, "expected_output": 7}])
    with pytest.raises(ForgeRejected) as caught:
        await forge_tool_tool(options).run(body, CONTEXT)
    assert caught.value.reason == "test_failed"
    assert "test case 0 returned 6, expected 7" in caught.value.message
    assert seen == []
    assert options.registry.tools("s1") == ()


async def test_a_step_calling_an_unknown_tool_is_rejected() -> None:
    options = ForgeOptions(tools=TOOLS, judge=approve)
    steps = [{"name": "x", "tool": "rm_rf", "input_mapping": {}}]
    with pytest.raises(ForgeRejected, match="calls 'rm_rf', which is not available"):
        await forge_tool_tool(options).run(
            request(implementation={"mode": "compose", "steps": steps}), CONTEXT
        )


async def test_a_session_holds_at_most_max_session_tools() -> None:
    options = ForgeOptions(tools=TOOLS, judge=approve, registry=ForgedToolRegistry(2))
    forge = forge_tool_tool(options)
    await forge.run(request("one"), CONTEXT)
    await forge.run(request("two"), CONTEXT)
    with pytest.raises(ForgeRejected) as caught:
        await forge.run(request("three"), CONTEXT)
    assert caught.value.reason == "session_cap"
    assert [t.name for t in options.registry.tools("s1")] == ["one", "two"]
    await forge.run(request("three"), ToolExecutionContext(session_id="s2"))
    assert ForgedToolRegistry().max_session_tools == 10


async def test_a_taken_name_is_rejected() -> None:
    options = ForgeOptions(tools=TOOLS, judge=approve)
    with pytest.raises(ForgeRejected, match="a tool named 'add' already exists"):
        await forge_tool_tool(options).run(request("add"), CONTEXT)


async def test_sandbox_mode_is_refused_unless_the_host_allows_it() -> None:
    options = ForgeOptions(tools=TOOLS, judge=approve)
    body = request(implementation={"mode": "sandbox", "code": "def execute(i):\n    return 1\n"})
    with pytest.raises(ForgeRejected) as caught:
        await forge_tool_tool(options).run(body, CONTEXT)
    assert caught.value.reason == "sandbox_not_allowed"
    assert options.registry.tools("s1") == ()


async def test_a_sandbox_tool_is_forged_and_runs_confined() -> None:
    sandbox = PythonSandbox(SandboxLimits(cpu_seconds=1, timeout_s=3.0))
    try:
        await sandbox.check()
    except SandboxUnavailable as exc:
        if os.environ.get("AGENTOS_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"AGENTOS_REQUIRE_SANDBOX=1 but {exc.message}")
        pytest.skip(f"bubblewrap cannot run here: {exc.reason}")
    options = ForgeOptions(judge=approve, allow_sandbox_tools=True, sandbox=sandbox)
    code = "def execute(input):\n    return input['a'] * input['b']\n"
    body = request(
        "multiply",
        implementation={"mode": "sandbox", "code": code},
        test_cases=[{"input": {"a": 3, "b": 4}, "expected_output": 12}],
    )
    await forge_tool_tool(options).run(body, CONTEXT)
    forged = options.registry.get("s1", "multiply")
    assert forged is not None
    assert await forged.run({"a": 6, "b": 7}) == 42


async def test_the_learning_refusals_come_before_any_forging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    options = ForgeOptions(tools=TOOLS, judge=approve)
    no_learner = ToolExecutionContext(
        session_id="s1", session_data={"learning": {"learner": "none", "mode": "on"}}
    )
    with pytest.raises(ToolRefusal) as caught:
        await forge_tool_tool(options).run(request(), no_learner)
    assert caught.value.message == (
        "forge_tool refused (no_learner): this turn has no learner; nothing was changed."
    )
    assert caught.value.details == {"status": "rejected", "reason": "no_learner"}
    monkeypatch.setenv("AGENTOS_LEARNING_FREEZE", "1")
    with pytest.raises(ToolRefusal, match=r"refused \(frozen\)"):
        await forge_tool_tool(options).run(request(), CONTEXT)
    assert options.registry.tools("s1") == ()


def test_options_are_checked_naming_the_field() -> None:
    with pytest.raises(GMIError) as caught:
        ForgeOptions(allow_sandbox_tools="yes")  # type: ignore[arg-type]
    assert caught.value.code == GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": "allow_sandbox_tools"}
    with pytest.raises(GMIError) as caught:
        ForgedToolRegistry(0)
    assert caught.value.details == {"option": "max_session_tools"}


@settings(max_examples=25, deadline=None)
@given(a=st.integers(-(10**6), 10**6), b=st.integers(-(10**6), 10**6))
async def test_a_composed_tool_computes_its_steps_for_every_input(a: int, b: int) -> None:
    options = ForgeOptions(tools=TOOLS, judge=approve)
    await forge_tool_tool(options).run(request(), CONTEXT)
    forged = options.registry.get("s1", "add_then_double")
    assert forged is not None
    assert await forged.run({"a": a, "b": b}) == 2 * (a + b)


async def test_a_name_providers_refuse_is_rejected_as_invalid() -> None:
    options = ForgeOptions(tools=TOOLS, judge=approve)
    with pytest.raises(ForgeRejected) as caught:
        await forge_tool_tool(options).run(request("bad name!"), CONTEXT)
    assert caught.value.reason == "invalid"
    assert "'bad name!'" in caught.value.message


async def test_an_output_outside_the_output_schema_fails_the_test() -> None:
    options = ForgeOptions(tools=TOOLS, judge=approve)
    body = request(output_schema={"type": "string"})
    with pytest.raises(ForgeRejected) as caught:
        await forge_tool_tool(options).run(body, CONTEXT)
    assert caught.value.reason == "test_failed"
    assert "test case 0 output does not fit output_schema" in caught.value.message
