"""The zero-latency models both sides of the turn benchmarks share (``gmi_turn``, ``gmi_session``).

agentos's side is a `ScriptedModel` playing `script`; pydantic-ai's is ``Agent(FunctionModel(
function), system_prompt=SYSTEM, tools=[lookup])`` from `make_agent`. Both decide the same way
from the request: text (``REPLY``) for any prompt but ``TOOL_PROMPT``; for ``TOOL_PROMPT`` a call
of ``lookup(q="a")``, then, once the tool's result is the last message, ``TOOL_REPLY``. The reply
is one text delta and the usage is given, so neither side splits text or estimates tokens.
pydantic-ai is installed for benchmarks only (``pip install -e '.[bench]'``) and imported
lazily, so the rest of ``bench`` works without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentos.core.messages import Message, Role, ToolCall
from agentos.core.usage import ModelUsage
from agentos.llm.model import CompletionOptions, ToolDefinition
from agentos.testing import ScriptStep
from agentos.tools.tool import tool

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models.function import AgentInfo

__all__ = [
    "COMPLETION_TOKENS",
    "LOOKUP_TOOL",
    "PROMPT_TOKENS",
    "REPLY",
    "SYSTEM",
    "TEXT_PROMPT",
    "TOOL_ARGS",
    "TOOL_PROMPT",
    "TOOL_REPLY",
    "TOOL_RESULT",
    "function",
    "make_agent",
    "require_pydantic_ai",
    "script",
    "tool_returns",
]

SYSTEM = "You are a helpful assistant."
TEXT_PROMPT = "Say hello."
TOOL_PROMPT = "Look up a."
REPLY = "Hello there."
TOOL_REPLY = "I found a."
TOOL_ARGS: dict[str, Any] = {"q": "a"}
TOOL_RESULT = "found a"
PROMPT_TOKENS = 20
COMPLETION_TOKENS = 5
INSTALL_HINT = "pip install -e '.[bench]'"


def _lookup(q: str) -> str:
    """Look something up.

    Args:
        q: the query
    """
    return f"found {q}"


LOOKUP_TOOL = tool(name="lookup")(_lookup)
"""agentos's ``lookup`` tool (pydantic-ai's is the same function, registered by `make_agent`)."""


def require_pydantic_ai(benchmark: str) -> str:
    """pydantic-ai's version; exits naming ``benchmark`` and the install command without it."""
    try:
        import pydantic_ai
    except ImportError:
        raise SystemExit(
            f"{benchmark} needs pydantic-ai (its baseline); install it with: {INSTALL_HINT}"
        ) from None
    return str(pydantic_ai.__version__)


def _usage() -> ModelUsage:
    return ModelUsage(prompt_tokens=PROMPT_TOKENS, completion_tokens=COMPLETION_TOKENS)


def script(
    messages: Sequence[Message], _tools: Sequence[ToolDefinition], _options: CompletionOptions
) -> ScriptStep:
    """agentos's model: text for the text prompt; for the tool prompt a call, then text."""
    last = messages[-1]
    if last.role is Role.TOOL:
        return ScriptStep(text=[TOOL_REPLY], usage=_usage())
    if last.text == TOOL_PROMPT:
        return ScriptStep(tool_calls=[ToolCall("c1", "lookup", dict(TOOL_ARGS))], usage=_usage())
    return ScriptStep(text=[REPLY], usage=_usage())


def make_agent() -> Agent[None, str]:
    """pydantic-ai's agent: `function` as its model, ``SYSTEM`` and the ``lookup`` tool."""
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel

    def lookup(q: str) -> str:
        """Look something up.

        Args:
            q: the query
        """
        return f"found {q}"

    return Agent(FunctionModel(function), system_prompt=SYSTEM, tools=[lookup])


def function(messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
    """pydantic-ai's model: the same decisions as `script`."""
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.usage import RequestUsage

    usage = RequestUsage(input_tokens=PROMPT_TOKENS, output_tokens=COMPLETION_TOKENS)
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    if any(isinstance(part, ToolReturnPart) for part in last.parts):
        return ModelResponse(parts=[TextPart(TOOL_REPLY)], usage=usage)
    if any(isinstance(part, UserPromptPart) and part.content == TOOL_PROMPT for part in last.parts):
        call = ToolCallPart("lookup", dict(TOOL_ARGS), tool_call_id="c1")
        return ModelResponse(parts=[call], usage=usage)
    return ModelResponse(parts=[TextPart(REPLY)], usage=usage)


def tool_returns(messages: list[ModelMessage]) -> list[object]:
    """The contents of every tool return in a pydantic-ai conversation."""
    from pydantic_ai.messages import ModelRequest, ToolReturnPart

    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
