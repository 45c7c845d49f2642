"""agency(): the debate, review-loop and hierarchical strategies, emergent specialists, adaptive.

Every model is a `ScriptedModel` with a function script, so each test states what each member,
the judge and the manager received and answered (issue 14 items 2 and 4; reference §1.27,
§1.31, black-box cases 54-55).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.api.agency import AgencyConfigError, AgencyMemberError, agency
from agentos.api.agency.review_loop import Verdict, parse_verdict
from agentos.api.approvals import ApprovalDecision, ApprovalRequest
from agentos.core.messages import Message, ToolCall
from agentos.emergent import SpecialistSpec
from agentos.llm.model import CompletionOptions, ToolDefinition
from agentos.testing import ScriptedModel, ScriptStep

Script = Callable[[Sequence[Message], Sequence[ToolDefinition], CompletionOptions], Any]
TASK = "Is tea better than coffee?"


def _user(messages: Sequence[Message]) -> str:
    return [m for m in messages if m.role == "user"][-1].text


def _system(messages: Sequence[Message]) -> str:
    return "\n".join(m.text for m in messages if m.role == "system")


def _results(messages: Sequence[Message]) -> list[Any]:
    return [m.tool_result.output for m in messages if m.tool_result is not None]


def _speaker(name: str, heard: list[str]) -> ScriptedModel:
    """A member that records each input and answers ``<name>1``, ``<name>2``, ..."""

    def script(messages: Sequence[Message], tools: Any, options: Any) -> str:
        heard.append(_user(messages))
        return f"{name}{len(heard)}"

    return ScriptedModel(script)


def _call(name: str, call_id: str, **arguments: Any) -> ScriptStep:
    return ScriptStep(tool_calls=[ToolCall(call_id, name, arguments)])


# -- debate -----------------------------------------------------------------------------------


def _opening() -> str:
    return (
        f"The team is debating this task:\n{TASK}\n\n"
        "State your opening position: your answer and your main reasons, in about 150 words "
        "at most."
    )


def _rebuttal(transcript: str, round_number: int) -> str:
    return (
        f"The team is debating this task:\n{TASK}\n\nThe debate so far:\n{transcript}\n\n"
        f"Round {round_number}: answer the strongest points the others made, then defend or "
        "revise your position, in about 150 words at most."
    )


async def test_debate_two_agents_default_rounds_six_speeches_and_a_judge() -> None:
    heard_a: list[str] = []
    heard_b: list[str] = []
    judged: list[str] = []

    def judge(messages: Sequence[Message], tools: Any, options: Any) -> str:
        judged.append(_user(messages))
        assert "You judge a debate" in _system(messages)
        return "Verdict: tea"

    team = agency(
        agents={"a": {"model": _speaker("a", heard_a)}, "b": {"model": _speaker("b", heard_b)}},
        strategy="debate",
        model=ScriptedModel(judge),
    )
    result = await team.generate(TASK)

    assert result.text == "Verdict: tea"
    assert [c.agent for c in result.agent_calls] == ["a", "b", "a", "b", "a", "b", "judge"]
    line = "\n---\n".join
    assert heard_a == [
        _opening(),
        _rebuttal(line(["[a, round 1]: a1", "[b, round 1]: b1"]), 2),
        _rebuttal(
            line(["[a, round 1]: a1", "[b, round 1]: b1", "[a, round 2]: a2", "[b, round 2]: b2"]),
            3,
        ),
    ]
    assert heard_b == [
        _opening(),
        _rebuttal(line(["[a, round 1]: a1", "[b, round 1]: b1", "[a, round 2]: a2"]), 2),
        _rebuttal(
            line(
                [
                    "[a, round 1]: a1",
                    "[b, round 1]: b1",
                    "[a, round 2]: a2",
                    "[b, round 2]: b2",
                    "[a, round 3]: a3",
                ]
            ),
            3,
        ),
    ]
    everything = line([f"[{n}, round {r}]: {n}{r}" for r in (1, 2, 3) for n in ("a", "b")])
    assert judged == [f"The task:\n{TASK}\n\nThe debate:\n{everything}\n\nGive your verdict."]
    total = sum(c.usage.total_tokens for c in result.agent_calls)
    assert result.usage.total_tokens == total > 0


async def test_debate_max_rounds_one_is_two_openings_and_the_judge() -> None:
    heard: list[str] = []
    team = agency(
        agents={"a": {"model": _speaker("a", heard)}, "b": {"model": _speaker("b", [])}},
        strategy="debate",
        model=ScriptedModel(["done"]),
        max_rounds=1,
    )
    result = await team.generate(TASK)
    assert [c.agent for c in result.agent_calls] == ["a", "b", "judge"]
    assert heard == [_opening()]
    assert result.text == "done"


# -- review loop ------------------------------------------------------------------------------


def _review(draft: str) -> str:
    return (
        f"Review this draft of the task below.\n\nThe task:\n{TASK}\n\nThe draft:\n{draft}\n\n"
        'Reply with JSON only: {"approved": true, "feedback": ""} when the draft is ready, or '
        '{"approved": false, "feedback": "<what must change>"} when it is not.'
    )


def _revision(draft: str, feedback: str) -> str:
    return (
        f"{TASK}\n\nYour last draft:\n{draft}\n\nThe reviewer's feedback:\n{feedback}\n\n"
        "Write a revised draft that addresses the feedback."
    )


def _reviewer(verdicts: list[str], heard: list[str]) -> ScriptedModel:
    def script(messages: Sequence[Message], tools: Any, options: Any) -> str:
        heard.append(_user(messages))
        return verdicts[len(heard) - 1]

    return ScriptedModel(script)


async def test_review_loop_revises_with_the_feedback_until_approved() -> None:
    produced: list[str] = []
    reviewed: list[str] = []
    team = agency(
        agents={
            "writer": {"model": _speaker("draft", produced)},
            "editor": {
                "model": _reviewer(
                    ['{"approved":false,"feedback":"x"}', '{"approved":true}'], reviewed
                )
            },
        },
        strategy="review-loop",
    )
    result = await team.generate(TASK)
    assert produced == [TASK, _revision("draft1", "x")]
    assert reviewed == [_review("draft1"), _review("draft2")]
    assert [c.agent for c in result.agent_calls] == ["writer", "editor", "writer", "editor"]
    assert result.text == "draft2"


async def test_a_review_that_is_not_json_is_a_rejection_with_its_text_as_feedback() -> None:
    produced: list[str] = []
    team = agency(
        agents={
            "writer": {"model": _speaker("draft", produced)},
            "editor": {"model": _reviewer(["Too short.", '```json\n{"approved": true}\n```'], [])},
        },
        strategy="review-loop",
    )
    result = await team.generate(TASK)
    assert produced == [TASK, _revision("draft1", "Too short.")]
    assert result.text == "draft2"


async def test_review_loop_returns_the_last_draft_after_max_rounds() -> None:
    produced: list[str] = []
    reject = '{"approved": false, "feedback": "again"}'
    team = agency(
        agents={
            "writer": {"model": _speaker("draft", produced)},
            "editor": {"model": _reviewer([reject, '{"approved": "yes"}'], [])},
        },
        strategy="review-loop",
        max_rounds=2,
    )
    result = await team.generate(TASK)
    assert produced == [TASK, _revision("draft1", "again")]
    assert [c.agent for c in result.agent_calls] == ["writer", "editor", "writer", "editor"]
    assert result.text == "draft2"


# -- hierarchical -----------------------------------------------------------------------------


def _manager(
    steps: Callable[[int, Sequence[Message], list[str]], ScriptStep | str],
    seen: list[tuple[str, list[str], list[Any]]],
) -> Script:
    """A manager script: records (system, tool names, tool results) per step, plays ``steps``."""

    def script(messages: Sequence[Message], tools: Sequence[ToolDefinition], options: Any) -> Any:
        names = [t.name for t in tools]
        seen.append((_system(messages), names, _results(messages)))
        return steps(len(seen), messages, names)

    return script


async def test_the_manager_delegates_through_tools_and_sees_the_roster() -> None:
    heard: list[str] = []
    seen: list[tuple[str, list[str], list[Any]]] = []
    tools_given: list[list[ToolDefinition]] = []

    def steps(step: int, messages: Sequence[Message], names: list[str]) -> ScriptStep | str:
        if step == 1:
            return _call("delegate_to_writer", "c1", task="Write the intro.")
        return f"Final: {_results(messages)[-1]}"

    def manager(messages: Sequence[Message], tools: Sequence[ToolDefinition], o: Any) -> Any:
        tools_given.append(list(tools))
        return _manager(steps, seen)(messages, tools, o)

    team = agency(
        agents={
            "writer": {"model": _speaker("intro", heard), "instructions": "Writes prose."},
            "critic": {"model": _speaker("c", [])},
        },
        strategy="hierarchical",
        model=ScriptedModel(manager),
    )
    result = await team.generate(TASK)

    assert heard == ["Write the intro."]
    assert result.text == "Final: intro1"
    assert [c.agent for c in result.agent_calls] == ["writer", "manager"]
    assert result.agent_calls[1].input == TASK
    system, names, _ = seen[0]
    assert names == ["delegate_to_writer", "delegate_to_critic"]
    assert "- writer (delegate_to_writer): Writes prose." in system
    assert "- critic (delegate_to_critic): General purpose" in system
    assert "spawn_specialist" not in system
    writer_tool = tools_given[0][0]
    assert writer_tool.description == "Writes prose."
    assert writer_tool.parameters["required"] == ["task"]


def _spawn(call_id: str, role: str, instructions: str = "Check each claim.") -> ScriptStep:
    return _call(
        "spawn_specialist",
        call_id,
        role=role,
        instructions=instructions,
        justification="no one checks facts",
    )


async def test_a_spawned_specialist_is_callable_next_step_and_gone_next_call() -> None:
    seen: list[tuple[str, list[str], list[Any]]] = []
    specialist_heard: list[tuple[str, str]] = []

    def steps(step: int, messages: Sequence[Message], names: list[str]) -> ScriptStep | str:
        if _user(messages) == "again":
            return "second call"
        if step == 1:
            return _spawn("s1", "fact_checker")
        if step == 2:
            return _call("delegate_to_fact_checker", "d1", task="Check: tea has caffeine.")
        return f"Checked: {_results(messages)[-1]}"

    manager = _manager(steps, seen)

    def model(messages: Sequence[Message], tools: Sequence[ToolDefinition], o: Any) -> Any:
        system = _system(messages)
        if "Check each claim." in system and "You manage a team" not in system:
            specialist_heard.append((system, _user(messages)))
            return "true"
        return manager(messages, tools, o)

    team = agency(
        agents={"writer": {"model": _speaker("w", [])}},
        strategy="hierarchical",
        model=ScriptedModel(model),
        emergent={"enabled": True},
    )
    result = await team.generate(TASK)

    assert result.text == "Checked: true"
    assert [names for _, names, _ in seen] == [
        ["delegate_to_writer", "spawn_specialist"],
        ["delegate_to_writer", "spawn_specialist", "delegate_to_fact_checker"],
        ["delegate_to_writer", "spawn_specialist", "delegate_to_fact_checker"],
    ]
    assert seen[1][2] == [
        "Specialist 'fact_checker' is ready. From your next step, hand it work with "
        'delegate_to_fact_checker({"task": "..."}).'
    ]
    assert "create a specialist with spawn_specialist" in seen[0][0]
    assert specialist_heard[0][1] == "Check: tea has caffeine."
    assert "Check each claim." in specialist_heard[0][0]
    assert [c.agent for c in result.agent_calls] == ["fact_checker", "manager"]

    seen.clear()
    again = await team.generate("again")  # a new call starts from the configured roster
    assert again.text == "second call"
    assert seen[0][1] == ["delegate_to_writer", "spawn_specialist"]


async def test_spawns_past_the_cap_are_refused_naming_max_specialists() -> None:
    seen: list[tuple[str, list[str], list[Any]]] = []

    def steps(step: int, messages: Sequence[Message], names: list[str]) -> ScriptStep | str:
        if step == 1:
            return ScriptStep(
                tool_calls=[
                    ToolCall("s1", "spawn_specialist", {"role": "one", "instructions": "i"}),
                    ToolCall("s2", "spawn_specialist", {"role": "two", "instructions": "i"}),
                ]
            )
        return "done"

    for emergent, controls in (
        ({"enabled": True, "max_specialists": 1}, None),
        ({"enabled": True}, {"max_emergent_agents": 1}),
    ):
        seen.clear()
        team = agency(
            agents={"writer": {"model": _speaker("w", [])}},
            strategy="hierarchical",
            model=ScriptedModel(_manager(steps, seen)),
            emergent=emergent,
            controls=controls,
        )
        await team.generate(TASK)
        results = seen[1][2]
        assert results[0].startswith("Specialist 'one' is ready.")
        assert "max_specialists" in results[1]
        assert seen[1][1] == ["delegate_to_writer", "spawn_specialist", "delegate_to_one"]


async def test_the_forge_refuses_reserved_invalid_and_existing_roles() -> None:
    seen: list[tuple[str, list[str], list[Any]]] = []

    def steps(step: int, messages: Sequence[Message], names: list[str]) -> ScriptStep | str:
        if step == 1:
            return ScriptStep(
                tool_calls=[
                    ToolCall("s1", "spawn_specialist", {"role": "plan", "instructions": "i"}),
                    ToolCall("s2", "spawn_specialist", {"role": "9lives", "instructions": "i"}),
                    ToolCall("s3", "spawn_specialist", {"role": "writer", "instructions": "i"}),
                    ToolCall("s4", "spawn_specialist", {"role": "manager", "instructions": "i"}),
                ]
            )
        return "done"

    team = agency(
        agents={"writer": {"model": _speaker("w", [])}},
        strategy="hierarchical",
        model=ScriptedModel(_manager(steps, seen)),
        emergent={"enabled": True},
    )
    result = await team.generate(TASK)
    reserved, invalid, existing, own = seen[1][2]
    assert "reserved role name" in reserved
    assert "'9lives' is not a valid role" in invalid
    assert "already exists" in existing
    assert "already exists" in own  # the agency's own agents' names are taken too
    assert seen[1][1] == ["delegate_to_writer", "spawn_specialist"]
    assert result.text == "done"


async def test_before_emergent_spawn_can_refuse() -> None:
    asked: list[ApprovalRequest] = []
    seen: list[tuple[str, list[str], list[Any]]] = []

    def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(False, reason="not today")

    def steps(step: int, messages: Sequence[Message], names: list[str]) -> ScriptStep | str:
        return _spawn("s1", "fact_checker") if step == 1 else "done"

    team = agency(
        agents={"writer": {"model": _speaker("w", [])}},
        strategy="hierarchical",
        model=ScriptedModel(_manager(steps, seen)),
        emergent={"enabled": True},
        hitl={"approvals": {"before_emergent_spawn": approve}},
    )
    await team.generate(TASK)
    assert asked == [
        ApprovalRequest(
            "emergent_spawn",
            "manager",
            {
                "role": "fact_checker",
                "instructions": "Check each claim.",
                "justification": "no one checks facts",
            },
        )
    ]
    assert seen[1][2] == ["Specialist not spawned: the approval handler refused it: not today"]
    assert seen[1][1] == ["delegate_to_writer", "spawn_specialist"]


async def test_an_emergent_judge_is_asked_after_the_checks() -> None:
    judged: list[str] = []
    seen: list[tuple[str, list[str], list[Any]]] = []

    def steps(step: int, messages: Sequence[Message], names: list[str]) -> ScriptStep | str:
        return _spawn("s1", "fact_checker") if step == 1 else "done"

    def judge(spec: SpecialistSpec) -> bool:
        judged.append(spec.role)
        return False

    team = agency(
        agents={"writer": {"model": _speaker("w", [])}},
        strategy="hierarchical",
        model=ScriptedModel(_manager(steps, seen)),
        emergent={"enabled": True, "judge": judge},
    )
    await team.generate(TASK)
    assert judged == ["fact_checker"]
    assert seen[1][2] == ["Specialist not spawned: the judge rejected it: no reason given"]


async def test_adaptive_wraps_a_strategy_in_a_manager_told_its_default() -> None:
    seen: list[tuple[str, list[str], list[Any]]] = []
    heard: list[str] = []

    def steps(step: int, messages: Sequence[Message], names: list[str]) -> ScriptStep | str:
        if step == 1:
            return _call("delegate_to_b", "c1", task="B's part")
        return "combined"

    team = agency(
        agents={"a": {"model": _speaker("a", [])}, "b": {"model": _speaker("b", heard)}},
        strategy="sequential",
        adaptive=True,
        model=ScriptedModel(_manager(steps, seen)),
    )
    result = await team.generate(TASK)
    assert result.text == "combined"
    assert heard == ["B's part"]
    assert [c.agent for c in result.agent_calls] == ["b", "manager"]
    system, names, _ = seen[0]
    assert names == ["delegate_to_a", "delegate_to_b"]
    assert "Your default strategy is sequential" in system


async def test_a_failed_delegation_reaches_the_manager_as_an_error_result() -> None:
    seen: list[tuple[str, list[str], list[Any]]] = []

    def steps(step: int, messages: Sequence[Message], names: list[str]) -> ScriptStep | str:
        return _call("delegate_to_writer", "c1", task="go") if step == 1 else "recovered"

    team = agency(
        agents={"writer": {"model": ScriptedModel([ScriptStep.fail(500, "boom")])}},
        strategy="hierarchical",
        model=ScriptedModel(_manager(steps, seen)),
    )
    result = await team.generate(TASK)
    assert result.text == "recovered"
    assert seen[1][2][0].startswith("Agent 'writer' failed: ")
    assert result.agent_calls[0].error is not None


async def test_emergent_judge_true_asks_a_plain_agent_of_the_agency_model() -> None:
    seen: list[tuple[str, list[str], list[Any]]] = []
    judge_inputs: list[str] = []

    def steps(step: int, messages: Sequence[Message], names: list[str]) -> ScriptStep | str:
        return _spawn("s1", "fact_checker") if step == 1 else "done"

    manager = _manager(steps, seen)

    def model(messages: Sequence[Message], tools: Sequence[ToolDefinition], o: Any) -> Any:
        if "may create a new specialist" in _system(messages):
            judge_inputs.append(_user(messages))
            return '{"approved": false, "feedback": "too broad"}'
        return manager(messages, tools, o)

    team = agency(
        agents={"writer": {"model": _speaker("w", [])}},
        strategy="hierarchical",
        model=ScriptedModel(model),
        emergent={"enabled": True, "judge": True},
    )
    result = await team.generate(TASK)
    assert judge_inputs == [
        f"The task the team works on:\n{TASK}\n\nProposed role: fact_checker\n"
        "Justification: no one checks facts\nInstructions:\nCheck each claim."
    ]
    assert seen[1][2] == ["Specialist not spawned: the judge rejected it: too broad"]
    assert [c.agent for c in result.agent_calls] == ["specialist_judge", "manager"]


def test_bad_emergent_options_are_refused_naming_the_field() -> None:
    for emergent, option in (
        ({"enabled": True, "max_specialist": 2}, "emergent.max_specialist"),
        ({"enabled": True, "max_specialists": -1}, "emergent.max_specialists"),
        ({"enabled": "yes"}, "emergent.enabled"),
        ({"enabled": True, "judge": "gpt"}, "emergent.judge"),
    ):
        with pytest.raises(AgencyConfigError) as caught:  # when the agency is built
            agency(
                agents={"writer": {"model": _speaker("w", [])}},
                strategy="hierarchical",
                model=ScriptedModel(["never"]),
                emergent=emergent,
            )
        assert caught.value.details["option"] == option


async def test_a_specialist_is_gone_on_the_next_send_of_a_session() -> None:
    seen: list[tuple[str, list[str], list[Any]]] = []

    def steps(step: int, messages: Sequence[Message], names: list[str]) -> ScriptStep | str:
        if _user(messages) == "again":
            return "second send"
        return _spawn("s1", "fact_checker") if step == 1 else "first send"

    team = agency(
        agents={"writer": {"model": _speaker("w", [])}},
        strategy="hierarchical",
        model=ScriptedModel(_manager(steps, seen)),
        emergent={"enabled": True},
    )
    session = team.session("s1")
    first = await session.send(TASK)
    assert first.metadata["emergent_agents"] == ["fact_checker"]
    assert seen[-1][1] == ["delegate_to_writer", "spawn_specialist", "delegate_to_fact_checker"]
    second = await session.send("again")
    assert second.text == "second send"
    assert second.metadata["emergent_agents"] == []
    assert seen[-1][1] == ["delegate_to_writer", "spawn_specialist"]


async def test_review_loop_streams_the_last_rounds_draft_as_it_is_written() -> None:
    team = agency(
        agents={
            "writer": {"model": ScriptedModel(["draft one", "draft two"])},
            "editor": {"model": ScriptedModel(["no", "no"])},
        },
        strategy="review-loop",
        max_rounds=2,
    )
    stream = team.stream(TASK)
    assert [piece async for piece in stream.text_stream] == ["draft ", "two"]
    assert (await stream.result()).text == "draft two"


async def test_a_debater_that_fails_is_left_out_of_the_transcript() -> None:
    heard_b: list[str] = []
    team = agency(
        agents={
            "a": {"model": ScriptedModel([ScriptStep.fail(500, "down")])},
            "b": {"model": _speaker("b", heard_b)},
        },
        strategy="debate",
        model=ScriptedModel(["verdict"]),
        max_rounds=2,
        controls={"max_agent_calls": 10},
    )
    result = await team.generate(TASK)
    assert [c.agent for c in result.agent_calls] == ["a", "b", "a", "b", "judge"]
    assert result.agent_calls[0].error is not None
    assert heard_b[1] == _rebuttal("[b, round 1]: b1", 2)
    assert result.text == "verdict"


async def test_a_control_that_says_stop_ends_the_debate_without_a_judge() -> None:
    team = agency(
        agents={"a": {"model": _speaker("a", [])}, "b": {"model": _speaker("b", [])}},
        strategy="debate",
        model=ScriptedModel([]),
        controls={"max_agent_calls": 3},
    )
    result = await team.generate(TASK)
    assert [c.agent for c in result.agent_calls] == ["a", "b", "a"]
    assert result.text == "a2"
    assert result.metadata["limit_reached"]["limit"] == "max_agent_calls"


async def test_review_loop_producer_failure_raises_and_a_skipped_reviewer_ends_it() -> None:
    failing = agency(
        agents={
            "writer": {"model": ScriptedModel([ScriptStep.fail(500, "down")])},
            "editor": {"model": ScriptedModel([])},
        },
        strategy="review-loop",
    )
    with pytest.raises(AgencyMemberError) as caught:
        await failing.generate(TASK)
    assert caught.value.details == {"agent": "writer"}

    def skip_editor(request: ApprovalRequest) -> bool:
        return request.agent != "editor"

    skipping = agency(
        agents={
            "writer": {"model": _speaker("draft", [])},
            "editor": {"model": ScriptedModel([])},
        },
        strategy="review-loop",
        hitl={"approvals": {"before_agent": skip_editor}},
    )
    result = await skipping.generate(TASK)
    assert result.text == "draft1"
    assert [(c.agent, c.skipped) for c in result.agent_calls] == [
        ("writer", False),
        ("editor", True),
    ]


@given(st.booleans(), st.text())
def test_a_json_verdict_is_read_as_given(approved: bool, feedback: str) -> None:
    text = json.dumps({"approved": approved, "feedback": feedback})
    assert parse_verdict(text) == Verdict(approved, feedback)
    assert parse_verdict(f"```json\n{text}\n```") == Verdict(approved, feedback)


@given(st.text().filter(lambda t: "{" not in t and t.strip() not in ("true", "false")))
def test_any_other_review_is_a_rejection_with_its_text_as_feedback(text: str) -> None:
    assert parse_verdict(text) == Verdict(False, text)
