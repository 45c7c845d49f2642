"""The work of ``agency_overhead`` and its two peers' sides: openai-agents and pydantic-ai.

Two shapes (see `bench.agency_overhead` for why they are fair): ``hierarchical``, a manager that
delegates ``TASK`` to two members at once and answers; ``sequential``, three members in a row,
each given the task and the output before it. `pydantic_calls` builds pydantic-ai's side (agent
delegation: tools that ``await member.run(task, usage=ctx.usage)``; programmatic hand-off: the
runs in order), `agents_calls` openai-agents' (``member.as_tool(...)``; handoffs), each on
zero-latency models that answer from the request and count their calls in `SERVED`. Both
packages are installed for benchmarks only (``pip install -e '.[bench]'``) and imported lazily.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from bench.turn_models import COMPLETION_TOKENS, PROMPT_TOKENS

if TYPE_CHECKING:
    from pydantic_ai import Tool
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models.function import AgentInfo

__all__ = [
    "DELEGATES",
    "MANAGER",
    "MANAGER_REPLY",
    "PIPELINE",
    "PIPELINE_REPLY",
    "SERVED",
    "SHAPES",
    "TASK",
    "Call",
    "agents_calls",
    "pydantic_calls",
]

TASK = "Write a short note on tides."
MANAGER = "You lead a team. Delegate the work, then answer."
MANAGER_REPLY = "The note on tides is done."
DELEGATES: dict[str, tuple[str, str, str]] = {
    # role: (instructions, the manager's task for it, its reply)
    "researcher": ("You find facts.", "Find facts on tides.", "Tides follow the moon."),
    "writer": ("You write notes.", "Write the note.", "Here is the note."),
}
PIPELINE: dict[str, tuple[str, str]] = {
    # member, in order: (instructions, its reply)
    "drafter": ("You draft.", "A draft on tides."),
    "editor": ("You edit.", "An edited draft on tides."),
    "checker": ("You check.", "A checked note on tides."),
}
PIPELINE_REPLY = PIPELINE["checker"][1]
SHAPES = {"hierarchical": len(DELEGATES), "sequential": len(PIPELINE)}
"""Each shape's member calls per agency call: the divisor of its metric."""
SERVED: Counter[tuple[str, str]] = Counter()
"""The peers' model calls by (side, the reply or "manager"), for setup's check of the work."""

Call = Callable[[], Coroutine[Any, Any, str]]
"""One agency call on one side; returns the result's text."""


# -- pydantic-ai: agent delegation and programmatic hand-off ------------------------------------


