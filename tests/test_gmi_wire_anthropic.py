"""gmi() sessions on Anthropic's wire through the real SDK on the loopback server: thinking
blocks stored with their step and sent back, and a forced-tool schema answer that the
on_after_generation hook does not replace (spec: Sessions, Hooks)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentos.api.gmi_agent import gmi
from agentos.core.messages import Role
from fakes.anthropic_server import (
    block_stop,
    message_delta,
    message_start,
    message_stop,
    signature_delta,
    text_delta,
    text_start,
    text_stream,
    thinking_delta,
    thinking_start,
    tool_use_stream,
)
from fakes.loopback import Reply, ScriptedServer

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def loopback() -> Iterator[ScriptedServer]:
    with ScriptedServer() as shared:
        yield shared


def thinking_then_text(thought: str, signature: str, text: str) -> list[str]:
    return [
        message_start(model="claude-sonnet-5"),
        thinking_start(0),
        thinking_delta(thought, 0),
        signature_delta(signature, 0),
        block_stop(0),
        text_start(1),
        text_delta(text, 1),
        block_stop(1),
        message_delta("end_turn"),
        message_stop(),
    ]


async def test_thinking_blocks_are_stored_with_their_step_and_sent_back(
    loopback: ScriptedServer,
) -> None:
    served = loopback.serve(
        Reply(events=thinking_then_text("Let me think.", "sig-abc", "Hello Ada.")),
        Reply(events=text_stream(["Again."])),
    )
    agent = gmi(
        provider="anthropic",
        model="claude-sonnet-5",
        api_key="sk-ant-test",
        base_url=served.url,
        fallback_providers=[],
    )
    session = agent.session("s1")
    assert (await session.send("Hi, I'm Ada")).text == "Hello Ada."
    stored = await session.messages()
    assert stored[-1].role is Role.ASSISTANT
    assert [block.type for block in stored[-1].replay_blocks] == ["thinking"]
    await session.send("Again?")
    sent: list[dict[str, Any]] = served.requests[1].json["messages"]
    assistant = next(m for m in sent if m["role"] == "assistant")
    assert assistant["content"][0]["type"] == "thinking"
    assert assistant["content"][0]["signature"] == "sig-abc"
    await agent.close()


async def test_a_forced_tool_schema_answer_is_not_replaced_by_the_after_hook(
    loopback: ScriptedServer,
) -> None:
    answer = {"name": "Ada", "age": 36}
    served = loopback.serve(Reply(events=tool_use_stream([("toolu_1", "person", answer)])))
    agent = gmi(
        provider="anthropic",
        model="claude-opus-4-20250514",  # no output format: every schema takes the forced tool
        api_key="sk-ant-test",
        base_url=served.url,
        fallback_providers=[],
        on_after_generation=lambda ctx: '{"name": "Eve", "age": 1}',
    )
    result = await agent.session("s").send("Who?", response_schema=PERSON, schema_name="person")
    assert result.object == answer
    assert served.requests[0].json["tool_choice"] == {"type": "tool", "name": "person"}
    await agent.close()
