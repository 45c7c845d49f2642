"""A malformed tool call is the model's error, not the caller's (issue 11, item 11).

Arguments a model sends that are not a JSON object reach the tool round as
``ToolCall.unparsed_arguments``: that call gets the spec's invalid-arguments error result (the
model sees it on its next step) and its sibling calls still run, on the lightweight path
(`generate_text()`, a plain agent's session) and on the GMI path (a `gmi()` session), through a
real provider adapter too. Plain Python functions are accepted wherever tools are, wrapped as
`Tool.from_function` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import pytest

import agentos
from agentos import GMIError, GMIErrorCode, generate_text
from agentos.api.gmi_agent import gmi
from agentos.core.messages import Message, Role, ToolCall, ToolResult
from agentos.storage.session_store import SQLiteSessionStore
from agentos.testing import ScriptedModel, ScriptStep
from fakes.openai_server import CallSpec, ChunkMaker, OpenAIServer, stream_reply
from fakes.tools import add

PARSE_PROBLEM = "<root>: arguments are not valid JSON (Expecting value at 5)"
PARSE_ERROR = f"Failed to parse arguments for tool 'add': {PARSE_PROBLEM}"
MALFORMED = ToolCall("c1", "add", {}, unparsed_arguments='{"a":')
SIBLING = ToolCall("c2", "add", {"a": 1, "b": 2})
EXPECTED_RESULTS = [
    ToolResult(
        "c1",
        "add",
        PARSE_ERROR,
        is_error=True,
        error_details={
            "code": "SYS_VALIDATION_ERROR",
            "message": PARSE_ERROR,
            "details": {"tool_name": "add", "problems": [PARSE_PROBLEM]},
        },
    ),
    ToolResult("c2", "add", 3),
]


def script() -> ScriptedModel:
    return ScriptedModel([ScriptStep(tool_calls=[MALFORMED, SIBLING]), "Done."])


def results_sent(model: ScriptedModel, step: int = 1) -> list[ToolResult]:
    """The tool results the model was shown in request ``step``."""
    return [
        m.tool_result
        for m in model.requests[step].messages
        if m.role is Role.TOOL and m.tool_result is not None
    ]


async def test_generate_text_answers_the_malformed_call_and_runs_its_sibling() -> None:
    model = script()
    result = await generate_text("Add", model=model, tools=[add])
    assert result.text == "Done."
    assert result.tool_calls == [MALFORMED, SIBLING]
    assert result.tool_results == EXPECTED_RESULTS
    assert results_sent(model) == EXPECTED_RESULTS  # the model sees its mistake


async def test_a_plain_agent_session_keeps_the_error_result_in_its_history() -> None:
    model = script()
    session = agentos.agent(model=model, tools=[add]).session("s")
    result = await session.send("Add")
    assert result.tool_results == EXPECTED_RESULTS
    assert results_sent(model) == EXPECTED_RESULTS
    stored = [m.tool_result for m in await session.messages() if m.tool_result is not None]
    assert stored == EXPECTED_RESULTS


async def test_a_gmi_session_answers_the_malformed_call_and_runs_its_sibling(
    tmp_path: Path,
) -> None:
    model = script()
    store = SQLiteSessionStore(path=tmp_path / "sessions.db")
    agent = gmi(model=model, tools=[add], store=store)
    result = await agent.session("s").send("Add")
    assert result.text == "Done."
    assert result.tool_results == EXPECTED_RESULTS
    assert results_sent(model) == EXPECTED_RESULTS
    written = await agent.session("s").messages()
    # Another process reads the stored turn back whole: the call keeps its unparsed text.
    reread = SQLiteSessionStore(path=tmp_path / "sessions.db")
    again = await gmi(model=ScriptedModel([]), store=reread).session("s").messages()
    assert again == written
    assert [m.tool_calls for m in again if m.tool_calls] == [[MALFORMED, SIBLING]]
    assert [m.tool_result for m in again if m.tool_result is not None] == EXPECTED_RESULTS


@pytest.mark.parametrize("runtime", ["legacy", "gmi"])
async def test_a_fail_open_round_with_only_malformed_calls_still_reaches_the_answer(
    runtime: Literal["legacy", "gmi"],
) -> None:
    calls = [
        ToolCall("c1", "add", {}, unparsed_arguments="not json"),
        ToolCall("c2", "add", {}, unparsed_arguments="[1, 2]"),
    ]
    model = ScriptedModel([ScriptStep(tool_calls=calls), "Sorry."])
    agent = agentos.agent(model=model, tools=[add], runtime=runtime)
    result = await agent.session("s").send("Add")
    assert result.text == "Sorry."
    assert [(r.tool_call_id, r.is_error) for r in result.tool_results] == [
        ("c1", True),
        ("c2", True),
    ]
    assert result.tool_results[1].output == (
        "Invalid arguments for tool 'add': <root>: arguments must be a JSON object, not list"
    )


# -- through the OpenAI adapter -------------------------------------------------------------------

CHUNKS = ChunkMaker()


def openai_replies() -> list[Any]:
    calls = [CallSpec("call_1", "add", ['{"a":']), CallSpec("call_2", "add", ['{"a": 1, "b": 2}'])]
    return [
        stream_reply(CHUNKS.tool_events(calls)),
        stream_reply(CHUNKS.text_events(["Done."])),
    ]


def tool_messages(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("path", ["generate_text", "gmi"])
async def test_arguments_an_openai_model_garbles_become_that_calls_error_result(
    path: str,
) -> None:
    with OpenAIServer(openai_replies()) as server:
        options: dict[str, Any] = {
            "model": "openai:gpt-4o-mini",
            "api_key": "sk-test",
            "base_url": f"{server.url}/v1",
            "fallback_providers": [],
            "tools": [add],
        }
        if path == "generate_text":
            result = await generate_text("Add", **options)
        else:
            agent = gmi(**options)
            result = await agent.session("s").send("Add")
            await agent.close()
        second = server.requests[1].json
    assert result.text == "Done."
    assert [(r.tool_call_id, r.is_error, r.output) for r in result.tool_results] == [
        ("call_1", True, PARSE_ERROR),
        ("call_2", False, 3),
    ]
    sent = tool_messages(second)
    assert [call_id for call_id, _ in sent] == ["call_1", "call_2"]
    assert PARSE_ERROR in sent[0][1]
    assistant = next(m for m in second["messages"] if m["role"] == "assistant")
    # The garbled call goes back as an empty object, which every provider accepts.
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == [
        "{}",
        '{"a": 1, "b": 2}',
    ]


# -- plain functions wherever tools are -----------------------------------------------------------


def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


CALL = ToolCall("m1", "multiply", {"a": 6, "b": 7})


def multiply_script() -> ScriptedModel:
    return ScriptedModel([ScriptStep(tool_calls=[CALL]), "42."])


Entry = Callable[[ScriptedModel, Sequence[Any]], Any]


async def via_generate_text(model: ScriptedModel, tools: Sequence[Any]) -> Any:
    return await generate_text("6*7?", model=model, tools=list(tools))


async def via_agent(model: ScriptedModel, tools: Sequence[Any]) -> Any:
    return await agentos.agent(model=model, tools=list(tools)).session("s").send("6*7?")


async def via_agent_generate(model: ScriptedModel, tools: Sequence[Any]) -> Any:
    return await agentos.agent(model=model, tools=list(tools)).generate("6*7?")


async def via_gmi(model: ScriptedModel, tools: Sequence[Any]) -> Any:
    return await gmi(model=model, tools=list(tools)).session("s").send("6*7?")


async def via_gmi_generate(model: ScriptedModel, tools: Sequence[Any]) -> Any:
    return await gmi(model=model, tools=list(tools)).generate("6*7?")


ENTRIES = [via_generate_text, via_agent, via_agent_generate, via_gmi, via_gmi_generate]


@pytest.mark.parametrize("entry", ENTRIES)
async def test_a_plain_function_is_wrapped_as_a_tool(entry: Entry) -> None:
    model = multiply_script()
    result = await entry(model, [multiply, add])
    assert result.text == "42."
    offered = model.requests[0].tools
    assert [(t.name, t.description) for t in offered] == [
        ("multiply", "Multiply two numbers."),
        ("add", "Add two numbers."),
    ]
    assert offered[0].parameters["required"] == ["a", "b"]
    assert result.tool_results == [ToolResult("m1", "multiply", 42)]


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([multiply, 42], "tools: item 1: int is not a Tool or a function"),
        ([multiply, multiply], "tools: tool names must be unique, got ['multiply', 'multiply']"),
        ([lambda x: x], "tools: item 0: tool name '<lambda>' must be"),
        ("multiply", "tools: must be a list of Tool or functions, got str"),
    ],
)
async def test_what_cannot_be_a_tool_is_refused_naming_the_item(
    entry: Entry, tools: Any, message: str
) -> None:
    model = multiply_script()
    with pytest.raises(GMIError) as caught:
        await entry(model, tools) if not isinstance(tools, str) else await _with_str(entry, model)
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": "tools"}
    assert caught.value.message.startswith(message), caught.value.message
    assert model.calls == 0


async def _with_str(entry: Entry, model: ScriptedModel) -> Any:
    """``tools="multiply"``: a string where a list belongs (list() would split it)."""
    if entry is via_generate_text:
        return await generate_text("6*7?", model=model, tools="multiply")  # type: ignore[arg-type]
    runtime: Literal["legacy", "gmi"] = "gmi" if entry in (via_gmi, via_gmi_generate) else "legacy"
    return agentos.agent(model=model, tools="multiply", runtime=runtime)  # type: ignore[arg-type]


def test_a_message_history_with_an_unparsed_call_round_trips() -> None:
    message = Message.assistant(tool_calls=[MALFORMED, SIBLING])
    assert agentos.load_messages(agentos.dump_messages([message])) == [message]