def pydantic_calls() -> dict[str, Call]:
    """pydantic-ai's two shapes, built once: agent delegation, and programmatic hand-off."""
    from pydantic_ai import Agent, RunContext, Tool
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import RunUsage

    def member(instructions: str, reply: str) -> Agent[None, str]:
        def answer(_messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
            SERVED["pydantic_ai", reply] += 1
            return _pydantic_text(reply)

        return Agent(FunctionModel(answer), system_prompt=instructions)

    delegates = {role: member(i, reply) for role, (i, _t, reply) in DELEGATES.items()}

    def delegate(role: str) -> Tool[None]:
        async def run(ctx: Any, task: str) -> str:
            """Hand a task to the member; returns its answer."""
            return str((await delegates[role].run(task, usage=ctx.usage)).output)

        # Real types, not this module's postponed strings: pydantic-ai reads them to see that
        # the tool takes its RunContext, and RunContext is imported here only, lazily.
        run.__annotations__ = {"ctx": RunContext[None], "task": str, "return": str}
        return Tool(run, name=f"delegate_to_{role}")

    manager = Agent(
        FunctionModel(_pydantic_manager),
        system_prompt=MANAGER,
        tools=[delegate(role) for role in DELEGATES],
    )
    stages = [member(i, reply) for i, reply in PIPELINE.values()]

    async def hierarchical() -> str:
        return str((await manager.run(TASK)).output)

    async def sequential() -> str:
        usage = RunUsage()
        output = ""
        for stage in stages:
            output = (await stage.run(_stage_prompt(output), usage=usage)).output
        return output

    return {"hierarchical": hierarchical, "sequential": sequential}


def _stage_prompt(previous: str) -> str:
    """A pipeline member's prompt on the peers' sides: the task and the previous output."""
    return TASK if not previous else f"{TASK}\n\nPrevious output:\n{previous}"


def _pydantic_text(text: str) -> ModelResponse:
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.usage import RequestUsage

    usage = RequestUsage(input_tokens=PROMPT_TOKENS, output_tokens=COMPLETION_TOKENS)
    return ModelResponse(parts=[TextPart(text)], usage=usage)


def _pydantic_manager(messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
    from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
    from pydantic_ai.usage import RequestUsage

    SERVED["pydantic_ai", "manager"] += 1
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    if any(isinstance(part, ToolReturnPart) for part in last.parts):
        return _pydantic_text(MANAGER_REPLY)
    calls = [
        ToolCallPart(f"delegate_to_{role}", {"task": task}, tool_call_id=f"c{index}")
        for index, (role, (_i, task, _r)) in enumerate(DELEGATES.items())
    ]
    usage = RequestUsage(input_tokens=PROMPT_TOKENS, output_tokens=COMPLETION_TOKENS)
    return ModelResponse(parts=list(calls), usage=usage)


# -- openai-agents: agents as tools, and handoffs ----------------------------------------------


def agents_calls() -> dict[str, Call]:
    """openai-agents' two shapes, built once: members as the manager's tools, and handoffs."""
    from agents import Agent, RunConfig, Runner

    config = RunConfig(tracing_disabled=True)
    manager_tools: list[Any] = []
    for role, (instructions, _t, reply) in DELEGATES.items():
        member: Agent[Any] = Agent(
            name=role, instructions=instructions, model=_agents_model(reply=reply)
        )
        manager_tools.append(
            member.as_tool(
                tool_name=f"delegate_to_{role}",
                tool_description=f"Hand a task to the {role}; returns its answer.",
                run_config=config,
            )
        )
    manager: Agent[Any] = Agent(
        name="manager", instructions=MANAGER, model=_agents_model(), tools=manager_tools
    )
    following: Agent[Any] | None = None
    for name, (instructions, reply) in reversed(PIPELINE.items()):
        handoffs: list[Any] = [] if following is None else [following]
        following = Agent(
            name=name,
            instructions=instructions,
            model=_agents_model(reply=reply),
            handoffs=handoffs,
        )
    assert following is not None
    first: Agent[Any] = following

    async def hierarchical() -> str:
        return str((await Runner.run(manager, TASK, run_config=config)).final_output)

    async def sequential() -> str:
        return str((await Runner.run(first, TASK, run_config=config)).final_output)

    return {"hierarchical": hierarchical, "sequential": sequential}


def _agents_model(*, reply: str | None = None) -> Any:
    """A zero-latency openai-agents `Model`: a member's reply (and its handoff), or the manager.

    With ``reply`` it answers that text and, when the agent has a handoff, hands off to the first
    in the same response; without, it is the manager: both delegate tools first, then
    ``MANAGER_REPLY`` once a tool's output is in its input.
    """
    from agents import Model, ModelResponse, Usage
    from agents.testing import assistant_message, function_call

    total = PROMPT_TOKENS + COMPLETION_TOKENS

    # Without the bench extra (CI's dev install) `Model` is Any to mypy; with it, typed.
    class _AgentsModel(Model):  # type: ignore[misc, unused-ignore]
        async def get_response(
            self,
            system_instructions: Any,
            input: Any,
            model_settings: Any,
            tools: Any,
            output_schema: Any,
            handoffs: Any,
            tracing: Any,
            **_ids: Any,
        ) -> ModelResponse:
            SERVED["openai_agents", reply or "manager"] += 1
            usage = Usage(1, PROMPT_TOKENS, output_tokens=COMPLETION_TOKENS, total_tokens=total)
            if reply is not None:
                output: list[Any] = [assistant_message(reply, item_id=f"m-{reply}")]
                if handoffs:  # the SDK refuses a call id reused within a run
                    name = handoffs[0].tool_name
                    output.append(function_call(name, {}, call_id=f"h-{name}"))
            elif not isinstance(input, str) and any(_is_tool_output(i) for i in input):
                output = [assistant_message(MANAGER_REPLY, item_id="m-manager")]
            else:
                output = [
                    function_call(f"delegate_to_{role}", {"input": task}, call_id=f"c{index}")
                    for index, (role, (_i, task, _r)) in enumerate(DELEGATES.items())
                ]
            return ModelResponse(output=output, usage=usage, response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the bench runs Runner.run only")

    return _AgentsModel()


def _is_tool_output(item: Any) -> bool:
    kind = item.get("type") if isinstance(item, dict) else getattr(item, "type", None)
    return bool(kind == "function_call_output")
