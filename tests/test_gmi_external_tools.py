"""External tools on the built-in GMI (DESIGN §5.24; spec: Output stream, the IGMI pause).

A tool the host declares external is offered to the model and never run by the GMI: a round that
calls it runs its other calls first, then the turn ends with a non-final output naming only the
host's calls; `handle_tool_results()` continues the round with the host's results, an error
result ``EXTERNAL_TOOL_NOT_RUN`` answering each call the host left out.
"""

from __future__ import annotations

import pytest

from agentos.core.messages import Role, ToolCall, ToolResult
from agentos.llm.model import ToolDefinition
from agentos.substrate.chunks import GMIOutputChunkType
from agentos.testing import ScriptedModel, ScriptStep
from agentos.tools import ToolOrchestrator
from agentos.tools.tool import tool
from fakes.gmi_helpers import make_gmi, run, turn

T = GMIOutputChunkType
WEATHER = ToolDefinition(
    "weather",
    "Today's weather in a city (the host looks it up).",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@tool
def double(x: int) -> int:
    """Twice x."""
    return 2 * x


def _orchestrator() -> ToolOrchestrator:
    return ToolOrchestrator([double], external=[WEATHER])


async def test_an_external_call_pauses_the_turn_after_the_rounds_other_calls() -> None:
    model = ScriptedModel(
        [
            ScriptStep(
                tool_calls=[
                    ToolCall("c1", "double", {"x": 2}),
                    ToolCall("c2", "weather", {"city": "Oslo"}),
                ]
            ),
        ]
    )
    gmi = await make_gmi(model, tool_orchestrator=_orchestrator())
    chunks, output = await run(gmi, turn("double 2, and the weather?"))
    assert [tool.name for tool in model.requests[0].tools] == ["double", "weather"]
    requests = [c for c in chunks if c.type is T.TOOL_CALL_REQUEST]
    assert [(r.content[0].name, r.metadata["execution_mode"]) for r in requests] == [
        ("double", "internal"),
        ("weather", "external"),
    ]
    assert requests[1].metadata["requires_external_tool_result"] is True
    results = [c.content for c in chunks if c.type is T.TOOL_RESULT]
    assert [(r.name, r.result) for r in results] == [("double", 4)]  # only the GMI's own call
    assert output.is_final is False
    assert output.tool_calls == [ToolCall("c2", "weather", {"city": "Oslo"})]
    assert gmi.pending_tool_calls() == [ToolCall("c2", "weather", {"city": "Oslo"})]
    assert len(model.requests) == 1  # the turn stopped for the host: no second step


async def test_the_hosts_results_continue_the_round() -> None:
    model = ScriptedModel(
        [ScriptStep(tool_calls=[ToolCall("c2", "weather", {"city": "Oslo"})]), "Sunny, 12 C."]
    )
    gmi = await make_gmi(model, tool_orchestrator=_orchestrator())
    _, paused = await run(gmi, turn("weather in Oslo?"))
    assert paused.is_final is False
    stream = await gmi.handle_tool_results([ToolResult("c2", "weather", {"sky": "sunny"})])
    chunks = [chunk async for chunk in stream]
    output = await stream.output()
    assert output.is_final is True
    assert output.response_text == "Sunny, 12 C."
    assert T.TOOL_RESULT not in [c.type for c in chunks]  # the host's results make no chunk
    roles = [m.role for m in model.requests[1].messages if m.role is not Role.SYSTEM]
    assert roles == [Role.USER, Role.ASSISTANT, Role.TOOL]


async def test_a_call_the_host_left_out_is_answered_external_tool_not_run() -> None:
    model = ScriptedModel(
        [
            ScriptStep(
                tool_calls=[
                    ToolCall("a", "weather", {"city": "Oslo"}),
                    ToolCall("b", "weather", {"city": "Rome"}),
                ]
            ),
            "Oslo is sunny.",
        ]
    )
    gmi = await make_gmi(model, tool_orchestrator=_orchestrator())
    _, paused = await run(gmi, turn("weather in Oslo and Rome?"))
    assert [c.id for c in paused.tool_calls] == ["a", "b"]
    stream = await gmi.handle_tool_results([ToolResult("a", "weather", "sunny")])
    async for _ in stream:
        pass
    await stream.output()
    tool_messages = [m.tool_result for m in gmi.history.messages() if m.role is Role.TOOL]
    assert [(r.tool_call_id, r.is_error) for r in tool_messages if r is not None] == [
        ("a", False),
        ("b", True),
    ]
    left_out = tool_messages[1]
    assert left_out is not None
    assert left_out.error_details is not None
    assert left_out.error_details["code"] == "EXTERNAL_TOOL_NOT_RUN"


def test_an_external_tool_cannot_share_a_name_with_a_tool() -> None:
    with pytest.raises(ValueError, match="two tools are named 'double'"):
        ToolOrchestrator([double], external=[ToolDefinition("double", "", {"type": "object"})])
